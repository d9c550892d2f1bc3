"""Compare: several systems on one test set, ranked with confidence, down to the token.

Steps: input (upload or example; tests may put ``{"name", "data"}`` into ``st.session_state["compare_input"]``)
-> read and map columns -> validate (problems listed, good rows kept) -> one model pass for all systems at the
sidebar's layer (each pair's P/R/F without and with idf, kept in the session's :class:`CompareState`; another
layer is one more pass) -> results for the sidebar's idf and rescaling without a model pass -> answer, tables,
significance, charts, drill-down (its pair explained again), downloads.
"""

from __future__ import annotations

import functools
import re
import time
from dataclasses import replace

import numpy as np
import pandas as pd
import streamlit as st

from bertscore_viz.app.ui import cache as ui_cache
from bertscore_viz.app.ui import compare_view
from bertscore_viz.app.ui.compare_state import (
    compare_input,
    compare_state,
    forget_input,
    set_input,
)
from bertscore_viz.app.ui.explain_view import explain_pair, render_explanation
from bertscore_viz.app.ui.long_texts import long_text_switch
from bertscore_viz.app.ui.messages import escape_markdown, progress_callback, show_error
from bertscore_viz.app.ui.settings import current_settings
from bertscore_viz.app.ui.state import fresh
from bertscore_viz.engine.scorer import Scorer
from bertscore_viz.errors import BertScoreVizError
from bertscore_viz.evaluation import compare, results_file
from bertscore_viz.evaluation.significance import format_p, resamples_for
from bertscore_viz.files import upload
from bertscore_viz.files.export import safe_csv, to_json
from bertscore_viz.locations import EXAMPLES_DIR

EXAMPLE = EXAMPLES_DIR / "systems_example.csv"
NONE = "(none)"
SCORE_FMT = "%.4f"
TABS = ["Significance", "Segments", "Charts", "Drill-down", "Downloads"]
TAB_KEY = "cmp_tab"
TAB_DRILL = "Drill-down"
#: Up to this many segments the drill-down picks a segment from a list; beyond, by position.
DRILL_SELECT_MAX = 2000


# --- input --------------------------------------------------------------------------------------------------------
def _adopt(up) -> None:
    """The uploader's file becomes the input, once per file (its ``file_id``): later runs with the same file in
    the uploader do not undo "Load example" or "Forget"."""
    set_input(up.name, up.getvalue(), "upload")
    compare_state().upload_id = up.file_id


def _on_upload() -> None:
    """The user added or removed a file (a callback: a revisit of the page, with an empty uploader, is not a
    removal, so the upload and its scores stay in the session)."""
    up = st.session_state.get("cmp_file")
    if up is not None:
        _adopt(up)
    elif (compare_input() or {}).get("origin") == "upload":
        forget_input()


def _input() -> dict | None:
    left, right = st.columns([4, 1], vertical_alignment="bottom")
    kept = compare_input()
    label = ("System outputs (CSV, TSV or JSON Lines), or scores.parquet of `score --ray`" if not kept else
             f"Replace the file kept in this session ({kept['name']}) with another")  # the box is empty on return
    with left:
        up = st.file_uploader(label,
                              type=["csv", "tsv", "txt", "jsonl", "json", "parquet"],
                              key="cmp_file", on_change=_on_upload,
                              max_upload_size=ui_cache.upload_widget_mb(),  # this server's limits (docs/DEPLOY.md)
                              help=ui_cache.upload_help(rows=True))
    with right:
        if st.button("Load example", key="cmp_load_example", icon=":material/dataset:",
                     help="4 systems x 30 segments shipped with the app"):
            set_input(EXAMPLE.name, EXAMPLE.read_bytes(), "example")
    if up is not None and compare_state().upload_id != up.file_id:
        _adopt(up)  # a file the callback did not see (e.g. the widget came back with one)
    return compare_input()


def _kept_file(name: str, data: bytes) -> None:
    """Which file the page is showing, and a way to forget it: after a visit to another page the uploader is
    empty, but the file and its scores are kept in the session."""
    row = st.container(horizontal=True, vertical_alignment="center", gap="small")
    row.caption(f"File: {escape_markdown(name)} ({len(data):,} bytes), kept in this session.")
    row.button("Forget", key="cmp_forget", on_click=forget_input, icon=":material/delete:", type="tertiary",
               help="Forget this file and its scores (the next file starts a new model pass).")


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
    state = compare_state()
    if state.table and state.table[0] == fkey:
        return state.table[1], state.table[2]
    table, problems = ui_cache.read_upload(data, name)  # the deployment's upload limits
    state.table = (fkey, table, problems)
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
        layout = st.radio("Layout", ["wide", "long"], **fresh(f"cmp_layout_{fkey}", index=0 if guess.layout == "wide"
                                                               else 1), horizontal=True, key=f"cmp_layout_{fkey}",
                          captions=["one row per segment, a column per system", "one row per system and segment"])
        refs = st.multiselect("Reference column(s)", cols,
                              **fresh(f"cmp_refs_{fkey}", default=[c for c in guess.references if c in cols]),
                              key=f"cmp_refs_{fkey}", help="Several columns = several references per segment.")
        opt = [NONE] + cols
        c1, c2 = st.columns(2)
        source = c1.selectbox("Source column (optional)", opt, key=f"cmp_src_{fkey}",
                              **fresh(f"cmp_src_{fkey}", index=opt.index(guess.source or NONE)))
        seg = c2.selectbox("Segment id column (optional)", opt, key=f"cmp_seg_{fkey}",
                           **fresh(f"cmp_seg_{fkey}", index=opt.index(guess.segment_id or NONE)))
        systems: tuple[str, ...] = ()
        sys_col = cand_col = None
        if layout == "wide":
            default = [c for c in guess.systems if c in cols] if guess.layout == "wide" else []
            systems = tuple(st.multiselect("System columns", cols, **fresh(f"cmp_sys_{fkey}", default=default),
                                           key=f"cmp_sys_{fkey}"))
        else:
            c3, c4 = st.columns(2)
            sys_col = c3.selectbox("System name column", cols,
                                   **fresh(f"cmp_syscol_{fkey}",
                                            index=cols.index(guess.system) if guess.system in cols else 0),
                                   key=f"cmp_syscol_{fkey}")
            cand_col = c4.selectbox("Output (candidate) column", cols,
                                    **fresh(f"cmp_cand_{fkey}",
                                             index=cols.index(guess.candidate) if guess.candidate in cols else 0),
                                    key=f"cmp_cand_{fkey}")
        empty_label = st.radio("Empty cells", ["Score as empty (0, with a warning)", "Leave the segment out"],
                               horizontal=True, key=f"cmp_empty_{fkey}")
    mapping = upload.ColumnMapping(layout, tuple(refs), systems, sys_col, cand_col,
                                   None if source == NONE else source, None if seg == NONE else seg)
    empty = upload.EMPTY_SCORE if empty_label.startswith("Score") else upload.EMPTY_SKIP
    return mapping, empty, (detect_problems if detected is None else [])


def _dataset(table, mapping, empty, read_problems, fkey) -> upload.Dataset:
    key = (fkey, mapping, empty)
    state = compare_state()
    if state.dataset and state.dataset[0] == key:
        return state.dataset[1]
    ds = upload.build_dataset(table, mapping, empty, problems=read_problems)
    state.dataset = (key, ds)
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
    """The model pass for this dataset and model at the sidebar's layer, from the session when already done (a
    layer not computed yet is one more pass, added to the kept one)."""
    spec = ui_cache.resolve_model(settings.model)  # the deployment's allow-list and labels, as on every page
    mode = "|window" if settings.long_texts == "window" else ""  # another model pass: kept apart
    key = _dataset_key(ds, f"{spec.name}|{spec.source}{mode}")
    state = compare_state()
    sc = ui_cache.scorer(settings, rescale=False)
    layer = settings.resolved_layer()
    kept = state.stats[1] if state.stats and state.stats[0] == key else None
    if kept is None or layer not in kept.layers:
        what = "" if kept is None else f" at layer {layer}"
        progress = progress_callback(f"Embedding {len(ds.systems)} systems x {ds.n_segments:,} segments{what} "
                                     "(references once)")
        start = time.perf_counter()
        if kept is None:
            state.results.clear()
            state.significance.clear()
            cstats = compare.score_dataset(sc, ds, progress)
        else:
            cstats = compare.add_layers(sc, ds, kept, [layer], progress)
        progress.bar.empty()
        state.stats = (key, cstats)
        state.last_pass = (key, time.perf_counter() - start, st.session_state.get("_run_id"), layer)
    return sc, state.stats[1], key


def _pass_note(key: str) -> str:
    """Whether this run did the model pass or reused the session's (shown so that reuse is visible)."""
    done = compare_state().last_pass
    if not done or done[0] != key:
        return "Scores kept in this session."
    if done[2] == st.session_state.get("_run_id"):
        return (f"Model pass: {done[1]:.1f} s (all systems at layer {done[3]}, idf off and on; kept for this "
                "session: another layer is one more pass).")
    return f"Scores kept from earlier in this session: no model pass (the last took {done[1]:.1f} s)."


def _results(settings, sc, cstats, key: str, ds=None) -> compare.Comparison:
    """Scores at the sidebar's layer / idf / rescaling, no model pass; the last few settings are kept so that
    toggling back is instant. Warnings name segments by the file's rows, as the problems table does."""
    table = ui_cache.custom_baseline(settings)
    rkey = (key, settings.resolved_layer(), settings.idf, settings.rescale, settings.lang,
            None if table is None else (table.source, table.values.tobytes()))
    state = compare_state()
    if rkey not in state.results:
        state.put_result(rkey, compare.results_for(sc, cstats, settings.resolved_layer(), settings.idf,
                                                   settings.rescale,
                                                   labels=None if ds is None else compare.segment_labels(ds)))
    return state.results[rkey]


def _dataset_key(ds: upload.Dataset, model: str) -> str:
    """:func:`compare.dataset_key` (JSON and sha256 of every output), once per dataset and model."""
    return compare_state().once_per_dataset("dataset_key", ds, model, lambda: compare.dataset_key(ds, model))


def _significance(comparison: compare.Comparison, metric: str, correction: str | None,
                  baseline: str | None = None):
    """The bootstrap, tests, matrix and clusters of one metric and correction, once per set of scores (the
    session keeps the Comparison of each setting, so identity tells the scores are the same); another baseline
    system reuses the resamples (``Significance.rebase``). The answer and the Significance tab share it."""
    state = compare_state()
    k = (id(comparison), metric, correction)
    hit = state.significance.get(k)
    if hit is None or hit[0] is not comparison:
        n_samples = resamples_for(len(comparison.results), len(next(iter(comparison.results.values())).f1),
                                  correction)
        progress = progress_callback("Bootstrap", "resamples") if n_samples > 5000 else None
        try:
            hit = (comparison, compare.significance(comparison, None, metric, n_samples=n_samples,
                                                    correction=correction, progress=progress))
        finally:
            if progress is not None:
                progress.bar.empty()
        state.put_significance(k, hit)
    sig = hit[1]
    return sig if baseline is None else sig.rebase(baseline)


def _language_note(ds: upload.Dataset, model: str) -> str | None:
    """One warning for the dataset's text outside the model's languages (once per dataset and model)."""
    return compare_state().once_per_dataset("language", ds, model,
                                            lambda: compare.language_report(ds, model).message())


# --- results --------------------------------------------------------------------------------------------------------
def _ranking_line(sig) -> str:
    """``1. {A, B} > 2. {C}``: WMT-style clusters, best first, each system with its pairwise wins."""
    groups = []
    for c in sig.clusters:
        names = ", ".join(f"{escape_markdown(s)} ({sig.standing(s).wins})" for s in c.systems)
        groups.append(f"**{c.rank}.** {names}")
    return " > ".join(groups)


def _answer(comparison: compare.Comparison, sig, scale: str) -> None:
    head = compare.headline(comparison, sig)
    best = escape_markdown(head["best"])
    text = (f"**Best: {best}** — {sig.metric} {head['score']:.4f} ({scale}; 95% CI "
            f"{head['ci_low']:.4f}–{head['ci_high']:.4f})")
    if head["runner_up"] is not None and head["margin"] == 0:
        text += f", tied with {escape_markdown(head['runner_up'])}."
    elif head["runner_up"] is not None:
        verdict = "significant" if head["significant"] else "not significant"
        text += (f", {head['margin']:.4f} above {escape_markdown(head['runner_up'])} (2nd): "
                 f"{verdict}, {head['p_text']}.")
    else:
        text += ". Only one system: nothing to compare it with."
    (st.success if head["significant"] else st.info)(text, icon=":material/trophy:")
    st.markdown(f"Ranking by {sig.metric} (clusters; pairwise wins in brackets): {_ranking_line(sig)}",
                help="Clusters as the WMT findings rank systems: every system of a cluster is significantly "
                     "better (paired bootstrap, p < 0.05) than every system of each lower cluster; systems "
                     "inside a cluster are not separated. The number after a name counts the systems it is "
                     "significantly better than. Details in the Significance tab.")
    st.caption(escape_markdown(sig.comparisons_note() + " " + sig.resolution_note()))
    c1, c2, c3, c4 = st.columns(4)
    # the lead is green only when it is significant: a non-significant lead is shown without colour
    c1.metric(f"Best {sig.metric}", f"{head['score']:.4f}",
              delta=None if head["margin"] is None else f"+{head['margin']:.4f} vs 2nd",
              delta_color="normal" if head["significant"] else "off",
              help=None if head["significant"] else "The lead over the 2nd system is not significant.")
    c2.metric("95% CI (half-width)", f"±{(head['ci_high'] - head['ci_low']) / 2:.4f}")
    family = sig.family_text()
    c3.metric("p, best vs 2nd", "—" if head["p"] is None else format_p(head["p"]),
              help="The paired-bootstrap p of the best and the 2nd system" + (f" ({family})" if family else "")
                   + ": the same p this pair has in the Significance tab's sentences and matrix. "
                   + escape_markdown(sig.comparisons_note()))
    c4.metric("Systems x segments", f"{len(comparison.results)} x {len(next(iter(comparison.results.values())))}")


def _table_height(rows: int) -> int:
    """Pixels that show every row of a table (no scroll box) up to 40 rows."""
    return 38 + 35 * min(max(rows, 1), 40)


def _system_tab(comparison, sig, table) -> None:
    st.dataframe(table, hide_index=True, width="stretch", key="cmp_systems", height=_table_height(len(table)),
                 column_config={c: st.column_config.NumberColumn(format=SCORE_FMT)
                                for c in table.columns if c in ("P", "R", "F1") or "CI" in c}
                 | {"Cluster": st.column_config.NumberColumn(help="WMT-style cluster (1 = best group)"),
                    "Wins": st.column_config.NumberColumn(help="systems it is significantly better than")})
    st.caption(f"Best first. {sig.metric} 95% CI: bootstrap percentile interval "
               f"({sig.n_samples:,} resamples, seed {sig.seed}).")
    st.code("signature: " + comparison.signature, language=None, wrap_lines=True)
    warns = comparison.warnings()
    if warns:
        with st.expander(f"Scoring warnings ({len(warns)})"):
            for w in warns[:200]:
                st.text(w)


def _mark_chosen(key: str) -> None:
    """The user picked a value for ``key``: it stays, whatever the ranking does later."""
    compare_state().chosen.add(key)


def _follow_ranking(key: str, default: str, options: list[str]) -> None:
    """Until the user picks one, a system choice follows the current ranking (idf, layer, rescaling or the
    metric can change it): the default is written before the widget is drawn. A chosen system stays while it
    exists."""
    if key not in compare_state().chosen or st.session_state.get(key) not in options:
        st.session_state[key] = default


@st.fragment
def _significance_tab(comparison, fkey: str, systems: list[str], correction: str | None) -> None:
    c1, c2 = st.columns(2)
    metric = c2.selectbox("Metric", ["F1", "P", "R"], key=f"cmp_metric_{fkey}")
    ranked = list(_significance(comparison, metric, correction).systems)  # by this metric, best first
    kb = f"cmp_baseline_{fkey}"
    _follow_ranking(kb, ranked[0], ranked)
    base = c1.selectbox("Baseline system", ranked, key=kb, on_change=_mark_chosen, args=(kb,),
                        help=f"Systems by {metric}, best first. Until you pick one, the baseline is the "
                             f"top-ranked system by {metric} (it follows the ranking when settings change).")
    sig = _significance(comparison, metric, correction, base)
    st.caption(f"Paired bootstrap resampling as sacrebleu does it: {sig.n_samples:,} resamples, seed "
               f"{sig.seed}, p = (c + 1) / (n + 1). p < {sig.alpha:g} counts as significant. "
               + escape_markdown(sig.comparisons_note() + " " + sig.resolution_note())
               + (" Under Holm the resamples follow the number of systems, so that a difference can reach "
                  "significance (without correction: sacrebleu's 1,000)." if correction == "holm" else ""))
    st.markdown("\n".join("- " + escape_markdown(r.sentence(metric, sig.alpha)) for r in sig.versus_baseline))
    if len(systems) > 1:
        st.markdown(f"**Clusters** ({metric}): {_ranking_line(sig)}")
        standings = pd.DataFrame([{"Cluster": x.cluster, "System": x.system, metric: x.mean, "Wins": x.wins,
                                   "Losses": x.losses, "Rank range": f"{x.rank_low}–{x.rank_high}"}
                                  for x in sig.standings])
        st.dataframe(standings, hide_index=True, width="stretch", key="cmp_standings",
                     height=_table_height(len(standings)),
                     column_config={metric: st.column_config.NumberColumn(format=SCORE_FMT),
                                    "Wins": st.column_config.NumberColumn(help="systems it is significantly "
                                                                                 "better than"),
                                    "Losses": st.column_config.NumberColumn(help="systems significantly better "
                                                                                   "than it"),
                                    "Rank range": st.column_config.TextColumn(help="1 + losses to k − wins")})
        st.plotly_chart(compare_view.pvalue_figure(sig), key="cmp_pvalues")
        matrix = pd.DataFrame(sig.matrix, index=list(sig.systems), columns=list(sig.systems))
        family = sig.family_text()
        with st.expander("Pairwise p values as a table" + (f" ({family})" if family else "")):
            st.dataframe(matrix, width="stretch", key="cmp_pmatrix",
                         column_config={c: st.column_config.NumberColumn(format="%.3f") for c in matrix.columns})


def _pair_choice(systems: list[str], fkey: str) -> tuple[str, str]:
    """System A and B, one choice shared by every tab that uses it; until the user picks them, the two best by
    F1 in the current ranking."""
    ka, kb = f"cmp_a_{fkey}", f"cmp_b_{fkey}"
    _follow_ranking(ka, systems[0], systems)
    a = st.session_state[ka]
    _follow_ranking(kb, next((s for s in systems if s != a), a), systems)
    c1, c2 = st.columns(2)
    a = c1.selectbox("System A", systems, key=ka, on_change=_mark_chosen, args=(ka,),
                     help="Until you pick one: the best system by F1 (it follows the ranking).")
    b = c2.selectbox("System B", systems, key=kb, on_change=_mark_chosen, args=(kb,),
                     help="Until you pick one: the best system by F1 other than A (it follows the ranking).")
    return a, b


def _on_pick_segment(fkey: str, n: int) -> None:
    """A click on a segment row opens it in the Drill-down tab."""
    rows = st.session_state["cmp_segments"].selection.rows
    index = compare_state().shown_index
    if not rows or rows[0] >= len(index):
        return
    pos = int(index[rows[0]])
    if n <= DRILL_SELECT_MAX:
        st.session_state[f"cmp_drill_seg_{fkey}"] = pos
    else:
        st.session_state[f"cmp_drill_pos_{fkey}"] = pos + 1
    st.session_state[TAB_KEY] = TAB_DRILL
    compare_state().jump_to_drill = True


@st.fragment
def _segments_tab(ds, comparison, fkey: str, systems: list[str]) -> None:
    state = compare_state()
    if state.jump_to_drill:
        state.jump_to_drill = False
        st.rerun(scope="app")  # the tabs live outside this fragment
    a, b = _pair_choice(systems, fkey)
    c1, c2, c3 = st.columns([3, 1, 1], vertical_alignment="bottom")
    query = c1.text_input("Search (reference, source, outputs, id)", key=f"cmp_query_{fkey}")
    with_pr = c2.toggle("Show P and R", key=f"cmp_pr_{fkey}")
    by_diff = c3.toggle("Sort by A − B", **fresh(f"cmp_bydiff_{fkey}", value=True), key=f"cmp_bydiff_{fkey}",
                        help="Largest differences between A and B first.")
    frame = compare.segment_table(ds, comparison, with_pr=with_pr)
    if by_diff and a != b:
        frame = compare.sort_by_difference(frame, comparison, a, b)
    shown = compare.filter_segments(frame, query)
    st.caption(f"{len(shown):,} of {len(frame):,} segments. Click a row's checkbox to open it in Drill-down "
               "(A and B side by side); click a column header to sort.")
    # room for the header and its sort arrow (a sorted "F1" header shrank to "↑F1")
    cfg = {c: st.column_config.NumberColumn(format=SCORE_FMT, width=max(90, 9 * len(c) + 30))
           for c in shown.columns
           if c.startswith(("F1", "P ·", "R ·"))}
    cfg.update({c: st.column_config.TextColumn(width="medium") for c in shown.columns
                if c.startswith("Output") or c in ("Reference", "Source")})
    compare_state().shown_index = shown.index.tolist()
    st.dataframe(shown, hide_index=True, width="stretch", height=420, key="cmp_segments", column_config=cfg,
                 on_select=functools.partial(_on_pick_segment, fkey, ds.n_segments), selection_mode="single-row")


@st.fragment
def _charts_tab(ds, comparison, systems: list[str], fkey: str) -> None:
    c1, c2 = st.columns(2)
    with c1:
        st.plotly_chart(compare_view.distribution_figure(comparison), key="cmp_dist")
    with c2:
        st.plotly_chart(compare_view.bucket_figure(compare.length_buckets(ds, comparison)), key="cmp_buckets")
    if len(systems) > 1:
        a, b = _pair_choice(systems, fkey)
        st.plotly_chart(compare_view.scatter_figure(comparison, a, b, ds.segment_ids), key="cmp_scatter")
        st.caption("Points above the dotted diagonal: B scores higher on that segment.")


@st.fragment
def _drilldown_tab(ds, comparison, settings, systems: list[str], fkey: str, explain=None) -> None:
    """One segment, A and B side by side (the A/B choice of the Segments tab); opens on the segment where they
    differ most, or on the row clicked in the Segments tab. ``explain(candidate, references)``: how a results file
    explains a segment (its own idf and baseline); None = the sidebar's scorer, idf from this dataset."""
    a, b = _pair_choice(systems, fkey)
    n = ds.n_segments
    fa, fb = comparison.scores("F1")[a], comparison.scores("F1")[b]
    diff = fa - fb
    default = int(np.argmax(np.abs(diff))) if n else 0
    if n <= DRILL_SELECT_MAX:
        key = f"cmp_drill_seg_{fkey}"
        if not isinstance(st.session_state.get(key), int) or not 0 <= st.session_state[key] < n:
            st.session_state[key] = default
        labels = [f"{sid} — A − B {d:+.3f} — {ref[0][:60]}"
                  for sid, d, ref in zip(ds.segment_ids, diff, ds.references)]
        i = st.selectbox("Segment", range(n), format_func=lambda k: labels[k], key=key,
                         help="Starts at the segment where A and B differ most; a click on a row of the "
                              "Segments tab opens that segment here.")
    else:
        key = f"cmp_drill_pos_{fkey}"
        if key not in st.session_state:
            st.session_state[key] = default + 1
        i = int(st.number_input(f"Segment (position 1–{n:,})", 1, n, key=key)) - 1
    where = f"Segment id {ds.segment_ids[i]}, row {ds.rows[i]} of the file"
    st.caption(escape_markdown(where) if str(ds.segment_ids[i]) != str(ds.rows[i]) else f"Row {ds.rows[i]} of the file")
    if ds.sources is not None:
        st.caption("Source")
        st.text(ds.sources[i] or "(empty)")
    refs = ds.references[i]
    for k, ref in enumerate(refs):
        st.caption("Reference" + (f" {k + 1}" if len(refs) > 1 else ""))
        st.text(ref or "(empty)")
    ra, rb = comparison.results[a], comparison.results[b]
    if a != b:
        st.markdown(escape_markdown(
            f"On this segment: {a} − {b} = F1 {diff[i]:+.4f} (P {ra.precision[i] - rb.precision[i]:+.4f}, "
            f"R {ra.recall[i] - rb.recall[i]:+.4f})"))

    if settings.rescale and not comparison.rescaled:
        settings = replace(settings, rescale=False)  # no baseline: raw numbers, as in the tables above
    # idf as the tables have it: from every reference of the dataset, not from this segment's alone
    idf_sentences = [r for group in ds.references for r in group] if settings.idf and explain is None else None
    sides = [("A", a)] if a == b else [("A", a), ("B", b)]
    cols = st.columns(len(sides))
    for col, (tag, system) in zip(cols, sides):
        res = comparison.results[system]
        with col:
            st.markdown(f"**{tag}: {escape_markdown(system)}** — P {res.precision[i]:.4f} · R "
                        f"{res.recall[i]:.4f} · F1 {res.f1[i]:.4f}")
            st.text(ds.systems[system][i] or "(empty)")
            try:
                explanation = (explain(ds.systems[system][i], refs) if explain is not None
                               else explain_pair(settings, ds.systems[system][i], refs, idf_sentences))
            except BertScoreVizError as exc:
                show_error(exc)
                continue
            render_explanation(explanation, settings, key=f"compare_{tag.lower()}",
                               max_width=None if len(sides) == 1 else 620)


def _downloads_tab(ds, comparison, sig, table) -> None:
    sig_text = comparison.signature
    st.caption("CSV files open safely in a spreadsheet (formula-like cells are neutralised); the signature is in "
               "every row and on the first line of the JSON.")
    source = re.sub(r"\.[A-Za-z0-9]{1,8}$", "", (compare_input() or {}).get("name") or "comparison")
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", f"{source}_{comparison.signature.split('_version=')[0]}")[:120]
    c1, c2, c3 = st.columns(3)
    c1.download_button("System table (CSV)", data=safe_csv(table, sig_text), file_name=f"{stem}_systems.csv",
                       mime="text/csv", key="cmp_dl_systems", on_click="ignore", icon=":material/download:")
    c2.download_button("Segment scores (CSV)",
                       data=lambda: safe_csv(compare.segment_table(ds, comparison, with_pr=True), sig_text),
                       file_name=f"{stem}_segments.csv", mime="text/csv", key="cmp_dl_segments", on_click="ignore",
                       icon=":material/download:")
    c3.download_button("Everything (JSON)", data=lambda: to_json(compare.to_jsonable(ds, comparison, sig)),
                       file_name=f"{stem}.json", mime="application/json", key="cmp_dl_json",
                       on_click="ignore", icon=":material/download:")


def _results_table(data: bytes, fkey: str) -> results_file.ResultsTable:
    """The results file read once per upload and kept in the session (one file at a time, keyed by its content):
    a toggle, a tab or a sidebar change reuses it. Counted towards the session's uploads; at most the server's
    per-file limit and the results-file limit (docs/RAY.md)."""
    state = compare_state()
    if state.results_file and state.results_file[0] == fkey:
        return state.results_file[1]
    state.results_file = None
    name = (compare_input() or {}).get("name") or "the results file"
    own_limit = results_file.max_upload_bytes()  # BERTSCORE_VIZ_RESULTS_UPLOAD_MB (docs/RAY.md)
    refused = ui_cache.count_upload(data, name, own_limit=own_limit)
    if refused:
        raise BertScoreVizError(refused)
    table = results_file.read_results(data, max_bytes=ui_cache.upload_limit_bytes(own_limit),
                                      max_rows=ui_cache.policy().upload_rows)  # what it expands to, bounded too
    state.results_file = (fkey, table, {})
    return table


def _sidebar_baseline(settings, model: str, layer: int):
    """The P/R/F baseline the sidebar's settings give for the file's model and layer (None: rescaling off, another
    model, or no baseline): compared with the file's own."""

    if not settings.rescale:
        return None
    try:
        spec = ui_cache.resolve_model(settings.model)
        if spec.name != model:
            return None
        return Scorer(model=spec, layer=layer, rescale_with_baseline=True,
                      lang=settings.lang, baseline_table=ui_cache.custom_baseline(settings)).baseline
    except BertScoreVizError:
        return None


def _file_explainer(table: results_file.ResultsTable, rescaled: bool, file_settings):
    """The drill-down of a results file: the file's model (this server's pooled copy, within its allow-list) with the
    file's idf weights and baseline, so the segment's P/R/F1 are the file's row."""

    def explain(candidate: str, references: list[str]):
        base = ui_cache.scorer(replace(file_settings, idf=False), rescale=False)
        sc = results_file.file_scorer(table, rescaled, model=base.spec, encoder=base.encoder)
        return sc.explain(candidate, references[0] if len(references) == 1 else list(references))

    return explain


def _precomputed(settings, data: bytes, fkey: str) -> None:
    """A results Parquet (``score --ray``): scores read from the file, no model pass, shown as the file's signature
    says (a toggle shows the other scale when the file has both); the drill-down computes the one segment it opens,
    with the file's model, layer, idf weights and baseline."""
    try:
        table = _results_table(data, fkey)
        written = table.written_rescaled
        rescale = written
        if table.has_rescaled:
            other = "raw" if written else "rescaled"
            if st.toggle(f"Show {other} numbers instead", key=f"cmp_rf_other_{fkey}",
                         help="The file holds raw and rescaled P/R/F1; it opens with the ones its signature names "
                              f"({'rescaled' if written else 'raw'})."):
                rescale = not written
        store = compare_state().results_file[2]
        if rescale not in store:
            store[rescale] = results_file.results_at(table, rescale)
        loaded = store[rescale]
        ds, comparison = loaded.dataset, loaded.comparison
        s = loaded.info["settings"]
        mismatch = results_file.settings_mismatch(
            loaded.info, ui_cache.resolve_model(settings.model).name, settings.resolved_layer(), settings.idf,
            settings.rescale, _sidebar_baseline(settings, s["model"], int(s["layer"])), comparison.rescaled)
    except BertScoreVizError as exc:
        show_error(exc)
        return
    st.info(f"Precomputed scores ({ds.n_segments:,} segments x {len(ds.systems)} systems), read from the file; "
            "nothing is recomputed except the drill-down's one segment.", icon=":material/table_view:")
    for note in loaded.notes + ((mismatch,) if mismatch else ()):
        st.warning(escape_markdown(note), icon=":material/warning:")
    file_settings = replace(settings, **results_file.app_settings(loaded.info), rescale=comparison.rescaled)
    scale = "rescaled" if comparison.rescaled else "raw"
    _show_results(ds, comparison, file_settings, fkey, scale,
                  explain=_file_explainer(table, comparison.rescaled, file_settings))


def _show_results(ds, comparison, settings, fkey: str, scale: str, problems=(), explain=None) -> None:
    """The answer, the system table and the tabs, for scores computed here or read from a results file (whose
    drill-down explains a segment with ``explain``)."""
    systems = comparison.systems  # by score, best first
    correction = "holm" if st.session_state.get(f"cmp_holm_{fkey}") else None
    fsig = _significance(comparison, "F1", correction)  # top-ranked baseline; cached, shared with the tab
    _answer(comparison, fsig, scale)
    st.toggle("Holm correction for multiple comparisons", key=f"cmp_holm_{fkey}",
              help="Adjust every p value for the number of comparisons made (Holm's step-down method over all "
                   "k(k − 1)/2 pairs, one family: a pair has the same p in the answer, the sentences and the "
                   "matrix): the chance of calling any difference significant by luck stays under 5%.")
    _show_problems(problems, ok=True)
    table = compare.system_table(comparison, fsig)
    st.subheader("Systems")
    _system_tab(comparison, fsig, table)
    tabs = st.tabs(TABS, key=TAB_KEY, on_change="rerun")
    # Only the open tab runs (lazy tabs), and each tab's own widgets re-run only that tab (fragments).
    if tabs[0].open:
        with tabs[0]:
            _significance_tab(comparison, fkey, systems, correction)
    if tabs[1].open:
        with tabs[1]:
            _segments_tab(ds, comparison, fkey, systems)
    if tabs[2].open:
        with tabs[2]:
            _charts_tab(ds, comparison, systems, fkey)
    if tabs[3].open:
        with tabs[3]:
            _drilldown_tab(ds, comparison, settings, systems, fkey, explain)
    if tabs[4].open:
        with tabs[4]:
            _downloads_tab(ds, comparison, fsig, table)


def main() -> None:
    st.session_state["_run_id"] = st.session_state.get("_run_id", 0) + 1
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
    _kept_file(name, data)
    if results_file.is_results_file(name, data):
        _precomputed(settings, data, fkey)
        return
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
        comparison = _results(settings, sc, cstats, key, ds)
    except BertScoreVizError as exc:
        show_error(exc)
        return
    scale = "rescaled" if comparison.rescaled else "raw"
    st.caption(_pass_note(key))
    n_long, n_cut = compare.long_text_counts(cstats.pairs, sc.encoder.max_length)
    long_text_switch(n_long, n_cut, sc.encoder.max_length, settings.long_texts)
    if settings.rescale and comparison.note:
        st.warning(escape_markdown(comparison.note) + "\n\n**Showing raw numbers** (not rescaled).",
                   icon=":material/warning:")
    language = _language_note(ds, sc.spec.name)
    if language:
        st.warning(escape_markdown(language), icon=":material/translate:")
    human = [c for c in table.columns if c and upload.HUMAN_RE.match(c)]
    if human:  # the file carries human judgments: the Agreement page correlates every metric with them
        st.info(f"This file has human scores ({escape_markdown(', '.join(human[:3]))}); they are not scored as a "
                "system. See how well BERTScore, chrF and BLEU agree with them on the **Agreement with humans** "
                "page (its button “Use the Compare page's file”).", icon=":material/thumbs_up_down:")
    if comparison.rescaled:  # the baseline's language against the text's (once per dataset and language)
        note = compare_state().once_per_dataset("baseline_language", ds, settings.lang,
                                                lambda: compare.baseline_language_note(ds, settings.lang))
        if note:
            st.warning(escape_markdown(note), icon=":material/translate:")
    _show_results(ds, comparison, settings, fkey, scale, problems)


main()
