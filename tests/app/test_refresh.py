"""A refresh keeps the work, and the work belongs to its browser (issue 31): a refresh or a second tab of the same
browser gets a copy under a new key, without a model pass; a link opened in another browser, a key chosen by
someone else, an expired or malformed one start a fresh session; a read-only link is made, opened as a copy and
revoked only as its owner chooses; Start fresh forgets; the kept work is bounded.

A refresh is a new AppTest of the whole app whose URL carries the first session's key (``?s=...``), as the
browser sends it. AppTest cannot send cookies, so the browser is given by ``persist.browser_secret`` (the hash of
the browser's XSRF token in a real server, checked in tests/e2e/test_refresh_browser.py). Real model, real
Streamlit.
"""

from __future__ import annotations

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from bertscore_viz.app.shared import persist
from bertscore_viz.engine.baseline import BaselineTable
from bertscore_viz.models.spec import BUNDLED_MODEL_NAME
from bertscore_viz.serving import config

from .navigation import APP, TIMEOUT, go, texts

BROWSER, OTHER = "browser-of-the-user", "browser-of-someone-else"


@pytest.fixture(autouse=True)
def in_browser(monkeypatch):
    """Every AppTest run below is in the user's browser unless a test says otherwise."""
    monkeypatch.setattr(persist, "browser_secret", lambda: BROWSER)


def _open(monkeypatch, browser: str, **params) -> AppTest:
    monkeypatch.setattr(persist, "browser_secret", lambda: browser)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, at.exception
    return at


def _token(at: AppTest) -> str:
    token = at.query_params[persist.QUERY_KEY]
    return token[0] if isinstance(token, list) else token


def _toasts(at: AppTest) -> str:
    return " ".join(str(t.value) for t in at.toast)


@pytest.fixture
def worked(monkeypatch):
    """A session that loaded the Compare example (one model pass), chose layer 3 and made a custom baseline."""
    at = _open(monkeypatch, BROWSER)
    go(at, "compare.py")
    at.sidebar.slider(key=f"layer::{BUNDLED_MODEL_NAME}").set_value(3).run()
    at.button(key="cmp_load_example").click().run()
    assert "Model pass:" in texts(at)
    at.session_state["custom_baselines"] = {("fr", BUNDLED_MODEL_NAME): BaselineTable(np.full((7, 3), 0.4), "mine")}
    at.run()
    assert not at.exception, at.exception
    return at, _token(at)


def test_a_refresh_brings_back_the_work_under_a_new_key_without_a_model_pass(worked, monkeypatch):
    first, token = worked
    at = _open(monkeypatch, BROWSER, s=token)
    go(at, "compare.py")
    assert at.sidebar.slider(key=f"layer::{BUNDLED_MODEL_NAME}").value == 3
    assert "no model pass" in texts(at) or "Scores kept" in texts(at)
    assert "Model pass:" not in texts(at)
    assert at.session_state["compare_input"]["data"] == first.session_state["compare_input"]["data"]
    assert ("fr", BUNDLED_MODEL_NAME) in at.session_state["custom_baselines"]
    # a copy under a new key: the two sessions never write one another's work
    assert at.session_state["compare_state"] is not first.session_state["compare_state"]
    assert _token(at) != token and token not in persist.kept_sessions()
    again = _open(monkeypatch, BROWSER, s=_token(at))  # and the new key is the one a refresh follows
    assert "compare_input" in again.session_state


def test_another_browser_with_the_same_link_gets_a_fresh_session_and_is_told(worked, monkeypatch):
    _, token = worked
    at = _open(monkeypatch, OTHER, s=token)
    assert "compare_input" not in at.session_state and "custom_baselines" not in at.session_state
    assert _token(at) != token
    assert "not this browser's" in _toasts(at)
    assert token in persist.kept_sessions()  # the owner's work is untouched


def test_a_key_chosen_by_someone_else_is_never_adopted(monkeypatch):
    """Session fixation: an attacker's key (chosen, or issued to the attacker's own browser) sent in a link gives the
    victim a fresh key; the attacker's link never shows the victim's work."""
    attacker = _open(monkeypatch, OTHER)
    issued = _token(attacker)
    for given in (issued, "A" * 22, "x" * 20):
        victim = _open(monkeypatch, BROWSER, s=given)
        assert _token(victim) != given
        go(victim, "compare.py")
        victim.button(key="cmp_load_example").click().run()
        assert "compare_input" in victim.session_state
        back = _open(monkeypatch, OTHER, s=given)  # the attacker opens the link they sent
        assert "compare_input" not in back.session_state


def test_malformed_keys_and_no_browser_secret_start_afresh(monkeypatch):
    for token in ("../../etc/passwd", "", "ä" * 30):
        at = _open(monkeypatch, BROWSER, s=token)
        assert "compare_input" not in at.session_state and _token(at) != token
    at = _open(monkeypatch, None)  # the server cannot tell browsers apart: nothing is kept
    go(at, "compare.py")
    at.button(key="cmp_load_example").click().run()
    assert at.session_state[persist.TOKEN_KEY] not in persist.kept_sessions()


def test_a_read_only_link_is_a_copy_that_its_owner_revokes(worked, monkeypatch):
    owner, _ = worked
    owner.sidebar.button(key="share_make").click().run()
    key = owner.session_state[persist.OWN_SHARE_KEY]
    assert any(f"?{persist.SHARE_KEY}={key}" in str(c.value) for c in owner.sidebar.code)
    viewer = _open(monkeypatch, OTHER, view=key)
    assert viewer.session_state["compare_input"]["data"] == owner.session_state["compare_input"]["data"]
    assert "read-only copy" in _toasts(viewer)
    assert persist.QUERY_KEY in viewer.query_params and persist.SHARE_KEY not in viewer.query_params
    viewer.session_state["custom_baselines"] = {}
    viewer.run()
    assert ("fr", BUNDLED_MODEL_NAME) in owner.session_state["custom_baselines"]  # the viewer's changes stay theirs
    owner.sidebar.button(key="share_revoke").click().run()
    late = _open(monkeypatch, OTHER, view=key)
    assert "compare_input" not in late.session_state and "expired or was revoked" in _toasts(late)


def test_start_fresh_forgets_the_kept_work(worked, monkeypatch):
    _, token = worked
    at = _open(monkeypatch, BROWSER, s=token)
    new = _token(at)
    at.sidebar.button(key="start_fresh").click().run()
    assert not at.exception, at.exception
    assert "compare_input" not in at.session_state
    again = _open(monkeypatch, BROWSER, s=new)
    assert "compare_input" not in again.session_state  # the old link opens an empty session


def test_the_kept_work_is_bounded_by_the_operators_limit(monkeypatch):
    monkeypatch.setattr(config, "_POLICY", config.Policy(kept_mb=0.001))  # 1 kB: the example's work is larger
    at = _open(monkeypatch, BROWSER)
    go(at, "compare.py")
    at.button(key="cmp_load_example").click().run()
    token = at.session_state[persist.TOKEN_KEY]
    assert token not in persist.kept_sessions()
    assert "compare_input" not in _open(monkeypatch, BROWSER, s=token).session_state


def test_sizes_are_estimated_from_bytes_and_arrays():
    assert persist.estimate_size({"a": b"x" * 1000, "b": [np.zeros(100)], "c": "y" * 10}) >= 1000 + 800 + 10


def test_the_browser_secret_is_the_xsrf_token_whatever_its_mask():
    """Streamlit re-masks its XSRF cookie on every response; the token inside is the browser's (values seen from a
    real server: two page loads of one browser, and another browser)."""
    one = persist.xsrf_token_bytes("2|87e7b0ab|f92b4ac5b0971eec9e890e509f76e6d7|1795598720")
    two = persist.xsrf_token_bytes("2|a454c7b1|da983ddf932469f6bd3a794abcc591cd|1795598720")
    other = persist.xsrf_token_bytes("2|7c92f818|b5a9dcf08492a47c42c0f379984887ea|1795598727")
    assert one == two == bytes.fromhex("7eccfa6e3770ae47196ebefb1891567c") and other != one
    for bad in (None, "", "2|zz|00|1", "2|0011|aa|1", "nothex", "2|00112233||1"):
        assert persist.xsrf_token_bytes(bad) is None


def test_a_read_only_link_larger_than_the_kept_limit_is_refused_and_evicts_no_one(worked, monkeypatch):
    """Issue 46: ``share()`` did not check the bound that ``save()`` checks: work larger than ``KEPT_MB`` was
    stored, evicted every other session's kept work and then itself (a dead link). Now it is refused with a
    message, and the other sessions' work stays."""
    owner, _ = worked
    other = _open(monkeypatch, OTHER)
    other.sidebar.slider(key=f"layer::{BUNDLED_MODEL_NAME}").set_value(2).run()
    other_key = _token(other)
    kept = persist.kept_sessions()
    assert other_key in kept
    work = persist.estimate_size({k: owner.session_state[k] for k in persist.WORK_KEYS if k in owner.session_state})
    assert work > 4 * kept[other_key]
    monkeypatch.setattr(config, "_POLICY", config.Policy(kept_mb=(work // 2) / 2**20))  # the other's fits
    monkeypatch.setattr(persist, "browser_secret", lambda: BROWSER)
    owner.sidebar.button(key="share_make").click().run()
    assert not owner.exception, owner.exception
    assert persist.OWN_SHARE_KEY not in owner.session_state
    shown = " ".join(str(e.value).replace("\\", "") for e in owner.error)  # markdown-escaped: KEPT\_MB
    assert "larger than the server keeps" in shown and "KEPT_MB" in shown, shown
    assert other_key in persist.kept_sessions()  # nobody else's work was evicted
