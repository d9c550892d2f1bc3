"""Baselines and layers: the rescaling baseline of the current model per layer, what rescaling does to scores, the
layer-tuning table of the bundled model, and computing or uploading a baseline for this session.

Inputs come from widgets; tests may put ``{"name", "data"}`` into ``st.session_state["baseline_corpus_input"]``
(a corpus, as the uploader does) or ``st.session_state["baseline_file_input"]`` (an existing baseline file).
"""

from __future__ import annotations

import html
import json

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from bertscore_viz.app.ui import cache as ui_cache
from bertscore_viz.app.ui.compare_state import dataset_raw_f1
from bertscore_viz.app.ui.messages import escape_markdown, show_error
from bertscore_viz.app.ui.settings import current_settings
from bertscore_viz.app.ui.state import fresh
from bertscore_viz.engine.baseline import (
    BaselineTable,
    display_path,
    find_baseline,
    parse_baseline,
    shipped_baseline_path,
)
from bertscore_viz.errors import BaselineError, BertScoreVizError
from bertscore_viz.evaluation import layer_tuning
from bertscore_viz.models.spec import BUNDLED_DEFAULT_LAYER, BUNDLED_MODEL_NAME
from bertscore_viz.rescaling import baseline_compute as bc

CORPUS_KEY = "baseline_corpus_input"
FILE_KEY = "baseline_file_input"
RESULT_KEY = "_baseline_computed"
#: Largest baseline file accepted (a baseline has one short row per layer).
MAX_BASELINE_FILE_BYTES = 2**20
NAMES = {0: "P", 1: "R", 2: "F"}
#: bert-score's published best average Pearson on WMT16 to-English (model2layers), for comparison.
PUBLISHED = [("bert-base-uncased", 9, 0.6925), ("roberta-large", 17, 0.7386)]


def _current_table(settings, spec) -> tuple[BaselineTable | None, str]:
    """The baseline the other pages use for these settings, and a description of where it comes from."""
    custom = ui_cache.custom_baseline(settings)
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
            raw = ui_cache.example_f1(settings, cands, refs)  # once per model, layer and idf for every session
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


def _stored_input(widget_key: str, state_key: str, label: str, types: list[str] | None, help_text: str,
                  own_limit: int) -> dict | None:
    """The file given to this uploader (kept in the session), if this server's upload limits accept it (counted
    with every other upload of the session); a refused file is said so and gives None."""
    up = st.file_uploader(label, type=types, key=widget_key, help=help_text + " " + ui_cache.upload_help(own_limit),
                          max_upload_size=ui_cache.upload_widget_mb(own_limit))
    if up is not None and st.session_state.get(f"_{widget_key}_id") != up.file_id:
        st.session_state[f"_{widget_key}_id"] = up.file_id
        st.session_state[state_key] = {"name": up.name, "data": up.getvalue()}
    item = st.session_state.get(state_key)
    if item is None:
        return None
    refused = ui_cache.count_upload(item["data"], item["name"], own_limit)
    if refused is not None:
        show_error(refused)
        return None
    return item


def section_compute(settings, spec) -> None:
    st.header("Compute a baseline from a corpus")
    st.caption(
        "The authors' method: sentences of a monolingual corpus (one per line; empty lines and duplicates dropped, "
        "lines under the word limit kept) paired at random into unrelated pairs; the mean P, R and F of every "
        f"layer of {escape_markdown(spec.name)} is the baseline. Thousands of sentences give a stable baseline. "
        "The result is used at once on every page of this session, for this model and language.")
    item = _stored_input("baseline_corpus_file", CORPUS_KEY, "Corpus (plain text, one sentence per line)",
                         None, "UTF-8 text, any file name (.txt, newstest's .en, …); for larger corpora use "
                               f"`python -m bertscore_viz baseline --corpus FILE -m {spec.name} --lang "
                               f"{settings.lang} -o OUT.tsv`.", bc.MAX_UPLOAD_BYTES)
    c1, c2, c3 = st.columns(3)
    corpus = None
    with c3:
        max_words = st.number_input("Keep lines under (words)", 2, 1000, key="bl_max_words",
                                    **fresh("bl_max_words", value=bc.DEFAULT_MAX_WORDS))
    if item is not None:
        try:
            corpus = bc.prepare_corpus(item["data"], item["name"], int(max_words))
        except BertScoreVizError as exc:
            show_error(exc)
    if corpus is not None and st.session_state.get("_bl_pairs_for") != corpus.sha256:
        # a new corpus: propose the authors' grouping, every sentence once (N/2 pairs)
        st.session_state["_bl_pairs_for"] = corpus.sha256
        st.session_state["bl_pairs"] = min(bc.MAX_APP_PAIRS, bc.default_pairs(len(corpus.sentences)))
    with c1:
        pairs = st.number_input("Random pairs", 1, bc.MAX_APP_PAIRS, key="bl_pairs", **fresh("bl_pairs", value=5000),
                                help="Proposed for each corpus: every sentence once (N/2 pairs). More pairs re-pair "
                                     f"the same sentences with new partners. At most {bc.MAX_APP_PAIRS:,} here.")
    with c2:
        seed = st.number_input("Seed", 0, 2**31 - 1, key="bl_seed", help="Same seed, same pairs, same file.",
                               **fresh("bl_seed", value=0))
    if corpus is not None:
        st.caption(f"{escape_markdown(item['name'])}: {len(corpus.sentences):,} usable sentences of "
                   f"{corpus.lines_read:,} lines ({corpus.dropped_empty:,} empty, {corpus.dropped_duplicate:,} "
                   f"duplicates, {corpus.dropped_long:,} too long).")
    if st.button("Compute baseline", key="bl_compute", disabled=corpus is None, icon=":material/calculate:"):
        bar = st.progress(0.0, text="Scoring random pairs…")

        def progress(done: int, total: int) -> None:
            bar.progress(1.0 if not total else min(1.0, done / total),
                         text=f"Scoring random pairs at every layer: {done:,} / {total:,} pairs")

        try:
            scorer = ui_cache.scorer(settings, rescale=False)
            result = bc.compute_baseline(corpus, lang=settings.lang, n_pairs=int(pairs), seed=int(seed),
                                         max_words=int(max_words), progress=progress, scorer=scorer)
        except BertScoreVizError as exc:
            bar.empty()
            show_error(exc)
            return
        bar.empty()
        table = result.table()
        table = BaselineTable(table.values, f"computed from {item['name']}, {int(pairs):,} pairs, seed {int(seed)}")
        ui_cache.set_custom_baseline(settings.lang, spec.name, table)
        st.session_state[RESULT_KEY] = (settings.lang, spec.name, result.tsv(), result.provenance_json())
        st.rerun()
    done = st.session_state.get(RESULT_KEY)
    if done and done[:2] == (settings.lang, spec.name):
        st.success(f"Baseline computed; it is now used for {escape_markdown(spec.name)} ({settings.lang}) on every "
                   "page of this session when rescaling is on.", icon=":material/check_circle:")
        note = small_sample_note(done[3], settings.resolved_layer())
        if note:
            st.warning(escape_markdown(note), icon=":material/warning:")
        name = spec.name.replace("/", "_")
        d1, d2 = st.columns(2)
        with d1:
            st.download_button("Download baseline (TSV)", done[2], f"{name}.tsv", "text/tab-separated-values",
                               key="bl_download_tsv", icon=":material/download:")
        with d2:
            st.download_button("Download provenance (JSON)", ui_cache.public_provenance(done[3]) or "{}",
                               f"{name}.provenance.json",
                               "application/json", key="bl_download_json", icon=":material/download:")


#: Below this many pairs a computed baseline gets a note: its means are uncertain (the shipped ones use 100,000;
#: the authors, 100,000 per language).
SMALL_SAMPLE_PAIRS = 2000


def small_sample_note(provenance_json: str, layer: int) -> str | None:
    """A note when a computed baseline rests on few pairs, with the F standard error at the current layer."""

    try:
        prov = json.loads(provenance_json)
        pairs = int(prov["pairs"])
        stderr = float(prov["stderr"]["F"][layer])
    except (ValueError, KeyError, IndexError, TypeError):
        return None
    if pairs >= SMALL_SAMPLE_PAIRS:
        return None
    return (f"This baseline rests on {pairs:,} pairs only: its F at layer {layer} has a standard error of "
            f"{stderr:.4f}, and rescaled scores move by about that much divided by (1 − b). A stable baseline takes "
            f"thousands of pairs (the shipped ones: 100,000); use a larger corpus, or more pairs.")


def section_upload(settings, spec) -> None:
    st.header("Use an existing baseline file")
    st.caption("bert-score's format: header LAYER,P,R,F and one row per layer from 0. It is used for "
               f"{escape_markdown(spec.name)} ({settings.lang}) on every page of this session.")
    item = _stored_input("baseline_file", FILE_KEY, "Baseline file (LAYER,P,R,F)", ["tsv", "csv", "txt"],
                         "One row per layer.", MAX_BASELINE_FILE_BYTES)
    if item is None or st.session_state.get("_baseline_file_used") == (item["name"], len(item["data"])):
        if ui_cache.custom_baseline(settings) is not None and st.button(
                "Forget this session's baseline", key="bl_forget", icon=":material/delete:"):
            st.session_state.get("custom_baselines", {}).pop((settings.lang, spec.name), None)
            st.session_state.pop(RESULT_KEY, None)
            st.session_state.pop(FILE_KEY, None)
            st.session_state.pop("_baseline_file_used", None)
            st.rerun()
        return
    try:
        try:
            text = item["data"].decode("utf-8-sig")
        except UnicodeDecodeError:
            raise BaselineError(f"The baseline file {item['name']} is not UTF-8 text.") from None
        table = parse_baseline(text, f"uploaded {item['name']}")
        n_layers = ui_cache.model_info(spec)["num_layers"] + 1
        if len(table.values) != n_layers:
            raise BaselineError(
                f"The baseline {item['name']} has {len(table.values)} rows (layers 0 to {len(table.values) - 1}), "
                f"but {spec.name} has {n_layers} (layers 0 to {n_layers - 1}): it is for another model. Upload "
                "the baseline of this model, or compute one above.")
    except BertScoreVizError as exc:
        show_error(exc)
        return
    ui_cache.set_custom_baseline(settings.lang, spec.name, table)
    st.session_state["_baseline_file_used"] = (item["name"], len(item["data"]))
    st.rerun()


def section_keep(settings, spec) -> None:
    """Where this session's baseline lives: only here (download it), or saved for later sessions."""
    table = st.session_state.get("custom_baselines", {}).get((settings.lang, spec.name))
    if table is None:
        return
    st.header("Keep this session's baseline")
    done = st.session_state.get(RESULT_KEY)
    provenance = done[3] if done and done[:2] == (settings.lang, spec.name) else None
    ui_cache.keep_baseline(settings.lang, spec.name, table, provenance, key="bl_keep")


def main() -> None:
    st.title("Baselines and layers")
    settings = current_settings()
    try:
        spec = ui_cache.resolve_model(settings.model)  # the deployment's list, as the sidebar
    except BertScoreVizError as exc:
        show_error(exc)
        return
    layer = settings.resolved_layer()
    st.caption(f"Model {escape_markdown(spec.name)}, language {escape_markdown(settings.lang)}, current layer "
               f"{layer} (change them in the sidebar).")
    table = section_curves(settings, spec, layer)
    section_effect(settings, spec, layer, table)
    section_tuning()
    section_compute(settings, spec)
    section_upload(settings, spec)
    section_keep(settings, spec)


main()
