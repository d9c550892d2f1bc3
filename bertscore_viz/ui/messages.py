"""Showing the engine's errors and warnings where the user is looking, as plain text (never HTML)."""

from __future__ import annotations

from typing import Iterable

import streamlit as st

from ..errors import BertScoreVizError


_MD_SPECIAL = set("\\`*_{}[]()<>#+-.!|$~:")


def escape_markdown(text: str) -> str:
    """Backslash-escape every character Streamlit's markdown would interpret (so ``**x**``, ``$x$``,
    ``<script>`` and links show literally)."""
    return "".join("\\" + ch if ch in _MD_SPECIAL else ch for ch in str(text))


def show_error(exc: BertScoreVizError | str) -> None:
    """The engine's own errors are messages; anything else is a bug and is not caught here."""
    st.error(escape_markdown(str(exc)), icon=":material/error:")


def show_warnings(warnings: Iterable[str]) -> None:
    for w in warnings:
        st.warning(escape_markdown(w), icon=":material/warning:")


def progress_callback(label: str):
    """A ``progress(done, total)`` function drawing a Streamlit progress bar with counts; call ``.empty()`` after."""
    bar = st.progress(0.0, text=f"{label}…")

    def update(done: int, total: int) -> None:
        frac = 1.0 if total == 0 else min(1.0, done / total)
        bar.progress(frac, text=f"{label}: {done:,} / {total:,} sentences")

    update.bar = bar  # type: ignore[attr-defined]
    return update
