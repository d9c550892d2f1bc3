"""AppTest with the app's real navigation: every run executes ``app.py`` (keep_widget_values, the sidebar) and then
the page, as a Streamlit server does.

Why this is needed (streamlit 1.67): the repository has a ``pages/`` folder next to ``app.py``. AppTest resets
``PagesManager.uses_pages_directory`` before every run, the folder turns it on, and a run requested for a page then
executes that page file alone (Streamlit's v1 multipage mode): after ``switch_page`` neither ``keep_widget_values``
nor ``sidebar`` runs, which hid a crash of the session mechanism. A server turns the flag off for good the first
time ``app.py`` calls ``st.navigation``; :func:`real_navigation` makes AppTest do the same. Nothing else changes:
the real app, model and Streamlit run.

Settings then come from the sidebar's widgets (``idf``, ``rescale``, ``lang``, ``layer::<model>``), not from
``st.session_state["settings"]``, which the sidebar rewrites on every run.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from streamlit.runtime.pages_manager import PagesManager
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
TIMEOUT = 300


@contextlib.contextmanager
def real_navigation():
    """Within this block, AppTest runs ``app.py`` with its ``st.navigation`` on every run."""
    original = PagesManager.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        PagesManager.uses_pages_directory = False  # what the first st.navigation call does in a server

    PagesManager.__init__ = init
    try:
        yield
    finally:
        PagesManager.__init__ = original
        PagesManager.uses_pages_directory = None


def app(page: str | None = None, **state) -> AppTest:
    """The app after a first run (on Inspect), switched to ``pages/<page>`` and run again with ``state`` set
    (call inside :func:`real_navigation`)."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    assert not at.exception, at.exception
    if page:
        go(at, page)
    if state:
        for k, v in state.items():
            at.session_state[k] = v
        at.run()
        assert not at.exception, at.exception
    return at


def go(at: AppTest, page: str) -> AppTest:
    """A click on the page's link in the navigation."""
    at.switch_page(str(ROOT / "pages" / page))
    at.run()
    assert not at.exception, at.exception
    return at


def texts(at: AppTest) -> str:
    return "\n".join(str(e.value) for kind in ("success", "info", "warning", "error", "markdown", "caption", "code",
                                              "text") for e in getattr(at, kind))
