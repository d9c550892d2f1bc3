"""The Streamlit app (extra ``[app]``): the entry script (``main``), the pages (``app_pages/``, each a ``main()`` of
named steps) and the Streamlit-aware helpers they share (``ui/``). Nothing outside this package imports it."""
