"""bertscore-viz: the app's entry point. Navigation over the pages, and the settings sidebar they share.

Streamlit runs this file as its script: ``bertscore-viz app`` (from an installed package) runs it directly, and
``streamlit run app.py`` in a clone runs the repository's ``app.py``, which calls :func:`run`.

An unexpected error shows browser users only that something went wrong (no message, no stack trace, no server
path; the server's log has the details), whichever directory Streamlit was started from: ``.streamlit/config.toml``
says so too, but Streamlit reads it only from the working directory.
"""

import logging
from pathlib import Path

import streamlit as st

from bertscore_viz.app.shared import persist
from bertscore_viz.app.shared.settings import sidebar
from bertscore_viz.app.state.widgets import keep_widget_values
from bertscore_viz.serving import config

HERE = Path(__file__).resolve().parent
#: The page scripts. Not a folder named ``pages`` beside a main script: that would switch on Streamlit's older
#: multipage mode, in which a run after ``switch_page`` executes the page file alone.
PAGES_DIR = HERE / "app_pages"

#: Each page's folder, title and icon: the folder's ``page.py`` is the script, served at the folder's name
#: (``/samples``).
PAGES = [
    ("inspect", "Inspect a pair", ":material/search:"),
    ("compare", "Compare systems", ":material/leaderboard:"),
    ("samples", "Many samples", ":material/stacked_line_chart:"),
    ("audit", "Is the metric fooled?", ":material/psychology_alt:"),
    ("baselines", "Baselines and layers", ":material/tune:"),
    ("agreement", "Agreement with humans", ":material/thumbs_up_down:"),
    ("walkthrough", "How BERTScore is computed", ":material/school:"),
]


def run() -> None:
    """One run of the app: options, the deployment check, navigation, the sidebar, the chosen page."""
    st.set_option("client.showErrorDetails", "none")
    st.set_option("client.toolbarMode", "minimal")
    st.set_page_config(page_title="bertscore-viz", layout="wide")
    try:  # a deployment setting that cannot be used (the image checks them before it starts; `streamlit run` not)
        config.policy()
    except config.DeployConfigError as exc:
        logging.getLogger("bertscore_viz.app").error("unusable deployment settings: %s", exc)
        st.error("This server's settings cannot be used, so the app cannot start. Whoever runs the server finds the "
                 "reason in its log (`bertscore-viz check-deploy` checks the settings).",
                 icon=":material/error:")
        st.stop()

    nav = st.navigation([st.Page(str(PAGES_DIR / folder / "page.py"), title=title, icon=icon, url_path=folder)
                          for folder, title, icon in PAGES])
    persist.restore()  # a refresh, or the same link in another tab: the work kept under the URL's key
    keep_widget_values()
    sidebar()
    try:
        nav.run()
    finally:  # also when the page reruns or stops: the work so far is kept for a refresh
        persist.save()


if __name__ == "__main__":
    run()
