"""Agreement with humans: does BERTScore agree with your judges, at which level, at which layer, and better than
chrF and BLEU? Where does it disagree with them?

Input: a file of rated outputs (the Compare page's layouts plus a human-score column), a zip in WMT's
mt-metrics-eval layout, expert MQM annotations in Google's layout, the built-in WMT16 DA example, or the Compare
page's upload when it has a human column.
Tests may put ``{"name", "data", "origin"}`` into ``st.session_state["agreement_input"]``.

The model pass and sentence metrics are computed once per input and settings (``work.py``); a change of the
seed or the number of resamples recomputes only the correlations and their bootstrap.
"""

from __future__ import annotations

import streamlit as st

from bertscore_viz.app import gateway
from bertscore_viz.app.app_pages.agreement import delta_view, meta_view, view, work
from bertscore_viz.app.app_pages.agreement import inputs as source
from bertscore_viz.app.app_pages.agreement.disagree import show_disagreements
from bertscore_viz.app.shared.context_view import context_choice
from bertscore_viz.app.shared.messages import escape_markdown, show_error
from bertscore_viz.app.shared.problems import show_problems_table
from bertscore_viz.app.shared.settings import current_settings
from bertscore_viz.app.state.widgets import fresh
from bertscore_viz.errors import BertScoreVizError
from bertscore_viz.files import upload


def _use_layer(layer: int) -> None:
    """The sidebar's layer slider for the current model takes this layer (a callback: before the sidebar runs)."""
    spec = gateway.resolve_model(current_settings().model)
    st.session_state[f"layer::{spec.name}"] = int(layer)


def _intro() -> None:
    st.title("Agreement with human scores")
    st.caption("Does BERTScore agree with your judges? Correlations of BERTScore P, R and F1 (at the sidebar's layer "
               "and at every layer, from one model pass), sentence chrF and sentence BLEU with the human scores of "
               "rated outputs, at every level the data allow: segment (every output), system (outputs name their "
               "system), summary (per document or segment across the systems' outputs, averaged), per group (e.g. "
               "language pair or domain), with bootstrap intervals; pairwise accuracy as WMT ranks metrics (acc_eq, "
               "soft and system-level pairwise accuracy); and the outputs where metric and humans disagree most. "
               "Your own metric columns (e.g. COMET) join every table.")


def _bootstrap_settings() -> tuple[int, int]:
    c1, c2 = st.columns(2)
    n_samples = int(c1.number_input("Bootstrap resamples", 100, 10_000, step=100, key="agr_resamples",
                                    **fresh("agr_resamples", value=1000)))
    seed = int(c2.number_input("Seed", 0, 2**31 - 1, key="agr_seed", **fresh("agr_seed", value=12345)))
    return n_samples, seed


def _problems(rated) -> None:
    errors = rated.errors
    if not errors:
        return
    label = f"{len(errors):,} row(s) left out" if rated.ok else "Nothing can be correlated"
    show_problems_table(errors, "agr_problems", label, expanded=not rated.ok, icon=":material/error:",
                        severity=False)


def _rated(item: dict) -> work.Rated | None:
    st.caption(f"Input: {escape_markdown(item['name'])} ({upload.describe_size(len(item['data']))}).")
    try:
        rated = source.read_rated(item)
    except BertScoreVizError as exc:
        show_error(exc)
        return None
    _problems(rated.data)
    for p in rated.data.problems:
        if p.severity == "warning" and p.row is None:
            st.caption(escape_markdown(p.problem))
    return rated if rated.data.ok else None


def _report(rated: work.Rated, n_samples: int, seed: int, settings):
    try:
        scores = work.scores_for(settings, rated)
        layer = min(settings.resolved_layer(), scores.n_layers - 1)
        return work.report_for(scores, layer, rated, n_samples, seed)
    except BertScoreVizError as exc:
        show_error(exc)
        return None


def main() -> None:
    _intro()
    item = source.choose_input()
    if item is None:
        st.info("Upload rated outputs: columns candidate, reference and human (optionally system, segment_id, "
                "group, document), or one column per system S with its human scores in human_S; or a zip of an "
                "mt-metrics-eval test set; or expert MQM annotations in Google's TSV layout (one row per error); or "
                "load the example.", icon=":material/upload_file:")
        return
    rated = _rated(item)
    if rated is None:
        return
    n_samples, seed = _bootstrap_settings()
    settings = context_choice(rated.data.doc_ids, current_settings(), "agr_context", "agr_context_src",
                              unit="rated outputs", where=f"The {rated.data.document_column} column"
                              if rated.data.document_column else "The file")
    report = _report(rated, n_samples, seed, settings)
    if report is None:
        return
    st.caption(f"{len(rated.data):,} rated outputs ({escape_markdown(rated.label)}); BERTScore signature "
               f"`{report.signature}`")
    view.show_report(report, rated, _use_layer, show_disagreements,
                     lambda rep, rat: (meta_view.show_meta(rep, rat, seed), delta_view.show_delta(rep, rat)))


main()
