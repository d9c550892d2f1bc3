"""Work that survives a browser refresh, belongs to its browser, and is shared only when its owner chooses.

Streamlit forgets a browser session on refresh: the upload, its minutes of scoring, the settings and a custom
baseline were gone. Here every run ends by keeping a reference to the session's work (the Compare input and its
model pass, custom baselines, the Agreement page's work, the sidebar's settings and the pages' kept widgets) on the
server, under a key that is also in the page's URL (``?s=...``), and bound to the browser that made it.

* **Keys are issued here.** A session's key is 16 random bytes made by this server. A key in a link is adopted only
  if this server issued it, its work is still kept, and it was made in *this browser* (the work is bound to the
  browser's own secret: a hash of Streamlit's XSRF token, a cookie the browser holds and never puts in a link).
  Anything else (a key someone chose, an expired one, another browser's) starts a fresh session, and the page
  says so once. So a link pasted to a colleague, or a link with a key of an attacker's choosing, never reaches
  anyone's work. Where the server cannot tell browsers apart (XSRF protection turned off), no key is adopted: a
  refresh starts afresh.
* **A refresh or a second tab gets a copy, under a new key** (the old key is dropped): two tabs never share one
  session, so a change in one never changes, or half-changes, the other.
* **Sharing is explicit.** *Share a read-only link* (sidebar) makes a snapshot of the work under a separate share
  key (``?view=...``); anyone with that link gets their own copy of the snapshot (their changes stay theirs), until
  the owner revokes it or ``SHARE_HOURS`` pass. The private session key is never part of it.

Bounds (operator settings, docs/DEPLOY.md): the kept work and snapshots of all sessions are at most ``KEPT_MB``
(estimated from the bytes and arrays they hold; the least recently used goes first); a session's work is kept
``KEPT_HOURS`` after its last use, a snapshot ``SHARE_HOURS`` after it was made. **Start fresh** (sidebar) forgets
the session's work and its snapshot.
"""

from __future__ import annotations

import copy
import hashlib
import re
import secrets
import time
from dataclasses import dataclass, fields, is_dataclass

import numpy as np
import streamlit as st

from bertscore_viz.app.gateway import policy
from bertscore_viz.app.shared.bounded_store import BoundedStore
from bertscore_viz.app.state import widgets as state

__all__ = ["QUERY_KEY", "SHARE_KEY", "XSRF_COOKIE", "browser_secret", "session_token", "restore", "save", "forget",
           "share", "ShareTooLarge", "revoke_share", "shared_link", "kept_sessions", "is_work", "estimate_size"]

QUERY_KEY = "s"
SHARE_KEY = "view"
TOKEN_KEY = "_persist_token"
RESTORED_KEY = "_persist_restored"
NOTICE_KEY = "_persist_notice"
OWN_SHARE_KEY = "_persist_share"
#: The pages' run counter (Compare's "model pass made in this run").
RUN_ID_KEY = "_run_id"
#: Streamlit's XSRF cookie: per browser, sent with every request, never in a link.
XSRF_COOKIE = "_streamlit_xsrf"
#: Plain session keys that hold work (not widgets).
WORK_KEYS = ("compare_input", "compare_state", "custom_baselines", "agreement_input", "_agreement_work",
             "inspect_n_refs", "_uploaded_bytes", "_baseline_computed", "walk_batch", "walk_editor_version",
             "samples_work", "audit_work")
#: The sidebar's widgets (drawn on every run; kept here so that a refresh keeps the settings).
SIDEBAR_KEYS = ("model_choice", "model_other", "idf", "rescale", "lang", "long_texts_window", "precision_choice")
_TOKEN = re.compile(r"^[A-Za-z0-9_-]{16,64}$")


@dataclass
class _Entry:
    values: dict
    size: int
    touched: float
    browser: str | None  # the owner's browser (sessions); None for a snapshot anyone with its link may copy
    expires: float | None = None  # snapshots: when the link stops working
    owner: str | None = None  # snapshots: the session key that made it (Start fresh revokes it)


def _stale(entry: _Entry, now: float) -> bool:
    """A snapshot past its expiry, or a session's work unused for longer than ``KEPT_HOURS``."""
    if entry.expires is not None:
        return now > entry.expires
    return now - entry.touched > policy().kept_hours * 3600


#: Every session's kept work and every live snapshot, by key: ``KEPT_MB`` in all (each entry weighs its estimated
#: bytes; the least recently saved go first), each for ``KEPT_HOURS`` after its last save or until its link expires.
_STORE: BoundedStore[str, _Entry] = BoundedStore(lambda: policy().kept_bytes, weigh=lambda e: e.size, stale=_stale)


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


def xsrf_token_bytes(cookie: str | None) -> bytes | None:
    """The token inside Streamlit's (Tornado-format) XSRF cookie: ``2|mask|masked token|timestamp`` (the mask
    changes with every response, the token does not) or a plain version-1 hex token; None when absent or
    malformed."""
    if not cookie:
        return None
    value = cookie.strip("\"'")
    try:
        if value.startswith("2|"):
            _, mask_hex, masked_hex, _ts = value.split("|")
            mask, masked = bytes.fromhex(mask_hex), bytes.fromhex(masked_hex)
            if len(mask) != 4 or not masked:
                return None
            return bytes(b ^ mask[i % 4] for i, b in enumerate(masked))
        token = bytes.fromhex(value)
    except ValueError:
        return None
    return token or None


def browser_secret() -> str | None:
    """This browser's own secret, as a hash (never the token itself): the same across its refreshes and tabs,
    different in another browser; None where the server cannot tell (no XSRF cookie)."""
    token = xsrf_token_bytes(st.context.cookies.get(XSRF_COOKIE))
    return None if token is None else hashlib.sha256(b"bertscore-viz session\0" + token).hexdigest()


def _new_token() -> str:
    return secrets.token_urlsafe(16)


def session_token() -> str:
    """This session's key (issued here), written into the URL on every run (page changes drop query parameters)."""
    token = st.session_state.get(TOKEN_KEY)
    if token is None:
        token = st.session_state[TOKEN_KEY] = _new_token()
    if st.query_params.get(QUERY_KEY) != token:
        st.query_params[QUERY_KEY] = token
    if SHARE_KEY in st.query_params:
        del st.query_params[SHARE_KEY]
    return token


def _claim(given: str | None, shared: str | None, browser: str | None) -> tuple[dict | None, str | None]:
    """The work a new session may copy (a session of this browser with the given key, or a live snapshot), and a
    note when a link was given but leads nowhere. The session's old key is dropped: its work moves to the new key."""
    now = time.time()
    with _STORE.locked():
        _STORE.evict(now)
        if shared:
            entry = _STORE.get(shared, touch=False) if _TOKEN.match(shared) else None
            if entry is None or entry.expires is None:
                return None, ("This shared link has expired or was revoked (or was never made on this server): "
                              "a fresh session starts.")
            return dict(entry.values), (f"A read-only copy of shared work, made {_ago(now - entry.touched)}: "
                                        "what you change here stays in your session.")
        if not given:
            return None, None
        entry = _STORE.get(given, touch=False) if _TOKEN.match(given) else None
        if entry is None or entry.expires is not None or browser is None or entry.browser != browser:
            return None, ("This link's session is not this browser's (or has expired): a fresh session starts. To "
                          "show someone your work, use **Share a read-only link** in the sidebar.")
        _STORE.pop(given)  # moved to the new key: two tabs never write one session
        return dict(entry.values), None


def _ago(seconds: float) -> str:
    minutes = int(seconds // 60)
    return "just now" if minutes < 1 else f"{minutes} min ago" if minutes < 120 else f"{minutes // 60} h ago"


def restore() -> bool:
    """At the top of a session's first run: the work of the link's key (this browser's) or snapshot, copied into
    this session under a new key (a copy: two tabs never share mutable state). Returns whether anything was
    restored; a link that leads nowhere is said once."""
    if st.session_state.get(RESTORED_KEY):
        session_token()
        _show_notice()
        return False
    st.session_state[RESTORED_KEY] = True
    given, shared = st.query_params.get(QUERY_KEY), st.query_params.get(SHARE_KEY)
    values, note = _claim(given if isinstance(given, str) else None, shared if isinstance(shared, str) else None,
                          browser_secret())
    session_token()
    if note:
        st.session_state[NOTICE_KEY] = note
    _show_notice()
    if values is None:
        return False
    for key, value in values.items():
        if key not in st.session_state:
            st.session_state[key] = copy.deepcopy(value)
    # The pages mark work done "in this run" by a run counter kept in the session; a copied session continues from
    # a random start, so that a copied marker never matches one of its own runs.
    st.session_state[RUN_ID_KEY] = secrets.randbits(48)
    return True


def _show_notice() -> None:
    note = st.session_state.pop(NOTICE_KEY, None)
    if note:
        st.toast(note, icon=":material/info:")


def save() -> None:
    """At the end of a run: keep (references to) this session's work under its key, bound to this browser (not at
    all where the server cannot tell browsers apart)."""
    token = st.session_state.get(TOKEN_KEY)
    browser = browser_secret()
    if token is None or browser is None:
        return
    values = {k: st.session_state[k] for k in list(st.session_state.keys()) if is_work(k)}
    size = estimate_size(values)
    with _STORE.locked():
        if size > policy().kept_bytes:  # larger than everything allowed: not kept (a refresh starts afresh)
            _STORE.pop(token, None)
            return
        now = time.time()
        _STORE.put(token, _Entry(values, size, now, browser), now)


class ShareTooLarge(ValueError):
    """A read-only link was asked for work larger than everything the server keeps (``KEPT_MB``)."""


def share() -> str:
    """A snapshot of this session's work under a new share key (replacing this session's earlier one), for
    ``SHARE_HOURS``; returns the key. The snapshot is a deep copy: later changes here do not reach it.

    Work larger than ``KEPT_MB`` is refused (:class:`ShareTooLarge`, before any copy is made), as :func:`save`
    does: kept, it would evict every other session's work and then itself, leaving a dead link. The session's
    earlier link, if any, stays as it was."""
    current = {k: st.session_state[k] for k in list(st.session_state.keys()) if is_work(k)}
    size = estimate_size(current)
    limit = policy().kept_bytes
    if size > limit:
        raise ShareTooLarge(
            f"This session's work (about {size / 2**20:,.1f} MB) is larger than the server keeps for all sessions "
            f"(KEPT_MB = {limit / 2**20:,.1f} MB), so no read-only link was made: share smaller work, or ask the "
            "operator to raise KEPT_MB.")
    values = copy.deepcopy(current)
    key = _new_token()
    now = time.time()
    with _STORE.locked():
        old = st.session_state.get(OWN_SHARE_KEY)
        if old:
            _STORE.pop(old, None)
        _STORE.put(key, _Entry(values, size, now, None, now + policy().share_hours * 3600,
                               st.session_state.get(TOKEN_KEY)), now)
    st.session_state[OWN_SHARE_KEY] = key
    return key


def revoke_share() -> None:
    """The read-only link of this session stops working at once."""
    key = st.session_state.pop(OWN_SHARE_KEY, None)
    if key:
        _STORE.pop(key, None)


def shared_link() -> tuple[str, float] | None:
    """This session's live read-only link key and when it expires, or None."""
    key = st.session_state.get(OWN_SHARE_KEY)
    with _STORE.locked():
        entry = _STORE.get(key, touch=False) if key else None
        if entry is None or entry.expires is None or entry.expires < time.time():
            return None
        return key, entry.expires


def forget() -> None:
    """Start fresh: this key's kept work and its read-only link are dropped, the session's state cleared, and a new
    key is made."""
    token = st.session_state.get(TOKEN_KEY)
    revoke_share()
    if token is not None:
        _STORE.pop(token, None)
    for key in list(st.session_state.keys()):
        del st.session_state[key]
    st.session_state[RESTORED_KEY] = True
    st.session_state[TOKEN_KEY] = _new_token()
    st.query_params[QUERY_KEY] = st.session_state[TOKEN_KEY]


def kept_sessions() -> dict:
    """``{key: estimated bytes}`` of the kept work and snapshots (for tests and the operator)."""
    return {k: e.size for k, e in _STORE.items()}
