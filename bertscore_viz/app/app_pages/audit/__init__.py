"""The stress-test page, 'Is the metric fooled?' (``page.py``) and its view."""
