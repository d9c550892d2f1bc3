"""The "Agreement with humans" page's pieces: the input (upload, built-in example, or the Compare upload when it
has a human column), the cached model pass and reports, and the tables, figures and downloads of a report.

The model pass is the expensive step (all layers at once); it is kept per (file, human column, model, idf). A
report for another layer or another number of resamples is the bootstrap only, kept for the last few settings.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import streamlit as st

from bertscore_viz.app.ui import cache as ui_cache
from bertscore_viz.app.ui.compare_state import compare_input
from bertscore_viz.app.ui.messages import (
    escape_markdown,
    progress_callback,
    show_warnings,
)
from bertscore_viz.evaluation import human_agreement as ha
from bertscore_viz.figures import agreement_plots as plots
from bertscore_viz.figures.plots import PLOTLY_CONFIG
from bertscore_viz.files import upload
from bertscore_viz.files.export import safe_csv, to_json
from bertscore_viz.files.human_scores import (
    HumanScored,
    find_human_column,
    parse_human_scores,
)
from bertscore_viz.locations import EXAMPLES_DIR

INPUT_KEY = "agreement_input"
#: The session's model passes and reports (bounded: one file's work at a time, a few settings of it).
WORK_KEY = "_agreement_work"
MAX_REPORTS = 6
EXAMPLE_NAME = "wmt16_da_to_english.csv"
EXAMPLE_LABEL = "WMT16 DA, six language pairs into English (3,360 rated translations)"
METRIC_ORDER = ("BERTScore-F1", "BERTScore-P", "BERTScore-R", "chrF", "BLEU")


# --- input --------------------------------------------------------------------------------------------------------
def set_input(name: str, data: bytes, origin: str) -> None:
    st.session_state[INPUT_KEY] = {"name": name, "data": data, "origin": origin}


def current_input() -> dict | None:
    return st.session_state.get(INPUT_KEY)


def load_example() -> None:
    set_input(EXAMPLE_NAME, (EXAMPLES_DIR / EXAMPLE_NAME).read_bytes(), "example")


def compare_upload_with_human() -> dict | None:
    """The Compare page's input when its header has a human-score column (else None)."""
    item = compare_input()
    if not item or item.get("name", "").endswith(".parquet"):
        return None
    table, _ = upload.read_table(item["data"][:65536] + b"\n", item["name"], max_rows=2)
    if table is None or find_human_column(list(table.columns)) is None:
        return None
    return item


def header_columns(data: bytes, name: str) -> list[str]:
    table, _ = upload.read_table(data[:65536] + b"\n", name, max_rows=2)
    return [] if table is None else [c for c in table.columns if c]


def parse(item: dict, human_column: str | None) -> HumanScored:
    """The input read within this server's upload limits (each uploaded file counted once per session)."""
    if item.get("origin") == "upload":
        refused = ui_cache.count_upload(item["data"], item["name"])
        if refused is not None:
            return HumanScored([], [], [], None, None, [], [], [upload.Problem(None, None, refused)])
    return parse_human_scores(item["data"], item["name"], human_column=human_column,
                              max_bytes=ui_cache.upload_limit_bytes(), max_rows=ui_cache.policy().upload_rows)


# --- work ---------------------------------------------------------------------------------------------------------
def _work() -> dict:
    return st.session_state.setdefault(WORK_KEY, {"pass": None, "reports": {}, "sentence": None})


def scores_for(settings, rated: HumanScored, file_key: str) -> ha.LayerScores:
    """Every layer's P/R/F1 of the outputs: one model pass, kept while the file, model and idf stay the same."""
    spec = ui_cache.resolve_model(settings.model)
    key = (file_key, rated.human_column, spec.name, spec.source, bool(settings.idf))
    work = _work()
    if work["pass"] is not None and work["pass"][0] == key:
        return work["pass"][1]
    scorer = ui_cache.scorer(settings, rescale=False)
    progress = progress_callback(f"Embedding {len(rated):,} rated outputs at every layer of {spec.name}")
    try:
        scores = ha.layer_scores(scorer, rated.candidates, rated.references, progress=progress,
                                 labels=[f"row {r}" for r in rated.rows])  # the file's rows, as the problems
    finally:
        progress.bar.empty()
    work.update({"pass": (key, scores), "reports": {}, "sentence": None})
    return scores


def sentence_scores(rated: HumanScored, file_key: str) -> dict:
    work = _work()
    if work["sentence"] is None or work["sentence"][0] != file_key:
        with st.spinner(f"Sentence chrF and BLEU of {len(rated):,} outputs…"):
            work["sentence"] = (file_key, ha.sentence_metric_scores(rated.candidates, rated.references))
    return work["sentence"][1]


def report_for(scores: ha.LayerScores, layer: int, rated: HumanScored, file_key: str, n_samples: int,
               seed: int) -> ha.AgreementReport:
    work = _work()
    key = (file_key, layer, n_samples, seed)
    if key not in work["reports"]:
        if len(work["reports"]) >= MAX_REPORTS:
            work["reports"].pop(next(iter(work["reports"])))
        with st.spinner(f"Correlations with {n_samples:,} bootstrap resamples…"):
            work["reports"][key] = ha.report_at(scores, layer, rated.human, rated.systems, rated.groups,
                                                sentence_scores(rated, file_key), n_samples, seed)
    return work["reports"][key]


# --- showing a report ---------------------------------------------------------------------------------------------
def _fmt(v: float | None) -> str:
    return "n/a" if v is None or not math.isfinite(v) else f"{v:+.4f}"


def _with_ci(level, stat: str) -> str:
    lo, hi = level.ci95.get(stat, (math.nan, math.nan))
    ci = "" if not math.isfinite(lo) else f" [{lo:+.3f}, {hi:+.3f}]"
    return _fmt(level.values.get(stat)) + ci


def metrics_table(report: ha.AgreementReport) -> pd.DataFrame:
    rows = []
    for name in [m for m in METRIC_ORDER if m in report.overall.segment]:
        seg = report.overall.segment[name]
        row = {"metric": name, "Pearson [95% CI]": _with_ci(seg, "pearson"),
               "Spearman [95% CI]": _with_ci(seg, "spearman"), "Kendall [95% CI]": _with_ci(seg, "kendall")}
        if name in report.overall.system:
            sys_ = report.overall.system[name]
            row["system Pearson [95% CI]"] = _with_ci(sys_, "pearson")
            row["system Kendall [95% CI]"] = _with_ci(sys_, "kendall")
        rows.append(row)
    return pd.DataFrame(rows)


def groups_table(report: ha.AgreementReport) -> pd.DataFrame:
    rows = []
    for group, agr in report.by_group.items():
        row = {"group": group, "outputs": agr.n_pairs}
        for name in [m for m in METRIC_ORDER if m in agr.segment]:
            row[f"{name} Pearson"] = agr.segment[name].values["pearson"]
        best = agr.lead.best if agr.lead is not None else "n/a"
        row["best metric"] = best
        rows.append(row)
    return pd.DataFrame(rows)


def systems_table(report: ha.AgreementReport) -> pd.DataFrame:
    frame = pd.DataFrame({"system": report.systems, "human": report.human,
                          **{k: np.asarray(v) for k, v in report.scores.items()}})
    out = frame.groupby("system", sort=True).agg(["mean", "count"])
    table = pd.DataFrame({"system": out.index, "outputs": out[("human", "count")].to_numpy(),
                          "mean human": out[("human", "mean")].to_numpy()})
    for name in [m for m in METRIC_ORDER if m in report.scores]:
        table[f"mean {name}"] = out[(name, "mean")].to_numpy()
    return table.sort_values("mean human", ascending=False, ignore_index=True)


def outputs_frame(report: ha.AgreementReport, rated: HumanScored) -> pd.DataFrame:
    frame = pd.DataFrame({"row": rated.rows, "segment_id": rated.segment_ids, "candidate": rated.candidates,
                          "reference": [" ||| ".join(r) for r in rated.references], "human": report.human})
    if rated.systems is not None:
        frame.insert(1, "system", rated.systems)
    if rated.groups is not None:
        frame.insert(1, "group", rated.groups)
    for name in [m for m in METRIC_ORDER if m in report.scores]:
        frame[name] = np.asarray(report.scores[name])
    return frame


def show_report(report: ha.AgreementReport, rated: HumanScored, use_layer) -> None:
    """Everything about one report; ``use_layer(n)`` is the callback that sets the sidebar's layer."""
    st.dataframe(metrics_table(report), hide_index=True, width="stretch")
    if report.overall.lead is not None:
        lead = report.overall.lead
        (st.success if lead.significant() else st.info)(escape_markdown(lead.sentence()))
    st.caption(f"{report.overall.n_pairs:,} rated outputs; segment level: every output is a point; 95% intervals from "
               f"{report.overall.n_samples:,} bootstrap resamples of the outputs (seed {report.overall.seed}). "
               "BERTScore scores are raw: rescaling is linear and increasing, so it changes no correlation "
               "(the sidebar's rescaling switch does not apply here).")
    show_warnings(report.warnings)
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
    st.subheader("Each output")
    names = [m for m in METRIC_ORDER if m in report.scores]
    c1, c2 = st.columns(2)
    metric = c1.selectbox("Metric", names, key="agr_metric")
    colour_opts = ["nothing"] + (["system"] if report.systems else []) + (["group"] if report.groups else [])
    colour = c2.selectbox("Colour by", colour_opts, key="agr_colour")
    colour_by = {"system": report.systems, "group": report.groups}.get(colour)
    st.plotly_chart(plots.scatter_figure(metric, report.scores[metric], report.human, rated.candidates,
                                         rated.references, colour_by), config=PLOTLY_CONFIG, key="agr_scatter")
    if report.by_group:
        st.subheader("By group")
        st.dataframe(groups_table(report), hide_index=True, width="stretch",
                     column_config={c: st.column_config.NumberColumn(format="%.4f")
                                    for c in groups_table(report).columns if c.endswith("Pearson")})
    if report.systems:
        st.subheader("By system")
        st.dataframe(systems_table(report), hide_index=True, width="stretch")
    downloads(report, rated, metric)


def downloads(report: ha.AgreementReport, rated: HumanScored, metric: str) -> None:
    st.subheader("Downloads")
    c1, c2, c3, c4 = st.columns(4)
    c1.download_button("Outputs and scores (CSV)", data=lambda: safe_csv(outputs_frame(report, rated),
                                                                         report.signature),
                       file_name="agreement_outputs.csv", mime="text/csv", key="agr_dl_csv")
    c2.download_button("Report (JSON)", data=lambda: to_json(report.as_dict()), file_name="agreement_report.json",
                       mime="application/json", key="agr_dl_json")
    fmt = c3.selectbox("Figure format", ["png", "svg", "pdf"], key="agr_fig_fmt")
    c4.download_button(f"Layer curve ({fmt.upper()})",
                       data=lambda: plots.layer_curve_image(report.layers, report.layer, report.tuned_layer,
                                                            report.best_layer, fmt),
                       file_name=f"agreement_layers.{fmt}", key="agr_dl_layers")
    c4.download_button(f"Scatter of {metric} ({fmt.upper()})",
                       data=lambda: plots.scatter_image(metric, report.scores[metric], report.human, fmt),
                       file_name=f"agreement_scatter_{metric}.{fmt}", key="agr_dl_scatter")
