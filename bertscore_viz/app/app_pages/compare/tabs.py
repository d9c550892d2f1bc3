"""The Compare page's tabs below the system table: significance (BERTScore's and, when shown, sacrebleu's chrF, BLEU
and TER; the power of the test), segments, charts, the drill-down of one segment (A and B), and the downloads. Each
is a fragment: its own widgets re-run only that tab."""

from __future__ import annotations

import functools
import re
from dataclasses import replace

import numpy as np
import pandas as pd
import streamlit as st

from bertscore_viz.app.app_pages.compare.exports import paper_downloads
from bertscore_viz.app.app_pages.compare.meaning import meaning_view
from bertscore_viz.app.app_pages.compare.metrics import (
    SURFACE_FMT,
    any_significance,
    is_surface,
    metric_format,
    rank_chart,
    versus_baseline_view,
)
from bertscore_viz.app.app_pages.compare.reading import power_section
from bertscore_viz.app.app_pages.compare.results import (
    SCORE_FMT,
    follow_ranking,
    mark_chosen,
    pair_choice,
    ranking_line,
    table_height,
)
from bertscore_viz.app.shared.explain_view import SIDE_BY_SIDE_WIDTH, explain_pair, figure_width, render_explanation
from bertscore_viz.app.shared.messages import escape_markdown, show_error
from bertscore_viz.app.state.compare import compare_input, compare_state
from bertscore_viz.app.state.widgets import fresh
from bertscore_viz.errors import BertScoreVizError
from bertscore_viz.evaluation import compare
from bertscore_viz.evaluation.documents import pair_context
from bertscore_viz.evaluation.own_metrics import is_own
from bertscore_viz.figures import compare_plots, tables
from bertscore_viz.files.export import safe_csv, to_json

__all__ = ["TABS", "TAB_KEY", "TAB_DRILL", "DRILL_SELECT_MAX", "significance_tab", "segments_tab", "charts_tab",
           "drilldown_tab", "downloads_tab"]

TABS = ["Significance", "Segments", "Charts", "Drill-down", "Downloads"]
TAB_KEY = "cmp_tab"
TAB_DRILL = "Drill-down"
#: Up to this many segments the drill-down picks a segment from a list; beyond, by position.
DRILL_SELECT_MAX = 2000


def _method_caption(sig, surface, correction: str | None) -> str:
    """How the tab's p values were computed: the page's bootstrap over segment scores, or sacrebleu's over corpus
    scores (with its signature)."""
    mine = surface.metrics.get(sig.metric) if surface is not None else None
    if is_own(mine):
        head = (f"Paired bootstrap resampling of the given {sig.metric} scores, as for BERTScore: "
                f"{sig.n_samples:,} resamples of the {mine.n_kept:,} segments every system has a score for, seed "
                f"{sig.seed}, p = (c + 1) / (n + 1); {mine.direction}. ")
    elif is_surface(sig.metric):
        head = (f"sacrebleu's paired bootstrap (`--paired-bs`) of the corpus {sig.metric}: {sig.n_samples:,} "
                f"resamples of the segments, seed {sig.seed}, each resample's corpus score recomputed from "
                "sacrebleu's statistics of the drawn segments, p = (c + 1) / (n + 1). Signature: "
                + escape_markdown(surface.metrics[sig.metric].bootstrap_signature(sig.n_samples, sig.seed)) + ". ")
    else:
        head = (f"Paired bootstrap resampling as sacrebleu does it: {sig.n_samples:,} resamples, seed "
                f"{sig.seed}, p = (c + 1) / (n + 1). ")
    return (head + f"p < {sig.alpha:g} counts as significant. "
            + escape_markdown(sig.comparisons_note() + " " + sig.resolution_note())
            + (" Under Holm the resamples follow the number of systems, so that a difference can reach "
               "significance (without correction: sacrebleu's 1,000)." if correction == "holm" else ""))


def _standings_view(sig, metric: str) -> None:
    st.markdown(f"**Clusters** ({metric}): {ranking_line(sig)}")
    standings = pd.DataFrame([{"Cluster": x.cluster, "System": x.system, metric: x.mean, "Wins": x.wins,
                               "Losses": x.losses, "Rank range": f"{x.rank_low}–{x.rank_high}"}
                              for x in sig.standings])
    st.dataframe(standings, hide_index=True, width="stretch", key="cmp_standings",
                 height=table_height(len(standings)),
                 column_config={metric: st.column_config.NumberColumn(format=metric_format(metric)),
                                "Wins": st.column_config.NumberColumn(help="systems it is significantly "
                                                                             "better than"),
                                "Losses": st.column_config.NumberColumn(help="systems significantly better "
                                                                               "than it"),
                                "Rank range": st.column_config.TextColumn(help="1 + losses to k − wins")})
    st.plotly_chart(compare_plots.pvalue_figure(sig), key="cmp_pvalues")
    matrix = pd.DataFrame(sig.matrix, index=list(sig.systems), columns=list(sig.systems))
    family = sig.family_text()
    with st.expander("Pairwise p values as a table" + (f" ({family})" if family else "")):
        st.dataframe(matrix, width="stretch", key="cmp_pmatrix",
                     column_config={c: st.column_config.NumberColumn(format="%.3f") for c in matrix.columns})


@st.fragment
def significance_tab(comparison, fkey: str, systems: list[str], correction: str | None, surface=None) -> None:
    """Tests, clusters and p values of one metric (BERTScore's P, R, F1, or sacrebleu's chrF, BLEU, TER when
    shown), every metric against the baseline side by side, and the power of the test for A and B."""
    c1, c2 = st.columns(2)
    options = ["F1", "P", "R"] + (list(surface.metrics) if surface is not None else [])
    mkey = f"cmp_metric_{fkey}"
    if st.session_state.get(mkey, "F1") not in options:  # chrF chosen, then the metrics switched off
        st.session_state[mkey] = "F1"
    metric = c2.selectbox("Metric", options, key=mkey,
                          help="BERTScore's P, R, F1 (the bootstrap over segment scores), sacrebleu's chrF, BLEU, "
                               "TER (its bootstrap over corpus scores; TER: lower is better), or a metric of one's "
                               "own from the file's score columns (the bootstrap over its segment scores).")
    ranked = list(any_significance(comparison, surface, metric, correction).systems)  # best first by this metric
    kb = f"cmp_baseline_{fkey}"
    follow_ranking(kb, ranked[0], ranked)
    base = c1.selectbox("Baseline system", ranked, key=kb, on_change=mark_chosen, args=(kb,),
                        help=f"Systems by {metric}, best first. Until you pick one, the baseline is the "
                             f"top-ranked system by {metric} (it follows the ranking when settings change).")
    sig = any_significance(comparison, surface, metric, correction, base)
    st.caption(_method_caption(sig, surface, correction))
    st.markdown("\n".join("- " + escape_markdown(r.sentence(metric, sig.alpha)) for r in sig.versus_baseline))
    meaning_view(comparison, surface, sig)
    if len(systems) > 1:
        _standings_view(sig, metric)
        if surface is not None and surface.metrics:
            versus_baseline_view(comparison, surface, base, correction)
        mine = surface.metrics.get(metric) if surface is not None else None
        if is_own(mine):
            power_section(comparison, sig, fkey, systems, mine.kept_scores())
        elif not is_surface(metric):
            power_section(comparison, sig, fkey, systems)


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
def segments_tab(ds, comparison, fkey: str, systems: list[str], surface=None) -> None:
    state = compare_state()
    if state.jump_to_drill:
        state.jump_to_drill = False
        st.rerun(scope="app")  # the tabs live outside this fragment
    a, b = pair_choice(systems, fkey)
    c1, c2, c3 = st.columns([3, 1, 1], vertical_alignment="bottom")
    query = c1.text_input("Search (reference, source, outputs, id)", key=f"cmp_query_{fkey}")
    with_pr = c2.toggle("Show P and R", key=f"cmp_pr_{fkey}")
    by_diff = c3.toggle("Sort by A − B", **fresh(f"cmp_bydiff_{fkey}", value=True), key=f"cmp_bydiff_{fkey}",
                        help="Largest differences between A and B first.")
    frame = tables.segment_table(ds, comparison, with_pr=with_pr, surface=surface)
    if by_diff and a != b:
        frame = tables.sort_by_difference(frame, comparison, a, b)
    shown = tables.filter_segments(frame, query)
    st.caption(f"{len(shown):,} of {len(frame):,} segments. Click a row's checkbox to open it in Drill-down "
               "(A and B side by side when both heatmaps fit half the page, else A above B); click a column header "
               "to sort."
               + (" chrF, BLEU, TER: sacrebleu's sentence scores (" + escape_markdown(
                   "; ".join(m.sentence_signature for m in surface.metrics.values())) + ")."
                  if surface is not None and surface.metrics else ""))
    # room for the header and its sort arrow (a sorted "F1" header shrank to "↑F1")
    cfg = {c: st.column_config.NumberColumn(format=SCORE_FMT, width=max(90, 9 * len(c) + 30))
           for c in shown.columns
           if c.startswith(("F1", "P ·", "R ·"))}
    cfg.update({c: st.column_config.NumberColumn(format=SURFACE_FMT, width=max(90, 9 * len(c) + 30))
                for c in shown.columns if c.startswith(("chrF ·", "BLEU ·", "TER ·"))})
    cfg.update({c: st.column_config.TextColumn(width="medium") for c in shown.columns
                if c.startswith("Output") or c in ("Reference", "Source")})
    compare_state().shown_index = shown.index.tolist()
    st.dataframe(shown, hide_index=True, width="stretch", height=420, key="cmp_segments", column_config=cfg,
                 on_select=functools.partial(_on_pick_segment, fkey, ds.n_segments), selection_mode="single-row")


@st.fragment
def charts_tab(ds, comparison, systems: list[str], fkey: str, surface=None) -> None:
    c1, c2 = st.columns(2)
    with c1:
        st.plotly_chart(compare_plots.distribution_figure(comparison), key="cmp_dist")
    with c2:
        st.plotly_chart(compare_plots.bucket_figure(tables.length_buckets(ds, comparison)), key="cmp_buckets")
        st.caption(f"Bars: the 95% bootstrap interval of each mean (1,000 resamples of the bucket's segments). A "
                   f"length bucket of fewer than {compare.MIN_BUCKET_SEGMENTS} segments is merged with its "
                   "neighbour: one to four segments say too little for a mean or an interval.")
    if surface is not None:
        rank_chart(comparison, surface, fkey)
    if len(systems) > 1:
        a, b = pair_choice(systems, fkey)
        st.plotly_chart(compare_plots.scatter_figure(comparison, a, b, ds.segment_ids), key="cmp_scatter")
        st.caption("Points above the dotted diagonal: B scores higher on that segment.")


def _explained(ds, settings, sides, i: int, explain) -> list:
    """``(tag, system, explanation or the error)`` of each side of segment ``i``: the results file's ``explain``, or
    the page's scorer with idf from every reference of the dataset (as the tables have it, not this segment's
    alone) and, with document context, the previous segments the score had."""
    refs = ds.references[i]
    idf_sentences = [r for group in ds.references for r in group] if settings.idf and explain is None else None
    k = int(getattr(settings, "context", 0))
    if k and explain is None:
        st.caption(f"Each side is explained as it was scored: encoded after the previous {k} segment(s) of its "
                   "document (greyed below; not matched).")
    shown = []
    for tag, system in sides:
        context = pair_context(ds, system, i, k, getattr(settings, "context_source", "ref")) if explain is None \
            else ([], [])
        try:
            shown.append((tag, system, explain(ds.systems[system][i], refs) if explain is not None
                          else explain_pair(settings, ds.systems[system][i], refs, idf_sentences, *context)))
        except BertScoreVizError as exc:
            shown.append((tag, system, exc))
    return shown


@st.fragment
def drilldown_tab(ds, comparison, settings, systems: list[str], fkey: str, explain=None) -> None:
    """One segment, A and B side by side (the A/B choice of the Segments tab), or one above the other when either
    heatmap would not fit half the page (each drawn whole); opens on the segment where they differ most, or on the
    row clicked in the Segments tab. ``explain(candidate, references)``: how a results file explains a segment (its
    own idf and baseline); None = the sidebar's scorer, idf from this dataset."""
    a, b = pair_choice(systems, fkey)
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
    sides = [("A", a)] if a == b else [("A", a), ("B", b)]
    shown = _explained(ds, settings, sides, i, explain)  # explained before the layout is chosen
    # side by side while both heatmaps fit half the page (with each side's toggles); else stacked at full width
    stack = len(shown) == 1 or any(
        not isinstance(e, BertScoreVizError)
        and figure_width(e, bool(st.session_state.get(f"compare_{tag.lower()}_show_special")),
                         bool(st.session_state.get(f"compare_{tag.lower()}_merge_words"))) > SIDE_BY_SIDE_WIDTH
        for tag, _, e in shown)
    if len(shown) > 1:
        st.caption("A and B side by side." if not stack else
                   "A above B: a heatmap of this segment does not fit half the page with legible cells, so each "
                   "is drawn at the page's full width.")
    places = [st.container() for _ in shown] if stack else st.columns(len(shown), gap="small")
    for place, (tag, system, explanation) in zip(places, shown):
        res = comparison.results[system]
        with place:
            if stack and tag == "B":
                st.divider()
            st.markdown(f"**{tag}: {escape_markdown(system)}** — P {res.precision[i]:.4f} · R "
                        f"{res.recall[i]:.4f} · F1 {res.f1[i]:.4f}")
            st.text(ds.systems[system][i] or "(empty)")
            if isinstance(explanation, BertScoreVizError):
                show_error(explanation)
                continue
            render_explanation(explanation, settings, key=f"compare_{tag.lower()}",
                               max_width=None if stack else SIDE_BY_SIDE_WIDTH)


def downloads_tab(ds, comparison, sig, table, surface=None, **paper) -> None:
    """CSV and JSON of the tables (with chrF, BLEU, TER when shown), and the paper-ready downloads
    (``paper``: what :func:`~bertscore_viz.app.app_pages.compare.exports.paper_downloads` takes besides the
    scores)."""
    sig_text = comparison.signature
    st.caption("CSV files open safely in a spreadsheet (formula-like cells are neutralised); the signature is in "
               "every row and on the first line of the JSON.")
    source = re.sub(r"\.[A-Za-z0-9]{1,8}$", "", (compare_input() or {}).get("name") or "comparison")
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", f"{source}_{comparison.signature.split('_version=')[0]}")[:120]
    c1, c2, c3 = st.columns(3)
    c1.download_button("System table (CSV)", data=safe_csv(table, sig_text), file_name=f"{stem}_systems.csv",
                       mime="text/csv", key="cmp_dl_systems", on_click="ignore", icon=":material/download:")
    c2.download_button("Segment scores (CSV)",
                       data=lambda: safe_csv(tables.segment_table(ds, comparison, with_pr=True, surface=surface),
                                             sig_text),
                       file_name=f"{stem}_segments.csv", mime="text/csv", key="cmp_dl_segments", on_click="ignore",
                       icon=":material/download:")
    c3.download_button("Everything (JSON)",
                       data=lambda: to_json(tables.to_jsonable(ds, comparison, sig, surface=surface)),
                       file_name=f"{stem}.json", mime="application/json", key="cmp_dl_json",
                       on_click="ignore", icon=":material/download:")
    options = ["F1"] + (list(surface.metrics) if surface is not None else [])
    if len(options) > 1:
        key = "cmp_paper_metric"
        if st.session_state.get(key, "F1") not in options:
            st.session_state[key] = "F1"
        chosen = st.selectbox("Metric of the LaTeX table and the report", options, key=key,
                              help="The metric whose intervals, Δ, p and clusters the table and the report show "
                                   "(against the best system); BERTScore's P, R, F1 are columns either way.")
        if chosen != "F1":
            sig = any_significance(comparison, surface, chosen, sig.correction)
    paper_downloads(ds, comparison, sig, stem, surface=surface, **paper)
