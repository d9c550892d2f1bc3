"""Agreement with humans: does BERTScore agree with your judges, at which layer, and better than chrF and BLEU?

Input: a file of rated outputs (the Compare page's layouts plus a human-score column), the built-in WMT16 DA
example, or the Compare page's upload when it has a human column. Tests may put ``{"name", "data", "origin"}``
into ``st.session_state["agreement_input"]``.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from bertscore_viz.app.ui import agreement_view as view
from bertscore_viz.app.ui import cache as ui_cache
from bertscore_viz.app.ui.messages import escape_markdown, show_error
from bertscore_viz.app.ui.settings import current_settings
from bertscore_viz.app.ui.state import fresh
from bertscore_viz.errors import BertScoreVizError
from bertscore_viz.files import upload

AUTO = "(detect)"


def _use_layer(layer: int) -> None:
    """The sidebar's layer slider for the current model takes this layer (a callback: before the sidebar runs)."""
    spec = ui_cache.resolve_model(current_settings().model)
    st.session_state[f"layer::{spec.name}"] = int(layer)


def _input() -> dict | None:
    up = st.file_uploader("Rated outputs (CSV, TSV or JSON Lines with a human-score column)",
                          type=["csv", "tsv", "txt", "jsonl", "json"], key="agr_file",
                          max_upload_size=ui_cache.upload_widget_mb(), help=ui_cache.upload_help(rows=True))
    if up is not None and st.session_state.get("_agr_file_id") != up.file_id:
        st.session_state["_agr_file_id"] = up.file_id
        view.set_input(up.name, up.getvalue(), "upload")
    c1, c2 = st.columns(2)
    if c1.button(f"Load the example: {view.EXAMPLE_LABEL}", key="agr_example", icon=":material/dataset:"):
        view.load_example()
    from_compare = view.compare_upload_with_human()
    if from_compare is not None and c2.button(f"Use the Compare page's file ({from_compare['name']})",
                                              key="agr_from_compare", icon=":material/leaderboard:"):
        view.set_input(from_compare["name"], from_compare["data"], "compare")
    return view.current_input()


def _problems(rated) -> None:
    errors = rated.errors
    if not errors:
        return
    frame = pd.DataFrame([{"row": p.row, "column": p.column, "problem": p.problem} for p in errors])
    label = f"{len(errors):,} row(s) left out" if rated.ok else "Nothing can be correlated"
    with st.expander(label, expanded=not rated.ok, icon=":material/error:"):
        st.dataframe(frame, hide_index=True, width="stretch")


def main() -> None:
    st.title("Agreement with human scores")
    st.caption("Does BERTScore agree with your judges? Correlations of BERTScore P, R and F1 (at the sidebar's layer "
               "and at every layer, from one model pass), sentence chrF and sentence BLEU with the human scores of "
               "rated outputs: segment level (Pearson, Spearman, Kendall), system level when outputs name their "
               "system, per group (e.g. language pair), with bootstrap intervals.")
    item = _input()
    if item is None:
        st.info("Upload rated outputs: columns candidate, reference and human (optionally system, segment_id, "
                "group), or one column per system S with its human scores in human_S; or load the example.",
                icon=":material/upload_file:")
        return
    st.caption(f"Input: {escape_markdown(item['name'])} ({upload.describe_size(len(item['data']))}).")
    columns = view.header_columns(item["data"], item["name"])
    c1, c2, c3 = st.columns(3)
    human = c1.selectbox("Human-score column", [AUTO] + columns, key="agr_human")
    n_samples = int(c2.number_input("Bootstrap resamples", 100, 10_000, step=100, key="agr_resamples",
                                    **fresh("agr_resamples", value=1000)))
    seed = int(c3.number_input("Seed", 0, 2**31 - 1, key="agr_seed", **fresh("agr_seed", value=12345)))
    rated = view.parse(item, None if human == AUTO else human)
    _problems(rated)
    if not rated.ok:
        return
    settings = current_settings()
    file_key = upload.content_key(item["data"])
    try:
        scores = view.scores_for(settings, rated, file_key)
        layer = min(settings.resolved_layer(), scores.n_layers - 1)
        report = view.report_for(scores, layer, rated, file_key, n_samples, seed)
    except BertScoreVizError as exc:
        show_error(exc)
        return
    st.caption(f"{len(rated):,} rated outputs ({rated.layout} layout, human scores from "
               f"{escape_markdown(str(rated.human_column))}); BERTScore signature `{report.signature}`")
    view.show_report(report, rated, _use_layer)


main()
