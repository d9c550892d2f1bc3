"""What a difference means, on the Compare page: when the file carries human ratings (a score column of human
scores), how often humans agreed with a difference of each test's size between two systems of this file
(:mod:`bertscore_viz.stats.delta_agreement`, after Kocmi et al. 2024), as one sentence per test and as a curve; and
when the rated system pairs are too few to say, that."""

from __future__ import annotations

import numpy as np
import streamlit as st

from bertscore_viz.app.shared.messages import escape_markdown
from bertscore_viz.app.state.compare import compare_state
from bertscore_viz.errors import BertScoreVizError
from bertscore_viz.evaluation import compare
from bertscore_viz.evaluation.own_metrics import OwnMetric, is_own
from bertscore_viz.evaluation.significance import Significance
from bertscore_viz.figures.delta_plots import delta_figure
from bertscore_viz.files.columns import HUMAN_RE, human_score_columns
from bertscore_viz.stats.delta_agreement import DeltaAgreement, paired_delta_agreement

__all__ = ["SUBSETS", "human_metric", "is_human", "meaning_view"]

#: Comparisons added per system pair on random halves of the segments (said in the sentence; the curve's bins need
#: more comparisons than a handful of systems gives).
SUBSETS = 20


def is_human(name: str) -> bool:
    """A metric of one's own that holds human ratings, by its name (``human``, ``human_A``, ``mqm``, ``rating``...)."""
    return bool(HUMAN_RE.match(name) or human_score_columns([name]))


def human_metric(surface) -> OwnMetric | None:
    """The first metric of one's own named as human ratings (None without one)."""
    for name, m in (surface.metrics if surface is not None else {}).items():
        if is_own(m) and is_human(name):
            return m
    return None


def _curve(comparison, surface, metric: str, human: OwnMetric) -> DeltaAgreement | None:
    """The metric's agreement curve with the human ratings over the segments rated for every system; cached per
    scores, once per rerun's objects."""
    mine = surface.metrics.get(metric)
    scores = mine.sentence if is_own(mine) else comparison.counted_scores(metric)
    state = compare_state()
    key = ("delta", id(comparison), id(human), metric, id(mine))
    hit = state.significance.get(key)
    if hit is not None and hit[0] is human:
        return hit[1]
    kept = human.kept & np.logical_and.reduce([np.isfinite(np.asarray(scores[s], dtype=np.float64))
                                               for s in human.sentence])
    higher = mine.higher_is_better if is_own(mine) else True
    try:
        result = paired_delta_agreement({s: np.asarray(scores[s], dtype=np.float64)[kept] for s in human.sentence},
                                        {s: human.sentence[s][kept] for s in human.sentence},
                                        higher_is_better=higher == human.higher_is_better, subsets=SUBSETS, seed=0)
    except BertScoreVizError:
        result = None
    state.put_significance(key, (human, result))
    return result


def meaning_view(comparison: compare.Comparison, surface, sig: Significance) -> None:
    """Beside the tab's tests: for each test against the baseline, how often the humans of this file agreed with a
    difference of its size; the curve in an expander. Nothing without human ratings, or for the ratings themselves
    and sacrebleu's corpus metrics (whose corpus score is not a mean of segment scores)."""
    human = human_metric(surface)
    metric = sig.metric
    if human is None or metric == human.name or (metric not in compare.METRICS and not is_own(
            surface.metrics.get(metric))):
        return
    curve = _curve(comparison, surface, metric, human)
    if curve is None:
        st.caption(f"What a difference means: the human ratings ({escape_markdown(human.name)}) cannot be compared "
                   "with this metric here.")
        return
    lines = [f"- {escape_markdown(r.system)} vs {escape_markdown(r.baseline)}: "
             + escape_markdown(curve.sentence(abs(r.difference), metric)) + "." for r in sig.versus_baseline]
    st.markdown(f"**What a difference means** (the human ratings {escape_markdown(human.name)} of this file):\n"
                + "\n".join(lines))
    with st.expander("How often humans agree with a difference of each size", icon=":material/show_chart:"):
        st.caption("Each pair of systems of this file, compared on all the segments rated for every system and on "
                   f"{SUBSETS} random halves of them, is placed at the size of its {metric} difference; it agrees "
                   "when the humans rank the two the same way. The curve is the share that agree among the "
                   "comparisons nearest each size, with a 95% interval, and the sigmoid fitted to it (Kocmi et al., "
                   "ACL 2024). Comparisons on halves are noisier than the whole test set, so they understate "
                   "agreement at full size. With fewer than 10 system pairs it says so rather than guess.")
        deltas = [abs(r.difference) for r in sig.versus_baseline]
        st.plotly_chart(delta_figure(curve, metric_name=metric, delta=max(deltas) if deltas else None),
                        key="cmp_delta_curve")
