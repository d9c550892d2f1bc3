"""The Streamlit app (extra ``[app]``): the entry script (``main``), the pages (``app_pages/<page>/``, each a
``page.py`` whose ``main()`` is named steps, with that page's own modules), the gateway to the server's shared
resources (``gateway``), the session's typed state (``state/``) and the helpers pages share (``shared/``). Nothing
outside this package imports it."""
