"""Plotly figures of a pair explanation (no Streamlit): the similarity heatmap and the alignment view.

The heatmap is the counterpart of bert-score's ``bert-score-show`` (``bert_score.plot_example``): candidate
tokens as rows, reference tokens as columns, colour = cosine similarity; with rescaling on, every cell is
rescaled with the **F** baseline, ``(s - b_F) / (1 - b_F)``, as ``plot_example`` does. Added here: each row's
greedy maximum (the candidate token's best match, precision side) and each column's (the reference token's
best match, recall side) are marked, and the hover gives both tokens, the similarity, the idf weights and
whether the cell is a row or column maximum.

Text typed by users ends up in labels: it is HTML-escaped (Plotly reads ``<b>``, ``<a>``, ``<br>`` in labels),
and figures should be shown with :data:`PLOTLY_CONFIG` (``typesetMath: False``), so ``$x$`` is not LaTeX.
"""

from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go
from plotly.colors import sample_colorscale

from bertscore_viz.engine.results import PairExplanation, TokenSide
from bertscore_viz.figures.cells import (  # noqa: F401  (esc: the pages')
    axis_for,
    cell_values,
    esc,
    shown_positions,
    token_label,
    window_cut_cells,
    window_lines,
)

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


def cell_px(n_tokens: int) -> int:
    """Side of a heatmap cell in pixels: roomy for short pairs, denser (still legible) for long ones."""
    return 34 if n_tokens <= 12 else 28 if n_tokens <= 30 else 22 if n_tokens <= 80 else 16


def heatmap_size(n_rows: int, n_cols: int, longest_row_label: int = 8, longest_col_label: int = 8) -> dict:
    """Pixel layout of a heatmap: square cells, margins sized for the labels. The figure grows with the pair
    (300 tokens a side gives a ~5,000 px figure that the page scrolls) instead of squeezing the cells.

    Returns:
        dict with ``width``, ``height``, ``cell``, ``top``, ``left``, ``bottom``, ``right``.
    """
    cell = cell_px(max(n_rows, n_cols))
    top = 84 + int(min(160, 6.5 * longest_col_label * 0.8)) + 18
    left = 40 + int(min(200, 7 * longest_row_label))
    bottom, right = 56, 130
    return {"cell": cell, "top": top, "left": left, "bottom": bottom, "right": right,
            "width": max(560, left + right + cell * n_cols), "height": top + bottom + max(cell * n_rows, 150)}


def x_angle(cell: int, line_px: float = 14.0) -> int:
    """The column labels' angle. Parallel labels ``cell`` px apart at -50 degrees are ``cell * sin(50)`` px apart
    across their lines: they touch below a line height (about 14 px, i.e. cells under 18 px, long pairs), where
    vertical labels (``cell`` px apart) still fit."""
    return -50 if cell * 0.766 >= line_px else -90


def figure_height(n_rows: int, n_cols: int | None = None) -> int:
    """Height in pixels of the heatmap of ``n_rows`` candidate tokens (grows linearly with the rows)."""
    return heatmap_size(n_rows, n_rows if n_cols is None else n_cols)["height"]


def heatmap_figure(pair: PairExplanation, show_special: bool = False, merge_words: bool = False,
                   rescaled: bool | None = None, title: str | None = None, max_width: int | None = None,
                   max_height: int | None = None):
    """Candidate tokens (rows) against reference tokens (columns), coloured by similarity.

    Args:
        pair: the explanation.
        show_special: include the CLS/SEP rows and columns (hidden by default; they still take part in the
            matching, and a hidden best match is named in the hover).
        merge_words: label the axes with words instead of pieces (cells stay pieces; pieces on hover).
        rescaled: None = rescaled when the explanation has a baseline; True/False to force.
        title: figure title (default: P/R/F1 and the signature's model and layer).
        max_width, max_height: pixel limits of the figure (None = grow with the pair). A pair that does not fit
            keeps legible cells and shows a window on the matrix, starting at the first tokens; drag to pan,
            double-click to see it all. ``fig.layout.meta`` then gives ``{"window": [rows, cols], "shape": ...}``.

    Returns:
        ``plotly.graph_objects.Figure``; row maxima are marked with circles, column maxima with diamonds.
    """

    values, b_f = cell_values(pair, rescaled)
    ya = axis_for(pair.cand, show_special, merge_words)
    xa = axis_for(pair.ref, show_special, merge_words)
    rows, cols = ya.positions, xa.positions
    z = values[np.ix_(rows, cols)] if len(rows) and len(cols) else np.zeros((len(rows), len(cols)))
    row_max = np.zeros(values.shape, dtype=bool)
    col_max = np.zeros(values.shape, dtype=bool)
    row_max[np.arange(values.shape[0]), pair.cand_best_index] = True
    col_max[pair.ref_best_index, np.arange(values.shape[1])] = True

    sim_name = "rescaled similarity" if b_f is not None else "cosine similarity"
    cand_lbl = [esc(token_label(pair.cand, int(i))) for i in rows]
    ref_lbl = [esc(token_label(pair.ref, int(j))) for j in cols]
    cand_piece = [esc(pair.cand.tokens[int(i)]) for i in rows]
    ref_piece = [esc(pair.ref.tokens[int(j)]) for j in cols]
    cand_w = [f"{pair.cand.weights[int(i)]:.3f}" for i in rows]
    ref_w = [f"{pair.ref.weights[int(j)]:.3f}" for j in cols]
    shown_rows, shown_cols = set(rows.tolist()), set(cols.tolist())
    cand_hidden = {}
    for i in rows:
        j = int(pair.cand_best_index[i])
        if j not in shown_cols:
            cand_hidden[int(i)] = f"<br>its best match is the hidden {esc(pair.ref.tokens[j])}"
    ref_hidden = {}
    for j in cols:
        i = int(pair.ref_best_index[j])
        if i not in shown_rows:
            ref_hidden[int(j)] = f"<br>its best match is the hidden {esc(pair.cand.tokens[i])}"
    raw = pair.similarity
    compact = len(rows) * len(cols) > COMPACT_HOVER_CELLS
    minimal = len(rows) * len(cols) > MINIMAL_HOVER_CELLS
    text = []
    for a, i in enumerate(rows if not minimal else ()):
        i = int(i)
        line = []
        for c, j in enumerate(cols):
            j = int(j)
            flags = []
            if row_max[i, j]:
                flags.append("row max: the candidate token's best match (precision)")
            if col_max[i, j]:
                flags.append("column max: the reference token's best match (recall)")
            val = f"{sim_name} {values[i, j]:.4f}" + (f" (cosine {raw[i, j]:.4f})" if b_f is not None else "")
            if compact:  # long pairs: a lighter hover keeps the figure a few MB
                line.append(f"C <b>{cand_lbl[a]}</b> ({cand_w[a]}) · R <b>{ref_lbl[c]}</b> ({ref_w[c]})<br>"
                            f"{values[i, j]:.4f}" + (" · row max" if row_max[i, j] else "")
                            + (" · column max" if col_max[i, j] else ""))
                continue
            line.append(
                f"candidate <b>{cand_lbl[a]}</b> [{cand_piece[a]}] idf {cand_w[a]}{cand_hidden.get(i, '')}<br>"
                f"reference <b>{ref_lbl[c]}</b> [{ref_piece[c]}] idf {ref_w[c]}{ref_hidden.get(j, '')}<br>"
                f"{val}" + "".join("<br>" + f for f in flags))
        text.append(line)

    zmin = float(min(0.0, z.min())) if z.size else 0.0
    size = heatmap_size(len(rows), len(cols), max((len(t) for t in ya.ticktext), default=1),
                        max((len(t) for t in xa.ticktext), default=1))
    plot_h = size["height"] - size["top"] - size["bottom"]
    bar_title = "cosine similarity" if b_f is None else f"rescaled with the<br>F baseline {b_f:.3f}"
    hover = dict(text=text, hovertemplate="%{text}<extra></extra>") if not minimal else dict(
        hovertemplate="candidate token %{y} · reference token %{x}<br>" + sim_name + " %{z:.4f}<extra></extra>")
    data = [dict(
        type="heatmap", z=z, x=list(range(len(cols))), y=list(range(len(rows))), **hover,
        colorscale=COLORSCALE, zmin=zmin, zmax=1.0, xgap=1 if not minimal else 0, ygap=1 if not minimal else 0,
        name="similarity", colorbar=dict(title=dict(text=bar_title, side="top", font=dict(size=11)), thickness=12,
                                         lenmode="pixels", len=max(80, min(plot_h - 44, 320)),
                                         y=max(0.5, 1 - 44 / max(plot_h, 1)), yanchor="top", ypad=0))]
    pos_r = {int(p): k for k, p in enumerate(rows)}
    pos_c = {int(p): k for k, p in enumerate(cols)}
    rx = [pos_c[int(pair.cand_best_index[i])] for i in rows if int(pair.cand_best_index[i]) in pos_c]
    ry = [pos_r[int(i)] for i in rows if int(pair.cand_best_index[i]) in pos_c]
    cx = [pos_c[int(j)] for j in cols if int(pair.ref_best_index[j]) in pos_r]
    cy = [pos_r[int(pair.ref_best_index[j])] for j in cols if int(pair.ref_best_index[j]) in pos_r]
    ring = max(8, int(size["cell"] * 0.8))
    data.append(dict(type="scatter", x=rx, y=ry, mode="markers", hoverinfo="skip",
                     name="row max: the candidate token's best match (P)",
                     marker=dict(symbol="circle-open", size=ring, color=ROW_MAX_COLOR, line=dict(width=2))))
    data.append(dict(type="scatter", x=cx, y=cy, mode="markers", hoverinfo="skip",
                     name="column max: the reference token's best match (R)",
                     marker=dict(symbol="x-thin-open", size=max(5, int(size["cell"] * 0.42)), color=COL_MAX_COLOR,
                                 line=dict(width=2))))
    sep = dict(color="rgba(0,0,0,0.25)", width=1)
    shapes = ([dict(type="line", x0=b, x1=b, y0=0, y1=1, xref="x", yref="paper", line=sep) for b in xa.word_bounds]
              + [dict(type="line", y0=b, y1=b, x0=0, x1=1, yref="y", xref="paper", line=sep)
                 for b in ya.word_bounds])
    # window mode: where the window a token's vector comes from changes (dashed), on both axes
    col_cuts, row_cuts = window_cut_cells(pair.ref, cols), window_cut_cells(pair.cand, rows)
    win_shapes, win_traces = window_lines(
        col_cuts, row_cuts, "window boundary: the vectors on either side come from different windows")
    shapes += win_shapes
    data += win_traces
    if title is None:
        p, r, f = (float(x) for x in pair.scores)
        kind = "rescaled" if pair.rescaled is not None else "raw"
        title = (f"P {p:.4f} · R {r:.4f} · F1 {f:.4f} ({kind})<br><span style='font-size:11px'>"
                 f"{esc(pair.signature.model)}, layer {pair.signature.layer}, "
                 f"{'idf' if pair.signature.idf else 'no idf'}</span>")
    width, height = size["width"], size["height"]
    vis_c, vis_r = len(cols), len(rows)
    if max_width is not None and width > max_width:
        width = int(max_width)
        vis_c = max(1, (width - size["left"] - size["right"]) // size["cell"])
    if max_height is not None and height > max_height:
        height = int(max_height)
        vis_r = max(1, (height - size["top"] - size["bottom"]) // size["cell"])
    windowed = (vis_c, vis_r) != (len(cols), len(rows))
    layout = dict(
        title=dict(text=title, x=0, xanchor="left", xref="paper", y=1, yref="container", yanchor="top",
                   pad=dict(t=12), font=dict(size=14)), shapes=shapes,
        height=height, width=width, plot_bgcolor="white", dragmode="pan" if windowed else "zoom",
        meta={"window": [int(vis_r), int(vis_c)], "shape": [len(rows), len(cols)], "windowed": windowed,
              "hover": "positions" if minimal else "tokens",
              "window_cuts": {"rows": row_cuts, "cols": col_cuts}},
        margin=dict(t=size["top"], b=size["bottom"], l=size["left"], r=size["right"], autoexpand=False),
        legend=dict(orientation="h", x=0, y=0, yref="container", yanchor="bottom", font=dict(size=11)),
        xaxis=dict(title=dict(text="reference tokens", standoff=6), side="top", tickvals=xa.tickvals,
                   ticktext=xa.ticktext, tickangle=x_angle(size["cell"]), showgrid=False, zeroline=False,
                   range=[-0.5, vis_c - 0.5], automargin=False),
        yaxis=dict(title=dict(text="candidate tokens", standoff=6), tickvals=ya.tickvals, ticktext=ya.ticktext,
                   range=[vis_r - 0.5, -0.5], showgrid=False, zeroline=False, automargin=False),
    )
    return go.Figure(data=data, layout=layout)


_PALETTE: list[str] = []
ALIGN_SCALE = "RdYlBu"


def _palette(n: int = 64) -> list[str]:
    """``n`` colours sampled once from :data:`ALIGN_SCALE` (red = weak match, blue = strong)."""
    if not _PALETTE:

        _PALETTE.extend(sample_colorscale(ALIGN_SCALE, list(np.linspace(0.0, 1.0, n))))
    return _PALETTE


def alignment_figure(pair: PairExplanation, show_special: bool = False, merge_words: bool = False,
                     rescaled: bool | None = None, n_bins: int = 8, max_width: int | None = None):
    """The two sentences as rows of tokens, a line from each token to its best match on the other side.

    Upper panel (precision): each candidate token to its best reference token. Lower panel (recall): each
    reference token to its best candidate token. Lines and token markers are coloured by the similarity of the
    match (rescaled with the F baseline when rescaling is on, as in the heatmap; red = weak, blue = strong), and
    the weakest fifth of each side's matches are labelled in red. Special tokens are drawn (grey) when shown,
    or when they are a real token's best match.

    Args:
        merge_words: pieces of one word sit closer together and the word is labelled once (pieces on hover).
        n_bins: similarity bins for the line colours (one trace per bin keeps the figure light).
        max_width: pixel limit (None = grow with the sentences); a longer pair shows its first tokens, drag to pan.
    """

    values, b_f = cell_values(pair, rescaled)
    n_c, n_r = values.shape
    c_best = values[np.arange(n_c), pair.cand_best_index] if n_c else np.zeros(0)
    r_best = values[pair.ref_best_index, np.arange(n_r)] if n_r else np.zeros(0)
    c_shown, r_shown = shown_positions(pair.cand, show_special), shown_positions(pair.ref, show_special)
    # specials that are the best match of a shown real token stay visible (they take part in the matching)
    c_nodes = np.array(sorted(set(c_shown.tolist()) | {int(i) for i in pair.ref_best_index[r_shown]
                                                        if pair.cand.special[int(i)]}), dtype=np.int64)
    r_nodes = np.array(sorted(set(r_shown.tolist()) | {int(j) for j in pair.cand_best_index[c_shown]
                                                        if pair.ref.special[int(j)]}), dtype=np.int64)

    def labels(side: TokenSide, pos: np.ndarray) -> list[str]:
        out, last = [], None
        for p in pos:
            w = side.word_index[p]
            if merge_words and w >= 0:
                out.append("" if w == last else
                           esc("".join(token_label(side, int(q)) for q in np.flatnonzero(side.word_index == w))))
            else:
                out.append(esc(token_label(side, int(p))))
            last = w
        return out

    c_lab, r_lab = labels(pair.cand, c_nodes), labels(pair.ref, r_nodes)

    def slots(side: TokenSide, pos: np.ndarray, texts: list[str]) -> np.ndarray:
        """x of each token in pixels: neighbours are spaced by their label widths (7 px a character)."""
        xs, x, last, last_w = [], 0.0, None, 0.0
        for k, p in enumerate(pos):
            w = side.word_index[p]
            width = 7.0 * len(html.unescape(texts[k])) if texts[k] else 0.0
            if k:
                same_word = merge_words and w >= 0 and w == last
                x += 16.0 if same_word else max(30.0, (last_w + width) / 2 + 12)
            xs.append(x)
            last, last_w = w, (width if texts[k] or not merge_words else last_w)
        return np.asarray(xs, dtype=np.float64)

    cx, rx = slots(pair.cand, c_nodes, c_lab), slots(pair.ref, r_nodes, r_lab)
    span = max(cx[-1] if len(cx) else 0.0, rx[-1] if len(rx) else 0.0)
    cx = cx + (span - (cx[-1] if len(cx) else 0.0)) / 2
    rx = rx + (span - (rx[-1] if len(rx) else 0.0)) / 2
    cpos = {int(p): x for p, x in zip(c_nodes, cx)}
    rpos = {int(p): x for p, x in zip(r_nodes, rx)}

    real = np.concatenate([c_best[~pair.cand.special], r_best[~pair.ref.special]])
    lo = float(real.min()) if real.size else 0.0
    hi = float(max(real.max(), lo + 1e-6)) if real.size else 1.0
    pal = _palette()

    def colour(v: float) -> str:
        return pal[int(round(min(1.0, max(0.0, (v - lo) / (hi - lo))) * (len(pal) - 1)))]

    def weak(side: TokenSide, pos: np.ndarray, best: np.ndarray) -> np.ndarray:
        out = np.zeros(len(pos), dtype=bool)
        real_k = np.flatnonzero(~side.special[pos])
        if len(real_k):
            vals = best[pos[real_k]]
            out[real_k] = vals <= np.quantile(vals, 0.2)
        return out

    sim_name = "rescaled similarity" if b_f is not None else "cosine"
    c_weak, r_weak = weak(pair.cand, c_nodes, c_best), weak(pair.ref, r_nodes, r_best)
    traces = []
    # panel offset: precision panel on y 2..3, recall panel on y 0..1; candidate row on top in both
    panels = (
        (3.0, pair.cand, c_nodes, cpos, pair.cand_best_index, c_best, pair.cand_contribution, rpos, pair.ref, "P"),
        (1.0, pair.ref, r_nodes, rpos, pair.ref_best_index, r_best, pair.ref_contribution, cpos, pair.cand, "R"),
    )
    for top, src, src_nodes, src_pos, best_idx, best, contrib, dst_pos, dst, letter in panels:
        src_is_cand = src is pair.cand
        y_src, y_dst = (top, top - 1.0) if src_is_cand else (top - 1.0, top)
        bins = np.linspace(lo, hi, n_bins + 1)
        edges = [(int(p), int(best_idx[p])) for p in src_nodes if not src.special[p] and int(best_idx[p]) in dst_pos]
        which = np.clip(np.searchsorted(bins, [best[p] for p, _ in edges], side="right") - 1, 0, n_bins - 1)
        for b in range(n_bins):
            xs, ys = [], []
            for (p, q), k in zip(edges, which):
                if k == b:
                    xs += [src_pos[p], dst_pos[q], None]
                    ys += [y_src, y_dst, None]
            if xs:
                traces.append(dict(type="scatter", x=xs, y=ys, mode="lines", hoverinfo="skip", showlegend=False,
                                   line=dict(color=colour((bins[b] + bins[b + 1]) / 2), width=2)))
        for side, nodes_, xs_, lab, wk in ((pair.cand, c_nodes, cx, c_lab, c_weak),
                                           (pair.ref, r_nodes, rx, r_lab, r_weak)):
            is_src = side is src
            name = "candidate" if side is pair.cand else "reference"
            y = y_src if is_src else y_dst
            hover, mcol, tcol = [], [], []
            for k, p in enumerate(nodes_):
                p = int(p)
                if side.special[p]:
                    hover.append(f"{name} special token {esc(side.tokens[p])} (weight 0, matchable)")
                    mcol.append("#bdbdbd")
                    tcol.append("#888888")
                elif is_src:
                    q = int(best_idx[p])
                    hover.append(f"{name} <b>{esc(token_label(side, p))}</b> [{esc(side.tokens[p])}] idf "
                                 f"{side.weights[p]:.3f}<br>best match {esc(token_label(dst, q))} "
                                 f"[{esc(dst.tokens[q])}]"
                                 f"<br>{sim_name} {best[p]:.4f} · contribution to {letter} {contrib[p]:.4f}")
                    mcol.append(colour(best[p]))
                    tcol.append("#c0392b" if wk[k] else "#262730")
                else:
                    hover.append(f"{name} <b>{esc(token_label(side, p))}</b> [{esc(side.tokens[p])}]")
                    mcol.append("#e0e0e0")
                    tcol.append("#262730")
            traces.append(dict(
                type="scatter", x=xs_, y=[y] * len(nodes_), mode="markers+text", text=lab,
                textposition="top center" if y == top else "bottom center", textfont=dict(color=tcol, size=12),
                hovertext=hover, hoverinfo="text", showlegend=False,
                marker=dict(size=9, color=mcol, line=dict(width=1, color="#666666"))))
    # an invisible trace carries the colour bar of the line/marker colours
    traces.append(dict(type="scatter", x=[None], y=[None], mode="markers", hoverinfo="skip", showlegend=False,
                       marker=dict(color=[lo, hi], cmin=lo, cmax=hi, colorscale=ALIGN_SCALE, showscale=True,
                                   colorbar=dict(title=dict(text=sim_name, side="top", font=dict(size=11)),
                                                 thickness=12, lenmode="pixels", len=260))))
    margin_px = 150  # y labels, colour bar
    width = int(margin_px + span + 80)
    x_range = [-40.0, span + 40.0]
    windowed = max_width is not None and width > max_width
    if windowed:
        width = int(max_width)
        x_range = [-40.0, width - margin_px - 40.0]
    annotations = [
        dict(x=0, y=3.55, xref="paper", yref="y", xanchor="left", showarrow=False, font=dict(size=12),
             text="<b>Precision</b>: each candidate token → its best reference token"),
        dict(x=0, y=1.55, xref="paper", yref="y", xanchor="left", showarrow=False, font=dict(size=12),
             text="<b>Recall</b>: each reference token → its best candidate token"),
    ]
    layout = dict(
        height=560, width=width if (windowed or width > 1100) else None, plot_bgcolor="white",
        annotations=annotations, dragmode="pan" if windowed else "zoom",
        meta={"windowed": bool(windowed)},
        margin=dict(t=10, b=10, l=80, r=10), hoverlabel=dict(align="left"),
        xaxis=dict(visible=False, range=x_range),
        yaxis=dict(range=[-0.6, 3.7], tickvals=[0, 1, 2, 3],
                   ticktext=["reference", "candidate", "reference", "candidate"], showgrid=False, zeroline=False,
                   fixedrange=True))
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
        p, r, f = (float(x) for x in pair.scores)
        kind = "rescaled " if pair.rescaled is not None else ""
        head += ("<table>"
                 f"<tr><th>Candidate</th><td>{html.escape(pair.candidate)}</td></tr>"
                 f"<tr><th>Reference</th><td>{html.escape(pair.reference)}</td></tr>"
                 f"<tr><th>BERTScore ({kind.strip() or 'raw'})</th><td>P {p:.4f} · R {r:.4f} · F1 {f:.4f}</td></tr>"
                 f"<tr><th>Signature</th><td><code>{html.escape(str(pair.signature))}</code></td></tr>"
                 "</table>\n")
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title or 'bertscore-viz figure')}</title>"
            "<style>body{font-family:sans-serif;margin:1.5em} th{text-align:left;padding-right:1em;"
            "vertical-align:top} td{padding:2px}</style></head>\n<body>\n" + head + body + "\n</body></html>\n")
