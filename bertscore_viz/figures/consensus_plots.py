"""Plotly figures of one input's samples (no Streamlit): the N x N BERTScore matrix ordered by consensus, and each
sample's tokens coloured by how well the other samples support them.

Both take a :class:`~bertscore_viz.consensus.GroupConsensus` (from :func:`bertscore_viz.consensus.consensus`).
Sample text ends up in hovers and labels: it is HTML-escaped (Plotly reads ``<b>``, ``<a>``, ``<br>``), and the
figures are meant to be shown with :data:`bertscore_viz.figures.plots.PLOTLY_CONFIG` (no math typesetting), so a
sample reads as typed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from bertscore_viz.consensus import GroupConsensus
from bertscore_viz.consensus.pairwise import check_utility
from bertscore_viz.errors import InputError
from bertscore_viz.figures.cells import esc

__all__ = ["MATRIX_COLORSCALE", "SUPPORT_COLORSCALE", "HOVER_CHARS", "LINE_CHARS", "matrix_cell_px",
           "consensus_heatmap", "cell_pair", "SupportToken", "support_layout", "support_figure", "shorten_text"]

MATRIX_COLORSCALE = "Blues"
#: Red = little support from the other samples, blue = much (light colours: black text stays legible on them).
SUPPORT_COLORSCALE = [[0.0, "#d7301f"], [0.25, "#fc8d59"], [0.5, "#fee090"], [0.75, "#91bfdb"], [1.0, "#4575b4"]]
CHOSEN_COLOR = "#d62728"
#: Characters of a sample shown in a hover.
HOVER_CHARS = 140
#: Characters per line in the support figure (the text is set in a monospace font: a character is a unit of x).
LINE_CHARS = 84
#: Pixels per character and per line of the support figure (13 px monospace).
CHAR_PX, LINE_PX = 7.9, 24
_NAMES = {"f1": "F1", "precision": "precision", "recall": "recall"}


def shorten_text(text: str, limit: int = HOVER_CHARS) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def matrix_cell_px(n: int) -> int:
    """Side of a matrix cell in pixels: roomy for a few samples, still clickable for many."""
    return 52 if n <= 8 else 36 if n <= 16 else 22 if n <= 32 else 13


def consensus_heatmap(group: GroupConsensus, utility: str | None = None, title: str | None = None) -> go.Figure:
    """The ``(N, N)`` matrix of one utility, rows and columns ordered by consensus (the chosen sample first).

    Cell ``(row i, column j)`` is sample ``i`` as candidate against sample ``j`` as pseudo-reference, as in
    :class:`~bertscore_viz.consensus.PairwiseResult`. The diagonal (a sample against itself, left out of the
    expected utility) is blank. The y labels carry each sample's expected utility; the chosen sample's row and
    column are outlined. An invisible marker on every off-diagonal cell carries the hover and
    ``customdata = [i, j]`` (sample indices), so a click on a cell names the pair (:func:`cell_pair`).

    Args:
        group: one input's consensus.
        utility: ``"f1"``, ``"precision"`` or ``"recall"``; default the group's utility (what MBR maximised).
        title: the figure's title (default: what the matrix holds).

    Returns:
        ``plotly.graph_objects.Figure``; ``layout.meta`` holds ``order`` (sample index of each row/column),
        ``utility`` and ``chosen``.
    """
    name = check_utility(utility or group.utility)
    n = len(group)
    order = np.asarray(group.order, dtype=np.int64)
    full = group.matrices.matrix(name)[np.ix_(order, order)]
    z = full.copy()
    np.fill_diagonal(z, np.nan)
    off = z[np.isfinite(z)]
    zmin, zmax = (float(off.min()), float(off.max())) if off.size else (0.0, 1.0)
    if zmax - zmin < 1e-9:
        zmin -= 0.01
        zmax += 0.01
    eu = group.expected_utility
    y_text = [("★ " if k == group.chosen else "") + f"#{k} · {_num(eu[k])}" for k in order]
    x_text = [("★ " if k == group.chosen else "") + f"#{k}" for k in order]
    rows, cols = np.nonzero(~np.eye(n, dtype=bool))
    short = [esc(shorten_text(s, 80)) for s in group.samples]
    hover = [f"<b>#{order[a]}</b> (candidate): {short[order[a]]}<br><b>#{order[b]}</b> (pseudo-reference): "
             f"{short[order[b]]}<br>{_NAMES[name]} {_num(full[a, b])} · click for the pair view"
             for a, b in zip(rows, cols)]
    cell = matrix_cell_px(n)
    left, top, right, bottom = 130, 100, 120, 30
    data = [go.Heatmap(z=z, x=list(range(n)), y=list(range(n)), colorscale=MATRIX_COLORSCALE, zmin=zmin, zmax=zmax,
                       hoverinfo="skip", xgap=1, ygap=1,
                       colorbar=dict(title=dict(text=_NAMES[name], side="top"), thickness=12, len=0.9)),
            go.Scatter(x=cols.tolist(), y=rows.tolist(), mode="markers", hovertext=hover, hoverinfo="text",
                       customdata=np.stack([order[rows], order[cols]], axis=1).tolist() if n > 1 else [],
                       marker=dict(symbol="square", size=max(6, cell - 2), color="rgba(0,0,0,0)"),
                       selected=dict(marker=dict(color="rgba(214,39,40,0.45)")),
                       unselected=dict(marker=dict(opacity=1)), showlegend=False, name="pairs")]
    line = dict(color=CHOSEN_COLOR, width=2)
    shapes = [dict(type="rect", x0=-0.5, x1=n - 0.5, y0=-0.5, y1=0.5, line=line),
              dict(type="rect", x0=-0.5, x1=0.5, y0=-0.5, y1=n - 0.5, line=line)]
    if title is None:
        title = f"{_NAMES[name]} of every pair, ordered by consensus"
    width = max(520, left + right + cell * n)
    fig = go.Figure(data=data)
    fig.update_layout(
        title=dict(text=esc(title), x=0, xanchor="left", xref="container", y=1, yref="container", yanchor="top",
                   pad=dict(t=10, l=10), font=dict(size=13)), shapes=shapes,
        width=width, height=max(320, top + bottom + cell * n), plot_bgcolor="white",
        margin=dict(t=top, l=left, r=right, b=bottom), clickmode="event+select", dragmode=False,
        hoverlabel=dict(align="left"),
        meta={"order": order.tolist(), "utility": name, "chosen": int(group.chosen)},
        xaxis=dict(title=dict(text="as pseudo-reference", standoff=4), side="top", tickvals=list(range(n)),
                   ticktext=x_text, tickangle=-90 if n > 16 else 0, range=[-0.5, n - 0.5], showgrid=False,
                   zeroline=False, fixedrange=True),
        yaxis=dict(title=dict(text="as candidate · expected utility", standoff=4), tickvals=list(range(n)),
                   ticktext=y_text, range=[n - 0.5, -0.5], showgrid=False, zeroline=False, fixedrange=True),
    )
    return fig


def cell_pair(points: list) -> tuple[int, int] | None:
    """The ``(candidate, reference)`` sample indices of a clicked cell of :func:`consensus_heatmap` (the
    selection's points, as Streamlit reports them), or None when no cell is selected."""
    for point in points or ():
        data = point.get("customdata") if isinstance(point, dict) else None
        if isinstance(data, (list, tuple)) and len(data) == 2:
            return int(data[0]), int(data[1])
    return None


@dataclass(frozen=True)
class SupportToken:
    """One token of the support figure: where it sits and what it shows.

    Attributes:
        line: the figure line it is on (from 0, within its sample); x: its first character on that line; width:
            its characters; text: the characters shown (the sample's own, from the tokenizer's offsets); piece:
            the tokenizer's piece; support: its support (mean best cosine in the other samples).
    """

    line: int
    x: int
    width: int
    text: str
    piece: str
    support: float


def _pieces(text: str, tokens, special: np.ndarray, spans: tuple) -> list[tuple[int, int, str, int]]:
    """``(start, end, shown text, token index)`` of each real token, in the sample's characters when the tokenizer
    gave offsets, else the pieces laid out one space apart."""
    out = []
    if spans:
        for k, (a, b) in enumerate(spans):
            if not special[k] and b > a:
                out.append((a, b, text[a:b], k))
        return out
    pos = 0
    for k, piece in enumerate(tokens):
        if not special[k]:
            out.append((pos, pos + len(piece), piece, k))
            pos += len(piece) + 1
    return out


def support_layout(text: str, tokens, special: np.ndarray, spans: tuple, support: np.ndarray,
                   line_chars: int = LINE_CHARS) -> list[SupportToken]:
    """Lay a sample's real tokens out in lines of at most ``line_chars`` characters, as the text reads.

    A token starts a new line when it would end past ``line_chars`` or when a line break lies before it; the
    spaces between tokens are the text's own (one character each, as a monospace font shows them). A token longer
    than a line is cut with an ellipsis. Special tokens (CLS, SEP) are left out.

    Returns:
        One :class:`SupportToken` per real token, in order.
    """
    out: list[SupportToken] = []
    line, line_start, last_end = 0, None, None
    for a, b, shown, k in _pieces(text, tokens, np.asarray(special, dtype=bool), spans):
        gap = text[last_end:a] if spans and last_end is not None else ""
        if line_start is None:
            line_start = a
        elif "\n" in gap or "\r" in gap or b - line_start > line_chars:
            line, line_start = line + 1, a
        width = b - a
        if width > line_chars:
            shown, width = shown[: line_chars - 1] + "…", line_chars
        out.append(SupportToken(line, a - line_start, width, shown, str(tokens[k]), float(support[k])))
        last_end = b
    return out


def _margins(laid: list[SupportToken], n: int) -> tuple[float, float]:
    """How far token ``n``'s bar reaches into the spaces around it: half of each space (half a character at a line's
    ends), none towards a piece of the same word. The room keeps the text at its size inside the bar."""
    t = laid[n]
    before = laid[n - 1] if n > 0 and laid[n - 1].line == t.line else None
    after = laid[n + 1] if n + 1 < len(laid) and laid[n + 1].line == t.line else None
    left = 0.5 if before is None else min(0.5, (t.x - before.x - before.width) / 2)
    right = 0.5 if after is None else min(0.5, (after.x - t.x - t.width) / 2)
    return max(0.0, left), max(0.0, right)


def _num(x: float) -> str:
    return "n/a" if x is None or not np.isfinite(x) else f"{x:.4f}"


def support_figure(group: GroupConsensus, line_chars: int = LINE_CHARS, title: str | None = None) -> go.Figure:
    """Each sample's tokens, in the order of consensus, on a background coloured by their support.

    A token's support is the mean over the other samples of its best cosine with their tokens (module
    :mod:`bertscore_viz.consensus.support`): content that only this sample has stands out in red. Colours span
    the group's range of real-token supports (the colour bar gives the numbers); hover a token for its piece and
    value.

    Args:
        group: one input's consensus, computed with ``token_support=True`` and at least two samples.
        line_chars: characters per line.
        title: the figure's title.

    Returns:
        ``plotly.graph_objects.Figure`` (one bar per token, its characters inside); ``layout.meta``
        holds ``samples`` (the sample on each figure line) and ``range`` (the colour range).

    Raises:
        InputError: no token support in the group, or a single sample (nothing to compare with).
    """
    if not group.token_support:
        raise InputError("This consensus has no token support: compute it with consensus(..., token_support=True).")
    if len(group) < 2:
        raise InputError("One sample: there are no other samples to support its tokens. Give two or more.")
    values = np.concatenate([ts.support[~ts.special] for ts in group.token_support])
    values = values[np.isfinite(values)]
    lo, hi = (float(values.min()), float(values.max())) if values.size else (0.0, 1.0)
    hi = max(hi, lo + 1e-6)
    bars = {k: [] for k in ("y", "x", "base", "color", "hover", "text")}
    ticks, tick_text, line_samples, y0 = [], [], [], 0
    for k in group.order:
        k = int(k)
        ts = group.token_support[k]
        laid = support_layout(group.samples[k], ts.tokens, ts.special, ts.spans, ts.support, line_chars)
        ticks.append(y0)
        tick_text.append(("★ " if k == group.chosen else "") + f"#{k} · rank {int(group.rank[k])}")
        for n, t in enumerate(laid):
            left, right = _margins(laid, n)
            bars["y"].append(y0 + t.line)
            bars["base"].append(t.x - left)
            bars["x"].append(t.width + left + right)
            bars["color"].append(t.support)
            bars["hover"].append(f"#{k}: <b>{esc(t.text)}</b> [{esc(t.piece)}]<br>support {_num(t.support)}")
            bars["text"].append(esc(t.text))
        n_lines = (max(t.line for t in laid) + 1) if laid else 1
        line_samples += [k] * n_lines + [None]
        y0 += n_lines + 1  # a blank line between samples
    # The token's characters sit inside its bar, one size for all (uniformtext): when the page draws the figure
    # narrower than asked, the text shrinks a little with the bars instead of running over its neighbours.
    data = [go.Bar(orientation="h", y=bars["y"], x=bars["x"], base=bars["base"], width=0.8, hovertext=bars["hover"],
                   hoverinfo="text", showlegend=False, name="support", text=bars["text"], textposition="inside",
                   insidetextanchor="middle", textangle=0, constraintext="inside", cliponaxis=False,
                   textfont=dict(family="monospace", size=13, color="#111111"),
                   marker=dict(color=bars["color"], cmin=lo, cmax=hi, colorscale=SUPPORT_COLORSCALE, line_width=0,
                               colorbar=dict(title=dict(text="support<br>(mean best<br>cosine)", side="top"),
                                             thickness=12, len=min(1.0, 320 / max(1, y0 * LINE_PX)))))]
    left, right, top, bottom = 120, 100, 50, 20
    fig = go.Figure(data=data)
    fig.update_layout(
        title=dict(text=esc(title or "Each sample's tokens by their support from the other samples "
                                     "(red: little, blue: much)"), x=0, xanchor="left", xref="container", y=1,
                   yref="container", yanchor="top", pad=dict(t=10, l=10), font=dict(size=13)),
        width=int(left + right + CHAR_PX * line_chars), height=int(top + bottom + LINE_PX * max(y0 - 1, 1)),
        margin=dict(t=top, l=left, r=right, b=bottom), plot_bgcolor="white", bargap=0, dragmode=False,
        uniformtext=dict(mode="show", minsize=12),
        meta={"samples": line_samples[:-1], "range": [lo, hi]},
        xaxis=dict(visible=False, range=[-0.5, line_chars + 0.5], fixedrange=True),
        yaxis=dict(tickvals=ticks, ticktext=tick_text, range=[y0 - 1.5, -0.5], showgrid=False, zeroline=False,
                   fixedrange=True),
    )
    return fig
