"""What a metric difference means, drawn (Plotly, no Streamlit): the agreement curve of
:class:`~bertscore_viz.stats.delta_agreement.DeltaAgreement` with its interval and fitted sigmoid, every comparison
as a point at 1 (humans agreed) or 0 (they did not), jittered, and the user's delta marked.

The metric's name (user text: an uploaded column's name) is HTML-escaped, as in :mod:`bertscore_viz.figures.plots`.
"""

from __future__ import annotations

import html
import math

import numpy as np
import plotly.graph_objects as go

from bertscore_viz.stats.delta_agreement import DeltaAgreement

__all__ = ["JITTER", "MAX_POINTS", "delta_figure"]

#: Comparisons drawn as points; above, an even sample (the curve always uses every one).
MAX_POINTS = 3000
#: Vertical jitter of the 0/1 points (the points spread over 1 - JITTER .. 1 and 0 .. JITTER).
JITTER = 0.06


def _points(agreement: DeltaAgreement, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = agreement.n_pairs
    keep = np.arange(n) if n <= MAX_POINTS else np.unique(np.linspace(0, n - 1, MAX_POINTS).round().astype(int))
    x = agreement.pair_deltas[keep]
    agree = agreement.pair_agree[keep]
    jitter = np.random.default_rng(seed).uniform(0.0, JITTER, len(keep))
    return x, np.where(agree, 1.0 - jitter, jitter), agree


def delta_figure(agreement: DeltaAgreement, metric_name: str = "F1", delta: float | None = None,
                 title: str | None = None, seed: int = 0) -> go.Figure:
    """The agreement curve over ``|metric difference|``: each bin's fraction of comparisons agreeing with the human
    ranking and its 95% interval, the fitted sigmoid, the comparisons as jittered 0/1 points, and ``delta`` (the
    user's difference) as a vertical line with the sentence's number in its label."""
    name = html.escape(metric_name)
    fig = go.Figure()
    x, y, agree = _points(agreement, seed)
    fig.add_trace(go.Scatter(
        x=x, y=y, mode="markers", name="comparisons (1 agreed, 0 did not)",
        marker={"size": 5, "opacity": 0.45, "color": np.where(agree, "#54a24b", "#e45756").tolist()},
        hovertemplate=f"|Δ {name}| %{{x:.4g}}<extra></extra>"))
    if len(agreement.deltas):
        fig.add_trace(go.Scatter(
            x=np.concatenate([agreement.deltas, agreement.deltas[::-1]]),
            y=np.concatenate([agreement.high, agreement.low[::-1]]), fill="toself", mode="lines",
            line={"width": 0}, fillcolor="rgba(76,120,168,0.18)", name="95% interval", hoverinfo="skip"))
        fig.add_trace(go.Scatter(
            x=agreement.deltas, y=agreement.probability, mode="lines+markers", name="agreement (binned)",
            line={"color": "#4c78a8"}, marker={"size": 4},
            customdata=np.stack([agreement.delta_low, agreement.delta_high], axis=1),
            hovertemplate=(f"|Δ {name}| %{{x:.4g}} (bin %{{customdata[0]:.4g}} to %{{customdata[1]:.4g}})<br>"
                           "agreed %{y:.0%}<extra></extra>")))
    if not any(math.isnan(p) for p in agreement.phi) and agreement.n_pairs:
        grid = np.linspace(0.0, float(agreement.pair_deltas.max()), 200)
        fig.add_trace(go.Scatter(x=grid, y=agreement.fitted(grid), mode="lines", name="fitted sigmoid",
                                 line={"color": "#4c78a8", "dash": "dash"}, hoverinfo="skip"))
    if delta is not None:
        size = abs(float(delta))
        label = ("too few pairs" if agreement.too_few(size)
                 else f"{agreement.at(size).probability:.0%} agreed")
        fig.add_vline(x=size, line={"color": "#f58518", "dash": "dot"},
                      annotation_text=f"your difference {size:.3g}: {label}", annotation_position="top")
    fig.update_layout(title=html.escape(title) if title else f"How often humans agree with a {name} difference",
                      xaxis_title=f"|difference in {name}| between two systems",
                      yaxis_title="fraction agreeing with the human ranking", yaxis={"range": [-0.05, 1.05]},
                      legend={"orientation": "h", "y": -0.2}, margin={"t": 60})
    return fig
