"""The Compare page's numbers, kept in the session's :class:`~bertscore_viz.app.state.compare.CompareState`: the
model pass (one for all systems; another layer is one more pass; a long one suggests bf16 where this machine runs it
fast), the scores at the sidebar's settings without a model pass, the significance of each metric, and a results
file's scores and drill-down (``score --ray``)."""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import streamlit as st

from bertscore_viz.app import gateway
from bertscore_viz.app.shared.messages import duration, escape_markdown, progress_callback
from bertscore_viz.app.state.compare import KeptResultsFile, LastPass, compare_input, compare_state
from bertscore_viz.app.state.kept import Keyed
from bertscore_viz.engine.scorer import Scorer
from bertscore_viz.errors import BertScoreVizError
from bertscore_viz.evaluation import compare, precomputed
from bertscore_viz.evaluation.significance import resamples_for
from bertscore_viz.files import upload
from bertscore_viz.files.results import format as results_format
from bertscore_viz.files.results import table as results_reading
from bertscore_viz.serving import hardware

__all__ = ["SUGGEST_BF16_SECONDS", "TOKEN_SAMPLE", "PassEstimate", "file_explainer", "language_note", "model_pass",
           "pass_estimate", "pass_note", "precision_of", "results", "results_table", "sidebar_baseline",
           "significance", "speed_note"]

#: An exact (fp32) model pass estimated longer than this (seconds) suggests bf16 where this machine runs it fast.
SUGGEST_BF16_SECONDS = 30.0
#: Distinct texts tokenized to estimate a pass's tokens (the rest scaled from them).
TOKEN_SAMPLE = 2000


def precision_of(settings) -> str:
    """The sidebar's precision: ``"fp32"`` unless the user chose bf16 where it is offered (shared/settings.py)."""
    return getattr(settings, "precision", None) or "fp32"


@dataclass(frozen=True)
class PassEstimate:
    """How long the model pass of a dataset would take here: ``texts`` distinct texts of about ``tokens`` tokens,
    ``fp32`` and ``bf16`` seconds (:func:`bertscore_viz.serving.hardware.estimate_seconds`), and whether bf16 is fast
    on this machine (``status``: :class:`~bertscore_viz.serving.hardware.Bf16Status`)."""

    texts: int
    tokens: int
    fp32: float
    bf16: float | None
    status: object | None


def pass_estimate(sc: Scorer, ds: upload.Dataset) -> PassEstimate:
    """The model pass's cost from the distinct texts it embeds (references once, each output once): the tokens of
    up to :data:`TOKEN_SAMPLE` of them counted with the model's tokenizer and scaled to all; bf16's estimate only
    when the fp32 one exceeds :data:`SUGGEST_BF16_SECONDS` (the probe behind it is measured once per process)."""
    texts = list(dict.fromkeys([t for outs in ds.systems.values() for t in outs]
                               + [r for group in ds.references for r in group]))
    sample = texts[:TOKEN_SAMPLE]
    counted = sum(len(t.ids) for t in sc.encode(sample)) if sample else 0
    tokens = int(round(counted * len(texts) / max(1, len(sample))))
    layers = max(1, int(sc.layer))
    fp32 = hardware.estimate_seconds(tokens, layers, "fp32", sc.encoder, n_texts=max(1, len(texts)))
    if fp32 <= SUGGEST_BF16_SECONDS:
        return PassEstimate(len(texts), tokens, fp32, None, None)
    status = hardware.bf16_status(getattr(sc.encoder, "device", None))
    bf16 = (hardware.estimate_seconds(tokens, layers, "bf16", sc.encoder, n_texts=max(1, len(texts)))
            if status.runs else None)
    return PassEstimate(len(texts), tokens, fp32, bf16, status)


def speed_note(estimate: PassEstimate) -> str | None:
    """The suggestion shown before a long exact pass: both estimates, where bf16 is fast here; else None."""
    status = estimate.status
    if estimate.bf16 is None or status is None or not status.fast:
        return None
    return (f"This model pass embeds {estimate.texts:,} distinct texts (about {estimate.tokens:,} tokens): estimated "
            f"{duration(estimate.fp32)} in exact fp32 and {duration(estimate.bf16)} in bf16 on this machine. For a "
            "quicker pass choose “fast (bf16)” under Precision in the sidebar. " + status.help)


# --- scoring --------------------------------------------------------------------------------------------------------
def model_pass(settings, ds: upload.Dataset):
    """The model pass for this dataset and model at the sidebar's layer, from the session when already done (a
    layer not computed yet is one more pass, added to the kept one)."""
    options = gateway.options(settings, rescale=False)  # the deployment's allow-list, as on every page
    precision = precision_of(settings)  # bf16 numbers are not fp32's: a pass of their own
    # the model, precision and long-text mode give another model pass: kept apart
    key = _dataset_key(ds, "|".join(map(str, options.replace(precision=precision).embedding_key())))
    state = compare_state()
    sc = gateway.scorer(settings, rescale=False)
    layer = options.layer_or()
    kept = state.stats.value if state.stats and state.stats.key == key else None
    if kept is None or layer not in kept.layers:
        if precision == "fp32" and hasattr(settings, "precision"):  # only where the sidebar offers the choice
            note = speed_note(pass_estimate(sc, ds))
            if note:
                st.info(escape_markdown(note), icon=":material/speed:")
        what = "" if kept is None else f" at layer {layer}"
        progress = progress_callback(f"Embedding {len(ds.systems)} systems x {ds.n_segments:,} segments{what} "
                                     "(references once)")
        start = time.perf_counter()
        if kept is None:
            state.results.clear()
            state.significance.clear()
            cstats = compare.score_dataset(sc, ds, progress)
        else:
            cstats = compare.add_layers(sc, ds, kept, [layer], progress)
        progress.bar.empty()
        state.stats = Keyed(key, cstats)
        state.last_pass = LastPass(key, time.perf_counter() - start, st.session_state.get("_run_id"), layer)
    return sc, state.stats.value, key


def pass_note(key: str) -> str:
    """Whether this run did the model pass or reused the session's (shown so that reuse is visible)."""
    done = compare_state().last_pass
    if not done or done.key != key:
        return "Scores kept in this session."
    if done.run_id == st.session_state.get("_run_id"):
        return (f"Model pass: {done.seconds:.1f} s (all systems at layer {done.layer}, idf off and on; kept for this "
                "session: another layer is one more pass).")
    return f"Scores kept from earlier in this session: no model pass (the last took {done.seconds:.1f} s)."


def results(settings, sc, cstats, key: str, ds=None) -> compare.Comparison:
    """Scores at the sidebar's layer / idf / rescaling, no model pass; the last few settings are kept so that
    toggling back is instant. Warnings name segments by the file's rows, as the problems table does."""
    table = gateway.custom_baseline(settings)
    options = gateway.options(settings)
    rkey = (key, options.cache_key(), None if table is None else (table.source, table.values.tobytes()))
    state = compare_state()
    if rkey not in state.results:
        state.put_result(rkey, compare.results_for(sc, cstats, options.layer_or(), options.idf,
                                                   options.rescale_with_baseline,
                                                   labels=None if ds is None else compare.segment_labels(ds)))
    return state.results[rkey]


def _dataset_key(ds: upload.Dataset, model: str) -> str:
    """:func:`compare.dataset_key` (JSON and sha256 of every output), once per dataset and model."""
    return compare_state().once_per_dataset("dataset_key", ds, model, lambda: compare.dataset_key(ds, model))


def significance(comparison: compare.Comparison, metric: str, correction: str | None,
                  baseline: str | None = None):
    """The bootstrap, tests, matrix and clusters of one metric and correction, once per set of scores (the
    session keeps the Comparison of each setting, so identity tells the scores are the same); another baseline
    system reuses the resamples (``Significance.rebase``). The answer and the Significance tab share it."""
    state = compare_state()
    k = (id(comparison), metric, correction)
    hit = state.significance.get(k)
    if hit is None or hit[0] is not comparison:
        n_samples = resamples_for(len(comparison.results), len(next(iter(comparison.results.values())).f1),
                                  correction)
        progress = progress_callback("Bootstrap", "resamples") if n_samples > 5000 else None
        try:
            hit = (comparison, compare.significance(comparison, None, metric, n_samples=n_samples,
                                                    correction=correction, progress=progress))
        finally:
            if progress is not None:
                progress.bar.empty()
        state.put_significance(k, hit)
    sig = hit[1]
    return sig if baseline is None else sig.rebase(baseline)


def language_note(ds: upload.Dataset, model: str) -> str | None:
    """One warning for the dataset's text outside the model's languages (once per dataset and model)."""
    return compare_state().once_per_dataset("language", ds, model,
                                            lambda: compare.language_report(ds, model).message())


def results_table(data: bytes, fkey: str) -> results_reading.ResultsTable:
    """The results file read once per upload and kept in the session (one file at a time, keyed by its content):
    a toggle, a tab or a sidebar change reuses it. Counted towards the session's uploads; at most the server's
    per-file limit and the results-file limit (docs/RAY.md)."""
    state = compare_state()
    if state.results_file and state.results_file.key == fkey:
        return state.results_file.table
    state.results_file = None
    name = (compare_input() or {}).get("name") or "the results file"
    own_limit = results_format.max_upload_bytes()  # BERTSCORE_VIZ_RESULTS_UPLOAD_MB (docs/RAY.md)
    refused = gateway.count_upload(data, name, own_limit=own_limit)
    if refused:
        raise BertScoreVizError(refused)
    table = results_reading.read_results(data, max_bytes=gateway.upload_limit_bytes(own_limit),
                                      max_rows=gateway.policy().upload_rows)  # what it expands to, bounded too
    state.results_file = KeptResultsFile(fkey, table, {})
    return table


def sidebar_baseline(settings, model: str, layer: int):
    """The P/R/F baseline the sidebar's settings give for the file's model and layer (None: rescaling off, another
    model, or no baseline): compared with the file's own."""

    if not settings.rescale:
        return None
    try:
        options = gateway.options(settings, rescale=True)
        if options.spec.name != model:
            return None
        return options.replace(layer=layer).scorer(baseline_table=gateway.custom_baseline(settings)).baseline
    except BertScoreVizError:
        return None


def file_explainer(table: results_reading.ResultsTable, rescaled: bool, file_settings):
    """The drill-down of a results file: the file's model (this server's pooled copy, within its allow-list) with the
    file's idf weights and baseline, so the segment's P/R/F1 are the file's row."""

    def explain(candidate: str, references: list[str]):
        base = gateway.scorer(replace(file_settings, idf=False), rescale=False)
        sc = precomputed.file_scorer(table, rescaled, model=base.spec, encoder=base.encoder)
        return sc.explain(candidate, references[0] if len(references) == 1 else list(references))

    return explain
