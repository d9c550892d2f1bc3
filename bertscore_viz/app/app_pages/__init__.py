"""The app's pages, one folder each: ``page.py`` is the script Streamlit runs (a ``main()`` of named steps), the
folder's other modules are that page's own steps. Not named ``pages``: see :mod:`bertscore_viz.app.main`."""
