"""Figures of agreement with human scores (no Streamlit): every metric at every level with its interval, the
correlation-by-layer curve and the scatter of a metric against the human scores. Plotly for the page, matplotlib for
PNG/SVG/PDF downloads (no kaleido).

User text (the outputs, shown on hover; metric names) is HTML-escaped, as in :mod:`bertscore_viz.figures.plots`.
"""

from __future__ import annotations

import html
import io
import math

import matplotlib
import numpy as np
import plotly.graph_objects as go
from matplotlib.figure import Figure
from plotly.subplots import make_subplots

from bertscore_viz.evaluation.correlation import best_metrics

__all__ = ["HOVER_CHARS", "LAYER_COLORS", "LEVEL_TITLES", "MAX_SCATTER_POINTS", "META_TITLES", "layer_curve_figure",
           "layer_curve_image", "levels_figure", "meta_figure", "scatter_figure", "scatter_image"]

LAYER_COLORS = {"P": "#4c78a8", "R": "#f58518", "F1": "#54a24b"}
#: Points drawn on the scatter; above, an even sample (the statistics always use every point).
MAX_SCATTER_POINTS = 5000
#: Characters of an output shown in a hover.
HOVER_CHARS = 160


#: Panel titles of the levels figure.
LEVEL_TITLES = {"segment": "segment level", "system": "system level", "system_gold": "system vs human system scores",
                "summary": "summary level"}


def levels_figure(agreement, metrics: list[str] | None = None, title: str | None = None):
    """Each metric's statistic at every level with its 95% interval, one panel per level (the statistic that ranks
    metrics there); the best of each panel drawn as a star and named in its hover.

    Args:
        agreement: an :class:`~bertscore_viz.evaluation.correlation.Agreement`.
        metrics: the metrics, top to bottom (default: the agreement's order).
        title: the figure's title.

    Returns:
        A plotly figure.
    """
    levels = agreement.levels()
    fig = make_subplots(rows=1, cols=max(1, len(levels)), shared_yaxes=True, horizontal_spacing=0.04,
                        subplot_titles=[f"{LEVEL_TITLES[lv]}: {agreement.level_statistic(lv).capitalize()}"
                                        for lv in levels])
    for col, (level, results) in enumerate(levels.items(), start=1):
        stat = agreement.level_statistic(level)
        names = [m for m in (metrics or list(results)) if m in results][::-1]  # first metric on top
        best = set(best_metrics(results, stat))
        values = [results[m].values.get(stat, math.nan) for m in names]
        lo = [results[m].ci95.get(stat, (math.nan, math.nan))[0] for m in names]
        hi = [results[m].ci95.get(stat, (math.nan, math.nan))[1] for m in names]
        err_plus = [h - v if math.isfinite(h) and math.isfinite(v) else None for h, v in zip(hi, values)]
        err_minus = [v - lo_ if math.isfinite(lo_) and math.isfinite(v) else None for lo_, v in zip(lo, values)]
        labels = [html.escape(m) for m in names]
        fig.add_trace(go.Scatter(
            x=values, y=labels, mode="markers", showlegend=False,
            marker={"symbol": ["star" if m in best else "circle" for m in names],
                    "size": [15 if m in best else 9 for m in names], "color": "#4c78a8"},
            error_x={"type": "data", "array": err_plus, "arrayminus": err_minus, "thickness": 1.2},
            customdata=[[lo_, h, "best" if m in best else ""] for m, lo_, h in zip(names, lo, hi)],
            hovertemplate=f"%{{y}}<br>{stat.capitalize()} %{{x:.4f}} [%{{customdata[0]:.3f}}, "
                          "%{customdata[1]:.3f}] %{customdata[2]}<extra></extra>"), row=1, col=col)
    fig.update_layout(title=title or "Every metric at every level (95% bootstrap intervals; ★ best)",
                      height=120 + 34 * max(1, max((len(r) for r in levels.values()), default=1)),
                      margin={"t": 90, "l": 110, "r": 20, "b": 40})
    return fig


#: Panel titles of the pairwise accuracy figure.
META_TITLES = {"acc_eq": "segment level: acc_eq", "spa": "system level: soft pairwise accuracy",
               "system": "system level: pairwise accuracy"}


def meta_figure(result, metrics: list[str] | None = None, title: str | None = None):
    """Each metric's pairwise accuracies with their 95% intervals, one panel per statistic computed (a
    :class:`~bertscore_viz.evaluation.meta_evaluation.MetaEvaluation`); the best of each panel drawn as a star.

    Args:
        result: the meta-evaluation; metrics: top to bottom (default: its order); title: the figure's title.

    Returns:
        A plotly figure.
    """
    attrs = {"acc_eq": ("acc_eq", "acc_eq_ci"), "spa": ("spa", "spa_ci"), "system": ("system", "system_ci")}
    levels = [lv for lv in attrs if lv == "acc_eq" or result.system_level]
    fig = make_subplots(rows=1, cols=len(levels), shared_yaxes=True, horizontal_spacing=0.04,
                        subplot_titles=[META_TITLES[lv] for lv in levels])
    names = [m for m in (metrics or list(result.metrics)) if m in result.metrics][::-1]  # first metric on top
    for col, level in enumerate(levels, start=1):
        value_attr, ci_attr = attrs[level]
        values = [getattr(result.metrics[m], value_attr) for m in names]
        cis = [getattr(result.metrics[m], ci_attr) or (math.nan, math.nan) for m in names]
        best = result.best.get(level)
        fig.add_trace(go.Scatter(
            x=values, y=[html.escape(m) for m in names], mode="markers", showlegend=False,
            marker={"symbol": ["star" if m == best else "circle" for m in names],
                    "size": [15 if m == best else 9 for m in names], "color": "#54a24b"},
            error_x={"type": "data", "thickness": 1.2,
                     "array": [h - v if math.isfinite(h) else None for (_, h), v in zip(cis, values)],
                     "arrayminus": [v - lo if math.isfinite(lo) else None for (lo, _), v in zip(cis, values)]},
            hovertemplate="%{y}<br>%{x:.4f}<extra></extra>"), row=1, col=col)
    fig.update_layout(title=title or "Pairwise accuracy with the human scores (95% bootstrap intervals; ★ best)",
                      height=120 + 34 * max(1, len(names)), margin={"t": 90, "l": 110, "r": 20, "b": 40})
    return fig


def layer_curve_figure(layers: dict, layer: int, tuned: int | None, best: int | None, title: str | None = None):
    """Segment-level Pearson of P, R and F1 at every layer, with the current, tuned and best layers marked."""

    fig = go.Figure()
    xs = list(range(len(layers["F1"])))
    for name, values in layers.items():
        ys = [np.nan if v is None else v for v in values]
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines+markers", name=f"BERTScore-{name}",
                                 line={"color": LAYER_COLORS.get(name)},
                                 hovertemplate=f"layer %{{x}}<br>{name} Pearson %{{y:.4f}}<extra></extra>"))
    marks: dict[int, list[str]] = {}  # one line and one label per layer marked ("current, tuned: L4")
    for x, label in ((layer, "current"), (tuned, "tuned"), (best, "best here")):
        if x is not None:
            marks.setdefault(int(x), []).append(label)
    for x, labels in marks.items():
        dash, color = ("dashdot", "#2ca02c") if "best here" in labels else ("dash", "#333333")
        fig.add_vline(x=x, line_dash=dash, line_color=color, annotation_text=f"{', '.join(labels)}: L{x}",
                      annotation_position="top")
    fig.update_layout(title=title or "Segment-level Pearson with the human scores, by layer",
                      xaxis_title="layer (0 = embeddings)", yaxis_title="Pearson r", height=380,
                      margin={"t": 90, "l": 60, "r": 20, "b": 50}, legend={"orientation": "h", "y": -0.25},
                      xaxis={"dtick": 1})
    return fig


def _sample(n: int, limit: int = MAX_SCATTER_POINTS) -> np.ndarray:
    return np.arange(n) if n <= limit else np.linspace(0, n - 1, limit).round().astype(int)


def scatter_figure(metric: str, values, human, candidates=None, references=None, colour_by=None,
                   title: str | None = None):
    """Each output as a point (metric score, human score); hover shows its text; coloured by system or group."""

    values, human = np.asarray(values, dtype=np.float64), np.asarray(human, dtype=np.float64)
    idx = _sample(len(values))
    fig = go.Figure()
    groups = np.asarray(colour_by, dtype=object)[idx] if colour_by is not None else np.full(len(idx), "", object)
    for g in dict.fromkeys(groups.tolist()):
        sel = idx[groups == g]
        text = None
        if candidates is not None:
            text = [f"{html.escape(_short(candidates[i]))}<br><i>ref:</i> {html.escape(_short(references[i][0]))}"
                    if references is not None else html.escape(_short(candidates[i])) for i in sel]
        fig.add_trace(go.Scattergl(x=values[sel], y=human[sel], mode="markers", name=html.escape(str(g)) or metric,
                                   marker={"size": 5, "opacity": 0.6}, text=text,
                                   hovertemplate=f"{html.escape(metric)} %{{x:.4f}}<br>human %{{y:.3f}}<br>"
                                                 "%{text}<extra></extra>" if text else None))
    shown = "" if len(idx) == len(values) else f" ({len(idx):,} of {len(values):,} points drawn)"
    fig.update_layout(title=(title or f"{html.escape(metric)} against the human scores") + shown,
                      xaxis_title=html.escape(metric), yaxis_title="human score", height=460,
                      showlegend=colour_by is not None, margin={"t": 60, "l": 60, "r": 20, "b": 50})
    return fig


def _short(text: str) -> str:
    text = str(text)
    return text if len(text) <= HOVER_CHARS else text[: HOVER_CHARS - 1] + "…"


def layer_curve_image(layers: dict, layer: int, tuned: int | None, best: int | None, fmt: str = "png") -> bytes:
    """The layer curve with matplotlib (PNG, SVG or PDF), math text off."""

    matplotlib.use("Agg")

    fig = Figure(figsize=(7, 3.6), dpi=150)
    ax = fig.add_subplot()
    xs = list(range(len(layers["F1"])))
    for name, values in layers.items():
        ax.plot(xs, [np.nan if v is None else v for v in values], marker="o", color=LAYER_COLORS.get(name),
                label=f"BERTScore-{name}")
    marks: dict[int, list[str]] = {}
    for x, label in ((layer, "current"), (tuned, "tuned"), (best, "best here")):
        if x is not None:
            marks.setdefault(int(x), []).append(label)
    for x, labels in marks.items():
        ax.axvline(x, linestyle="-." if "best here" in labels else "--", color="#555555", linewidth=1)
        ax.annotate(f"{', '.join(labels)}: L{x}", (x, 1.0), xycoords=("data", "axes fraction"), rotation=90,
                    va="top", ha="right", fontsize=7, color="#555555")
    ax.set_xlabel("layer (0 = embeddings)")
    ax.set_ylabel("Pearson r")
    ax.set_xticks(xs)
    ax.set_title("Segment-level Pearson with the human scores, by layer", fontsize=10)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt)
    return buf.getvalue()


def scatter_image(metric: str, values, human, fmt: str = "png") -> bytes:
    """The scatter with matplotlib (PNG, SVG or PDF); no text of the outputs (they stay on the page)."""

    matplotlib.use("Agg")

    values, human = np.asarray(values, dtype=np.float64), np.asarray(human, dtype=np.float64)
    idx = _sample(len(values))
    fig = Figure(figsize=(5.5, 4.5), dpi=150)
    ax = fig.add_subplot()
    ax.scatter(values[idx], human[idx], s=6, alpha=0.5, color="#4c78a8")
    ax.set_xlabel(metric.replace("$", r"\$"))
    ax.set_ylabel("human score")
    ax.set_title(f"{metric} against the human scores".replace("$", r"\$"), fontsize=10)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt)
    return buf.getvalue()
