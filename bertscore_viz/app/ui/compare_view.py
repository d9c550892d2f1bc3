"""Plotly figures of a comparison (sampled when large). Names are HTML-escaped: Plotly reads tags in labels."""

from __future__ import annotations

import html

import numpy as np
import plotly.colors as pc
import plotly.graph_objects as go

from bertscore_viz.evaluation.compare import Comparison
from bertscore_viz.evaluation.significance import Significance

#: Most points a chart draws per system; more are sampled with a fixed seed.
MAX_POINTS = 4000


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
    """Mean score per reference-length bucket, one line per system; each bucket's size in its label."""

    fig = go.Figure()
    names = list(dict.fromkeys(buckets["System"]))
    colours = palette(len(names))
    for name, colour in zip(names, colours):
        part = buckets[buckets["System"] == name]
        labels = [f"{b} (n={n})" for b, n in zip(part["Bucket"], part["Segments"])]
        fig.add_trace(go.Scatter(x=labels, y=part[metric], name=_esc(name), mode="lines+markers",
                                 line=dict(color=colour), marker=dict(color=colour),
                                 customdata=part["Segments"],
                                 hovertemplate="%{x}<br>" + metric + " %{y:.4f}<br>%{customdata} segments"))
    fig.update_layout(title=f"{metric} by reference length", yaxis_title=f"mean {metric}",
                      xaxis_title="reference length (words)", height=400, margin=dict(t=80, b=50, l=50, r=10),
                      legend=dict(orientation="h", x=0, y=1.0, yanchor="bottom"))  # above the plot, off the title
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
