"""The Agreement page's "Pairwise accuracy (WMT meta-evaluation)" section: for every metric of the report (BERTScore
P/R/F1 at the chosen layer, chrF, BLEU and the user's own columns), acc_eq with its tie-calibrated epsilon, soft
pairwise accuracy and system-level pairwise accuracy with 95% intervals, the grouping used, and which differences
from the best metric are significant (:mod:`bertscore_viz.evaluation.meta_evaluation`).

Metric names (the user's column names among them) are shown in dataframes and escaped markdown only.
"""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from bertscore_viz.app.app_pages.agreement import work
from bertscore_viz.app.shared.messages import escape_markdown, show_error
from bertscore_viz.errors import BertScoreVizError
from bertscore_viz.evaluation import human_agreement as ha
from bertscore_viz.evaluation import meta_evaluation as me
from bertscore_viz.figures import agreement_plots as plots
from bertscore_viz.figures.plots import PLOTLY_CONFIG

__all__ = ["COLUMNS", "EXPLANATION", "META_HEADING", "meta_table", "show_meta", "significance_lines"]

META_HEADING = "Pairwise accuracy (WMT meta-evaluation)"
#: The table's value columns per statistic.
COLUMNS = {"acc_eq": "acc_eq [95% CI]", "spa": "soft pairwise accuracy [95% CI]",
           "system": "system pairwise accuracy [95% CI]"}
EXPLANATION = ("How often does each metric order two outputs, or two systems, the way the humans do? This is how "
               "WMT's metrics task ranks metrics. **acc_eq** (segment level): the share of pairs of outputs that "
               "the metric orders as the humans do, a tie agreeing only with a tie; a metric difference up to "
               "**epsilon** counts as a tie, and epsilon is chosen per metric to maximise acc_eq (tie "
               "calibration). **Soft pairwise accuracy** (system level): for each pair of systems, how close the "
               "metric's confidence that one is better (a permutation p value) is to the humans'. **System "
               "pairwise accuracy**: the share of pairs of systems the metric orders as the humans do. 1 is "
               "perfect agreement; ★ marks the best metric of each column; a p value tests whether the best "
               "metric is really better than that one (permutation test).")
_ATTRS = {"acc_eq": ("acc_eq", "acc_eq_ci"), "spa": ("spa", "spa_ci"), "system": ("system", "system_ci")}


def _cell(value: float, ci, best: bool) -> str:
    if not math.isfinite(value):
        return "n/a"
    shown = ci is not None and all(math.isfinite(x) for x in ci)
    text = f"{value:.4f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if shown else "")
    return ("★ " if best else "") + text


def meta_table(result: me.MetaEvaluation) -> pd.DataFrame:
    """One row per metric: each statistic with its interval (★ on the best), acc_eq's epsilon, and the p value of
    the best metric against it per statistic ("best" on the best's own row)."""
    p = {(t.level, t.other): t for t in result.tests}
    levels = [lv for lv in _ATTRS if lv == "acc_eq" or result.system_level]
    rows = []
    for name, m in result.metrics.items():
        row = {"metric": name}
        for level in levels:
            value_attr, ci_attr = _ATTRS[level]
            row[COLUMNS[level]] = _cell(getattr(m, value_attr), getattr(m, ci_attr), result.best.get(level) == name)
            if level == "acc_eq":
                row["epsilon"] = f"{m.epsilon:.4g}"
            test = p.get((level, name))
            row[f"{level} p vs best"] = ("best" if result.best.get(level) == name else
                                         "n/a" if test is None else me.format_p(test.p_value, test.n_permutations)
                                         + (" *" if test.significant else ""))
        rows.append(row)
    return pd.DataFrame(rows)


def significance_lines(result: me.MetaEvaluation) -> list[str]:
    """Per statistic, in words: the best metric with its value and interval, which metrics it is significantly
    better than, and which not."""
    names = {"acc_eq": "acc_eq", "spa": "soft pairwise accuracy", "system": "system pairwise accuracy"}
    lines = []
    for level, best in result.best.items():
        tests = [t for t in result.tests if t.level == level]
        if best is None or not tests:
            continue
        better = [t.other for t in tests if t.significant]
        same = [t.other for t in tests if not t.significant]
        value_attr, ci_attr = _ATTRS[level]
        m = result.metrics[best]
        text = f"{names[level]}: {best} is best ({_cell(getattr(m, value_attr), getattr(m, ci_attr), False)})"
        if better:
            text += f"; significantly better than {', '.join(better)}"
        if same:
            text += f"; not significantly different from {', '.join(same)}"
        lines.append(text + f" (p < {result.alpha:g}, {tests[0].n_permutations:,} permutations).")
    return lines


def _caption(result: me.MetaEvaluation, negated: list[str]) -> str:
    parts = [f"acc_eq grouped {result.grouping_reason}.",
             ("Soft and system pairwise accuracy: " + result.system_reason) if result.system_level
             else ("No system level: " + result.system_reason),
             f"{result.n_used:,} of {result.n_outputs:,} outputs used."]
    if result.dropped:
        parts.append("Left out for a missing or non-finite value: "
                     + "; ".join(f"{k}: {len(v):,}" for k, v in result.dropped.items()) + ".")
    if negated:
        parts.append(f"Lower is better, so negated for these statistics: {', '.join(negated)}.")
    parts.append(f"Intervals: {result.n_resamples:,} bootstrap resamples of items or segments "
                 f"({result.spa_resamples:,} for soft pairwise accuracy, its p values from {result.spa_permutations:,} "
                 f"permutations), seed {result.seed}; "
                 "acc_eq's interval keeps its calibrated epsilon.")
    parts.extend(result.notes)
    return " ".join(parts)


def show_meta(report: ha.AgreementReport, rated: work.Rated, seed: int) -> me.MetaEvaluation | None:
    """The section; returns its result (None when it could not be computed, with the reason shown)."""
    st.subheader(META_HEADING)
    st.caption(EXPLANATION)
    try:
        result = work.meta_for(report, rated, seed)
    except BertScoreVizError as exc:
        show_error(exc)
        return None
    table = meta_table(result)
    st.dataframe(table, hide_index=True, width="stretch")
    negated = [n for n in result.metrics if n.endswith(work.NEGATED)]
    st.caption(escape_markdown(_caption(result, negated)))
    lines = significance_lines(result)
    if lines:
        st.markdown("\n".join(f"- {escape_markdown(line)}" for line in lines))
    st.plotly_chart(plots.meta_figure(result), config=PLOTLY_CONFIG, key="agr_meta_figure")
    return result
