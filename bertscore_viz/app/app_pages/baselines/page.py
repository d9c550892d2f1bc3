"""Baselines and layers: the rescaling baseline of the current model per layer, what rescaling does to scores, the
layer-tuning table of the bundled model, and computing or uploading a baseline for this session.

The session's own baseline (computed or uploaded) is :mod:`bertscore_viz.app.app_pages.baselines.custom`.
"""

from __future__ import annotations

import html

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from bertscore_viz.app import gateway
from bertscore_viz.app.app_pages.baselines.custom import section_compute, section_keep, section_upload
from bertscore_viz.app.shared.messages import escape_markdown, show_error
from bertscore_viz.app.shared.settings import current_settings
from bertscore_viz.app.state.compare import dataset_raw_f1
from bertscore_viz.engine.baseline import (
    BaselineTable,
    display_path,
    find_baseline,
    shipped_baseline_path,
)
from bertscore_viz.errors import BaselineError, BertScoreVizError
from bertscore_viz.evaluation import layer_tuning
from bertscore_viz.models.spec import BUNDLED_DEFAULT_LAYER, BUNDLED_MODEL_NAME
from bertscore_viz.rescaling import baseline_compute as bc

NAMES = {0: "P", 1: "R", 2: "F"}
#: bert-score's published best average Pearson on WMT16 to-English (model2layers), for comparison.
PUBLISHED = [("bert-base-uncased", 9, 0.6925), ("roberta-large", 17, 0.7386)]


def _current_table(settings, spec) -> tuple[BaselineTable | None, str]:
    """The baseline the other pages use for these settings, and a description of where it comes from."""
    custom = gateway.custom_baseline(settings)
    if custom is not None:
        return custom, f"this session's baseline ({custom.source})"
    try:
        table = find_baseline(spec.name, settings.lang)
    except BaselineError:
        return None, ""
    return table, f"shipped file {display_path(shipped_baseline_path(settings.lang, spec.name))}"


def baseline_figure(table: BaselineTable, layer: int, title: str) -> go.Figure:
    layers = np.arange(len(table.values))
    fig = go.Figure()
    for k, name in NAMES.items():
        fig.add_trace(go.Scatter(x=layers, y=table.values[:, k], mode="lines+markers", name=name))
    if 0 <= layer < len(layers):
        fig.add_vline(x=layer, line_dash="dash", line_color="grey",
                      annotation_text=f"current layer {layer}", annotation_position="top")
    fig.update_layout(title=title, xaxis_title="layer (0 = embeddings)", yaxis_title="baseline b",
                      height=360, margin=dict(t=50, b=40, l=40, r=20), legend=dict(orientation="h"))
    fig.update_xaxes(dtick=1 if len(layers) <= 26 else None)
    return fig


def _no_baseline(spec, lang: str) -> None:
    st.info(
        f"No rescaling baseline for {escape_markdown(spec.name)} and language {escape_markdown(lang)}: "
        f"{escape_markdown(display_path(shipped_baseline_path(lang, spec.name)))} does not exist and none was "
        "computed or "
        "uploaded in this session. Compute one below from a corpus (one sentence per line), upload an existing "
        "file below, or run on the command line:", icon=":material/info:")
    st.code(f"python -m bertscore_viz baseline --corpus FILE -m {spec.name} --lang {lang} -o OUT.tsv",
            language="bash")


def section_curves(settings, spec, layer: int) -> BaselineTable | None:
    st.header("Baseline per layer")
    table, source = _current_table(settings, spec)
    if table is None:
        _no_baseline(spec, settings.lang)
        return None
    st.caption(f"Source: {escape_markdown(source)}. Rescaling maps x to (x − b) / (1 − b): b is what two "
               "unrelated sentences score on average, so it becomes 0.")
    st.plotly_chart(baseline_figure(table, layer, f"Baseline of {spec.name} ({settings.lang})"),
                    key="baseline_curves")
    frame = pd.DataFrame(table.values, columns=["P", "R", "F"])
    frame.insert(0, "layer", np.arange(len(frame)))
    if not 0 <= layer < len(frame):
        st.warning(f"The baseline has rows for layers 0 to {len(frame) - 1}, but the current layer is {layer}.")
    with st.expander("Values", icon=":material/table:"):
        st.dataframe(frame, hide_index=True, key="baseline_values")
    return table


def section_effect(settings, spec, layer: int, table: BaselineTable | None) -> None:
    st.header("Effect of rescaling")
    if table is None or not 0 <= layer < len(table.values):
        st.caption("Needs a baseline for the current model, language and layer (see above).")
        return
    own = dataset_raw_f1(spec.name, layer, settings.idf)  # the user's data, when scored on Compare: no model pass
    if own is not None:
        raw, hover, source = own
    else:
        cands, refs, source = bc.example_pairs()
        hover = [f"{c} | {r}" for c, r in zip(cands, refs)]
        try:
            raw = gateway.example_f1(settings, cands, refs)  # once per model, layer and idf for every session
        except BertScoreVizError as exc:
            show_error(exc)
            return
    st.caption(f"Raw and rescaled F1 of {len(raw):,} pairs from {escape_markdown(source)}, at layer {layer}. "
               "Rescaling is linear: the ranking and every correlation stay the same; the scores spread out "
               "over a readable range." + ("" if own is not None else " Load a dataset on the Compare page to see "
                                           "your own."))
    b = table.for_layer(layer, spec.name)[2]
    rescaled = (raw - b) / (1 - b)
    left, right = st.columns(2)
    with left:
        fig = go.Figure(go.Scattergl(x=raw, y=rescaled, mode="markers", name="pairs",
                                     hovertext=[html.escape(t[:200]) for t in hover], hoverinfo="text+x+y"))
        fig.update_layout(title="Raw against rescaled F1", xaxis_title="raw F1", yaxis_title="rescaled F1",
                          height=360, margin=dict(t=50, b=40, l=40, r=20))
        st.plotly_chart(fig, key="effect_scatter")
    with right:
        fig = go.Figure()
        fig.add_trace(go.Histogram(x=raw, name="raw", opacity=0.6, nbinsx=30))
        fig.add_trace(go.Histogram(x=rescaled, name="rescaled", opacity=0.6, nbinsx=30))
        fig.update_layout(barmode="overlay", title="Before and after", xaxis_title="F1", yaxis_title="pairs",
                          height=360, margin=dict(t=50, b=40, l=40, r=20), legend=dict(orientation="h"))
        st.plotly_chart(fig, key="effect_hist")
    st.caption(f"F baseline at layer {layer}: b = {b:.4f}. Raw F1 spans {raw.min():.3f} to {raw.max():.3f}; "
               f"rescaled {rescaled.min():.3f} to {rescaled.max():.3f}.")


def _highlight(row: pd.Series, best: int, default: int) -> list[str]:
    if row["layer"] == str(default):
        return ["background-color: rgba(255, 200, 0, 0.35)"] * len(row)
    if row["layer"] == str(best):
        return ["background-color: rgba(0, 160, 255, 0.2)"] * len(row)
    if row["layer"] == layer_tuning.BLEU_ROW:
        return ["font-style: italic; color: grey"] * len(row)
    return [""] * len(row)


def section_tuning() -> None:
    st.header(f"Layer tuning of the bundled model ({BUNDLED_MODEL_NAME})")
    try:
        rows = layer_tuning.load_shipped_table(BUNDLED_MODEL_NAME)
    except BertScoreVizError as exc:
        show_error(exc)
        return
    if rows is None:
        st.info("The layer-tuning table is not shipped with this installation. Compute it with:")
        st.code("python -m bertscore_viz tune-layers --data DIR -m all-MiniLM-L6-v2 -o OUT.tsv", language="bash")
        return
    frame = pd.DataFrame(rows)
    frame["layer"] = frame["layer"].astype(str)
    layer_rows = [r for r in rows if isinstance(r["layer"], int)]
    best = max(layer_rows, key=lambda r: (r["pearson_avg"], -r["layer"]))["layer"]
    st.caption(
        "Pearson r and Kendall τ between segment F1 and human direct assessments, WMT16 to-English (6 language "
        f"pairs, 560 segments each), computed offline (not live). Highlighted: the default layer "
        f"{BUNDLED_DEFAULT_LAYER}" + (f"; best average Pearson: layer {best}" if best != BUNDLED_DEFAULT_LAYER else
                                      ", which has the best average Pearson")
        + ". Sentence BLEU (sacrebleu) on the same segments is the point of comparison. bert-score's published "
        "best averages: " + ", ".join(f"{m} layer {lay}: {r:.4f}" for m, lay, r in PUBLISHED) + ".")
    cols = ["layer", "pearson_avg", "kendall_avg"] + [c for c in frame.columns if c.startswith("pearson_")
                                                      and c != "pearson_avg"]
    shown = frame[cols + [c for c in frame.columns if c not in cols]]
    st.dataframe(shown.style.apply(_highlight, axis=1, best=best, default=BUNDLED_DEFAULT_LAYER)
                 .format(precision=4, subset=[c for c in shown.columns if c != "layer"]),
                 hide_index=True, key="tuning_table")
    fig = go.Figure()
    x = [r["layer"] for r in layer_rows]
    fig.add_trace(go.Scatter(x=x, y=[r["pearson_avg"] for r in layer_rows], mode="lines+markers",
                             name="BERTScore F1, Pearson"))
    fig.add_trace(go.Scatter(x=x, y=[r["kendall_avg"] for r in layer_rows], mode="lines+markers",
                             name="BERTScore F1, Kendall"))
    bleu = [r for r in rows if r["layer"] == layer_tuning.BLEU_ROW]
    if bleu:
        fig.add_hline(y=bleu[0]["pearson_avg"], line_dash="dot", annotation_text="sentence BLEU, Pearson")
    fig.add_vline(x=BUNDLED_DEFAULT_LAYER, line_dash="dash", line_color="grey", annotation_text="default")
    fig.update_layout(title="Average correlation with human judgments per layer", xaxis_title="layer",
                      yaxis_title="average correlation", height=340, margin=dict(t=50, b=40, l=40, r=20),
                      legend=dict(orientation="h"))
    st.plotly_chart(fig, key="tuning_chart")


def main() -> None:
    st.title("Baselines and layers")
    settings = current_settings()
    try:
        options = gateway.options(settings)  # the deployment's list, as the sidebar
    except BertScoreVizError as exc:
        show_error(exc)
        return
    spec, layer = options.spec, options.layer_or()
    st.caption(f"Model {escape_markdown(spec.name)}, language {escape_markdown(settings.lang)}, current layer "
               f"{layer} (change them in the sidebar).")
    table = section_curves(settings, spec, layer)
    section_effect(settings, spec, layer, table)
    section_tuning()
    section_compute(settings, spec)
    section_upload(settings, spec)
    section_keep(settings, spec)


main()
