"""What every figure of a pair shares: the tokens an axis shows and their labels (word pieces merged or not,
special tokens shown or not) and the value of each cell (cosine, or rescaled with the F baseline)."""

from __future__ import annotations

import html
from dataclasses import dataclass

import numpy as np

from bertscore_viz.engine.results import PairExplanation, TokenSide
from bertscore_viz.errors import InputError


def esc(text: str) -> str:
    """Escape text for a Plotly label (HTML-like tags shown literally)."""
    return html.escape(str(text), quote=False)


def token_label(side: TokenSide, i: int) -> str:
    return side.tokens[i] if side.special[i] else side.display[i]


@dataclass(frozen=True)
class Axis:
    """The tokens of one side that a figure shows, and their tick labels."""

    positions: np.ndarray  # token positions shown, in order
    tickvals: list
    ticktext: list
    word_bounds: list  # axis coordinates between words (merged view)


def shown_positions(side: TokenSide, show_special: bool) -> np.ndarray:
    return np.arange(len(side)) if show_special else np.flatnonzero(~side.special)


def axis_for(side: TokenSide, show_special: bool, merge_words: bool) -> Axis:
    pos = shown_positions(side, show_special)
    if not merge_words:
        return Axis(pos, list(range(len(pos))), [esc(token_label(side, int(p))) for p in pos], [])
    tickvals, ticktext, bounds = [], [], []
    k = 0
    while k < len(pos):
        w = side.word_index[pos[k]]
        end = k + 1
        if w >= 0:
            while end < len(pos) and side.word_index[pos[end]] == w:
                end += 1
        text = "".join(token_label(side, int(p)) for p in pos[k:end]) if w >= 0 else token_label(side, int(pos[k]))
        tickvals.append((k + end - 1) / 2)
        ticktext.append(esc(text))
        if k > 0:
            bounds.append(k - 0.5)
        k = end
    return Axis(pos, tickvals, ticktext, bounds)


def cell_values(pair: PairExplanation, rescaled: bool | None = None) -> tuple[np.ndarray, float | None]:
    """The heatmap's cell values: cosine, or rescaled with the F baseline (``(s - b_F) / (1 - b_F)``).

    Args:
        rescaled: None = rescale when the explanation carries a baseline.

    Returns:
        ``(values (n_cand, n_ref) float64, b_F or None)``.
    """
    sim = np.asarray(pair.similarity, dtype=np.float64)
    if rescaled is None:
        rescaled = pair.baseline is not None
    if not rescaled:
        return sim, None
    if pair.baseline is None:
        raise InputError("This explanation has no baseline: explain it with rescaling on to draw rescaled cells.")
    b = float(pair.baseline[2])
    return (sim - b) / (1.0 - b), b


#: The dashed lines where window mode's windows meet (a long text's vectors come from several windows).
WINDOW_RGB = (214, 96, 0)
WINDOW_COLOR = "rgba({},{},{},0.9)".format(*WINDOW_RGB)
WINDOW_LINE = dict(color=WINDOW_COLOR, width=2, dash="dash")


def window_lines(col_cuts: list[float], row_cuts: list[float], name: str) -> tuple[list[dict], list[dict]]:
    """Plotly shapes of dashed window boundaries (a vertical line at each column cut, a horizontal one at each row
    cut, in cell coordinates) and the legend entry that names them (none without a cut): ``(shapes, traces)``."""
    shapes = ([dict(type="line", x0=c, x1=c, y0=0, y1=1, xref="x", yref="paper", line=WINDOW_LINE) for c in col_cuts]
              + [dict(type="line", y0=c, y1=c, x0=0, x1=1, yref="y", xref="paper", line=WINDOW_LINE)
                 for c in row_cuts])
    traces = [dict(type="scatter", x=[None], y=[None], mode="lines", hoverinfo="skip", line=WINDOW_LINE, name=name)]
    return shapes, traces if shapes else []


def window_cut_cells(side, positions) -> list[float]:
    """Cell coordinates (between two cells) of ``side``'s window boundaries, on an axis showing ``positions``
    (token positions in order): where the first shown token of each window after the first begins."""
    out = []
    positions = np.asarray(positions)
    for cut in getattr(side, "window_cuts", []):
        k = int(np.searchsorted(positions, cut))
        if 0 < k < len(positions):
            out.append(k - 0.5)
    return out
