"""The Compare page (``page.py``): input, scoring, the tabs and their exports, the sentence metrics, MTME."""
