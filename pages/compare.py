"""Compare: several systems on one test set, ranked with confidence, down to the token.

Steps: input (upload or example; tests may put ``{"name", "data"}`` into ``st.session_state["compare_input"]``)
-> read and map columns -> validate (problems listed, good rows kept) -> one model pass for all systems and
layers (kept in the session, keyed by what is scored and the model) -> results for the sidebar's layer, idf and
rescaling without a model pass -> answer, tables, significance, charts, drill-down, downloads.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

from bertscore_viz import compare, upload
from bertscore_viz.errors import BertScoreVizError
from bertscore_viz.export import safe_csv, to_json
from bertscore_viz.models import resolve_model
from bertscore_viz.significance import format_p
from bertscore_viz.ui import cache as ui_cache
from bertscore_viz.ui import compare_view
from bertscore_viz.ui.messages import escape_markdown, progress_callback, show_error
from bertscore_viz.ui.settings import current_settings

EXAMPLE = Path(compare.__file__).resolve().parent / "examples" / "systems_example.csv"
INPUT_KEY = "compare_input"
NONE = "(none)"
SCORE_FMT = "%.4f"


# --- input --------------------------------------------------------------------------------------------------------
def _input() -> dict | None:
    left, right = st.columns([4, 1], vertical_alignment="bottom")
    with left:
        up = st.file_uploader("System outputs (CSV, TSV or JSON Lines)", type=["csv", "tsv", "txt", "jsonl", "json"],
                              key="cmp_file",
                              help=f"At most {upload.MAX_BYTES // 2**20} MB, {upload.MAX_ROWS:,} rows, "
                                   f"{upload.MAX_CELL_CHARS:,} characters per cell.")
    with right:
        if st.button("Load example", key="cmp_load_example", icon=":material/dataset:",
                     help="4 systems x 30 segments shipped with the app"):
            st.session_state[INPUT_KEY] = {"name": EXAMPLE.name, "data": EXAMPLE.read_bytes()}
    if up is not None and st.session_state.get("_compare_upload_id") != up.file_id:
        st.session_state["_compare_upload_id"] = up.file_id
        st.session_state[INPUT_KEY] = {"name": up.name, "data": up.getvalue(), "origin": "upload"}
    elif up is None and st.session_state.pop("_compare_upload_id", None) is not None:
        if (st.session_state.get(INPUT_KEY) or {}).get("origin") == "upload":
            st.session_state.pop(INPUT_KEY, None)  # the user removed the file
    return st.session_state.get(INPUT_KEY)


def _format_help() -> None:
    st.info("Upload a file of system outputs, or press **Load example**.", icon=":material/upload_file:")
    wide, long = st.columns(2)
    with wide:
        st.caption("Wide: one row per segment, one column per system (several references: reference, reference_2)")
        st.code("segment_id,reference,system_a,system_b\n1,The cat sat.,A cat sat.,The cat sits.", language=None)
    with long:
        st.caption("Long: one row per system and segment")
        st.code("system,segment_id,candidate,reference\nsystem_a,1,A cat sat.,The cat sat.\n"
                "system_b,1,The cat sits.,The cat sat.", language=None)


def _read(data: bytes, name: str, fkey: str):
    cached = st.session_state.get("_compare_table")
    if cached and cached[0] == fkey:
        return cached[1], cached[2]
    table, problems = upload.read_table(data, name)
    st.session_state["_compare_table"] = (fkey, table, problems)
    return table, problems


def _mapping_control(table: upload.Table, fkey: str) -> tuple[upload.ColumnMapping, str, list[upload.Problem]]:
    """The detected mapping, correctable in an expander (widget keys are per file)."""
    cols = [c for c in dict.fromkeys(table.columns) if c]
    detected, detect_problems = upload.detect_mapping(cols)
    guess = detected or upload.ColumnMapping("wide", (), tuple(cols))
    with st.expander("Column mapping and empty cells", expanded=detected is None, icon=":material/table_chart:"):
        st.caption(f"Read as {table.kind.upper()} with {len(table.rows):,} data rows. "
                   + ("Detected automatically; correct it here if needed." if detected else
                      "Could not detect the columns: pick them here."))
        layout = st.radio("Layout", ["wide", "long"], index=0 if guess.layout == "wide" else 1, horizontal=True,
                          key=f"cmp_layout_{fkey}",
                          captions=["one row per segment, a column per system", "one row per system and segment"])
        refs = st.multiselect("Reference column(s)", cols, default=[c for c in guess.references if c in cols],
                              key=f"cmp_refs_{fkey}", help="Several columns = several references per segment.")
        opt = [NONE] + cols
        c1, c2 = st.columns(2)
        source = c1.selectbox("Source column (optional)", opt, index=opt.index(guess.source or NONE),
                              key=f"cmp_src_{fkey}")
        seg = c2.selectbox("Segment id column (optional)", opt, index=opt.index(guess.segment_id or NONE),
                           key=f"cmp_seg_{fkey}")
        systems: tuple[str, ...] = ()
        sys_col = cand_col = None
        if layout == "wide":
            default = [c for c in guess.systems if c in cols] if guess.layout == "wide" else []
            systems = tuple(st.multiselect("System columns", cols, default=default, key=f"cmp_sys_{fkey}"))
        else:
            c3, c4 = st.columns(2)
            sys_col = c3.selectbox("System name column", cols,
                                   index=cols.index(guess.system) if guess.system in cols else 0,
                                   key=f"cmp_syscol_{fkey}")
            cand_col = c4.selectbox("Output (candidate) column", cols,
                                    index=cols.index(guess.candidate) if guess.candidate in cols else 0,
                                    key=f"cmp_cand_{fkey}")
        empty_label = st.radio("Empty cells", ["Score as empty (0, with a warning)", "Leave the segment out"],
                               horizontal=True, key=f"cmp_empty_{fkey}")
    mapping = upload.ColumnMapping(layout, tuple(refs), systems, sys_col, cand_col,
                                   None if source == NONE else source, None if seg == NONE else seg)
    empty = upload.EMPTY_SCORE if empty_label.startswith("Score") else upload.EMPTY_SKIP
    return mapping, empty, (detect_problems if detected is None else [])


def _dataset(table, mapping, empty, read_problems, fkey) -> upload.Dataset:
    key = (fkey, mapping, empty)
    cached = st.session_state.get("_compare_dataset")
    if cached and cached[0] == key:
        return cached[1]
    ds = upload.build_dataset(table, mapping, empty, problems=read_problems)
    st.session_state["_compare_dataset"] = (key, ds)
    return ds


def _show_problems(problems: list[upload.Problem], ok: bool) -> None:
    if not problems:
        return
    errors = sum(p.severity == "error" for p in problems)
    warnings = len(problems) - errors
    summary = f"The file has {len(problems)} problem(s): {errors} error(s), {warnings} warning(s)."
    if not ok:
        st.error(summary + " Nothing can be scored yet; the list below says what to fix.", icon=":material/error:")
    elif errors:
        st.warning(summary + " The good rows are scored; see the list.", icon=":material/warning:")
    else:
        st.info(summary + " Everything is scored; see the list.", icon=":material/info:")
    frame = pd.DataFrame([{"Row": p.row, "Column": p.column, "Severity": p.severity, "Problem": p.problem}
                          for p in problems])
    with st.expander(f"Problems ({len(problems)})", expanded=not ok, icon=":material/report:"):
        st.dataframe(frame, hide_index=True, width="stretch", key="cmp_problems",
                     column_config={"Row": st.column_config.NumberColumn(format="%d"),
                                    "Problem": st.column_config.TextColumn(width="large")})


# --- scoring --------------------------------------------------------------------------------------------------------
def _score(settings, ds: upload.Dataset):
    """The model pass for this dataset and model, from the session when already done."""
    spec = resolve_model(settings.model)
    key = compare.dataset_key(ds, f"{spec.name}|{spec.source}")
    store = st.session_state.setdefault("_compare_stats", {})
    sc = ui_cache.scorer(settings, rescale=False)
    if key not in store:
        progress = progress_callback(f"Embedding {len(ds.systems)} systems x {ds.n_segments:,} segments "
                                     "(all layers, references once)")
        cstats = compare.score_dataset(sc, ds, progress)
        progress.bar.empty()
        store.clear()  # one dataset per session: bounded memory
        st.session_state.pop("_compare_results", None)
        store[key] = cstats
    return sc, store[key], key


def _results(settings, sc, cstats, key: str) -> compare.Comparison:
    """Scores at the sidebar's layer / idf / rescaling, no model pass; the last few settings are kept so that
    toggling back is instant."""
    table = ui_cache.custom_baseline(settings)
    rkey = (key, settings.resolved_layer(), settings.idf, settings.rescale, settings.lang,
            None if table is None else (table.source, table.values.tobytes()))
    store = st.session_state.setdefault("_compare_results", {})
    if rkey not in store:
        if len(store) >= 8:
            store.pop(next(iter(store)))
        store[rkey] = compare.results_for(sc, cstats, settings.resolved_layer(), settings.idf, settings.rescale)
    return store[rkey]


# --- results --------------------------------------------------------------------------------------------------------
def _ranking_line(sig, means: dict[str, float]) -> str:
    ranked = sorted(means, key=lambda s: -means[s])
    parts = [escape_markdown(ranked[0])]
    for prev, cur in zip(ranked, ranked[1:]):
        parts.append((" > " if sig.pair(prev, cur) < 0.05 else " ≈ ") + escape_markdown(cur))
    return "".join(parts)


def _answer(comparison: compare.Comparison, sig, scale: str) -> None:
    head = compare.headline(comparison, sig)
    means = {s: float(np.mean(v)) for s, v in comparison.scores(sig.metric).items()}
    best = escape_markdown(head["best"])
    text = (f"**Best: {best}** — {sig.metric} {head['score']:.4f} ({scale}; 95% CI "
            f"{head['ci_low']:.4f}–{head['ci_high']:.4f})")
    if head["runner_up"] is not None and head["margin"] == 0:
        text += f", tied with {escape_markdown(head['runner_up'])}."
    elif head["runner_up"] is not None:
        verdict = "significant" if head["significant"] else "not significant"
        text += (f", {head['margin']:.4f} above {escape_markdown(head['runner_up'])} (2nd): "
                 f"{verdict}, p = {format_p(head['p'])}.")
    else:
        text += ". Only one system: nothing to compare it with."
    (st.success if head["significant"] else st.info)(text, icon=":material/trophy:")
    st.markdown(f"Ranking by {sig.metric}: {_ranking_line(sig, means)}",
                help="> : significantly better than the next (paired bootstrap, p < 0.05); "
                     "≈ : not significantly different from the next.")
    c1, c2, c3, c4 = st.columns(4)
    c1.metric(f"Best {sig.metric}", f"{head['score']:.4f}",
              delta=None if head["margin"] is None else f"+{head['margin']:.4f} vs 2nd", delta_color="normal")
    c2.metric("95% CI (half-width)", f"±{(head['ci_high'] - head['ci_low']) / 2:.4f}")
    c3.metric("p (best vs 2nd)", "—" if head["p"] is None else format_p(head["p"]))
    c4.metric("Systems x segments", f"{len(comparison.results)} x {len(next(iter(comparison.results.values())))}")


def _system_tab(comparison, sig, table) -> None:
    st.dataframe(table, hide_index=True, width="stretch", key="cmp_systems",
                 column_config={c: st.column_config.NumberColumn(format=SCORE_FMT)
                                for c in table.columns if c in ("P", "R", "F1") or "CI" in c})
    st.caption(f"Sort by clicking a column header. {sig.metric} 95% CI: bootstrap percentile interval "
               f"({sig.n_samples:,} resamples, seed {sig.seed}).")
    st.code("signature: " + comparison.signature, language=None, wrap_lines=True)
    warns = comparison.warnings()
    if warns:
        with st.expander(f"Scoring warnings ({len(warns)})"):
            for w in warns[:200]:
                st.text(w)


def _significance_tab(comparison, fkey: str, systems: list[str]):
    c1, c2 = st.columns(2)
    base = c1.selectbox("Baseline system", systems, key=f"cmp_baseline_{fkey}")
    metric = c2.selectbox("Metric", ["F1", "P", "R"], key=f"cmp_metric_{fkey}")
    sig = compare.significance(comparison, base, metric)
    st.caption(f"Paired bootstrap resampling as sacrebleu does it: {sig.n_samples:,} resamples, seed "
               f"{sig.seed}, p = (c + 1) / (n + 1). p < 0.05 counts as significant.")
    for r in sig.versus_baseline:
        st.markdown("- " + escape_markdown(r.sentence(metric)) + f" — difference {r.difference:+.4f}")
    if len(systems) > 1:
        st.plotly_chart(compare_view.pvalue_figure(sig), key="cmp_pvalues")
        matrix = pd.DataFrame(sig.matrix, index=list(sig.systems), columns=list(sig.systems))
        with st.expander("Pairwise p values as a table"):
            st.dataframe(matrix, width="stretch", key="cmp_pmatrix",
                         column_config={c: st.column_config.NumberColumn(format="%.3f") for c in matrix.columns})
    return sig


def _pair_choice(systems: list[str], fkey: str, where: str) -> tuple[str, str]:
    c1, c2 = st.columns(2)
    a = c1.selectbox("System A", systems, index=0, key=f"cmp_a_{where}_{fkey}")
    b = c2.selectbox("System B", systems, index=min(1, len(systems) - 1), key=f"cmp_b_{where}_{fkey}")
    return a, b


def _segments_tab(ds, comparison, fkey: str, systems: list[str]):
    a, b = _pair_choice(systems, fkey, "seg")
    c1, c2, c3 = st.columns([3, 1, 1], vertical_alignment="bottom")
    query = c1.text_input("Search (reference, source, outputs, id)", key=f"cmp_query_{fkey}")
    with_pr = c2.toggle("Show P and R", key=f"cmp_pr_{fkey}")
    by_diff = c3.toggle("Sort by A − B", value=True, key=f"cmp_bydiff_{fkey}",
                        help="Largest differences between A and B first.")
    frame = compare.segment_table(ds, comparison, with_pr=with_pr)
    if by_diff and a != b:
        frame = compare.sort_by_difference(frame, comparison, a, b)
    shown = compare.filter_segments(frame, query)
    st.caption(f"{len(shown):,} of {len(frame):,} segments. Click a column header to sort.")
    cfg = {c: st.column_config.NumberColumn(format=SCORE_FMT) for c in shown.columns
           if c.startswith(("F1", "P ·", "R ·"))}
    cfg.update({c: st.column_config.TextColumn(width="medium") for c in shown.columns
                if c.startswith("Output") or c in ("Reference", "Source")})
    st.dataframe(shown, hide_index=True, width="stretch", height=420, key="cmp_segments", column_config=cfg)
    return a, b


def _charts_tab(ds, comparison, systems: list[str], fkey: str) -> None:
    c1, c2 = st.columns(2)
    with c1:
        st.plotly_chart(compare_view.distribution_figure(comparison), key="cmp_dist")
    with c2:
        st.plotly_chart(compare_view.bucket_figure(compare.length_buckets(ds, comparison)), key="cmp_buckets")
    if len(systems) > 1:
        a, b = _pair_choice(systems, fkey, "chart")
        st.plotly_chart(compare_view.scatter_figure(comparison, a, b, ds.segment_ids), key="cmp_scatter")
        st.caption("Points above the dotted diagonal: B scores higher on that segment.")


def _drilldown_tab(ds, comparison, settings, systems: list[str], fkey: str, a: str, b: str) -> None:
    n = ds.n_segments
    diff = comparison.scores("F1")[a] - comparison.scores("F1")[b]
    default = int(np.argmax(np.abs(diff))) if n else 0
    c1, c2 = st.columns([3, 1])
    with c1:
        if n <= 2000:
            labels = [f"{sid} — {ref[0][:70]}" for sid, ref in zip(ds.segment_ids, ds.references)]
            i = st.selectbox("Segment", range(n), index=default, format_func=lambda k: labels[k],
                             key=f"cmp_drill_seg_{fkey}",
                             help=f"Starts at the segment where {escape_markdown(a)} and {escape_markdown(b)} "
                                  "differ most.")
        else:
            pos = st.number_input(f"Segment (position 1–{n:,})", 1, n, value=default + 1, key=f"cmp_drill_pos_{fkey}")
            i = int(pos) - 1
    with c2:
        system = st.selectbox("System", systems, index=systems.index(a), key=f"cmp_drill_sys_{fkey}")
    st.caption(f"Segment id {escape_markdown(ds.segment_ids[i])}, row {ds.rows[i]} of the file")
    if ds.sources is not None:
        st.caption("Source")
        st.text(ds.sources[i] or "(empty)")
    refs = ds.references[i]
    for k, ref in enumerate(refs):
        st.caption("Reference" + (f" {k + 1}" if len(refs) > 1 else ""))
        st.text(ref or "(empty)")
    res = comparison.results[system]
    st.caption(f"Output of {escape_markdown(system)}: P {res.precision[i]:.4f} · R {res.recall[i]:.4f} · "
               f"F1 {res.f1[i]:.4f}")
    st.text(ds.systems[system][i] or "(empty)")
    try:
        from bertscore_viz.ui.explain_view import explain_pair, render_explanation
    except ImportError:
        st.info("The token-level view is not available in this build.")
        return
    if settings.rescale and not comparison.rescaled:
        settings = replace(settings, rescale=False)  # no baseline: raw numbers, as in the tables above
    try:
        explanation = explain_pair(settings, ds.systems[system][i], refs)
    except BertScoreVizError as exc:
        show_error(exc)
        return
    render_explanation(explanation, settings, key="compare")


def _downloads_tab(ds, comparison, sig, table) -> None:
    sig_text = comparison.signature
    st.caption("CSV files open safely in a spreadsheet (formula-like cells are neutralised); the signature is in "
               "every row and on the first line of the JSON.")
    c1, c2, c3 = st.columns(3)
    c1.download_button("System table (CSV)", data=safe_csv(table, sig_text), file_name="systems.csv",
                       mime="text/csv", key="cmp_dl_systems", on_click="ignore", icon=":material/download:")
    c2.download_button("Segment scores (CSV)",
                       data=lambda: safe_csv(compare.segment_table(ds, comparison, with_pr=True), sig_text),
                       file_name="segments.csv", mime="text/csv", key="cmp_dl_segments", on_click="ignore",
                       icon=":material/download:")
    c3.download_button("Everything (JSON)", data=lambda: to_json(compare.to_jsonable(ds, comparison, sig)),
                       file_name="comparison.json", mime="application/json", key="cmp_dl_json",
                       on_click="ignore", icon=":material/download:")


def main() -> None:
    st.title("Compare systems")
    st.caption("Which system is better, by how much, is the difference real, and where do they differ — "
               "BERTScore P/R/F1 of every system against the same references.")
    settings = current_settings()
    source = _input()
    if source is None:
        _format_help()
        return
    name, data = source.get("name") or "upload", source.get("data") or b""
    fkey = upload.content_key(data)
    st.caption(f"File: {escape_markdown(name)} ({len(data):,} bytes)")
    table, read_problems = _read(data, name, fkey)
    if table is None:
        _show_problems(read_problems, ok=False)
        return
    mapping, empty, detect_problems = _mapping_control(table, fkey)
    ds = _dataset(table, mapping, empty, read_problems, fkey)
    problems = detect_problems + ds.problems
    if not ds.ok:
        _show_problems(problems, ok=False)
        return
    try:
        sc, cstats, key = _score(settings, ds)
        comparison = _results(settings, sc, cstats, key)
    except BertScoreVizError as exc:
        show_error(exc)
        return
    scale = "rescaled" if comparison.rescaled else "raw"
    if settings.rescale and comparison.note:
        st.warning(escape_markdown(comparison.note) + "\n\n**Showing raw numbers** (not rescaled).",
                   icon=":material/warning:")
    systems = comparison.systems
    fsig = compare.significance(comparison, systems[0], "F1")
    _answer(comparison, fsig, scale)
    _show_problems(problems, ok=True)
    table = compare.system_table(comparison, fsig)
    st.subheader("Systems")
    _system_tab(comparison, fsig, table)
    tabs = st.tabs(["Significance", "Segments", "Charts", "Drill-down", "Downloads"])
    with tabs[0]:
        sig = _significance_tab(comparison, fkey, systems)
    with tabs[1]:
        a, b = _segments_tab(ds, comparison, fkey, systems)
    with tabs[2]:
        _charts_tab(ds, comparison, systems, fkey)
    with tabs[3]:
        _drilldown_tab(ds, comparison, settings, systems, fkey, a, b)
    with tabs[4]:
        _downloads_tab(ds, comparison, sig, table)


main()
