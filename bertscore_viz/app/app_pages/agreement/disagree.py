"""The Agreement page's "where the metric and the humans disagree": the outputs whose metric rank and human rank
differ most, both ways (metric too kind, metric too harsh), for BERTScore-F1 and chrF against the humans and for
BERTScore-F1 against chrF; filters by group and system; a click on a row explains that pair (heatmap, alignment,
token table) on the page.

Ranks and differences are :func:`bertscore_viz.evaluation.disagreements.disagreements`'s (percentile ranks within
each group by default; filters applied after ranking).
"""

from __future__ import annotations

from dataclasses import replace

import pandas as pd
import streamlit as st

from bertscore_viz.app.app_pages.agreement.work import Rated
from bertscore_viz.app.shared.explain_view import explain_pair, render_explanation
from bertscore_viz.app.shared.messages import escape_markdown, show_error
from bertscore_viz.app.shared.settings import current_settings
from bertscore_viz.app.state.widgets import fresh
from bertscore_viz.errors import BaselineError, BertScoreVizError
from bertscore_viz.evaluation import human_agreement as ha
from bertscore_viz.evaluation.disagreements import Disagreements, disagreements
from bertscore_viz.files.export import safe_csv

__all__ = ["MAX_ROWS", "TABLE_KEY", "comparisons", "disagreement_frame", "show_disagreements"]

#: Most rows per direction a user may ask for.
MAX_ROWS = 100
TABLE_KEY = "agr_dis_table"
_SCOPES = {"group": "within each group", "all": "over all outputs"}


def comparisons(report: ha.AgreementReport) -> dict[str, tuple[str, str]]:
    """``{label: (metric, against)}``: BERTScore-F1 and chrF against the humans, BERTScore-F1 against chrF
    (``against`` = ``"human"`` for the human scores)."""
    out = {"BERTScore-F1 against the humans": ("BERTScore-F1", "human")}
    if "chrF" in report.scores:
        out["chrF against the humans"] = ("chrF", "human")
        out["BERTScore-F1 against chrF"] = ("BERTScore-F1", "chrF")
    return out


def _kept(key: str, options: list, multi: bool = False) -> None:
    """Drop a kept choice that the current input no longer offers (another file)."""
    if key not in st.session_state:
        return
    value = st.session_state[key]
    if (multi and not set(value) <= set(options)) or (not multi and value not in options):
        del st.session_state[key]


def _filters(rated: Rated) -> dict:
    """Groups, ranking scope and systems, in columns of their own (only those the data have)."""
    data = rated.data
    out = {"groups": None, "systems": None, "within": "group"}
    present = (["groups", "within"] if data.groups is not None else []) + (["systems"] if data.systems else [])
    if not present:
        return out
    cols = dict(zip(present, st.columns(3)))  # three at most, each a third of the width
    if data.groups is not None:
        names = sorted(set(data.groups))
        _kept("agr_dis_groups", names, multi=True)
        out["groups"] = cols["groups"].multiselect("Groups", names, key="agr_dis_groups",
                                                   placeholder="all groups") or None
        _kept("agr_dis_within", list(_SCOPES))
        out["within"] = cols["within"].radio("Rank", list(_SCOPES), format_func=_SCOPES.get, key="agr_dis_within",
                                             help="Within each group (e.g. language pair: scores of different "
                                                  "groups are not on the same footing), or all outputs together.")
    if data.systems:
        names = sorted(set(data.systems))
        _kept("agr_dis_systems", names, multi=True)
        out["systems"] = cols["systems"].multiselect("Systems", names, key="agr_dis_systems",
                                                     placeholder="all systems") or None
    return out


def _choices(report: ha.AgreementReport, rated: Rated) -> dict:
    options = comparisons(report)
    _kept("agr_dis_pair", list(options))
    c1, c2 = st.columns([3, 1])
    label = c1.selectbox("Compare", list(options), key="agr_dis_pair")
    n = int(c2.number_input("Rows each way", 1, MAX_ROWS, key="agr_dis_n", **fresh("agr_dis_n", value=10)))
    return {"pair": options[label], "n": n, **_filters(rated)}


def _compute(report: ha.AgreementReport, rated: Rated, choice: dict) -> Disagreements:
    metric, against = choice["pair"]
    other = report.human if against == "human" else report.scores[against]
    return disagreements(report.scores[metric], other, n=choice["n"], groups=rated.data.groups,
                         systems=rated.data.systems, within=choice["within"], only_groups=choice["groups"],
                         only_systems=choice["systems"], metric_name=metric,
                         human_name="human" if against == "human" else against)


def disagreement_frame(found: Disagreements, rated: Rated) -> pd.DataFrame:
    """One row per listed output (too kind first, then too harsh): its texts, labels, scores, ranks and the
    difference of percentile ranks."""
    data = rated.data
    names = (found.metric_name, found.human_name)
    rows = []
    for r in found.rows():
        row = {"direction": "metric too kind" if r.direction == "too_kind" else "metric too harsh",
               "row": data.rows[r.index], "output": data.candidates[r.index],
               "reference": " ||| ".join(data.references[r.index])}
        if data.groups is not None:
            row["group"] = r.group
        if data.systems is not None:
            row["system"] = r.system
        row.update({names[0]: r.metric, names[1]: r.human, f"{names[0]} rank": r.metric_rank,
                    f"{names[1]} rank": r.human_rank, "of": r.scope_size,
                    "difference (percentile points)": r.difference})
        rows.append(row)
    return pd.DataFrame(rows)


def _explain(found: Disagreements, rated: Rated, position: int) -> None:
    r = found.rows()[position]
    data = rated.data
    st.markdown(f"**Row {data.rows[r.index]}**: {escape_markdown(found.metric_name)} {r.metric:.4f} "
                f"(rank {r.metric_rank:g} of {r.scope_size}), {escape_markdown(found.human_name)} {r.human:.4f} "
                f"(rank {r.human_rank:g}): {r.difference:+.1f} percentile points")
    st.caption("Output")
    st.text(data.candidates[r.index] or "(empty)")
    for k, ref in enumerate(data.references[r.index]):
        st.caption("Reference" + (f" {k + 1}" if len(data.references[r.index]) > 1 else ""))
        st.text(ref or "(empty)")
    settings = current_settings()
    # idf as the scores above have it: from every reference of the data set
    idf_sentences = [x for refs in data.references for x in refs] if settings.idf else None
    try:
        try:
            explanation = explain_pair(settings, data.candidates[r.index], data.references[r.index], idf_sentences)
        except BaselineError:  # rescaling asked for, no baseline: raw numbers, the explanation says why
            explanation = explain_pair(replace(settings, rescale=False), data.candidates[r.index],
                                       data.references[r.index], idf_sentences)
    except BertScoreVizError as exc:
        show_error(exc)
        return
    render_explanation(explanation, settings, key="agr_pair")


def show_disagreements(report: ha.AgreementReport, rated: Rated) -> None:
    """The section: choices, the table (a click on a row explains that pair below it), its download."""
    st.subheader("Where the metric and the humans disagree")
    st.caption("The outputs whose metric rank and human rank differ most. Ranks go from 1 (lowest score) to the "
               "number of outputs ranked together, ties sharing their average rank; the difference is metric "
               "percentile − human percentile (percentile = 100 (rank − 1) / (outputs − 1)): above 0 the metric "
               "places the output higher than the humans do (too kind), below 0 lower (too harsh). Filters apply "
               "after ranking. Click a row to see that pair explained below.")
    choice = _choices(report, rated)
    found = _compute(report, rated, choice)
    frame = disagreement_frame(found, rated)
    if frame.empty:
        st.info("No output to list with these filters.", icon=":material/filter_alt_off:")
        return
    number = st.column_config.NumberColumn
    config = {c: number(format="%.4f") for c in (found.metric_name, found.human_name)}
    config["difference (percentile points)"] = number(format="%+.1f")
    event = st.dataframe(frame, hide_index=True, width="stretch", key=TABLE_KEY, on_select="rerun",
                         selection_mode="single-row", column_config=config)
    st.caption(f"{found.n_shown:,} of {found.n_ranked:,} ranked outputs pass the filters"
               + (f"; {found.n_missing:,} left out for a missing score" if found.n_missing else "") + ".")
    st.download_button("These rows (CSV)", data=lambda: safe_csv(frame, report.signature),
                       file_name="agreement_disagreements.csv", mime="text/csv", key="agr_dl_disagreements",
                       on_click="ignore")
    rows = event.selection.rows if event is not None else []
    if rows and rows[0] < len(frame):
        _explain(found, rated, int(rows[0]))
