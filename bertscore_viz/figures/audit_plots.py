"""Figures of the stress test of the metric (no Streamlit): how often and how much F1 notices each perturbation, by
layer (:mod:`bertscore_viz.evaluation.audit`; definitions in docs/AUDIT.md).

One figure, one panel per figure of the audit (pass rate and relative drop by default), one line per perturbation
(the same colour in every panel, one legend entry toggling all of them), the current layer marked in each panel.
``unrelated`` is drawn dashed and grey: it is the reference point (its relative drop is 1 by construction). Names
and labels are HTML-escaped, as in :mod:`bertscore_viz.figures.plots`, and should be shown with
:data:`~bertscore_viz.figures.plots.PLOTLY_CONFIG` (math typesetting off).
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from bertscore_viz.errors import InputError
from bertscore_viz.evaluation.audit import AUDIT_METRICS, UNRELATED, AuditResult

__all__ = ["DEFAULT_PANELS", "METRIC_LABELS", "PERTURBATION_COLORS", "UNRELATED_COLOR", "layer_figure"]

#: The panels drawn by default: how often F1 notices, and how much compared with an unrelated text.
DEFAULT_PANELS = ("pass_rate", "relative_drop")
#: Panel title, axis title and tick format of each figure of a row.
METRIC_LABELS = {
    "pass_rate": ("Pass rate: share of pairs where F1 dropped", "pass rate", ".0%"),
    "mean_drop": ("Mean drop of F1 (raw)", "mean F1(original) − F1(perturbed)", ".3f"),
    "relative_drop": ("Relative drop: 0 = not noticed, 1 = as low as an unrelated text", "relative drop", ".2f"),
}
#: One colour per registered perturbation (a perturbation keeps its colour whichever are run).
PERTURBATION_COLORS = {
    "negation_add": "#d62728", "negation_remove": "#ff9896", "numbers": "#9467bd", "entities": "#8c564b",
    "shuffle": "#1f77b4", "omission": "#2ca02c", "addition": "#17becf", "typos": "#ff7f0e",
}
UNRELATED_COLOR = "#7f7f7f"
_OTHER_COLORS = ("#bcbd22", "#e377c2", "#aec7e8", "#98df8a")


def _color(name: str, k: int) -> str:
    if name == UNRELATED:
        return UNRELATED_COLOR
    return PERTURBATION_COLORS.get(name, _OTHER_COLORS[k % len(_OTHER_COLORS)])


def _values(values) -> list[float | None]:
    """Plotly draws a gap at None (JSON has no NaN)."""
    return [None if math.isnan(float(v)) else float(v) for v in values]


def layer_figure(result: AuditResult, layer: int | None = None, metrics: Sequence[str] = DEFAULT_PANELS,
                 height: int = 430) -> go.Figure:
    """The audit's figures by layer: one panel per figure, one line per perturbation, ``layer`` marked.

    Args:
        result: an audit (every layer it scored is on the x axis).
        layer: the layer to mark (the sidebar's), or None; a layer not audited is not marked.
        metrics: the panels, among ``"pass_rate"``, ``"mean_drop"``, ``"relative_drop"``.
        height: the figure's height in pixels.

    Returns:
        A plotly figure; trace ``k`` of panel ``j`` is perturbation ``result.perturbations[k]`` (``x`` the layers,
        ``y`` its ``result.series(metrics[j])``, None where NaN; ``customdata`` the pairs ``n``). ``layout.meta``
        holds ``{"metrics", "layer", "perturbations"}``.

    Raises:
        InputError: an unknown figure name, or no panel.
    """
    metrics = tuple(metrics)
    unknown = [m for m in metrics if m not in AUDIT_METRICS]
    if unknown or not metrics:
        raise InputError(f"Cannot draw {unknown or 'no figure'}: expected one or more of {', '.join(AUDIT_METRICS)}.")
    marked = int(layer) if layer is not None and int(layer) in result.layers else None
    fig = make_subplots(rows=1, cols=len(metrics), horizontal_spacing=0.09,
                        subplot_titles=[METRIC_LABELS[m][0] for m in metrics])
    layers = [int(x) for x in result.layers]
    for col, metric in enumerate(metrics, start=1):
        series = result.series(metric)
        title, axis, fmt = METRIC_LABELS[metric]
        for k, name in enumerate(result.perturbations):
            label = html.escape(name)
            fig.add_trace(go.Scatter(
                x=layers, y=_values(series[name]), mode="lines+markers", name=label, legendgroup=name,
                showlegend=col == 1, customdata=[result.row(name, x).n for x in layers],
                line={"color": _color(name, k), "dash": "dash" if name == UNRELATED else "solid", "width": 2},
                marker={"size": 6},
                hovertemplate=f"<b>{label}</b><br>layer %{{x}}<br>{html.escape(axis)} %{{y:{fmt}}}<br>"
                              "n = %{customdata} pairs<extra></extra>"), row=1, col=col)
        fig.update_yaxes(title_text=html.escape(axis), tickformat=fmt, row=1, col=col, zeroline=True)
        xtitle = "layer (0 = embeddings)" + (f" · dotted: layer {marked}, the sidebar's" if marked is not None else "")
        fig.update_xaxes(title_text=xtitle, dtick=1, row=1, col=col)
        if marked is not None:  # said in the axis title: a label on the line would cover the panel's title
            fig.add_vline(x=marked, line_dash="dot", line_color="#333333", row=1, col=col)
    fig.update_layout(height=height, margin={"t": 60, "l": 60, "r": 20, "b": 50},
                      legend={"orientation": "h", "y": -0.22, "title": {"text": "perturbation"}},
                      hovermode="closest",
                      meta={"metrics": list(metrics), "layer": marked, "perturbations": list(result.perturbations)})
    fig.update_annotations(font_size=13)  # the panels' titles
    return fig
