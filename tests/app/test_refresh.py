"""Issue 23, item 2: a refresh (a new Streamlit session on the same link) keeps the work, without a model pass;
the same link in a second tab opens the same work (a copy); Start fresh forgets it; the kept work is bounded.

A refresh is a new AppTest of the whole app whose URL carries the first session's key (``?s=...``), as the browser
sends it. Real model, real Streamlit.
"""

from __future__ import annotations

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from bertscore_viz.app.ui import persist
from bertscore_viz.engine.baseline import BaselineTable
from bertscore_viz.models.spec import BUNDLED_MODEL_NAME
from bertscore_viz.serving import config

from .navigation import APP, TIMEOUT, go, texts


def _refresh(token: str, page: str | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params[persist.QUERY_KEY] = token
    at.run()
    assert not at.exception, at.exception
    if page:
        go(at, page)
    return at


@pytest.fixture(scope="module")
def worked():
    """A session that loaded the Compare example (one model pass), chose layer 3 and made a custom baseline."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    go(at, "compare.py")
    at.sidebar.slider(key=f"layer::{BUNDLED_MODEL_NAME}").set_value(3).run()
    at.button(key="cmp_load_example").click().run()
    assert "Model pass:" in texts(at)
    at.session_state["custom_baselines"] = {("fr", BUNDLED_MODEL_NAME): BaselineTable(np.full((7, 3), 0.4), "mine")}
    at.run()
    assert not at.exception, at.exception
    token = at.query_params[persist.QUERY_KEY]
    return at, token[0] if isinstance(token, list) else token


def test_a_refresh_brings_back_the_upload_its_scores_and_the_settings_without_a_model_pass(worked):
    first, token = worked
    at = _refresh(token, "compare.py")
    assert at.sidebar.slider(key=f"layer::{BUNDLED_MODEL_NAME}").value == 3
    assert "no model pass" in texts(at) or "Scores kept" in texts(at)
    assert "Model pass:" not in texts(at)
    assert at.session_state["compare_input"]["data"] == first.session_state["compare_input"]["data"]
    assert ("fr", BUNDLED_MODEL_NAME) in at.session_state["custom_baselines"]
    # a copy, not the first tab's object: two tabs of one link do not share mutable state
    assert at.session_state["compare_state"] is not first.session_state["compare_state"]


def test_an_unknown_or_malformed_key_starts_afresh():
    for token in ("x" * 20, "../../etc/passwd", ""):
        at = _refresh(token)
        assert "compare_input" not in at.session_state
        got = at.query_params[persist.QUERY_KEY]
        got = got[0] if isinstance(got, list) else got
        assert got != token or token == "x" * 20  # a well-formed unknown key is kept; a malformed one replaced


def test_start_fresh_forgets_the_kept_work(worked):
    _, token = worked
    at = _refresh(token, "compare.py")
    at.sidebar.button(key="start_fresh").click().run()
    assert not at.exception, at.exception
    assert "compare_input" not in at.session_state
    again = _refresh(token)
    assert "compare_input" not in again.session_state  # the old link opens an empty session


def test_the_kept_work_is_bounded_by_the_operators_limit(monkeypatch):
    monkeypatch.setattr(config, "_POLICY", config.Policy(kept_mb=0.001))  # 1 kB: the example's work is larger
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    go(at, "compare.py")
    at.button(key="cmp_load_example").click().run()
    token = at.session_state[persist.TOKEN_KEY]
    assert token not in persist.kept_sessions()
    assert "compare_input" not in _refresh(token).session_state


def test_sizes_are_estimated_from_bytes_and_arrays():
    assert persist.estimate_size({"a": b"x" * 1000, "b": [np.zeros(100)], "c": "y" * 10}) >= 1000 + 800 + 10
