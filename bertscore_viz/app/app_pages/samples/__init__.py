"""The Many samples page (``page.py``) and its view."""
