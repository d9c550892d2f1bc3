"""The Agreement page's report: the verdict at every level, the table of every metric at every level with the best
of each column marked, the layer curve, each output's scatter, the groups and systems, and the downloads.

Everything the user typed or uploaded is shown through dataframes, escaped markdown or HTML-escaped figure labels.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import streamlit as st

from bertscore_viz.app.app_pages.agreement.work import Rated, kept_meta
from bertscore_viz.app.shared.messages import escape_markdown, show_warnings
from bertscore_viz.evaluation import human_agreement as ha
from bertscore_viz.evaluation.correlation import STATISTICS, best_metrics
from bertscore_viz.evaluation.levels import RESAMPLED, winners
from bertscore_viz.figures import agreement_plots as plots
from bertscore_viz.figures.plots import PLOTLY_CONFIG
from bertscore_viz.files.export import safe_csv, to_json

__all__ = ["BEST_MARK", "METRIC_ORDER", "groups_table", "headline_markdown", "level_label", "levels_table",
           "metric_names", "outputs_frame", "report_json", "show_report", "systems_table"]

METRIC_ORDER = ("BERTScore-F1", "BERTScore-P", "BERTScore-R", "chrF", "BLEU")
#: Marks the best metric of a column at a level (a symbol, not a colour).
BEST_MARK = "★"
#: Tallest levels table drawn whole (pixels); a longer one scrolls.
MAX_TABLE_HEIGHT = 760
_COLUMNS = {"pearson": "Pearson [95% CI]", "spearman": "Spearman [95% CI]", "kendall": "Kendall [95% CI]"}


def metric_names(names) -> list[str]:
    """The metrics in the page's order (BERTScore F1, P, R, then the others as given)."""
    names = list(names)
    return [m for m in METRIC_ORDER if m in names] + [m for m in names if m not in METRIC_ORDER]


def _fmt(v: float | None) -> str:
    return "n/a" if v is None or not math.isfinite(v) else f"{round(v, 4) + 0.0:+.4f}"  # + 0.0: no "-0.0000"


def _with_ci(level, stat: str) -> str:
    lo, hi = level.ci95.get(stat, (math.nan, math.nan))
    ci = "" if not math.isfinite(lo) else f" [{round(lo, 3) + 0.0:+.3f}, {round(hi, 3) + 0.0:+.3f}]"
    return _fmt(level.values.get(stat)) + ci


def level_label(agreement, level: str) -> str:
    """``"segment (3,360 outputs)"``, ``"system (12 systems)"``, ``"summary (100 documents)"``..."""
    if level == "segment":
        return f"segment ({agreement.n_pairs:,} outputs)"
    if level == "summary":
        return f"summary ({agreement.n_documents:,} documents)"
    if level == "system":
        return f"system ({agreement.n_systems:,} systems)"
    return f"system vs human system scores ({agreement.n_gold_systems:,} systems)"


def levels_table(agreement) -> pd.DataFrame:
    """One row per (level, metric): each statistic with its interval, the best of each column at each level
    marked with :data:`BEST_MARK` (all of them when equal at 4 decimals); "not reported" where a level has no such
    statistic (Spearman over a few systems)."""
    rows = []
    for level, results in agreement.levels().items():
        best = {s: set(best_metrics(results, s)) for s in STATISTICS}
        for name in metric_names(results):
            row = {"level": level_label(agreement, level), "metric": name}
            for stat, column in _COLUMNS.items():
                if stat not in results[name].values:
                    row[column] = "not reported"
                    continue
                mark = f"{BEST_MARK} " if name in best[stat] else ""
                row[column] = mark + _with_ci(results[name], stat)
            rows.append(row)
    return pd.DataFrame(rows)


def headline_markdown(agreement) -> str:
    """The verdict at every level as markdown bullets: the level in bold, the rest escaped."""
    lines = []
    for line in agreement.headline():
        head, sep, rest = line.partition(": ")
        if sep and not line.startswith(("The levels", "Every level", "No ")):
            lines.append(f"- **{escape_markdown(head)}**: {escape_markdown(rest)}")
        else:
            lines.append(f"- {escape_markdown(line)}")
    return "\n".join(lines)


def _show_headline(agreement) -> None:
    disagree = len(set(winners(agreement).values())) > 1
    (st.warning if disagree else st.info)(headline_markdown(agreement),
                                          icon=":material/call_split:" if disagree else ":material/insights:")


def groups_table(report: ha.AgreementReport) -> pd.DataFrame:
    rows = []
    for group, agr in report.by_group.items():
        row = {"group": group, "outputs": agr.n_pairs}
        for name in metric_names(agr.segment):
            row[f"{name} Pearson"] = agr.segment[name].values["pearson"]
        best = winners(agr)
        for level in agr.levels():
            row[f"best at {level.replace('_gold', ' (human system scores)')} level"] = best.get(level, "n/a")
        rows.append(row)
    return pd.DataFrame(rows)


def systems_table(report: ha.AgreementReport) -> pd.DataFrame:
    frame = pd.DataFrame({"system": report.systems, "human": report.human,
                          **{k: np.asarray(v) for k, v in report.scores.items()}})
    frame = frame[np.isfinite(frame["human"].to_numpy(dtype=float))]
    out = frame.groupby("system", sort=True).agg(["mean", "count"])
    table = pd.DataFrame({"system": out.index, "outputs": out[("human", "count")].to_numpy(),
                          "mean human": out[("human", "mean")].to_numpy()})
    if report.system_scores:
        table["human system score"] = [report.system_scores.get(s, math.nan) for s in out.index]
    for name in metric_names(report.scores):
        table[f"mean {name}"] = out[(name, "mean")].to_numpy()
    return table.sort_values("mean human", ascending=False, ignore_index=True)


def outputs_frame(report: ha.AgreementReport, rated: Rated) -> pd.DataFrame:
    data = rated.data
    frame = pd.DataFrame({"row": data.rows, "segment_id": data.segment_ids, "candidate": data.candidates,
                          "reference": [" ||| ".join(r) for r in data.references], "human": report.human})
    if data.systems is not None:
        frame.insert(1, "system", data.systems)
    if data.groups is not None:
        frame.insert(1, "group", data.groups)
    for name in metric_names(report.scores):
        frame[name] = np.asarray(report.scores[name])
    return frame


def _levels_caption(report: ha.AgreementReport) -> str:
    agr = report.overall
    parts = [f"{BEST_MARK} marks the best metric of each column at each level (the highest value at 4 decimals; "
             "equal ones all marked). 95% intervals from "
             f"{agr.n_samples:,} bootstrap resamples (seed {agr.seed}), paired across metrics:"]
    parts.append("; ".join(f"{level.replace('_gold', ' vs human system scores')} level: {RESAMPLED[level]}"
                           for level in agr.levels()) + ".")
    if set(agr.levels()) == {"segment"} and not agr.notes:
        parts.append("Segment level only: a system level needs outputs that name their system (3 or more), a "
                     "summary level outputs that share a document (segment id).")
    parts.append("BERTScore scores are raw: rescaling is linear and increasing, so it changes no correlation (the "
                 "sidebar's rescaling switch does not apply here).")
    return " ".join(parts)


def _layer_section(report: ha.AgreementReport, use_layer) -> None:
    st.subheader("Correlation by layer")
    st.plotly_chart(plots.layer_curve_figure(report.layers, report.layer, report.tuned_layer, report.best_layer),
                    config=PLOTLY_CONFIG, key="agr_layers")
    if report.best_layer is not None and report.best_layer != report.layer:
        f1 = report.layers["F1"]
        st.button(f"Use layer {report.best_layer} (F1 Pearson {_fmt(f1[report.best_layer])} here, against "
                  f"{_fmt(f1[report.layer])} at layer {report.layer}) in the sidebar", key="agr_use_best",
                  on_click=use_layer, args=(report.best_layer,), icon=":material/tune:")
    else:
        st.caption(f"Layer {report.layer}, the sidebar's, is the best layer for F1 on this data.")


def _scatter_section(report: ha.AgreementReport, rated: Rated) -> str:
    st.subheader("Each output")
    names = metric_names(report.scores)
    c1, c2 = st.columns(2)
    colour_opts = ["nothing"] + (["system"] if report.systems else []) + (["group"] if report.groups else [])
    for key, options in (("agr_metric", names), ("agr_colour", colour_opts)):
        if key in st.session_state and st.session_state[key] not in options:  # kept from another input
            del st.session_state[key]
    metric = c1.selectbox("Metric", names, key="agr_metric")
    colour = c2.selectbox("Colour by", colour_opts, key="agr_colour")
    colour_by = {"system": report.systems, "group": report.groups}.get(colour)
    st.plotly_chart(plots.scatter_figure(metric, report.scores[metric], report.human, rated.data.candidates,
                                         rated.data.references, colour_by), config=PLOTLY_CONFIG, key="agr_scatter")
    return metric


def show_report(report: ha.AgreementReport, rated: Rated, use_layer, disagreements=None, meta=None) -> None:
    """Everything about one report.

    Args:
        report: the report; rated: its outputs.
        use_layer: ``use_layer(n)``, the callback that sets the sidebar's layer.
        disagreements: draws the disagreements section (``disagreements(report, rated)``), or None.
        meta: draws the pairwise accuracy section (``meta(report, rated)``), or None.
    """
    _show_headline(report.overall)
    table = levels_table(report.overall)
    st.dataframe(table, hide_index=True, width="stretch", height=min(MAX_TABLE_HEIGHT, 38 + 35 * len(table)))
    st.caption(_levels_caption(report))
    if len(report.overall.levels()) > 1:
        st.plotly_chart(plots.levels_figure(report.overall, metric_names(report.scores)), config=PLOTLY_CONFIG,
                        key="agr_levels_figure")
    show_warnings(report.warnings)
    if meta is not None:
        meta(report, rated)
    if disagreements is not None:
        disagreements(report, rated)
    _layer_section(report, use_layer)
    metric = _scatter_section(report, rated)
    if report.by_group:
        st.subheader("By group")
        table = groups_table(report)
        st.dataframe(table, hide_index=True, width="stretch",
                     column_config={c: st.column_config.NumberColumn(format="%.4f")
                                    for c in table.columns if c.endswith("Pearson")})
    if report.systems:
        st.subheader("By system")
        st.dataframe(systems_table(report), hide_index=True, width="stretch")
    downloads(report, rated, metric)


def report_json(report: ha.AgreementReport, meta=None) -> dict:
    """The report's JSON with the pairwise accuracy section ``meta`` when it was computed (``meta_evaluation``, as
    ``correlate --json`` writes it)."""
    out = report.as_dict()
    if meta is not None:
        out["meta_evaluation"] = meta.as_dict()
    return out


def downloads(report: ha.AgreementReport, rated: Rated, metric: str) -> None:
    st.subheader("Downloads")
    row = st.container(horizontal=True, gap="small")
    row.download_button("Outputs and scores (CSV)", data=lambda: safe_csv(outputs_frame(report, rated),
                                                                          report.signature),
                        file_name="agreement_outputs.csv", mime="text/csv", key="agr_dl_csv", on_click="ignore")
    row.download_button("Levels table (CSV)", data=lambda: safe_csv(levels_table(report.overall), report.signature),
                        file_name="agreement_levels.csv", mime="text/csv", key="agr_dl_levels", on_click="ignore")
    row.download_button("Report (JSON)", data=lambda: to_json(report_json(report, kept_meta(report))),
                        file_name="agreement_report.json",
                        mime="application/json", key="agr_dl_json", on_click="ignore")
    fmt = st.selectbox("Figure format", ["png", "svg", "pdf"], key="agr_fig_fmt")
    figures = st.container(horizontal=True, gap="small")
    figures.download_button(f"Layer curve ({fmt.upper()})",
                            data=lambda: plots.layer_curve_image(report.layers, report.layer, report.tuned_layer,
                                                                 report.best_layer, fmt),
                            file_name=f"agreement_layers.{fmt}", key="agr_dl_layers", on_click="ignore")
    figures.download_button(f"Scatter of {metric} ({fmt.upper()})",
                            data=lambda: plots.scatter_image(metric, report.scores[metric], report.human, fmt),
                            file_name=f"agreement_scatter_{metric}.{fmt}", key="agr_dl_scatter", on_click="ignore")
