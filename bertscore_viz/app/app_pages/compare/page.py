"""Compare: several systems on one test set, ranked with confidence, down to the token.

Steps: input (upload, a zip of WMT's mt-metrics-eval layout, or the example; tests may put ``{"name", "data"}``
into ``st.session_state["compare_input"]``) -> read and map columns (or choose test set, language pair and
reference) -> validate (problems listed, good rows kept; segments with an empty reference scored 0 or left out) ->
one model pass for all systems at the sidebar's layer (each pair's P/R/F without and with idf, kept in the session's
:class:`CompareState`; another layer is one more pass) -> results for the sidebar's idf and rescaling without a model
pass -> earlier runs' systems added by their kept scores (``runs.py``) -> answer (with the calibration ladder), the
system table (with sacrebleu's chrF, BLEU, TER), significance (and power), segments, charts, drill-down (its pair
explained again), downloads (CSV, JSON, LaTeX, the HTML report, mt-metrics-eval files), and "Save this run".
"""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from bertscore_viz.app import gateway
from bertscore_viz.app.app_pages.compare.context import context_control
from bertscore_viz.app.app_pages.compare.inputs import (
    dataset,
    empty_references,
    format_help,
    input_file,
    is_example,
    kept_file,
    mapping_control,
    read_table,
    show_problems,
)
from bertscore_viz.app.app_pages.compare.metrics import signatures_view, surface_for
from bertscore_viz.app.app_pages.compare.mtme import is_mtme, mtme_input
from bertscore_viz.app.app_pages.compare.own import own_for
from bertscore_viz.app.app_pages.compare.reading import answer_notes, readings_for
from bertscore_viz.app.app_pages.compare.results import answer, system_table_view
from bertscore_viz.app.app_pages.compare.runs import earlier_runs, save_control
from bertscore_viz.app.app_pages.compare.scoring import (
    file_explainer,
    language_note,
    model_pass,
    pass_note,
    results,
    results_table,
    sidebar_baseline,
    significance,
)
from bertscore_viz.app.app_pages.compare.tabs import (
    TAB_KEY,
    TABS,
    charts_tab,
    downloads_tab,
    drilldown_tab,
    segments_tab,
    significance_tab,
)
from bertscore_viz.app.shared.long_texts import long_text_switch
from bertscore_viz.app.shared.messages import escape_markdown, show_error
from bertscore_viz.app.shared.settings import current_settings
from bertscore_viz.app.state.compare import compare_state
from bertscore_viz.errors import BertScoreVizError
from bertscore_viz.evaluation import compare, precomputed
from bertscore_viz.evaluation.own_metrics import with_own_metrics
from bertscore_viz.figures import tables
from bertscore_viz.figures.report import scorer_explainer
from bertscore_viz.files import upload
from bertscore_viz.files.results import format as results_format


def _answer(comparison, fsig, settings, scale: str, empty: tuple[str | None, bool], example: bool):
    """The answer, where the means stand on the calibration ladder, the segments left out (``empty``: the sentence
    about empty references and whether they were left out), the example's note; returns the readings for the system
    table and the notes the report repeats."""
    answer(comparison, fsig, scale)
    readings, calibration_note = readings_for(comparison, settings.lang)
    note, left_out = empty
    answer_notes(comparison, readings, calibration_note, note if left_out else None, example)
    notes = [n for n in (note, None if readings else calibration_note) if n]
    return readings, notes


def show_results(ds, comparison, settings, fkey: str, scale: str, problems=(), explain=None, *,
                 empty: tuple[str | None, bool] = (None, False), example: bool = False, evalset=None,
                 reference=None) -> None:
    """The answer, the system table and the tabs, for scores computed here or read from a results file (whose
    drill-down explains a segment with ``explain``); ``evalset`` and ``reference``: the mt-metrics-eval language
    pair the dataset came from (its scores can go back as mt-metrics-eval files)."""
    systems = comparison.systems  # by score, best first
    correction = "holm" if st.session_state.get(f"cmp_holm_{fkey}") else None
    fsig = significance(comparison, "F1", correction)  # top-ranked baseline; cached, shared with the tab
    readings, notes = _answer(comparison, fsig, settings, scale, empty, example)
    st.toggle("Holm correction for multiple comparisons", key=f"cmp_holm_{fkey}",
              help="Adjust every p value for the number of comparisons made (Holm's step-down method over all "
                   "k(k − 1)/2 pairs, one family: a pair has the same p in the answer, the sentences and the "
                   "matrix): the chance of calling any difference significant by luck stays under 5%.")
    show_problems(problems, ok=True)
    st.subheader("Systems")
    surface = with_own_metrics(surface_for(ds, fkey), own_for(ds, systems, fkey), ds.systems)
    table = tables.system_table(comparison, fsig, surface, readings)
    system_table_view(comparison, fsig, table)
    if surface is not None:
        signatures_view(surface)
    tabs = st.tabs(TABS, key=TAB_KEY, on_change="rerun")
    # Only the open tab runs (lazy tabs), and each tab's own widgets re-run only that tab (fragments).
    if tabs[0].open:
        with tabs[0]:
            significance_tab(comparison, fkey, systems, correction, surface)
    if tabs[1].open:
        with tabs[1]:
            segments_tab(ds, comparison, fkey, systems, surface)
    if tabs[2].open:
        with tabs[2]:
            charts_tab(ds, comparison, systems, fkey, surface)
    if tabs[3].open:
        with tabs[3]:
            drilldown_tab(ds, comparison, settings, systems, fkey, explain)
    if tabs[4].open:
        with tabs[4]:
            report_explain = explain or scorer_explainer(gateway.scorer(settings, rescale=comparison.rescaled), ds,
                                                         comparison)
            downloads_tab(ds, comparison, fsig, table, surface, explain=report_explain,
                          pair=tuple(systems[:2]) if len(systems) > 1 else None, notes=notes,
                          evalset=evalset, reference=reference)


def _precomputed(settings, data: bytes, fkey: str) -> None:
    """A results Parquet (``score --ray``): scores read from the file, no model pass, shown as the file's signature
    says (a toggle shows the other scale when the file has both); the drill-down computes the one segment it opens,
    with the file's model, layer, idf weights and baseline."""
    try:
        table = results_table(data, fkey)
        written = table.written_rescaled
        rescale = written
        if table.has_rescaled:
            other = "raw" if written else "rescaled"
            if st.toggle(f"Show {other} numbers instead", key=f"cmp_rf_other_{fkey}",
                         help="The file holds raw and rescaled P/R/F1; it opens with the ones its signature names "
                              f"({'rescaled' if written else 'raw'})."):
                rescale = not written
        store = compare_state().results_file.loaded
        if rescale not in store:
            store[rescale] = precomputed.results_at(table, rescale)
        loaded = store[rescale]
        ds, comparison = loaded.dataset, loaded.comparison
        s = loaded.info["settings"]
        options = gateway.options(settings)
        mismatch = results_format.settings_mismatch(
            loaded.info, options.spec.name, options.layer_or(), options.idf, options.rescale_with_baseline,
            sidebar_baseline(settings, s["model"], int(s["layer"])), comparison.rescaled)
    except BertScoreVizError as exc:
        show_error(exc)
        return
    st.info(f"Precomputed scores ({ds.n_segments:,} segments x {len(ds.systems)} systems), read from the file; "
            "nothing is recomputed except the drill-down's one segment.", icon=":material/table_view:")
    for note in loaded.notes + ((mismatch,) if mismatch else ()):
        st.warning(escape_markdown(note), icon=":material/warning:")
    file_settings = replace(settings, **results_format.app_settings(loaded.info), rescale=comparison.rescaled)
    scale = "rescaled" if comparison.rescaled else "raw"
    show_results(ds, comparison, file_settings, fkey, scale,
                  explain=file_explainer(table, comparison.rescaled, file_settings))


def _validated(data: bytes, name: str, fkey: str):
    """The table read, its columns mapped and the dataset built; ``(None, ...)`` after showing why nothing can be
    scored."""
    table, read_problems = read_table(data, name, fkey)
    if table is None:
        show_problems(read_problems, ok=False)
        return None, [], None
    mapping, empty, detect_problems = mapping_control(table, fkey)
    ds = dataset(data, name, mapping, empty, fkey)
    problems = detect_problems + ds.problems
    if not ds.ok:
        show_problems(problems, ok=False)
        return None, problems, table
    return ds, problems, table


def _scored(settings, ds):
    """The model pass (or the session's) and the scores at the sidebar's settings; None after an error shown."""
    try:
        sc, cstats, key = model_pass(settings, ds)
        return sc, cstats, key, results(settings, sc, cstats, key, ds)
    except BertScoreVizError as exc:
        show_error(exc)
        return None


def _notes(settings, ds, table, sc, cstats, key: str, comparison) -> None:
    """What the reader should know before the numbers: the model pass, long texts, a missing baseline, text outside
    the model's or the baseline's language, and human scores in the file."""
    st.caption(pass_note(key))
    n_long, n_cut = compare.long_text_counts(cstats.pairs, sc.encoder.max_length)
    long_text_switch(n_long, n_cut, sc.encoder.max_length, settings.long_texts)
    if settings.rescale and comparison.note:
        st.warning(escape_markdown(comparison.note) + "\n\n**Showing raw numbers** (not rescaled).",
                   icon=":material/warning:")
    language = language_note(ds, sc.spec.name)
    if language:
        st.warning(escape_markdown(language), icon=":material/translate:")
    human = list(upload.human_score_columns(table.columns if table is not None else ()))
    if human:  # the file carries human judgments: the Agreement page correlates every metric with them
        st.info(f"This file has human scores ({escape_markdown(', '.join(human[:3]))}); they are not scored as a "
                "system. See how well BERTScore, chrF and BLEU agree with them on the **Agreement with humans** "
                "page (its button “Use the Compare page's file”).", icon=":material/thumbs_up_down:")
    if comparison.rescaled:  # the baseline's language against the text's (once per dataset and language)
        note = compare_state().once_per_dataset("baseline_language", ds, settings.lang,
                                                lambda: compare.baseline_language_note(ds, settings.lang))
        if note:
            st.warning(escape_markdown(note), icon=":material/translate:")


def main() -> None:
    st.session_state["_run_id"] = st.session_state.get("_run_id", 0) + 1
    st.title("Compare systems")
    st.caption("Which system is better, by how much, is the difference real, and where do they differ — "
               "BERTScore P/R/F1 of every system against the same references.")
    settings = current_settings()
    source = input_file()
    if source is None:
        format_help()
        return
    name, data = source.get("name") or "upload", source.get("data") or b""
    fkey = upload.content_key(data)
    kept_file(name, data)
    if results_format.is_results_file(name, data):
        _precomputed(settings, data, fkey)
        return
    evalset = reference = table = None
    if is_mtme(name, data):
        ds, evalset, reference = mtme_input(data, name, fkey)
        problems = [] if ds is None else list(ds.problems)
    else:
        ds, problems, table = _validated(data, name, fkey)
    if ds is None:
        return
    ds, empty_note, left_out = empty_references(ds, fkey)
    settings = context_control(ds, fkey, settings)
    scored = _scored(settings, ds)
    if scored is None:
        return
    sc, cstats, key, comparison = scored
    _notes(settings, ds, table, sc, cstats, key, comparison)
    shown_ds, shown = earlier_runs(ds, comparison)  # kept runs' systems beside these, by their kept scores
    show_results(shown_ds, shown, settings, fkey, "rescaled" if comparison.rescaled else "raw", problems,
                 empty=(empty_note, left_out), example=is_example(data), evalset=evalset, reference=reference)
    save_control(ds, comparison)


main()
