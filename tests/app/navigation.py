"""AppTest with the app's real navigation: every run executes ``app.py`` (keep_widget_values, the sidebar) and then
the page, as a Streamlit server does. The pages live in ``bertscore_viz/app/app_pages/``, not ``pages/``: a
``pages/`` folder next to the main script would switch on Streamlit's older multipage mode, in which a run after
``switch_page`` executes the page file alone. Nothing is patched: the real app, model and Streamlit run.

Settings then come from the sidebar's widgets (``idf``, ``rescale``, ``lang``, ``layer::<model>``), not from
``st.session_state["settings"]``, which the sidebar rewrites on every run.
"""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
TIMEOUT = 300


def app(page: str | None = None, **state) -> AppTest:
    """The app after a first run (on Inspect), switched to ``app_pages/<page>`` and run again with ``state`` set."""
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
    at.switch_page(str(ROOT / "bertscore_viz" / "app" / "app_pages" / page.removesuffix(".py") / "page.py"))
    at.run()
    assert not at.exception, at.exception
    return at


def texts(at: AppTest) -> str:
    return "\n".join(str(e.value) for kind in ("success", "info", "warning", "error", "markdown", "caption", "code",
                                              "text") for e in getattr(at, kind))


def use_settings(at: AppTest, settings) -> None:
    """Choose ``settings`` as a user does in the sidebar: its widgets' state (read by the sidebar on the next run,
    which writes ``st.session_state["settings"]`` from them), and the settings themselves for a page run alone."""
    from bertscore_viz.models import BUNDLED_MODEL_NAME, resolve_model

    at.session_state["idf"] = bool(settings.idf)
    at.session_state["rescale"] = bool(settings.rescale)
    at.session_state["lang"] = settings.lang
    if settings.model != BUNDLED_MODEL_NAME:
        at.session_state["model_choice"] = settings.model
    if settings.layer is not None:
        at.session_state[f"layer::{resolve_model(settings.model).name}"] = int(settings.layer)
    at.session_state["settings"] = settings
