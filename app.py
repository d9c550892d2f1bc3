"""bertscore-viz: the app's entry point. Navigation over the pages, and the settings sidebar they share.

An unexpected error shows browser users only that something went wrong (no message, no stack trace, no server
path; the server's log has the details), whichever directory Streamlit was started from: ``.streamlit/config.toml``
says so too, but Streamlit reads it only from the working directory.
"""

import logging
from pathlib import Path

import streamlit as st

HERE = Path(__file__).resolve().parent

st.set_option("client.showErrorDetails", "none")
st.set_option("client.toolbarMode", "minimal")
st.set_page_config(page_title="bertscore-viz", layout="wide")

from bertscore_viz.serving import deploy  # noqa: E402

try:  # a deployment setting that cannot be used (the image checks them before it starts; `streamlit run` does not)
    deploy.policy()
except deploy.DeployConfigError as exc:
    logging.getLogger("bertscore_viz.app").error("unusable deployment settings: %s", exc)
    st.error("This server's settings cannot be used, so the app cannot start. Whoever runs the server finds the "
             "reason in its log (`python -m bertscore_viz.serving.deploy` checks the settings).",
             icon=":material/error:")
    st.stop()

from bertscore_viz.ui import persist  # noqa: E402
from bertscore_viz.ui.settings import sidebar  # noqa: E402
from bertscore_viz.ui.state import keep_widget_values  # noqa: E402

PAGES = [
    ("app_pages/inspect.py", "Inspect a pair", ":material/search:"),
    ("app_pages/compare.py", "Compare systems", ":material/leaderboard:"),
    ("app_pages/baselines.py", "Baselines and layers", ":material/tune:"),
    ("app_pages/agreement.py", "Agreement with humans", ":material/thumbs_up_down:"),
    ("app_pages/walkthrough.py", "How BERTScore is computed", ":material/school:"),
]

nav = st.navigation([st.Page(str(HERE / path), title=title, icon=icon)
                     for path, title, icon in PAGES if (HERE / path).is_file()])
persist.restore()  # a refresh, or the same link in another tab: the work kept under the URL's key
keep_widget_values()
sidebar()
try:
    nav.run()
finally:  # also when the page reruns or stops: the work so far is kept for a refresh
    persist.save()
