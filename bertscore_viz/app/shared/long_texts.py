"""The switch between truncating long texts (bert-score's) and scoring them whole in windows, drawn where a text
longer than the model's maximum was met: next to Inspect's truncation warning, above Compare's scoring warnings,
and on the walkthrough. The sidebar reads its value before the page runs (``Settings.long_texts``), so the model
pass, the signature and every page follow it."""

from __future__ import annotations

import streamlit as st

__all__ = ["LONG_TEXTS_KEY", "describe", "describe_cuts", "long_text_switch", "window_caption"]

#: The session key of the switch (kept across pages by state/widgets.py and across refreshes by shared/persist.py).
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


def describe_cuts(row_cuts: list[float], col_cuts: list[float], shape: tuple[int, int],
                  visible: tuple[int, int] | None = None, first: int = 1) -> str:
    """Where a figure's dashed window boundaries are, in words (pure, for tests): ``row_cuts``/``col_cuts`` are the
    figure's cell coordinates (between cells), ``shape`` its rows x columns, ``visible`` the rows x columns shown
    before panning (None: all of it), ``first`` the number of the first row and column on the axis labels. Empty
    when there is no boundary."""
    if not row_cuts and not col_cuts:
        return ""

    def where(cuts: list[float], axis: str, n: int) -> str:
        if not cuts:
            return f"none among the {n:,} {axis}s"
        nums = [f"{int(c + 0.5) + first:,}" for c in cuts]
        listed = nums[0] if len(nums) == 1 else ", ".join(nums[:-1]) + " and " + nums[-1]
        return f"before {axis}{'s' if len(nums) != 1 else ''} {listed} of {n:,}"

    rows, cols = shape
    text = ("Dashed lines mark window boundaries (past one, the vectors come from the next window): "
            f"{where(row_cuts, 'candidate row', rows)}; {where(col_cuts, 'reference column', cols)}.")
    if visible is not None:
        vr, vc = visible
        hidden = [c for c in row_cuts if c > vr - 0.5] + [c for c in col_cuts if c > vc - 0.5]
        if hidden:
            text += (f" {len(hidden)} of them {'lie' if len(hidden) != 1 else 'lies'} beyond the first "
                     f"{vr:,} × {vc:,} shown: drag to pan there, or double-click to see all.")
    return text


def window_caption(meta, first: int = 1) -> None:
    """Under a figure that marks window boundaries (its layout ``meta``: ``window_cuts``, ``shape``, ``window``,
    ``windowed``), where they are (:func:`describe_cuts`); nothing without a boundary."""
    cuts = meta["window_cuts"]
    if cuts["rows"] or cuts["cols"]:
        st.caption(describe_cuts(cuts["rows"], cuts["cols"], tuple(meta["shape"]),
                                 tuple(meta["window"]) if meta["windowed"] else None, first=first))


def long_text_switch(n_long: int, n_cut: int, max_length: int, mode: str, detail: str = "") -> None:
    """The switch and what it changes; nothing when no text is longer than the model's maximum and window mode is
    off (when it is on, the switch stays in view to turn it off). ``detail``: which texts were cut, added after
    the count (Inspect names the candidate and the references)."""
    if n_long <= 0 and mode != "window":
        return
    box = st.container(border=True)
    box.toggle("Score long texts whole (window mode)", key=LONG_TEXTS_KEY,
               help="Off: texts longer than the model's maximum are cut there, as bert-score does (the tail is not "
                    "scored). On: they are embedded in overlapping windows of the maximum length and scored whole; "
                    "texts that fit score exactly as before. Applies to every page; in the signature.")
    text = describe(n_long, n_cut, max_length, mode)
    if detail and mode != "window" and n_long:
        text = text.replace(". Switch on window mode", f" {detail}. Switch on window mode", 1)
    box.caption((":material/content_cut: " if mode != "window" and n_long else "") + text)
