"""Plotly figures of a pair explanation (no Streamlit): the similarity heatmap, its overview for long pairs, and the
alignment view.

The heatmap is the counterpart of bert-score's ``bert-score-show`` (``bert_score.plot_example``): candidate
tokens as rows, reference tokens as columns, colour = cosine similarity; with rescaling on, every cell is
rescaled with the **F** baseline, ``(s - b_F) / (1 - b_F)``, as ``plot_example`` does. Added here: each row's
greedy maximum (the candidate token's best match, precision side) and each column's (the reference token's
best match, recall side) are marked, and the hover gives both tokens, the similarity, the idf weights and
whether the cell is a row or column maximum.

The whole pair is drawn, never cropped: cells of at least 16 px, labels of 12 px. Given the width of its column
(``max_width``) the heatmap fits it, its cells shrinking down to 16 px; a pair too wide for that
(:func:`heatmap_fits`) or longer than :data:`WHOLE_TOKENS` a side opens on :func:`overview_figure` (each cell the
maximum over a block of tokens, window boundaries marked), and any region of it is drawn at full resolution by
``heatmap_figure(pair, rows=(a, b), cols=(c, d))``. Without a width (the downloads) the heatmap takes its natural
size. The alignment wraps each sentence onto lines of the figure's width
(:func:`bertscore_viz.figures.cells.alignment_layout`): every token and every line in view.

Text typed by users ends up in labels: it is HTML-escaped (Plotly reads ``<b>``, ``<a>``, ``<br>`` in labels),
and figures should be shown with :data:`PLOTLY_CONFIG` (``typesetMath: False``), so ``$x$`` is not LaTeX.
"""

from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go
from plotly.colors import sample_colorscale

from bertscore_viz.engine.results import PairExplanation
from bertscore_viz.figures.cells import (
    LINK_MIN_WIDTH,
    alignment_bands,
    alignment_layout,
    axis_for,
    block_max,
    cell_values,
    esc,
    link_colour,
    score_text,
    shown_positions,
    token_label,
    window_cut_cells,
    window_lines,
)

__all__ = ["ALIGN_SCALE", "ALIGN_WIDTH", "CHAR_PX", "COLORSCALE", "COL_MAX_COLOR", "COMPACT_HOVER_CELLS",
           "LABEL_CHARS", "MIN_CELL_PX", "MINIMAL_HOVER_CELLS", "MINIMAL_HOVER_NOTE", "OVERVIEW_CELLS", "PLOTLY_CONFIG",
           "ROW_MAX_COLOR", "WHOLE_TOKENS", "alignment_figure", "cell_px", "esc", "figure_height", "figure_html",
           "fit_columns", "heatmap_figure", "heatmap_fits", "heatmap_size", "label_extent", "longest_labels",
           "needs_overview", "overview_figure", "x_angle"]

#: Plotly config for showing these figures: text is never typeset as math; PNG export at 2x.
PLOTLY_CONFIG = {"typesetMath": False, "displaylogo": False,
                 "toImageButtonOptions": {"format": "png", "scale": 2}}
COLORSCALE = "Blues"
ROW_MAX_COLOR = "#d62728"
COL_MAX_COLOR = "#f28e2b"
#: Above this many cells the hover text is shortened (C = candidate, R = reference, idf in brackets).
COMPACT_HOVER_CELLS = 12_000
#: Above this many cells no text is made per cell: the hover gives the positions and the value (the axes carry
#: the tokens). A 512 x 512 pair made 35 MB of figure for every redraw; now about 3 MB.
MINIMAL_HOVER_CELLS = 40_000
MINIMAL_HOVER_NOTE = ("Long pair: the hover shows token positions (from 0, as on the axes) and the value; the "
                      "token table has every token's best match.")
#: Up to this many tokens a side the page draws the whole heatmap (200 x 200: 40,000 cells, each with its hover
#: text, about 3,500 px a side); a longer pair opens on the overview, and any region of it is drawn whole.
WHOLE_TOKENS = 200
#: Most aggregated cells a side of the overview (a 512 x 512 pair: blocks of 4 x 4 tokens).
OVERVIEW_CELLS = 128
#: Pixel side of the overview's plot area at most.
OVERVIEW_PX = 900
#: Smallest heatmap cell in pixels: a 12 px label per row, and vertical column labels 16 px apart.
MIN_CELL_PX = 16
#: Longest tick label, in characters; a longer one is cut with "…" (the hover has the whole token).
LABEL_CHARS = 28
#: Width of a character of a 12 px label (Plotly's default font), for margins and the alignment's spacing.
CHAR_PX = 7.2
#: The alignment figure's width when none is given (it wraps its lines to fit).
ALIGN_WIDTH = 1100
ALIGN_SCALE = "RdYlBu"
_PALETTE: list[str] = []


def cell_px(n_tokens: int) -> int:
    """Side of a heatmap cell in pixels: roomy for short pairs, denser (still legible: :data:`MIN_CELL_PX` cells,
    12 px labels) for long ones."""
    return 34 if n_tokens <= 12 else 28 if n_tokens <= 30 else 22 if n_tokens <= 80 else MIN_CELL_PX


def x_angle(cell: int, line_px: float = 14.0) -> int:
    """The column labels' angle. Parallel labels ``cell`` px apart at -50 degrees are ``cell * sin(50)`` px apart
    across their lines: they touch below a line height (about 14 px, i.e. cells under 18 px, long pairs), where
    vertical labels (``cell`` px apart) still fit."""
    return -50 if cell * 0.766 >= line_px else -90


def label_extent(n_chars: int, angle: float = 0.0) -> int:
    """Pixels a tick label of ``n_chars`` characters takes across its axis (horizontal: its width; slanted by
    ``angle`` degrees: its width's projection plus the line's height)."""
    n = min(int(n_chars), LABEL_CHARS)
    a = np.radians(abs(angle))
    return int(np.ceil(n * CHAR_PX * np.sin(a) + 14 * np.cos(a))) if angle else int(np.ceil(n * CHAR_PX))


def _margins(longest_row_label: int) -> tuple[int, int, int]:
    """``(left, right, bottom)`` of a heatmap: the row labels; the colour bar; the legend."""
    return 34 + label_extent(longest_row_label) + 8, 130, 76


def heatmap_size(n_rows: int, n_cols: int, longest_row_label: int = 8, longest_col_label: int = 8,
                 max_width: int | None = None) -> dict:
    """Pixel layout of a heatmap: square cells, margins sized for the labels and the colour bar.

    Args:
        n_rows, n_cols: cells; longest_row_label, longest_col_label: characters of the longest tick labels.
        max_width: the width of the column the figure is drawn in: cells shrink so that the figure fits it, down to
            :data:`MIN_CELL_PX` (a pair wider than that does not fit: :func:`heatmap_fits` is False, and the page
            opens it on the overview); the figure is never wider than ``max_width`` for its margins' sake. None =
            :func:`cell_px` of the pair's length (the downloads: the whole matrix at its natural size).

    Returns:
        dict with ``width``, ``height``, ``cell``, ``top``, ``left``, ``bottom``, ``right``.
    """
    left, right, bottom = _margins(longest_row_label)
    cell = cell_px(max(n_rows, n_cols))
    smallest = 560
    if max_width is not None:
        smallest = min(smallest, int(max_width))
        if n_cols:
            cell = max(min(cell, (int(max_width) - left - right) // n_cols), MIN_CELL_PX)
    top = 74 + label_extent(longest_col_label, x_angle(cell)) + 8  # title, axis title, labels
    return {"cell": cell, "top": top, "left": left, "bottom": bottom, "right": right,
            "width": max(smallest, left + right + cell * n_cols), "height": top + bottom + max(cell * n_rows, 150)}


def fit_columns(max_width: int, longest_row_label: int = 8) -> int:
    """The most reference tokens (columns) a heatmap of :data:`MIN_CELL_PX` cells can show within ``max_width``
    pixels, its row labels and colour bar included (at least 1)."""
    left, right, _ = _margins(longest_row_label)
    return max(1, (int(max_width) - left - right) // MIN_CELL_PX)


def heatmap_fits(n_cols: int, longest_row_label: int, max_width: int | None) -> bool:
    """Whether the heatmap of ``n_cols`` columns fits ``max_width`` pixels with cells of :data:`MIN_CELL_PX` or
    more (always, for no width)."""
    return max_width is None or n_cols <= fit_columns(max_width, longest_row_label)


def longest_labels(pair: PairExplanation, show_special: bool = False, merge_words: bool = False,
                   rows: tuple[int, int] | None = None, cols: tuple[int, int] | None = None) -> tuple[int, int]:
    """Characters of the longest row (candidate) and column (reference) tick label, as :func:`heatmap_figure`
    labels them (at most :data:`LABEL_CHARS`)."""
    ya, xa = axis_for(pair.cand, show_special, merge_words, rows), axis_for(pair.ref, show_special, merge_words, cols)
    return (min(LABEL_CHARS, max((len(html.unescape(t)) for t in ya.ticktext), default=1)),
            min(LABEL_CHARS, max((len(html.unescape(t)) for t in xa.ticktext), default=1)))


def figure_height(n_rows: int, n_cols: int | None = None) -> int:
    """Height in pixels of the heatmap of ``n_rows`` candidate tokens (grows linearly with the rows)."""
    return heatmap_size(n_rows, n_rows if n_cols is None else n_cols)["height"]


def needs_overview(pair: PairExplanation, show_special: bool = False, whole_tokens: int = WHOLE_TOKENS,
                   max_width: int | None = None, merge_words: bool = False) -> bool:
    """Whether the page opens this pair on the overview: more than ``whole_tokens`` tokens a side, or (with
    ``max_width``, the width of the column the heatmap is drawn in) more reference tokens than fit that width at
    :data:`MIN_CELL_PX` cells (:func:`heatmap_fits`): a figure is never wider than its column."""
    n_cols = len(shown_positions(pair.ref, show_special))
    if max(len(shown_positions(pair.cand, show_special)), n_cols) > whole_tokens:
        return True
    return not heatmap_fits(n_cols, longest_labels(pair, show_special, merge_words)[0], max_width)


def _short(label: str) -> str:
    """A tick label (escaped) cut to :data:`LABEL_CHARS` characters of text."""
    text = html.unescape(label)
    return label if len(text) <= LABEL_CHARS else esc(text[:LABEL_CHARS - 1] + "…")


def _title(pair: PairExplanation, note: str = "") -> str:
    p, r, f = pair.scores
    kind = "rescaled" if pair.rescaled is not None else "raw"
    return (f"P {score_text(p)} · R {score_text(r)} · F1 {score_text(f)} ({kind})<br><span style='font-size:11px'>"
            f"{esc(pair.signature.model)}, layer {pair.signature.layer}, "
            f"{'idf' if pair.signature.idf else 'no idf'}{note}</span>")


# --- the heatmap ---------------------------------------------------------------------------------------------------
def _not_shown(other, q: int, shown: set) -> str:
    """Hover line for a token whose best match (token ``q`` of ``other``) is not drawn: a hidden special token,
    or a token outside the region drawn."""
    if q in shown:
        return ""
    if other.special[q]:
        return f"<br>its best match is the hidden {esc(other.tokens[q])}"
    return f"<br>its best match {esc(token_label(other, q))} (token {q}) is outside this region"


def _cell_hover(pair: PairExplanation, values: np.ndarray, b_f, rows: np.ndarray, cols: np.ndarray,
                mode: str) -> list[list[str]]:
    """Hover text of every cell: ``mode`` "full" (both tokens, pieces, idf, value, maxima) or "compact" (lighter,
    for long pairs: the figure stays a few MB)."""
    sim_name = "rescaled similarity" if b_f is not None else "cosine similarity"
    cand_lbl = [esc(token_label(pair.cand, int(i))) for i in rows]
    ref_lbl = [esc(token_label(pair.ref, int(j))) for j in cols]
    cand_w = [f"{pair.cand.weights[int(i)]:.3f}" for i in rows]
    ref_w = [f"{pair.ref.weights[int(j)]:.3f}" for j in cols]
    shown_r, shown_c = set(rows.tolist()), set(cols.tolist())
    raw = pair.similarity
    text = []
    for a, i in enumerate(rows.tolist()):
        best_j = int(pair.cand_best_index[i])
        c_extra = f" [{esc(pair.cand.tokens[i])}] idf {cand_w[a]}" + _not_shown(pair.ref, best_j, shown_c)
        line = []
        for c, j in enumerate(cols.tolist()):
            r_max, c_max = best_j == j, int(pair.ref_best_index[j]) == i
            if mode == "compact":
                line.append(f"C <b>{cand_lbl[a]}</b> ({cand_w[a]}) · R <b>{ref_lbl[c]}</b> ({ref_w[c]})<br>"
                            f"{values[i, j]:.4f}" + (" · row max" if r_max else "")
                            + (" · column max" if c_max else ""))
                continue
            val = f"{sim_name} {values[i, j]:.4f}" + (f" (cosine {raw[i, j]:.4f})" if b_f is not None else "")
            line.append(
                f"candidate <b>{cand_lbl[a]}</b>{c_extra}<br>reference <b>{ref_lbl[c]}</b> [{esc(pair.ref.tokens[j])}]"
                f" idf {ref_w[c]}{_not_shown(pair.cand, int(pair.ref_best_index[j]), shown_r)}<br>{val}"
                + ("<br>row max: the candidate token's best match (precision)" if r_max else "")
                + ("<br>column max: the reference token's best match (recall)" if c_max else ""))
        text.append(line)
    return text


def _max_markers(pair: PairExplanation, rows: np.ndarray, cols: np.ndarray, off: tuple[int, int], cell: int
                 ) -> list[dict]:
    """Circles on each row's maximum (precision), crosses on each column's (recall), at figure coordinates
    (``off``: the region's first row and column); a maximum outside the figure is not marked."""
    pos_r = {int(p): k + off[0] for k, p in enumerate(rows)}
    pos_c = {int(p): k + off[1] for k, p in enumerate(cols)}
    rx = [pos_c[int(pair.cand_best_index[i])] for i in rows if int(pair.cand_best_index[i]) in pos_c]
    ry = [pos_r[int(i)] for i in rows if int(pair.cand_best_index[i]) in pos_c]
    cx = [pos_c[int(j)] for j in cols if int(pair.ref_best_index[j]) in pos_r]
    cy = [pos_r[int(pair.ref_best_index[j])] for j in cols if int(pair.ref_best_index[j]) in pos_r]
    return [dict(type="scatter", x=rx, y=ry, mode="markers", hoverinfo="skip",
                 name="row max: the candidate token's best match (P)",
                 marker=dict(symbol="circle-open", size=max(8, int(cell * 0.8)), color=ROW_MAX_COLOR,
                             line=dict(width=2))),
            dict(type="scatter", x=cx, y=cy, mode="markers", hoverinfo="skip",
                 name="column max: the reference token's best match (R)",
                 marker=dict(symbol="x-thin-open", size=max(5, int(cell * 0.42)), color=COL_MAX_COLOR,
                             line=dict(width=2)))]


def _colorbar(title: str, plot_h: int) -> dict:
    return dict(title=dict(text=title, side="top", font=dict(size=11)), thickness=12, lenmode="pixels",
                len=max(80, min(plot_h - 44, 320)), y=max(0.5, 1 - 44 / max(plot_h, 1)), yanchor="top", ypad=0)


def _heat_layout(title: str, size: dict, xa, ya, off: tuple[int, int], shape: tuple[int, int], shapes: list,
                 meta: dict) -> dict:
    """The heatmap's layout: pixel size and margins, axes with every token labelled, in figure coordinates."""
    n_r, n_c = shape
    return dict(
        title=dict(text=title, x=0, xanchor="left", xref="paper", y=1, yref="container", yanchor="top",
                   pad=dict(t=12), font=dict(size=14)), shapes=shapes,
        height=size["height"], width=size["width"], plot_bgcolor="white", dragmode="zoom", meta=meta,
        margin=dict(t=size["top"], b=size["bottom"], l=size["left"], r=size["right"], autoexpand=False),
        legend=dict(orientation="h", x=0, y=0, yref="container", yanchor="bottom", font=dict(size=11)),
        xaxis=dict(title=dict(text="reference tokens", standoff=6), side="top",
                   tickvals=[v + off[1] for v in xa.tickvals], ticktext=[_short(t) for t in xa.ticktext],
                   tickangle=x_angle(size["cell"]), tickfont=dict(size=12), showgrid=False, zeroline=False,
                   range=[off[1] - 0.5, off[1] + n_c - 0.5], automargin=False),
        yaxis=dict(title=dict(text="candidate tokens", standoff=6), tickvals=[v + off[0] for v in ya.tickvals],
                   ticktext=[_short(t) for t in ya.ticktext], tickfont=dict(size=12),
                   range=[off[0] + n_r - 0.5, off[0] - 0.5], showgrid=False, zeroline=False, automargin=False))


def heatmap_figure(pair: PairExplanation, show_special: bool = False, merge_words: bool = False,
                   rescaled: bool | None = None, title: str | None = None, rows: tuple[int, int] | None = None,
                   cols: tuple[int, int] | None = None, max_width: int | None = None):
    """Candidate tokens (rows) against reference tokens (columns), coloured by similarity: the whole pair, or a
    region of it.

    Args:
        pair: the explanation.
        show_special: include the CLS/SEP rows and columns (hidden by default; they still take part in the
            matching, and a hidden best match is named in the hover).
        merge_words: label the axes with words instead of pieces (cells stay pieces; pieces on hover).
        rescaled: None = rescaled when the explanation has a baseline; True/False to force.
        title: figure title (default: P/R/F1 and the signature's model and layer).
        rows, cols: ``(start, stop)`` over the shown tokens of each side: a region, drawn at full resolution with
            its coordinates those of the whole matrix (row ``start`` is at y = ``start``); None = all of them.
        max_width: the page's width in pixels: cells shrink to fit it, never below 16 px (a wider pair keeps its
            16 px cells and scrolls). None: :func:`cell_px` of the pair's length. Nothing is ever cropped.

    Returns:
        ``plotly.graph_objects.Figure`` of ``cell_px`` square cells (every token labelled); row maxima are marked
        with circles, column maxima with crosses. ``fig.layout.meta``: ``shape`` (rows, columns drawn),
        ``full_shape``, ``region``, ``hover`` ("tokens" or "positions"), ``window_cuts``, ``cell``.
    """
    values, b_f = cell_values(pair, rescaled)
    ya, xa = axis_for(pair.cand, show_special, merge_words, rows), axis_for(pair.ref, show_special, merge_words, cols)
    r_pos, c_pos = ya.positions, xa.positions
    full = (len(shown_positions(pair.cand, show_special)), len(shown_positions(pair.ref, show_special)))
    off = (max(0, int(rows[0])) if rows else 0, max(0, int(cols[0])) if cols else 0)
    z = values[np.ix_(r_pos, c_pos)] if len(r_pos) and len(c_pos) else np.zeros((len(r_pos), len(c_pos)))
    n_cells = len(r_pos) * len(c_pos)
    mode = "positions" if n_cells > MINIMAL_HOVER_CELLS else "compact" if n_cells > COMPACT_HOVER_CELLS else "full"
    size = heatmap_size(len(r_pos), len(c_pos), max((len(html.unescape(t)) for t in ya.ticktext), default=1),
                        max((len(html.unescape(t)) for t in xa.ticktext), default=1), max_width)
    sim_name = "rescaled similarity" if b_f is not None else "cosine similarity"
    hover = dict(hovertemplate="candidate token %{y} · reference token %{x}<br>" + sim_name
                 + " %{z:.4f}<extra></extra>") if mode == "positions" else dict(
        text=_cell_hover(pair, values, b_f, r_pos, c_pos, mode), hovertemplate="%{text}<extra></extra>")
    bar_title = "cosine similarity" if b_f is None else f"rescaled with the<br>F baseline {b_f:.3f}"
    data = [dict(type="heatmap", z=z, x0=off[1], dx=1, y0=off[0], dy=1, **hover, colorscale=COLORSCALE,
                 zmin=float(min(0.0, z.min())) if z.size else 0.0, zmax=1.0, xgap=int(mode != "positions"),
                 ygap=int(mode != "positions"), name="similarity",
                 colorbar=_colorbar(bar_title, size["height"] - size["top"] - size["bottom"]))]
    data += _max_markers(pair, r_pos, c_pos, off, size["cell"])
    sep = dict(color="rgba(0,0,0,0.25)", width=1)
    shapes = ([dict(type="line", x0=b + off[1], x1=b + off[1], y0=0, y1=1, xref="x", yref="paper", line=sep)
               for b in xa.word_bounds]
              + [dict(type="line", y0=b + off[0], y1=b + off[0], x0=0, x1=1, yref="y", xref="paper", line=sep)
                 for b in ya.word_bounds])
    # window mode: where the window a token's vector comes from changes (dashed), on both axes
    col_cuts = [c + off[1] for c in window_cut_cells(pair.ref, c_pos)]
    row_cuts = [c + off[0] for c in window_cut_cells(pair.cand, r_pos)]
    win_shapes, win_traces = window_lines(
        col_cuts, row_cuts, "window boundary: the vectors on either side come from different windows")
    region = (len(r_pos), len(c_pos)) != full
    if title is None:
        note = (f" · tokens {off[0] + 1}–{off[0] + len(r_pos)} of {full[0]} × {off[1] + 1}–{off[1] + len(c_pos)} "
                f"of {full[1]}") if region else ""
        title = _title(pair, note)
    meta = {"shape": [len(r_pos), len(c_pos)], "full_shape": list(full), "window": [len(r_pos), len(c_pos)],
            "windowed": False, "hover": "positions" if mode == "positions" else "tokens", "cell": size["cell"],
            "region": {"rows": [off[0], off[0] + len(r_pos)], "cols": [off[1], off[1] + len(c_pos)]} if region
            else None, "window_cuts": {"rows": row_cuts, "cols": col_cuts}}
    layout = _heat_layout(title, size, xa, ya, off, (len(r_pos), len(c_pos)), shapes + win_shapes, meta)
    return go.Figure(data=data + win_traces, layout=layout)


# --- the overview of a long pair ----------------------------------------------------------------------------------
def _number_ticks(n: int) -> tuple[list[int], list[str]]:
    """Tick places (from 0) and labels (token numbers from 1) for an axis of ``n`` tokens: about ten."""
    step = next((s for s in (10, 20, 25, 50, 100, 200, 250, 500, 1000) if n / s <= 12), 1000)
    vals = [0] + [t - 1 for t in range(step, n + 1, step)]
    return vals, [str(v + 1) for v in vals]


def overview_figure(pair: PairExplanation, show_special: bool = False, rescaled: bool | None = None,
                    region: tuple[tuple[int, int], tuple[int, int]] | None = None, title: str | None = None,
                    blocks: int = OVERVIEW_CELLS, max_width: int | None = None):
    """The whole matrix of a long pair at a glance: each cell the **maximum** similarity over a block of
    ``b x b`` tokens (``b`` the smallest that gives at most ``blocks`` cells a side), so that strong matches stay
    visible; window boundaries dashed; ``region`` (rows, columns as ``(start, stop)`` over the shown tokens)
    outlined. Axes are token numbers (from 1), in the coordinates of :func:`heatmap_figure`. ``max_width``: the
    width of the column it is drawn in; its cells shrink to fit it (down to 3 px: 128 blocks need 584 px).

    Returns:
        ``plotly.graph_objects.Figure``; ``fig.layout.meta``: ``overview`` True, ``block``, ``aggregate``
        ("max"), ``shape`` (tokens a side), ``window_cuts``.
    """
    values, b_f = cell_values(pair, rescaled)
    rows, cols = shown_positions(pair.cand, show_special), shown_positions(pair.ref, show_special)
    sub = values[np.ix_(rows, cols)]
    n_r, n_c = sub.shape
    block = max(1, -(-max(n_r, n_c, 1) // max(1, blocks)))
    z = block_max(sub, block)
    r0, c0 = np.arange(z.shape[0]) * block, np.arange(z.shape[1]) * block
    r1, c1 = np.minimum(r0 + block, n_r), np.minimum(c0 + block, n_c)
    custom = np.stack(np.broadcast_arrays(r0[:, None] + 1, r1[:, None], c0[None, :] + 1, c1[None, :]), axis=-1)
    top, left, bottom, right = 96, 70, 76, 130
    px = min(16, OVERVIEW_PX // max(1, *z.shape))
    if max_width is not None:
        px = min(px, (int(max_width) - left - right) // max(1, z.shape[1]))
    px = max(3, px)
    sim_name = "rescaled similarity" if b_f is not None else "cosine similarity"
    plot_w, plot_h = px * z.shape[1], px * z.shape[0]
    data = [dict(type="heatmap", z=z, x0=(block - 1) / 2, dx=block, y0=(block - 1) / 2, dy=block, customdata=custom,
                 hovertemplate=("candidate tokens %{customdata[0]}–%{customdata[1]} · reference tokens "
                                "%{customdata[2]}–%{customdata[3]}<br>largest " + sim_name
                                + " in the block %{z:.4f}<extra></extra>"),
                 colorscale=COLORSCALE, zmin=float(min(0.0, z.min())) if z.size else 0.0, zmax=1.0, name="block max",
                 colorbar=_colorbar("largest value<br>in each block", plot_h))]
    col_cuts, row_cuts = window_cut_cells(pair.ref, cols), window_cut_cells(pair.cand, rows)
    shapes, traces = window_lines(col_cuts, row_cuts, "window boundary (window mode)")
    if region is not None:
        (a, b), (c, d) = region
        shapes.append(dict(type="rect", x0=c - 0.5, x1=d - 0.5, y0=a - 0.5, y1=b - 0.5, xref="x", yref="y",
                           line=dict(color=ROW_MAX_COLOR, width=2), name="region"))
    xv, xt = _number_ticks(n_c)
    yv, yt = _number_ticks(n_r)
    layout = dict(
        title=dict(text=title or _title(pair, f" · overview: each cell the largest value over {block} × {block} "
                                              "tokens"),
                   x=0, xanchor="left", xref="paper", y=1, yref="container", yanchor="top", pad=dict(t=12),
                   font=dict(size=14)),
        shapes=shapes, width=max(560 if max_width is None else min(560, int(max_width)), left + right + plot_w),
        height=top + bottom + max(plot_h, 150),
        plot_bgcolor="white", margin=dict(t=top, b=bottom, l=left, r=right, autoexpand=False),
        legend=dict(orientation="h", x=0, y=0, yref="container", yanchor="bottom", font=dict(size=11)),
        meta={"overview": True, "block": block, "aggregate": "max", "shape": [n_r, n_c], "window": [n_r, n_c],
              "windowed": False, "window_cuts": {"rows": row_cuts, "cols": col_cuts}},
        xaxis=dict(title=dict(text="reference token", standoff=4), side="top", tickvals=xv, ticktext=xt,
                   range=[-0.5, n_c - 0.5], showgrid=False, zeroline=False, automargin=False),
        yaxis=dict(title=dict(text="candidate token", standoff=4), tickvals=yv, ticktext=yt,
                   range=[n_r - 0.5, -0.5], showgrid=False, zeroline=False, automargin=False))
    return go.Figure(data=data + traces, layout=layout)


# --- the alignment -------------------------------------------------------------------------------------------------
ALIGN_MARGIN = dict(t=8, b=8, l=84, r=120)


def _palette(n: int = 64) -> list[str]:
    """``n`` colours sampled once from :data:`ALIGN_SCALE` (red = weak match, blue = strong)."""
    if not _PALETTE:
        _PALETTE.extend(sample_colorscale(ALIGN_SCALE, list(np.linspace(0.0, 1.0, n))))
    return _PALETTE


def _weak(side, pos: np.ndarray, best: np.ndarray) -> np.ndarray:
    """The real tokens among ``pos`` whose match is in the weakest fifth of that side's."""
    out = np.zeros(len(pos), dtype=bool)
    real_k = np.flatnonzero(~side.special[pos])
    if len(real_k):
        vals = best[pos[real_k]]
        out[real_k] = vals <= np.quantile(vals, 0.2)
    return out


def _link_traces(letter: str, edges: list, values: list, colour, lo: float, hi: float, n_bins: int) -> list[dict]:
    """One trace per similarity bin and kind of line (within a band: solid; to another band: dotted), each at
    least :data:`~bertscore_viz.figures.cells.LINK_MIN_WIDTH` px wide, opaque, in its bin's colour darkened by
    :func:`~bertscore_viz.figures.cells.link_colour`."""
    bins = np.linspace(lo, hi, n_bins + 1)
    which = np.clip(np.searchsorted(bins, values, side="right") - 1, 0, n_bins - 1)
    traces = []
    for cross in (True, False):  # links to another band under the others
        for b in range(n_bins):
            xs, ys = [], []
            for ((x0, y0), (x1, y1), other_band), k in zip(edges, which):
                if k == b and other_band == cross:
                    xs += [x0, x1, None]
                    ys += [y0, y1, None]
            if xs:
                traces.append(dict(type="scatter", x=xs, y=ys, mode="lines", hoverinfo="skip", showlegend=False,
                                   name=f"{letter} links", opacity=1.0,
                                   line=dict(color=link_colour(colour((bins[b] + bins[b + 1]) / 2)),
                                             width=LINK_MIN_WIDTH if cross else LINK_MIN_WIDTH + 0.5,
                                             dash="dot" if cross else "solid")))
    return traces


def _node_trace(name: str, lay, ys: list, hover: list, mcol: list, tcol: list, above: bool) -> dict:
    return dict(type="scatter", x=lay.x.tolist(), y=[ys[int(b)] for b in lay.line], mode="markers+text",
                name=name, text=[esc(t) for t in lay.labels], textposition="top center" if above else "bottom center",
                textfont=dict(color=tcol, size=12), hovertext=hover, hoverinfo="text", showlegend=False,
                marker=dict(size=9, color=mcol, line=dict(width=1, color="#666666")))


def _panel(letter: str, pair, lay, rows: dict, best: dict, colour, weak: dict, sim_name: str) -> tuple[list, list]:
    """One panel: precision (each candidate token to its best reference token) or recall (each reference token
    to its best candidate token). Returns ``(link edges with their values, node traces)``."""
    src_is_cand = letter == "P"
    src, dst = (pair.cand, pair.ref) if src_is_cand else (pair.ref, pair.cand)
    s_lay, d_lay = (lay.cand, lay.ref) if src_is_cand else (lay.ref, lay.cand)
    s_rows, d_rows = (rows["cand"], rows["ref"]) if src_is_cand else (rows["ref"], rows["cand"])
    best_idx = pair.cand_best_index if src_is_cand else pair.ref_best_index
    contrib = pair.cand_contribution if src_is_cand else pair.ref_contribution
    d_at = {int(p): (float(x), int(b)) for p, x, b in zip(d_lay.nodes, d_lay.x, d_lay.line)}
    edges = []
    for p, x, b in zip(s_lay.nodes.tolist(), s_lay.x.tolist(), s_lay.line.tolist()):
        q = int(best_idx[p])
        if not src.special[p] and q in d_at:
            edges.append((((x, s_rows[b]), (d_at[q][0], d_rows[d_at[q][1]]), d_at[q][1] != b), best[letter][p]))
    traces = []
    for side, s_lay_, ys, is_src, name in ((pair.cand, lay.cand, rows["cand"], src_is_cand, "candidate"),
                                           (pair.ref, lay.ref, rows["ref"], not src_is_cand, "reference")):
        hover, mcol, tcol = [], [], []
        for k, p in enumerate(s_lay_.nodes.tolist()):
            label = f"{name} <b>{esc(token_label(side, p))}</b> [{esc(side.tokens[p])}]"
            if side.special[p]:
                hover.append(f"{name} special token {esc(side.tokens[p])} (weight 0, matchable)")
                mcol.append("#bdbdbd")
                tcol.append("#888888")
            elif is_src:
                q = int(best_idx[p])
                hover.append(f"{label} idf {side.weights[p]:.3f}<br>best match {esc(token_label(dst, q))} "
                             f"[{esc(dst.tokens[q])}]<br>{sim_name} {best[letter][p]:.4f} · contribution to "
                             f"{letter} {contrib[p]:.4f}")
                mcol.append(colour(best[letter][p]))
                tcol.append("#c0392b" if weak[letter][k] else "#262730")
            else:
                hover.append(label)
                mcol.append("#e0e0e0")
                tcol.append("#262730")
        traces.append(_node_trace(f"{letter} {name}", s_lay_, ys, hover, mcol, tcol, name == "candidate"))
    return edges, traces


def alignment_figure(pair: PairExplanation, show_special: bool = False, merge_words: bool = False,
                     rescaled: bool | None = None, n_bins: int = 8, max_width: int | None = None):
    """The two sentences as rows of tokens, a line from each token to its best match on the other side, wrapped
    onto as many bands as the width needs: every token and every line in view.

    Upper panel (precision): each candidate token to its best reference token. Lower panel (recall): each
    reference token to its best candidate token. In each band the candidate's line sits above the reference's;
    a link to a token on another band is dotted. Lines and token markers are coloured by the similarity of the
    match (rescaled with the F baseline when rescaling is on, as in the heatmap; red = weak, blue = strong), and
    the weakest fifth of each side's matches are labelled in red. Special tokens are drawn (grey) when shown,
    or when they are a real token's best match.

    Args:
        merge_words: each word labelled once, its pieces closer together (pieces on hover); words never split.
        n_bins: similarity bins for the line colours (one trace per bin keeps the figure light).
        max_width: the figure's width in pixels (default :data:`ALIGN_WIDTH`): the sentences wrap to fit it.

    Returns:
        ``plotly.graph_objects.Figure`` in pixel coordinates; ``fig.layout.meta``: ``lines`` (bands),
        ``rows`` (y of each band's candidate and reference row, per panel), ``windowed`` False.
    """
    values, b_f = cell_values(pair, rescaled)
    n_c, n_r = values.shape
    best = {"P": values[np.arange(n_c), pair.cand_best_index] if n_c else np.zeros(0),
            "R": values[pair.ref_best_index, np.arange(n_r)] if n_r else np.zeros(0)}
    width = int(max_width or ALIGN_WIDTH)
    lay = alignment_layout(pair, show_special, merge_words, wrap=max(200.0, width - ALIGN_MARGIN["l"]
                                                                     - ALIGN_MARGIN["r"] - 20), char=CHAR_PX)
    real = np.concatenate([best["P"][~pair.cand.special], best["R"][~pair.ref.special]])
    lo = float(real.min()) if real.size else 0.0
    hi = float(max(real.max(), lo + 1e-6)) if real.size else 1.0
    pal = _palette()

    def colour(v: float) -> str:
        return pal[int(round(min(1.0, max(0.0, (v - lo) / (hi - lo))) * (len(pal) - 1)))]

    height, rows = alignment_bands(lay.n_lines)
    weak = {"P": _weak(pair.cand, lay.cand.nodes, best["P"]), "R": _weak(pair.ref, lay.ref.nodes, best["R"])}
    sim_name = "rescaled similarity" if b_f is not None else "cosine"
    traces, annotations = [], []
    for letter, text in (("P", "<b>Precision</b>: each candidate token → its best reference token"),
                         ("R", "<b>Recall</b>: each reference token → its best candidate token")):
        edges, nodes = _panel(letter, pair, lay, rows[letter], best, colour, weak, sim_name)
        traces += _link_traces(letter, [e for e, _ in edges], [v for _, v in edges], colour, lo, hi, n_bins)
        traces += nodes
        annotations.append(dict(x=0, y=rows[letter]["head"], xref="paper", yref="y", xanchor="left",
                                showarrow=False, font=dict(size=12), text=text))
    # an invisible trace carries the colour bar of the line/marker colours
    traces.append(dict(type="scatter", x=[None], y=[None], mode="markers", hoverinfo="skip", showlegend=False,
                       marker=dict(color=[lo, hi], cmin=lo, cmax=hi, colorscale=ALIGN_SCALE, showscale=True,
                                   colorbar=dict(title=dict(text=sim_name, side="top", font=dict(size=11)),
                                                 thickness=12, lenmode="pixels", len=min(260, height - 40),
                                                 y=1, yanchor="top"))))
    plot_w = max(lay.width, 1.0) + 20
    ticks = [(rows[k][s][b], name) for k in ("P", "R") for b in range(lay.n_lines)
             for s, name in (("cand", "candidate"), ("ref", "reference"))]
    layout = dict(
        height=int(height + ALIGN_MARGIN["t"] + ALIGN_MARGIN["b"]),
        width=int(plot_w + ALIGN_MARGIN["l"] + ALIGN_MARGIN["r"]), plot_bgcolor="white",
        annotations=annotations, dragmode=False, margin=dict(**ALIGN_MARGIN, autoexpand=False),
        hoverlabel=dict(align="left"),
        meta={"windowed": False, "lines": lay.n_lines, "rows": rows, "tokens": [len(lay.cand.nodes),
                                                                                 len(lay.ref.nodes)]},
        xaxis=dict(visible=False, range=[-10, plot_w - 10], fixedrange=True),
        yaxis=dict(range=[0, height], tickvals=[t for t, _ in ticks], ticktext=[n for _, n in ticks],
                   showgrid=False, zeroline=False, fixedrange=True))
    return go.Figure(data=traces, layout=layout)


def figure_html(fig, title: str | None = None, pair: PairExplanation | None = None, light: bool = False) -> str:
    """A standalone HTML page of a figure, math typesetting off.

    Args:
        title: the page's ``<title>`` and heading; pair: adds the candidate, the reference(s), the scores and the
            signature above the figure (HTML-escaped).
        light: load plotly.js from its CDN (``include_plotlyjs="cdn"``, a few kB, needs internet to open) instead
            of embedding it (about 4.8 MB, opens offline).
    """
    body = fig.to_html(include_plotlyjs="cdn" if light else True, full_html=False, config=PLOTLY_CONFIG)
    head = ""
    if title:
        head += f"<h1>{html.escape(title)}</h1>\n"
    if pair is not None:
        p, r, f = pair.scores
        kind = "rescaled " if pair.rescaled is not None else ""
        head += ("<table>"
                 f"<tr><th>Candidate</th><td>{html.escape(pair.candidate)}</td></tr>"
                 f"<tr><th>Reference</th><td>{html.escape(pair.reference)}</td></tr>"
                 f"<tr><th>BERTScore ({kind.strip() or 'raw'})</th><td>P {score_text(p)} · R {score_text(r)} · "
                 f"F1 {score_text(f)}</td></tr>"
                 f"<tr><th>Signature</th><td><code>{html.escape(str(pair.signature))}</code></td></tr>"
                 "</table>\n")
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title or 'bertscore-viz figure')}</title>"
            "<style>body{font-family:sans-serif;margin:1.5em} th{text-align:left;padding-right:1em;"
            "vertical-align:top} td{padding:2px}</style></head>\n<body>\n" + head + body + "\n</body></html>\n")
