"""Metrics of one's own on the Compare page: the score columns an upload brought (a COMET column, an LLM judge),
each with its direction chosen here, what was left out, and their analysis (BERTScore's paired bootstrap over the
segments every system has a score for), cached per metric and correction like BERTScore's
(:mod:`bertscore_viz.evaluation.own_metrics`)."""

from __future__ import annotations

import streamlit as st

from bertscore_viz.app.shared.messages import escape_markdown, progress_callback
from bertscore_viz.app.state.compare import compare_state
from bertscore_viz.app.state.widgets import fresh
from bertscore_viz.evaluation.own_metrics import OwnMetric, guess_higher_is_better, own_metrics
from bertscore_viz.evaluation.significance import Significance, resamples_for
from bertscore_viz.files.dataset import Dataset

__all__ = ["DIRECTIONS", "own_for", "own_significance"]

DIRECTIONS = ("higher is better", "lower is better")


def own_for(ds: Dataset, systems: list[str], fkey: str) -> dict[str, OwnMetric]:
    """The upload's metrics of one's own for ``systems``: each metric's direction (a choice per metric and file,
    guessed from the name at first), its origin and what it left out, said under the system table."""
    columns = ds.own_scores
    if not columns.scores:
        return {}
    lower = []
    with st.expander(f"Metrics of one's own ({len(columns.scores)}): "
                     + ", ".join(escape_markdown(m) for m in columns.scores), icon=":material/functions:"):
        st.caption("Scores that came with the outputs (score columns), compared as BERTScore is: the mean of the "
                   "segment scores, the paired bootstrap, clusters and power. A segment some system has no score "
                   "for (listed with the file's problems) is left out of that metric for every system; it is never "
                   "read as 0.")
        for i, name in enumerate(columns.scores):
            key = f"cmp_own_dir_{fkey}_{i}"
            guess = DIRECTIONS[0] if guess_higher_is_better(name) else DIRECTIONS[1]
            choice = st.segmented_control(escape_markdown(name), DIRECTIONS, key=key, **fresh(key, default=guess),
                                          help=f"From {columns.origins.get(name, 'the file')}. Which way is better "
                                               "decides the ranking, the clusters and which difference is a gain.")
            if choice == DIRECTIONS[1]:
                lower.append(name)
    state = compare_state()
    k = ("own-metrics", id(ds), tuple(systems), tuple(lower))
    hit = state.significance.get(k)
    if hit is None or hit[0] is not ds:  # the same objects on every rerun: their analyses are cached by identity
        hit = (ds, *own_metrics(columns, systems, lower, [m for m in columns.scores if m not in lower]))
        state.put_significance(k, hit)
    own, notes = hit[1], hit[2]
    for note in notes:
        st.info(escape_markdown(note), icon=":material/info:")
    return own


def own_significance(metric: OwnMetric, correction: str | None, baseline: str | None = None) -> Significance:
    """The metric's analysis, once per (scores, direction, correction); another baseline rebases it."""
    state = compare_state()
    k = ("own", id(metric), metric.name, metric.higher_is_better, correction)
    hit = state.significance.get(k)
    if hit is None or hit[0] is not metric:
        n_samples = resamples_for(len(metric.sentence), metric.n_kept, correction)
        progress = progress_callback(f"Bootstrap of {metric.name}", "resamples") if n_samples > 5000 else None
        try:
            hit = (metric, metric.significance(None, correction, n_samples=n_samples, progress=progress))
        finally:
            if progress is not None:
                progress.bar.empty()
        state.put_significance(k, hit)
    sig = hit[1]
    return sig if baseline is None else sig.rebase(baseline)
