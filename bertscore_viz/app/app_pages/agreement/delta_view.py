"""The Agreement page's "What a difference means" section: with system names in the rated data, how often the
humans agreed with a metric difference of a given size between two systems (Kocmi et al., ACL 2024;
:mod:`bertscore_viz.stats.delta_agreement`), as a sentence for a difference the user types and as the curve; with
too few system pairs, that."""

from __future__ import annotations

import streamlit as st

from bertscore_viz.app.app_pages.agreement import work
from bertscore_viz.app.shared.messages import escape_markdown, show_error
from bertscore_viz.app.state.widgets import fresh
from bertscore_viz.errors import BertScoreVizError
from bertscore_viz.evaluation import human_agreement as ha
from bertscore_viz.figures.delta_plots import delta_figure
from bertscore_viz.figures.plots import PLOTLY_CONFIG
from bertscore_viz.stats.delta_agreement import segment_delta_agreement

__all__ = ["DELTA_HEADING", "SUBSETS", "show_delta"]

DELTA_HEADING = "What a difference means"
#: Comparisons added per system pair on random halves of the items (said in the sentence and the caption).
SUBSETS = 20


def _curve(report: ha.AgreementReport, rated: work.Rated, metric: str):
    """The metric's curve, once per report and metric (kept in the page's work)."""
    kept = st.session_state.setdefault("_agr_delta", {})
    key = (id(report), metric)
    hit = kept.get(key)
    if hit is not None and hit[0] is report:
        return hit[1]
    result = segment_delta_agreement({metric: report.scores[metric]}, report.human, report.systems,
                                     items=rated.documents, subsets=SUBSETS, seed=0)[metric]
    kept.clear()  # one report's curves at a time: a bounded keep
    kept[key] = (report, result)
    return result


def show_delta(report: ha.AgreementReport, rated: work.Rated) -> None:
    """The section (nothing without system names: a difference between systems needs systems)."""
    st.subheader(DELTA_HEADING)
    if report.systems is None:
        st.caption("How often humans agree with a difference of a given size between two systems needs the system "
                   "of each rated output: add a system column.")
        return
    metrics = list(report.scores)
    c1, c2 = st.columns(2)
    key = "agr_delta_metric"
    metric = c1.selectbox("Metric", metrics, key=key,
                          **fresh(key, index=metrics.index("BERTScore-F1") if "BERTScore-F1" in metrics else 0))
    dkey = "agr_delta_value"
    delta = c2.number_input("A difference of", min_value=0.0, max_value=1e6, step=0.001, format="%.4f", key=dkey,
                            **fresh(dkey, value=0.01),
                            help="A difference between two systems' mean scores on this metric.")
    try:
        curve = _curve(report, rated, metric)
    except BertScoreVizError as exc:
        show_error(exc)
        return
    st.markdown(escape_markdown(curve.sentence(delta, metric)[:1].upper() + curve.sentence(delta, metric)[1:])
                + ".")
    st.caption(f"Each pair of systems of the rated data, compared on its items and on {SUBSETS} random halves of "
               "them, is placed at the size of its metric difference and agrees when the humans rank the two the "
               "same way; the curve is the share that agree among the comparisons nearest each size, with a 95% "
               "interval, and the sigmoid fitted to it (Kocmi et al., ACL 2024; docs/DELTA.md). Comparisons on "
               "halves are noisier than the whole set, so they understate agreement at full size.")
    st.plotly_chart(delta_figure(curve, metric_name=metric, delta=delta), config=PLOTLY_CONFIG,
                    key="agr_delta_figure")
