"""The Baselines and layers page (``page.py``) and its custom-baseline sections."""
