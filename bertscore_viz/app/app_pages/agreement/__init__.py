"""The Agreement page (``page.py``): the rated input, the work, the view, the disagreements."""
