"""What every figure of a pair shares: the tokens an axis shows and their labels (word pieces merged or not,
special tokens shown or not, a region of a long pair), the value of each cell (cosine, or rescaled with the F
baseline), block maxima for the overview of a long pair, and the layout of the alignment view (each sentence
wrapped onto lines of a given width, every token placed so that no two labels overlap; the bands of the interactive
figure) and the colours of its links (pale ones darkened to stay visible on white, in both kinds of figure)."""

from __future__ import annotations

import html
import math
from dataclasses import dataclass

import numpy as np

from bertscore_viz.engine.results import PairExplanation, TokenSide
from bertscore_viz.errors import InputError

__all__ = ["Axis", "AlignmentLayout", "BAND_GAP", "LABEL_PX", "LINK_MAX_LUMINANCE", "LINK_MIN_WIDTH", "LINK_PX",
           "PANEL_HEAD", "SideLayout", "WINDOW_COLOR", "WINDOW_LINE", "WINDOW_RGB", "alignment_bands",
           "alignment_layout", "alignment_nodes", "axis_for", "block_max", "cell_values", "esc", "link_colour",
           "link_rgb", "node_labels", "score_text", "shown_positions", "token_label", "window_cut_cells",
           "window_lines", "wrap_units"]


def esc(text: str) -> str:
    """Escape text for a Plotly label (HTML-like tags shown literally)."""
    return html.escape(str(text), quote=False)


def token_label(side: TokenSide, i: int) -> str:
    """The readable text of token ``i`` (specials by their piece, ``[CLS]``)."""
    return side.tokens[i] if side.special[i] else side.display[i]


def score_text(x) -> str:
    """A score as a figure prints it: 4 decimals, ``n/a`` when undefined (NaN recall of degenerate idf), as the
    page's metric tiles do."""
    return "n/a" if x is None or not np.isfinite(float(x)) else f"{float(x):.4f}"


@dataclass(frozen=True)
class Axis:
    """The tokens of one side that a figure shows, and their tick labels."""

    positions: np.ndarray  # token positions shown, in order
    tickvals: list
    ticktext: list
    word_bounds: list  # axis coordinates between words (merged view)


def shown_positions(side: TokenSide, show_special: bool) -> np.ndarray:
    """Token positions a figure shows: all, or all but CLS/SEP."""
    return np.arange(len(side)) if show_special else np.flatnonzero(~side.special)


def axis_for(side: TokenSide, show_special: bool, merge_words: bool, span: tuple[int, int] | None = None) -> Axis:
    """One side's axis.

    Args:
        side: the tokens.
        show_special: include CLS/SEP.
        merge_words: one tick label per word (centred on its pieces) instead of one per piece.
        span: ``(start, stop)`` over the shown tokens (a region of a long pair); None = all of them.

    Returns:
        :class:`Axis` with coordinates 0 .. n-1 over the tokens of the span.
    """
    pos = shown_positions(side, show_special)
    if span is not None:
        pos = pos[max(0, int(span[0])):max(0, int(span[1]))]
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

    Raises:
        InputError: ``rescaled=True`` for an explanation without a baseline.
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


def block_max(values: np.ndarray, block: int) -> np.ndarray:
    """The maximum of each ``block`` x ``block`` square of a matrix (the last row and column of blocks may be
    smaller), for the overview of a long pair.

    Args:
        values: ``(n, m)``.
        block: side of a block in cells, at least 1.

    Returns:
        ``(ceil(n / block), ceil(m / block))``; empty for an empty matrix.
    """
    values = np.asarray(values, dtype=np.float64)
    block = max(1, int(block))
    n, m = values.shape
    nb, mb = -(-n // block), -(-m // block)
    if not n or not m:
        return np.zeros((nb, mb))
    padded = np.full((nb * block, mb * block), -np.inf)
    padded[:n, :m] = values
    return padded.reshape(nb, block, mb, block).max(axis=(1, 3))


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


# --- the alignment view's layout ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class SideLayout:
    """Where one sentence's tokens sit in a wrapped alignment figure.

    Attributes:
        nodes: token positions drawn, in order ``(k,)``.
        labels: the text drawn at each node (merged words: the word on its first piece, "" on the others).
        x: horizontal place of each node on its line ``(k,)``, in the layout's units, from 0.
        line: the line (band) each node is on ``(k,)``.
        label_width: width of each node's label ``(k,)`` in the layout's units.
    """

    nodes: np.ndarray
    labels: list
    x: np.ndarray
    line: np.ndarray
    label_width: np.ndarray


@dataclass(frozen=True)
class AlignmentLayout:
    """Both sentences wrapped onto ``n_lines`` bands: band ``b`` holds line ``b`` of the candidate above line ``b``
    of the reference; ``width`` is the widest line including the halves of its end labels (every label lies
    within ``[0, width]``)."""

    cand: SideLayout
    ref: SideLayout
    n_lines: int
    width: float


def alignment_nodes(pair: PairExplanation, show_special: bool) -> tuple[np.ndarray, np.ndarray]:
    """Token positions the alignment draws on each side: the shown ones, plus any special token that is the best
    match of a shown real token (it takes part in the matching). Returns ``(cand_nodes, ref_nodes)``."""
    c_shown, r_shown = shown_positions(pair.cand, show_special), shown_positions(pair.ref, show_special)
    c_nodes = sorted(set(c_shown.tolist())
                     | {int(i) for i in pair.ref_best_index[r_shown] if pair.cand.special[int(i)]})
    r_nodes = sorted(set(r_shown.tolist())
                     | {int(j) for j in pair.cand_best_index[c_shown] if pair.ref.special[int(j)]})
    return np.asarray(c_nodes, dtype=np.int64), np.asarray(r_nodes, dtype=np.int64)


def node_labels(side: TokenSide, pos: np.ndarray, merge_words: bool) -> list[str]:
    """The text at each node (not escaped): a piece, or with ``merge_words`` the word on its first piece and ""
    on the others."""
    out, last = [], None
    for p in pos:
        w = side.word_index[p]
        if merge_words and w >= 0:
            out.append("" if w == last else "".join(token_label(side, int(q))
                                                     for q in np.flatnonzero(side.word_index == w)))
        else:
            out.append(token_label(side, int(p)))
        last = w
    return out


def _place(side: TokenSide, pos: np.ndarray, labels: list[str], merge_words: bool, char: float, gap: float,
           piece: float) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """Unwrapped x of every node (labels centred on their node, ``gap`` apart; merged pieces ``piece`` apart),
    each label's width, and where each word (a unit never split across lines) starts."""
    xs, widths, starts = [], [], []
    right, last_w = -math.inf, None
    for k, p in enumerate(pos):
        w = side.word_index[p]
        width = char * len(labels[k])
        same_word = w >= 0 and w == last_w
        if not same_word:
            starts.append(k)
        if not xs:
            x = width / 2
        elif merge_words and same_word:
            x = xs[-1] + piece
        else:
            x = max(xs[-1] + piece, right + gap + width / 2)
        xs.append(x)
        widths.append(width)
        right = max(right, x + width / 2, x + piece / 2)
        last_w = w
    return np.asarray(xs, dtype=np.float64), np.asarray(widths, dtype=np.float64), starts


def wrap_units(left: np.ndarray, right: np.ndarray, n_lines: int) -> list[int]:
    """Split a row of units (words) into ``n_lines`` lines of about equal width.

    Args:
        left, right: each unit's extent ``(u,)`` on the unwrapped row, increasing.
        n_lines: lines wanted.

    Returns:
        the index of the first unit of each line after the first (at most ``n_lines - 1``, increasing).
    """
    if not len(left) or n_lines <= 1:
        return []
    total = float(right[-1] - left[0])
    cuts = []
    for b in range(1, n_lines):
        target = left[0] + total * b / n_lines
        k = int(np.searchsorted(left, target))
        k = min(max(k, (cuts[-1] + 1) if cuts else 1), len(left) - 1)
        if not cuts or k > cuts[-1]:
            cuts.append(k)
    return sorted(set(c for c in cuts if 0 < c < len(left)))


def _lines_of(xs: np.ndarray, widths: np.ndarray, starts: list[int], n_lines: int
              ) -> tuple[np.ndarray, np.ndarray, float]:
    """Wrap placed nodes onto ``n_lines`` lines at word starts: ``(x on its line, line, widest line)``."""
    n = len(xs)
    if not n:
        return np.zeros(0), np.zeros(0, dtype=np.int64), 0.0
    ends = starts[1:] + [n]
    left = np.array([min(xs[s:e] - widths[s:e] / 2) for s, e in zip(starts, ends)])
    right = np.array([max(xs[s:e] + widths[s:e] / 2) for s, e in zip(starts, ends)])
    cut_units = wrap_units(left, right, n_lines)
    firsts = [0] + [starts[u] for u in cut_units]
    line = np.zeros(n, dtype=np.int64)
    out = np.zeros(n)
    widest = 0.0
    for b, first in enumerate(firsts):
        stop = firsts[b + 1] if b + 1 < len(firsts) else n
        seg_left = float(min(xs[first:stop] - widths[first:stop] / 2))
        out[first:stop] = xs[first:stop] - seg_left
        line[first:stop] = b
        widest = max(widest, float(max(out[first:stop] + widths[first:stop] / 2)))
    return out, line, widest


def alignment_layout(pair: PairExplanation, show_special: bool = False, merge_words: bool = False,
                     wrap: float = 1000.0, char: float = 7.2, gap: float = 12.0, piece: float = 16.0
                     ) -> AlignmentLayout:
    """Place both sentences' tokens on as many lines as it takes for each line to fit ``wrap`` (a word is never
    split; a single word wider than ``wrap`` gets a line of its own). Both sentences get the same number of lines,
    each split into lines of about equal width, so that line ``b`` of the candidate faces the part of the reference
    at the same relative place.

    Args:
        pair: the explanation.
        show_special: draw CLS/SEP (a special that is a real token's best match is drawn anyway).
        merge_words: label each word once (its pieces ``piece`` apart).
        wrap: width of a line, in the layout's units (pixels on the page, points in a static figure).
        char: width of one character of a label; gap: space between two labels; piece: least distance between
            two nodes.

    Returns:
        :class:`AlignmentLayout`.
    """
    c_nodes, r_nodes = alignment_nodes(pair, show_special)
    placed = []
    for side, nodes in ((pair.cand, c_nodes), (pair.ref, r_nodes)):
        labels = node_labels(side, nodes, merge_words)
        xs, widths, starts = _place(side, nodes, labels, merge_words, char, gap, piece)
        extent = float(max(xs + widths / 2)) if len(xs) else 0.0
        placed.append((nodes, labels, xs, widths, starts, extent))
    n_lines = max(1, max(math.ceil(extent / max(wrap, 1.0)) for *_, extent in placed))
    while True:
        sides = []
        for nodes, labels, xs, widths, starts, _ in placed:
            x, line, widest = _lines_of(xs, widths, starts, n_lines)
            sides.append((SideLayout(nodes, labels, x, line, widths), widest))
        widest = max(w for _, w in sides)
        # equal-width lines can overshoot by part of a word: one more line, until each fits (or holds one word)
        if widest <= wrap or n_lines >= max(len(p[4]) for p in placed):
            break
        n_lines += 1
    return AlignmentLayout(sides[0][0], sides[1][0], n_lines, max(widest, 1.0))


# --- the alignment view's bands and links ------------------------------------------------------------------------
#: Vertical layout of the alignment figure, in pixels: a panel's heading, a label's line, the links between the
#: candidate row and the reference row of a band, the space between bands.
PANEL_HEAD, LABEL_PX, LINK_PX, BAND_GAP = 36, 20, 66, 22
#: The alignment's links are never lighter than this relative luminance (WCAG 2): a contrast of at least 3:1
#: against the white background (1.05 / (0.30 + 0.05)), WCAG's minimum for graphics. The palette's pale middle
#: (yellow, a mid-range similarity) is darkened to it, its hue kept; darker colours are drawn as they are.
LINK_MAX_LUMINANCE = 0.30
#: The alignment figure's thinnest link, in pixels (solid and dotted alike).
LINK_MIN_WIDTH = 2.0


def alignment_bands(n_lines: int) -> tuple[int, dict]:
    """The height in pixels of the alignment figure's plot with ``n_lines`` bands in each of its two panels
    (precision ``"P"`` above recall ``"R"``), and where their rows are: ``rows[letter]`` has the y (pixels from the
    bottom) of the candidate row (``cand``) and of the reference row (``ref``) of every band, and of the panel's
    heading (``head``)."""
    band = 2 * LABEL_PX + LINK_PX + BAND_GAP
    height = 2 * (PANEL_HEAD + n_lines * band)
    rows = {}
    for k, letter in enumerate(("P", "R")):
        top = height - k * (PANEL_HEAD + n_lines * band) - PANEL_HEAD
        cand = [top - b * band - LABEL_PX for b in range(n_lines)]
        rows[letter] = {"cand": cand, "ref": [y - LINK_PX for y in cand], "head": top + PANEL_HEAD / 2}
    return height, rows


def link_rgb(rgb) -> tuple[float, float, float]:
    """An sRGB colour (floats in 0..1) as a link is drawn: darkened in linear light, hue kept, to a relative luminance
    (WCAG 2) of at most :data:`LINK_MAX_LUMINANCE`; darker colours unchanged. The interactive alignment
    (:func:`link_colour`) and the static image use it alike."""
    lin = [(c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4) for c in (float(x) for x in rgb[:3])]
    k = min(1.0, LINK_MAX_LUMINANCE / max(1e-12, 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]))
    return tuple(12.92 * c * k if c * k <= 0.0031308 else 1.055 * (c * k) ** (1 / 2.4) - 0.055 for c in lin)


def link_colour(colour: str) -> str:
    """A Plotly ``rgb(r, g, b)`` colour darkened by :func:`link_rgb` (rounded down: never lighter)."""
    r, g, b = link_rgb([float(v) / 255 for v in colour[colour.index("(") + 1:colour.index(")")].split(",")[:3]])
    return f"rgb({int(r * 255)}, {int(g * 255)}, {int(b * 255)})"
