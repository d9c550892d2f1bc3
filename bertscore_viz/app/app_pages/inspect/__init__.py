"""The Inspect page (``page.py``)."""
