"""The walkthrough page, 'How BERTScore is computed' (``page.py``) and its view."""
