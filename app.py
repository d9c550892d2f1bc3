"""bertscore-viz: the app's entry point. Navigation over the pages, and the settings sidebar they share."""

from pathlib import Path

import streamlit as st

HERE = Path(__file__).resolve().parent

st.set_page_config(page_title="bertscore-viz", layout="wide")

from bertscore_viz.ui.settings import sidebar  # noqa: E402
from bertscore_viz.ui.state import keep_widget_values  # noqa: E402

PAGES = [
    ("pages/inspect.py", "Inspect a pair", ":material/search:"),
    ("pages/compare.py", "Compare systems", ":material/leaderboard:"),
    ("pages/baselines.py", "Baselines and layers", ":material/tune:"),
]

nav = st.navigation([st.Page(str(HERE / path), title=title, icon=icon)
                     for path, title, icon in PAGES if (HERE / path).is_file()])
keep_widget_values()
sidebar()
nav.run()
