"""The switch between truncating long texts (bert-score's) and scoring them whole in windows, drawn where a text
longer than the model's maximum was met: next to Inspect's truncation warning, above Compare's scoring warnings,
and on the walkthrough. The sidebar reads its value before the page runs (``Settings.long_texts``), so the model
pass, the signature and every page follow it."""

from __future__ import annotations

import streamlit as st

#: The session key of the switch (kept across pages by ui/state.py and across refreshes by ui/persist.py).
LONG_TEXTS_KEY = "long_texts_window"


def describe(n_long: int, n_cut: int, max_length: int, mode: str) -> str:
    """What happened to the long texts, in words (pure, for tests)."""
    texts = f"{n_long:,} text{'s' if n_long != 1 else ''}"
    if n_long == 0:
        return (f"No text here is longer than the model's maximum of {max_length} tokens: window mode changes "
                "nothing for them (it is on for every page).")
    if mode == "window":
        return (f"{texts} longer than the model's maximum of {max_length} tokens "
                f"{'are' if n_long != 1 else 'is'} scored whole, in overlapping windows of {max_length} tokens "
                "(each token's vector from the window where it has the most context; the signature ends in "
                "_window).")
    return (f"{texts} longer than the model's maximum of {max_length} tokens {'were' if n_long != 1 else 'was'} "
            f"truncated: {n_cut:,} token{'s' if n_cut != 1 else ''} at the end{'s' if n_long != 1 else ''} "
            "were not scored. Switch on window mode to score them whole.")


def long_text_switch(n_long: int, n_cut: int, max_length: int, mode: str) -> None:
    """The switch and what it changes; nothing when no text is longer than the model's maximum and window mode is
    off (when it is on, the switch stays in view to turn it off)."""
    if n_long <= 0 and mode != "window":
        return
    box = st.container(border=True)
    box.toggle("Score long texts whole (window mode)", key=LONG_TEXTS_KEY,
               help="Off: texts longer than the model's maximum are cut there, as bert-score does (the tail is not "
                    "scored). On: they are embedded in overlapping windows of the maximum length and scored whole; "
                    "texts that fit score exactly as before. Applies to every page; in the signature.")
    box.caption(describe(n_long, n_cut, max_length, mode))
