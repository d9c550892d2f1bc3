"""The app's session state in one layer: the widget values kept across pages (``widgets``) and each page's
kept work as small typed values (``compare``, ...)."""
