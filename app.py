"""``streamlit run app.py`` from a clone: the same app as ``bertscore-viz app`` (bertscore_viz/app/main.py)."""

from bertscore_viz.app.main import run

run()
