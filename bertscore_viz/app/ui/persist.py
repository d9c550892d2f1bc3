"""Work that survives a browser refresh: a session key in the URL, and each session's work kept on the server.

Streamlit forgets a browser session on refresh: the upload, its minutes of scoring, the settings and a custom
baseline were gone. Here every run ends by keeping a reference to the session's work (the Compare input and its
model pass, custom baselines, the Agreement page's work, the sidebar's settings and the pages' kept widgets) under
a random key that is also in the page's URL (``?s=...``). A refresh, or the same link opened in a second tab,
starts a new Streamlit session; its first run finds the key in the URL and gets a copy of that work back, so no
model pass is repeated.

Bounds (operator settings, docs/DEPLOY.md): the kept work of all sessions is at most ``KEPT_MB`` (estimated from
the bytes and arrays it holds; the least recently used goes first) and each is kept ``KEPT_HOURS`` after its last
use. The key is a capability: 16 random bytes, so a link cannot be guessed, and whoever has the link has the work.
**Start fresh** (sidebar) forgets it and starts a new key.
"""

from __future__ import annotations

import copy
import re
import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, fields, is_dataclass

import numpy as np
import streamlit as st

from bertscore_viz.app.ui import state
from bertscore_viz.app.ui.cache import policy

QUERY_KEY = "s"
TOKEN_KEY = "_persist_token"
RESTORED_KEY = "_persist_restored"
#: Plain session keys that hold work (not widgets).
WORK_KEYS = ("compare_input", "compare_state", "custom_baselines", "agreement_input", "_agreement_work",
             "inspect_n_refs", "_uploaded_bytes", "_baseline_computed", "walk_batch", "walk_editor_version")
#: The sidebar's widgets (drawn on every run; kept here so that a refresh keeps the settings).
SIDEBAR_KEYS = ("model_choice", "model_other", "idf", "rescale", "lang", "long_texts_window")
_TOKEN = re.compile(r"^[A-Za-z0-9_-]{16,64}$")


@dataclass
class _Entry:
    values: dict
    size: int
    touched: float


_STORE: OrderedDict[str, _Entry] = OrderedDict()
_LOCK = threading.Lock()


def is_work(key: object) -> bool:
    """Whether a session key is kept for a refresh."""
    return isinstance(key, str) and (key in WORK_KEYS or key in SIDEBAR_KEYS or key.startswith("layer::")
                                     or state.is_kept(key))


def estimate_size(obj, depth: int = 0, seen: set | None = None) -> int:
    """Bytes held by ``obj``, roughly: byte strings, text and numpy arrays, through containers and dataclasses."""
    seen = set() if seen is None else seen
    if id(obj) in seen or depth > 8:
        return 0
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        return int(obj.nbytes)
    if isinstance(obj, (bytes, bytearray, str)):
        return len(obj)
    if isinstance(obj, dict):
        return sum(estimate_size(k, depth + 1, seen) + estimate_size(v, depth + 1, seen) for k, v in obj.items())
    if isinstance(obj, (list, tuple, set, frozenset)):
        return sum(estimate_size(v, depth + 1, seen) for v in obj)
    if is_dataclass(obj) and not isinstance(obj, type):
        return sum(estimate_size(getattr(obj, f.name, None), depth + 1, seen) for f in fields(obj))
    if hasattr(obj, "__dict__"):
        return estimate_size(vars(obj), depth + 1, seen)
    return 8


def _evict(now: float, limit_bytes: int, max_age: float) -> None:
    for key in [k for k, e in _STORE.items() if now - e.touched > max_age]:
        del _STORE[key]
    total = sum(e.size for e in _STORE.values())
    while _STORE and total > limit_bytes:  # least recently used first
        _, entry = _STORE.popitem(last=False)
        total -= entry.size


def session_token() -> str:
    """This session's key: from the URL when it has a well-formed one, else a new one, written into the URL (and
    again on every run: page changes drop query parameters)."""
    token = st.session_state.get(TOKEN_KEY)
    if token is None:
        given = st.query_params.get(QUERY_KEY)
        token = given if isinstance(given, str) and _TOKEN.match(given) else secrets.token_urlsafe(16)
        st.session_state[TOKEN_KEY] = token
    if st.query_params.get(QUERY_KEY) != token:
        st.query_params[QUERY_KEY] = token
    return token


def restore() -> bool:
    """At the top of a session's first run: the work kept under the URL's key, copied into this session (a copy:
    two tabs of one link do not share mutable state). Returns whether anything was restored."""
    if st.session_state.get(RESTORED_KEY):
        session_token()
        return False
    st.session_state[RESTORED_KEY] = True
    token = session_token()
    pol = policy()
    with _LOCK:
        _evict(time.time(), pol.kept_bytes, pol.kept_hours * 3600)
        entry = _STORE.get(token)
        if entry is None:
            return False
        _STORE.move_to_end(token)
        entry.touched = time.time()
        values = dict(entry.values)
    for key, value in values.items():
        if key not in st.session_state:
            st.session_state[key] = copy.deepcopy(value)
    return True


def save() -> None:
    """At the end of a run: keep (references to) this session's work under its key."""
    token = st.session_state.get(TOKEN_KEY)
    if token is None:
        return
    values = {k: st.session_state[k] for k in list(st.session_state.keys()) if is_work(k)}
    pol = policy()
    size = estimate_size(values)
    with _LOCK:
        if size > pol.kept_bytes:  # larger than everything allowed: not kept (a refresh starts afresh)
            _STORE.pop(token, None)
            return
        _STORE[token] = _Entry(values, size, time.time())
        _STORE.move_to_end(token)
        _evict(time.time(), pol.kept_bytes, pol.kept_hours * 3600)


def forget() -> None:
    """Start fresh: this key's kept work is dropped, the session's state cleared, and a new key is made."""
    token = st.session_state.get(TOKEN_KEY)
    with _LOCK:
        if token is not None:
            _STORE.pop(token, None)
    for key in list(st.session_state.keys()):
        del st.session_state[key]
    st.session_state[RESTORED_KEY] = True
    st.session_state[TOKEN_KEY] = secrets.token_urlsafe(16)
    st.query_params[QUERY_KEY] = st.session_state[TOKEN_KEY]


def kept_sessions() -> dict:
    """``{key: estimated bytes}`` of the kept work (for tests and the operator)."""
    with _LOCK:
        return {k: e.size for k, e in _STORE.items()}
