"""Showing the engine's errors and warnings where the user is looking, as plain text (never HTML), and without the
server's own directories (a safety net: the messages themselves name files relative to the repository)."""

from __future__ import annotations

import os
import sys
from functools import lru_cache
from pathlib import Path
from typing import Iterable

import streamlit as st

from bertscore_viz.errors import BertScoreVizError

_MD_SPECIAL = set("\\`*_{}[]()<>#+-.!|$~:")


@lru_cache(maxsize=1)
def _server_roots() -> tuple[str, ...]:
    """The server's directories a message must not reveal, longest first: the app's repository, the Python
    environment, the user's home (a message keeps what lies below them, e.g. ``baselines/en/x.tsv``)."""
    roots = {str(Path(__file__).resolve().parents[2]), sys.prefix, os.path.realpath(sys.prefix),
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


def progress_callback(label: str):
    """A ``progress(done, total)`` function drawing a Streamlit progress bar with counts; call ``.empty()`` after."""
    bar = st.progress(0.0, text=f"{label}…")

    def update(done: int, total: int) -> None:
        frac = 1.0 if total == 0 else min(1.0, done / total)
        bar.progress(frac, text=f"{label}: {done:,} / {total:,} sentences")

    update.bar = bar  # type: ignore[attr-defined]
    return update
