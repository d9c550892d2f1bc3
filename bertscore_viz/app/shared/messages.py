"""Showing the engine's errors and warnings where the user is looking, as plain text (never HTML), and without the
server's own directories (a safety net: the messages themselves name files relative to the repository)."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

import streamlit as st

from bertscore_viz.errors import BertScoreVizError
from bertscore_viz.locations import PACKAGE_DIR

__all__ = ["hide_server_paths", "escape_markdown", "show_error", "show_warnings", "duration", "progress_text",
           "progress_callback"]

_MD_SPECIAL = set("\\`*_{}[]()<>#+-.!|$~:")


@lru_cache(maxsize=1)
def _server_roots() -> tuple[str, ...]:
    """The server's directories a message must not reveal, longest first: the app's repository, the Python
    environment, the user's home (a message keeps what lies below them, e.g. ``baselines/en/x.tsv``)."""
    roots = {str(PACKAGE_DIR.parent), sys.prefix, os.path.realpath(sys.prefix),
             str(Path.home())}
    return tuple(sorted((r.rstrip(os.sep) for r in roots if len(r) > 1), key=len, reverse=True))


def hide_server_paths(text: str) -> str:
    """``text`` with the server's directories (see :func:`_server_roots`) replaced by ``…``."""
    for root in _server_roots():
        text = text.replace(root + os.sep, "…" + os.sep).replace(root, "…")
    return text


def escape_markdown(text: str) -> str:
    """Backslash-escape every character Streamlit's markdown would interpret (so ``**x**``, ``$x$``,
    ``<script>`` and links show literally)."""
    return "".join("\\" + ch if ch in _MD_SPECIAL else ch for ch in str(text))


def show_error(exc: BertScoreVizError | str) -> None:
    """The engine's own errors are messages; anything else is a bug and is not caught here."""
    st.error(escape_markdown(hide_server_paths(str(exc))), icon=":material/error:")


def show_warnings(warnings: Iterable[str]) -> None:
    for w in warnings:
        st.warning(escape_markdown(hide_server_paths(w)), icon=":material/warning:")


def duration(seconds: float) -> str:
    """``42 s``, ``3 min 05 s``, ``1 h 02 min``: how long, as people read it."""
    seconds = max(0, int(round(seconds)))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


def progress_text(label: str, done: int, total: int, elapsed: float, unit: str = "sentences") -> str:
    """``label: 1,200 / 5,875 sentences · 0 min 12 s, about 47 s left`` (the estimate once 2 s and some work have
    passed: the rate so far, applied to what is left)."""
    text = f"{label}: {done:,} / {total:,} {unit}"
    if elapsed >= 2 and 0 < done < total:
        text += f" · {duration(elapsed)}, about {duration(elapsed * (total - done) / done)} left"
    elif elapsed >= 2:
        text += f" · {duration(elapsed)}"
    return text


def progress_callback(label: str, unit: str = "sentences"):
    """A ``progress(done, total)`` function drawing a Streamlit progress bar with counts, the time taken and an
    estimate of the time left; call ``.bar.empty()`` after."""
    bar = st.progress(0.0, text=f"{label}…")
    start = time.monotonic()

    def update(done: int, total: int) -> None:
        frac = 1.0 if total == 0 else min(1.0, done / total)
        bar.progress(frac, text=progress_text(label, done, total, time.monotonic() - start, unit))

    update.bar = bar  # type: ignore[attr-defined]
    return update
