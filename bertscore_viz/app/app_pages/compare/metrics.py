"""chrF, BLEU and TER beside BERTScore on the Compare page: the switch (per file), sacrebleu's scores computed once per
dataset and kept in the session, their signatures, their paired bootstrap (sacrebleu's, resampled once per metric
and number of resamples), every metric's test against one baseline side by side, and where BERTScore and chrF rank
the systems differently."""

from __future__ import annotations

import streamlit as st

from bertscore_viz.app.app_pages.compare.own import own_significance
from bertscore_viz.app.app_pages.compare.results import SCORE_FMT, table_height
from bertscore_viz.app.app_pages.compare.scoring import significance as bertscore_significance
from bertscore_viz.app.shared.bounds import bound, named
from bertscore_viz.app.shared.messages import escape_markdown, progress_callback
from bertscore_viz.app.state.compare import PerDataset, compare_state
from bertscore_viz.app.state.widgets import fresh
from bertscore_viz.evaluation import compare, sacrebleu_metrics
from bertscore_viz.evaluation.own_metrics import is_own
from bertscore_viz.evaluation.sacrebleu_metrics import SurfaceScores
from bertscore_viz.evaluation.significance import Significance, resamples_for
from bertscore_viz.figures import compare_plots, tables
from bertscore_viz.files.dataset import Dataset
from bertscore_viz.serving.sentence_metrics import INLINE_SECONDS, SentenceMetricsJob

__all__ = ["FIRST_WAIT_SECONDS", "SURFACE_FMT", "any_significance", "is_surface", "metric_format", "rank_chart",
           "signatures_view", "surface_for", "versus_baseline_view"]

#: sacrebleu's scores are 0-100 with two decimals, as sacrebleu prints them.
SURFACE_FMT = "%.2f"
#: Resampled scores x segments from which sacrebleu's bootstrap shows a progress bar.
BOOTSTRAP_PROGRESS_FROM = 5_000_000


def is_surface(metric: str) -> bool:
    """sacrebleu's chrF, BLEU, TER (corpus scores, sacrebleu's bootstrap); not BERTScore's nor one's own metric."""
    return metric in sacrebleu_metrics.METRICS


def metric_format(metric: str) -> str:
    """The number format of a metric's scores: 4 decimals for BERTScore, sacrebleu's 2 for chrF, BLEU, TER."""
    return SURFACE_FMT if is_surface(metric) else SCORE_FMT


def _new_job(ds: Dataset) -> SentenceMetricsJob:
    seconds = bound("sentence_metrics_seconds")
    return SentenceMetricsJob(ds.systems, ds.references, max_seconds=seconds,
                              bound_name=f"this server's {named('sentence_metrics_seconds')}",
                              worker_seconds=seconds, worker_memory_bytes=bound("upload_memory_bytes"))


def surface_for(ds: Dataset, fkey: str) -> SurfaceScores | None:
    """The switch "Also show chrF, BLEU, TER" (on by default, per file) and, when on, sacrebleu's scores of the
    dataset so far: computed once per dataset in the background, after BERTScore's results are on the page
    (:class:`~bertscore_viz.serving.sentence_metrics.SentenceMetricsJob`), with a progress bar and counts while
    it runs; each metric joins the page when it is complete (None while none is)."""
    key = f"cmp_surface_{fkey}"
    on = st.toggle("Also show chrF, BLEU, TER", key=key, **fresh(key, value=True),
                   help="sacrebleu's chrF, BLEU and TER beside BERTScore: corpus scores in this table, sentence "
                        "scores in the Segments tab, sacrebleu's paired bootstrap in the Significance tab, and a "
                        "chart of where BERTScore and chrF rank the systems differently. They are computed after "
                        "BERTScore's results, in the background; TER on long texts is left out over this server's "
                        f"bound of {bound('sentence_metrics_seconds'):g} s of work "
                        f"{named('sentence_metrics_seconds')}. "
                        "Off: BERTScore alone.")
    state = compare_state()
    job = state.surface.value if state.surface and state.surface.dataset is ds else None
    if not on:
        if job is not None:
            job.touch()  # kept going while the user looks at BERTScore alone; resumed when switched back on
        return None
    if job is None:
        if state.surface:
            state.surface.value.cancel()
        job = _new_job(ds)
        state.surface = PerDataset(ds, "", job)
        state.resampled.clear()
    if not job.finished and not job.running and job.estimated_seconds <= INLINE_SECONDS:
        job.run_inline()  # a fraction of a second: computed here, complete on the first page
    job.ensure_running()
    if not job.finished:
        job.wait(FIRST_WAIT_SECONDS)  # a small set is complete before the page draws: no flicker
    if not job.finished:
        _progress(job, job.completed())
    return job.surface()


#: How long the page waits for the sentence metrics before drawing BERTScore's results without them.
FIRST_WAIT_SECONDS = 0.3


@st.fragment(run_every=1.0)
def _progress(job: SentenceMetricsJob, shown: tuple[str, ...]) -> None:
    """The job's progress bar with counts, redrawn every second; the whole page runs again when a metric is
    complete (it joins the table and the tabs) or the job ended."""
    job.touch()
    job.ensure_running()  # resumed if it had stopped (the page was not looked at for a while)
    if job.finished or job.completed() != shown:
        st.rerun()
    done, total, metric = job.progress()
    frac = 1.0 if total == 0 else min(1.0, done / total)
    pending = ", ".join(job.pending())
    st.progress(frac, text=f"sacrebleu's {pending} in the background: {done:,} of {total:,} outputs scored"
                           + (f" (now {metric})" if metric else "")
                           + ". BERTScore's results below are complete; each metric joins them when it is done.")


def signatures_view(surface: SurfaceScores) -> None:
    """sacrebleu's corpus signatures and what the metrics of one's own are, once, under the system table; why a
    metric is missing, if one is."""
    sacre = [ms for ms in surface.metrics.values() if not is_own(ms)]
    own = [ms for ms in surface.metrics.values() if is_own(ms)]
    if sacre:
        st.caption("chrF, BLEU, TER: sacrebleu's corpus scores (0–100; TER is an edit rate: lower is better), "
                   "with sacrebleu's signatures:")
        st.code("\n".join(ms.corpus_signature for ms in sacre), language=None, wrap_lines=True)
    if own:
        st.caption("Metrics of one's own: the mean of the given segment scores over the segments every system has "
                   "one for:")
        st.code("\n".join(ms.corpus_signature for ms in own), language=None, wrap_lines=True)
    for why in surface.skipped.values():
        st.info(escape_markdown(why), icon=":material/info:")


def _resampled(surface: SurfaceScores, metric: str, n_samples: int):
    """A metric's resampled corpus scores, once per (scores, metric, resamples)."""
    state = compare_state()
    key = (metric, n_samples)
    hit = state.resampled.get(key)
    if hit is not None and hit[0] is surface:
        return hit[1]
    scores = surface.metrics[metric]
    work = n_samples * len(scores.corpus) * surface.n_segments
    progress = (progress_callback(f"sacrebleu's bootstrap of {metric}", "resampled scores")
                if work >= BOOTSTRAP_PROGRESS_FROM else None)
    try:
        samples = sacrebleu_metrics.resampled_scores(scores, n_samples, progress=progress)
    finally:
        if progress is not None:
            progress.bar.empty()
    state.put_resampled(key, (surface, samples))
    return samples


def any_significance(comparison: compare.Comparison, surface: SurfaceScores | None, metric: str,
                     correction: str | None, baseline: str | None = None) -> Significance:
    """The analysis of any metric the page offers: BERTScore's P, R, F1 (the page's bootstrap over segment scores)
    or sacrebleu's chrF, BLEU, TER (its bootstrap over corpus scores), with the same resamples rule
    (:func:`~bertscore_viz.evaluation.significance.resamples_for`), seed, Holm and clusters."""
    mine = surface.metrics.get(metric) if surface is not None else None
    if is_own(mine):
        return own_significance(mine, correction, baseline)
    if not is_surface(metric):
        return bertscore_significance(comparison, metric, correction, baseline)
    n_samples = resamples_for(len(comparison.results), surface.n_segments, correction)
    samples = _resampled(surface, metric, n_samples)
    return sacrebleu_metrics.metric_significance(surface, metric, samples, baseline, correction)


def versus_baseline_view(comparison: compare.Comparison, surface: SurfaceScores, baseline: str,
                         correction: str | None) -> None:
    """Every metric's paired test against the baseline system, side by side (sacrebleu's ``--paired-bs`` table with
    BERTScore-F1 in it)."""
    metrics = ["F1"] + list(surface.metrics)
    sigs = {m: any_significance(comparison, surface, m, correction) for m in metrics}
    frame = tables.versus_baseline_table(sigs, baseline)
    st.markdown(f"**Every metric against {escape_markdown(baseline)}** (paired bootstrap, "
                f"{sigs['F1'].family_text() or 'one comparison'})")
    config = {}
    for m in metrics:
        config[m] = st.column_config.NumberColumn(format=metric_format(m))
        config[f"{m} Δ"] = st.column_config.NumberColumn(format=metric_format(m).replace("%", "%+"),
                                                          help=f"{m} of the system minus the baseline's")
        config[f"{m} p"] = st.column_config.NumberColumn(format="%.3f", help=f"paired bootstrap p of the {m} "
                                                                              "difference")
    st.dataframe(frame, hide_index=True, width="stretch", key="cmp_versus_all", height=table_height(len(frame)),
                 column_config=config)
    st.caption("TER: a negative Δ is better. chrF, BLEU, TER are tested as `sacrebleu --paired-bs` tests them: "
               "each resample's corpus score recomputed from sacrebleu's statistics of the drawn segments. "
               "Disagreement between the metrics is information: BERTScore credits meaning in other words, "
               "chrF and BLEU shared characters and words.")


def rank_chart(comparison: compare.Comparison, surface: SurfaceScores, fkey: str) -> None:
    """Ranks by BERTScore-F1 against ranks by a sacrebleu metric (chrF unless chosen otherwise), systems whose
    ranks differ marked, and the table behind the chart."""
    if len(comparison.results) < 2 or not surface.metrics:
        return
    options = list(surface.metrics)
    key = f"cmp_rank_metric_{fkey}"
    metric = st.selectbox("Ranks by BERTScore-F1 against", options, key=key,
                          **fresh(key, index=options.index("chrF") if "chrF" in options else 0))
    frame = tables.rank_table(comparison, surface, metric)
    st.plotly_chart(compare_plots.rank_figure(frame, metric), key="cmp_ranks")
    moved = frame[frame["Shift"] != 0]
    if moved.empty:
        st.caption(f"BERTScore-F1 and {metric} rank every system the same.")
    else:
        names = "; ".join(f"{escape_markdown(r['System'])}: {int(r['F1 rank'])} by F1, {int(r[f'{metric} rank'])} "
                          f"by {metric}" for r in moved.to_dict(orient="records"))
        st.caption(f"Ranked differently ({len(moved)} of {len(frame)}): {names}. Whether a difference between two "
                   "systems is real: the Significance tab, with either metric.")
    with st.expander("Ranks as a table"):
        st.dataframe(frame, hide_index=True, width="stretch", key="cmp_rank_table",
                     column_config={"F1": st.column_config.NumberColumn(format=SCORE_FMT),
                                    metric: st.column_config.NumberColumn(format=SURFACE_FMT)})
