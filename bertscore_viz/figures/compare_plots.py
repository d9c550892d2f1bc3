"""Plotly figures of a comparison of systems (sampled when large): the Compare page's charts, which the HTML report
(:mod:`bertscore_viz.figures.report`) draws too. Plotly and numpy only. Names are HTML-escaped: Plotly reads tags in
labels."""

from __future__ import annotations

import html

import numpy as np
import plotly.colors as pc
import plotly.graph_objects as go

from bertscore_viz.evaluation.compare import Comparison
from bertscore_viz.evaluation.significance import Significance

__all__ = ["MAX_POINTS", "MOVED_COLOUR", "SAME_COLOUR", "bucket_figure", "distribution_figure", "palette",
           "pvalue_figure", "rank_figure", "scatter_figure"]

#: Most points a chart draws per system; more are sampled with a fixed seed.
MAX_POINTS = 4000
#: The rank chart: systems the two metrics rank differently, and the others.
MOVED_COLOUR = "#d62728"
SAME_COLOUR = "#9e9e9e"


def _esc(text: str) -> str:
    return html.escape(str(text), quote=False)


def _sample(n: int, limit: int, seed: int = 0) -> np.ndarray:
    if n <= limit:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, size=limit, replace=False))


def distribution_figure(comparison: Comparison, metric: str = "F1", max_points: int = MAX_POINTS):
    """Box plot of each system's segment scores (outliers drawn; sampled above ``max_points``)."""

    fig = go.Figure()
    scores_by = comparison.scores(metric)
    for (name, scores), colour in zip(scores_by.items(), palette(len(scores_by))):
        idx = _sample(len(scores), max_points)
        fig.add_trace(go.Box(y=scores[idx], name=_esc(name), boxmean=True, boxpoints="outliers",
                             marker=dict(color=colour)))
    sampled = any(len(s) > max_points for s in comparison.scores(metric).values())
    fig.update_layout(title=f"{metric} per segment" + (f" (sample of {max_points:,} per system)" if sampled else ""),
                      yaxis_title=metric, showlegend=False, height=380, margin=dict(t=50, b=30, l=50, r=10))
    return fig


def palette(n: int) -> list[str]:
    """``n`` distinct colours: Plotly's 10 up to 10 systems, then Alphabet (26), then Dark24 + Light24 (48)."""

    q = pc.qualitative
    for colours in (q.Plotly, q.Alphabet, q.Dark24 + q.Light24):
        if n <= len(colours):
            return list(colours[:n])
    return [(q.Dark24 + q.Light24)[i % 48] for i in range(n)]


def bucket_figure(buckets, metric: str = "F1"):
    """Mean score per reference-length bucket, one line per system, with the 95% bootstrap interval of each mean as
    error bars when ``buckets`` has ``CI low``/``CI high`` (:func:`bertscore_viz.figures.tables.length_buckets`);
    each bucket's size in its label. The legend stands at the right, clear of the title."""

    fig = go.Figure()
    names = list(dict.fromkeys(buckets["System"]))
    colours = palette(len(names))
    has_ci = {"CI low", "CI high"} <= set(buckets.columns)
    for name, colour in zip(names, colours):
        part = buckets[buckets["System"] == name]
        labels = [f"{b} (n={n})" for b, n in zip(part["Bucket"], part["Segments"])]
        extra = {}
        hover = "%{x}<br>" + metric + " %{y:.4f}<br>%{customdata[0]} segments"
        custom = np.stack([part["Segments"].to_numpy()], axis=1)
        if has_ci:
            mean = part[metric].to_numpy(dtype=float)
            low, high = part["CI low"].to_numpy(dtype=float), part["CI high"].to_numpy(dtype=float)
            extra["error_y"] = dict(type="data", symmetric=False, array=high - mean, arrayminus=mean - low,
                                    color=colour, thickness=1.2, width=4)
            custom = np.stack([part["Segments"].to_numpy(), low, high], axis=1)
            hover += "<br>95% CI %{customdata[1]:.4f}–%{customdata[2]:.4f}"
        fig.add_trace(go.Scatter(x=labels, y=part[metric], name=_esc(name), mode="lines+markers",
                                 line=dict(color=colour), marker=dict(color=colour), customdata=custom,
                                 hovertemplate=hover + "<extra>" + _esc(name) + "</extra>", **extra))
    fig.update_layout(title=dict(text=f"{metric} by reference length" + (" (bars: 95% CI)" if has_ci else ""),
                                 x=0, xanchor="left"),
                      yaxis_title=f"mean {metric}", xaxis_title="reference length (words)", height=420,
                      margin=dict(t=60, b=50, l=50, r=10),
                      legend=dict(orientation="v", x=1.02, xanchor="left", y=1.0, yanchor="top"))
    return fig


def rank_figure(ranks, metric: str = "chrF"):
    """A slope chart of each system's rank by BERTScore-F1 (left) and by ``metric`` (right), 1 at the top; systems
    ranked differently drawn in :data:`MOVED_COLOUR`, the others grey.

    Args:
        ranks: :func:`bertscore_viz.figures.tables.rank_table` (``System, F1 rank, <metric> rank, Shift``...).
    """
    fig = go.Figure()
    k = len(ranks)
    for row in ranks.to_dict(orient="records"):
        moved = row["Shift"] != 0
        name = _esc(row["System"])
        colour = MOVED_COLOUR if moved else SAME_COLOUR
        left, right = int(row["F1 rank"]), int(row[f"{metric} rank"])
        fig.add_trace(go.Scatter(
            x=["BERTScore-F1", _esc(metric)], y=[left, right], mode="lines+markers+text", name=name,
            text=[f"{name} ({left}) ", f" {name} ({right})"], textposition=["middle left", "middle right"],
            line=dict(color=colour, width=3 if moved else 1.5), marker=dict(color=colour, size=9),
            hovertemplate=f"{name}<br>%{{x}}: rank %{{y}}<extra></extra>", showlegend=False))
    n_moved = int((ranks["Shift"] != 0).sum()) if k else 0
    fig.update_layout(title=dict(text=f"Rank by BERTScore-F1 and by {_esc(metric)}: {n_moved} of {k} systems "
                                      "ranked differently (red)", x=0, xanchor="left"),
                      yaxis=dict(title="rank (1 = best)", dtick=1, range=[k + 0.5, 0.5]),  # 1 at the top
                      xaxis=dict(range=[-0.9, 1.9]), height=160 + 36 * max(k, 2),
                      margin=dict(t=60, b=30, l=50, r=10))
    return fig


def scatter_figure(comparison: Comparison, a: str, b: str, segment_ids, metric: str = "F1",
                   max_points: int = MAX_POINTS):
    """System A against system B, one point per segment; above the diagonal B scores higher."""

    sa, sb = comparison.scores(metric)[a], comparison.scores(metric)[b]
    idx = _sample(len(sa), max_points)
    ids = np.asarray([_esc(s) for s in segment_ids], dtype=object)[idx]
    lo = float(min(sa.min(), sb.min())) if len(sa) else 0.0
    hi = float(max(sa.max(), sb.max())) if len(sa) else 1.0
    fig = go.Figure()
    fig.add_trace(go.Scattergl(x=sa[idx], y=sb[idx], mode="markers", text=ids, marker=dict(size=6, opacity=0.7),
                               hovertemplate="segment %{text}<br>A %{x:.4f}<br>B %{y:.4f}<extra></extra>"))
    fig.add_trace(go.Scatter(x=[lo, hi], y=[lo, hi], mode="lines", line=dict(dash="dot", color="gray"),
                             hoverinfo="skip", showlegend=False))
    title = f"{metric}: {_esc(a)} (x) against {_esc(b)} (y)"
    if len(sa) > max_points:
        title += f" — sample of {max_points:,} segments"
    fig.update_layout(title=title, xaxis_title=f"{_esc(a)}", yaxis_title=f"{_esc(b)}", showlegend=False,
                      height=420, margin=dict(t=50, b=40, l=50, r=10))
    return fig


def pvalue_figure(sig: Significance):
    """Heat map of the pairwise p values (dark = significant at 0.05); the title names their family (Holm over how
    many pairs, or uncorrected)."""

    names = [_esc(s) for s in sig.systems]
    text = [[f"{p:.3f}" for p in row] for row in sig.matrix]
    fig = go.Figure(go.Heatmap(z=sig.matrix, x=names, y=names, text=text, texttemplate="%{text}",
                               zmin=0, zmax=0.1, colorscale="Blues_r",
                               colorbar=dict(title="p"), hovertemplate="%{y} vs %{x}: p = %{text}<extra></extra>"))
    family = sig.family_text()
    fig.update_layout(title=f"Pairwise paired-bootstrap p values ({sig.metric}" + (f"; {family}" if family else "")
                      + ")", height=120 + 45 * len(names),
                      margin=dict(t=50, b=30, l=10, r=10), yaxis=dict(autorange="reversed"))
    return fig
