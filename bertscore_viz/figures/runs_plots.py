"""A system's history across kept runs as a small Plotly chart (the Compare page's "Earlier runs"): corpus F1 per
run, one line per system, in time order. Names are HTML-escaped: Plotly reads tags in labels."""

from __future__ import annotations

import html

import plotly.graph_objects as go

from bertscore_viz.files.runs import HistoryPoint

__all__ = ["history_figure"]


def _esc(text: str) -> str:
    return html.escape(str(text), quote=False)


def history_figure(histories: dict[str, list[HistoryPoint]], height: int = 280):
    """One line per system of its corpus F1 in each run (x: the run's time; hover: the run's name)."""
    fig = go.Figure()
    for system, points in histories.items():
        if not points:
            continue
        fig.add_trace(go.Scatter(
            x=[p.created[:19].replace("T", " ") for p in points], y=[p.f1 for p in points], mode="lines+markers",
            name=_esc(system), text=[_esc(p.run) for p in points],
            hovertemplate="%{text}<br>%{x} UTC<br>F1 %{y:.4f}<extra>" + _esc(system) + "</extra>"))
    fig.update_layout(height=height, margin=dict(l=10, r=10, t=30, b=10), xaxis_title="run (UTC)",
                      yaxis_title="corpus F1", title="F1 across runs", legend=dict(orientation="h"))
    return fig
