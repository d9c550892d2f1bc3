"""WMT's mt-metrics-eval layout on the Compare page: an uploaded zip of a test set (choose the test set, the language
pair and the reference), and our scores back as mt-metrics-eval metric-score files (:mod:`bertscore_viz.files.mtme`).

The zip is opened from its bytes on each run that needs it (an open zip cannot be kept in the session, which is
copied on a refresh); what was read from it is kept: its test sets and language pairs, and the last
:data:`~bertscore_viz.app.state.compare.MAX_KEPT_EVALSETS` language pairs read.
"""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from bertscore_viz.app import gateway
from bertscore_viz.app.shared.messages import escape_markdown, show_error
from bertscore_viz.app.state.compare import MAX_KEPT_EVALSETS, KeptMtme, compare_state
from bertscore_viz.app.state.kept import Keyed
from bertscore_viz.errors import BertScoreVizError, InputError
from bertscore_viz.evaluation import compare
from bertscore_viz.files import mtme, upload
from bertscore_viz.files.limits import setting_note
from bertscore_viz.serving import isolated

__all__ = ["MTME_METRIC", "is_mtme", "mtme_download", "mtme_input"]

#: The metric's base name in the metric-score files written back (mt-metrics-eval adds ``-REF``).
MTME_METRIC = mtme.METRIC_NAME


def is_mtme(name: str, data: bytes) -> bool:
    """An upload read as an mt-metrics-eval zip: a ``.zip`` file, or a zip's bytes."""
    return name.lower().endswith(".zip") or data[:4] == b"PK\x03\x04"


def _catalogue(data: bytes, name: str, fkey: str) -> dict[str, tuple[str, ...]]:
    """``{test set: language pairs}`` of the zip, read once per file (and counted towards the session's uploads)."""
    state = compare_state()
    if state.mtme and state.mtme.key == fkey:
        return state.mtme.catalogue
    refused = gateway.count_upload(data, name)
    if refused:
        raise InputError(refused)
    _, catalogue = isolated.mtme_catalogue(data, name, **_worker_limits())
    state.mtme = KeptMtme(fkey, catalogue, {})
    return catalogue


def _evalset(data: bytes, name: str, fkey: str, test_set: str, lp: str) -> mtme.EvalSet:
    """One language pair, read once and kept (the last few)."""
    kept = compare_state().mtme.evalsets
    if (test_set, lp) not in kept:
        evalset = isolated.read_mtme(data, name, lp, test_set, **_worker_limits())
        if len(kept) >= MAX_KEPT_EVALSETS:
            kept.pop(next(iter(kept)))
        kept[(test_set, lp)] = evalset
    return kept[(test_set, lp)]


def _worker_limits() -> dict:
    """The zip is read in a worker process within the deployment's time and memory limits for a file."""
    limits = gateway.upload_limits()
    return {"max_seconds": limits["max_seconds"], "max_memory_bytes": limits["max_memory_bytes"]}


def _checked_size(evalset: mtme.EvalSet, reference: str) -> None:
    """The deployment's upload limits of a table apply to a test set too: segments (rows), systems and outputs
    (pairs), each named with its setting."""
    n, systems = evalset.n_segments, len(evalset.scored_systems(reference))
    pol = gateway.policy()
    over = [f"{n:,} segments, over {pol.upload_rows:,} {setting_note('max_rows')}" if n > pol.upload_rows else "",
            f"{systems:,} systems, over {pol.upload_systems:,} {setting_note('max_systems')}"
            if systems > pol.upload_systems else "",
            f"{n * systems:,} outputs, over {pol.upload_pairs:,} {setting_note('max_pairs')}"
            if n * systems > pol.upload_pairs else ""]
    if any(over):
        raise InputError(f"{evalset.name} {evalset.lp} has {'; '.join(x for x in over if x)}. Zip fewer systems, "
                         "or score it with `bertscore-viz mtme` on the command line.")


def _dataset(evalset: mtme.EvalSet, reference: str, key: tuple) -> upload.Dataset:
    """The dataset of a test set, language pair and reference, kept as the page's dataset (so that its identity,
    and everything computed from it, stays while the choice does)."""
    state = compare_state()
    if state.dataset and state.dataset.key == key:
        return state.dataset.value
    _checked_size(evalset, reference)
    ds = evalset.dataset(reference)
    if evalset.documents is not None:  # documents/LP.docs: the documents of document context
        ds = replace(ds, doc_ids=list(evalset.documents))
    state.dataset = Keyed(key, ds)
    return ds


def _choices(catalogue: dict[str, tuple[str, ...]], fkey: str) -> tuple[str, str]:
    c1, c2 = st.columns(2)
    test_set = c1.selectbox("Test set", list(catalogue), key=f"cmp_mtme_ts_{fkey}",
                            help="A folder of the zip holding sources/, references/ and system-outputs/.")
    pairs = list(catalogue[test_set])
    if not pairs:
        raise InputError(f"The test set {test_set!r} has no sources/LP.txt file: no language pair to score.")
    lp = c2.selectbox("Language pair", pairs, key=f"cmp_mtme_lp_{fkey}")
    return test_set, lp


def mtme_input(data: bytes, name: str, fkey: str):
    """The test set, language pair and reference chosen, and the dataset they give: every system of the pair
    (other references too, as mt-metrics-eval scores them) against the reference. Returns ``(dataset, evalset,
    reference)``, or ``(None, None, None)`` after showing why nothing can be scored."""
    try:
        catalogue = _catalogue(data, name, fkey)
        test_set, lp = _choices(catalogue, fkey)
        evalset = _evalset(data, name, fkey, test_set, lp)
        if not evalset.references:
            raise InputError(f"{test_set} {lp} has no references/{lp}.NAME.txt file: nothing to score against.")
        refs = list(evalset.references)
        reference = st.selectbox("Reference", refs, key=f"cmp_mtme_ref_{fkey}",
                                 index=refs.index("refA") if "refA" in refs else 0,
                                 help="The systems are scored against this reference; the other references are "
                                      "scored as systems (human translations), as mt-metrics-eval expects.")
        ds = _dataset(evalset, reference, (fkey, test_set, lp, reference))
    except BertScoreVizError as exc:
        show_error(exc)
        return None, None, None
    human = [s for s in evalset.human_systems if s in ds.systems]
    st.caption(escape_markdown(
        f"mt-metrics-eval: {evalset.name} {lp}, {evalset.n_segments:,} segments, {len(ds.systems)} systems against "
        f"{reference}" + (f" (human translations among them: {', '.join(human)})" if human else "") + "."))
    for warning in evalset.warnings:
        st.warning(escape_markdown(warning), icon=":material/warning:")
    return ds, evalset, reference


def mtme_download(column, evalset: mtme.EvalSet, reference: str, ds: upload.Dataset,
                  comparison: compare.Comparison) -> None:
    """Our segment F1 of every system as mt-metrics-eval files (seg and sys, and doc and domain with documents), a
    zip to unpack beside the test set; not when segments were left out (mt-metrics-eval needs every segment)."""
    if ds.n_segments != evalset.n_segments:
        column.caption(f"mt-metrics-eval files need all {evalset.n_segments:,} segments; "
                       f"{evalset.n_segments - ds.n_segments:,} were left out here.")
        return
    try:
        name = mtme.metric_name(evalset, reference, MTME_METRIC)
        data = mtme.metric_scores_zip(evalset, {s: comparison.results[s].f1 for s in ds.systems}, reference,
                                      MTME_METRIC)
    except BertScoreVizError as exc:
        column.caption(escape_markdown(str(exc)))
        return
    column.download_button("Scores as mt-metrics-eval files (zip)", data=data,
                           file_name=f"{evalset.name}_{evalset.lp}_{name}.zip", mime="application/zip",
                           key="cmp_dl_mtme", on_click="ignore", icon=":material/download:",
                           help=f"metric-scores/{evalset.lp}/{name}.LEVEL.score: each system's F1 per segment "
                                "and its means, as mt-metrics-eval reads them. Unzip beside the test set's folder.")
