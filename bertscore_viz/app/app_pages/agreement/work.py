"""What the Agreement page computes and keeps for a browser session: the rated outputs read from the input, one
model pass at every layer, the sentence metrics, and the reports (correlations and their bootstrap) of the last few
settings.

Each is kept under the key of what it depends on: the model pass under (input, human scores, model, idf, long
texts), the sentence metrics under (input, human scores), a report under those and (layer, resamples, seed). A seed
or resamples change therefore recomputes only the correlations and their bootstrap. ``counts`` records how many
model passes, sentence-metric passes and reports this session computed (tests read it: a seed change must add a
report and nothing else).

The user's own metric columns (e.g. a COMET column) are part of the rated outputs' key but not of the texts': adding
one re-reads the file but embeds again only when its bad values leave other outputs out. The meta-evaluation
(pairwise accuracy, :mod:`bertscore_viz.evaluation.meta_evaluation`) is kept beside its report.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import streamlit as st

from bertscore_viz.app import gateway
from bertscore_viz.app.shared.messages import progress_callback
from bertscore_viz.app.state.kept import Keyed
from bertscore_viz.evaluation import human_agreement as ha
from bertscore_viz.evaluation import meta_evaluation as me
from bertscore_viz.evaluation.documents import system_documents
from bertscore_viz.files.human_scores import HumanScored

__all__ = ["MAX_REPORTS", "NEGATED", "WORK_KEY", "Rated", "context_documents", "counts", "extra", "keep_rated",
           "kept_meta", "kept_rated", "meta_for", "own_metrics", "report_for", "scores_for", "sentence_scores"]

#: The session's work (bounded: one input's work at a time, a few settings of it). Kept for a refresh by shared/persist.
WORK_KEY = "_agreement_work"
MAX_REPORTS = 6
#: Added to the name of the user's lower-is-better metric column: its scores are negated for agreement statistics.
NEGATED = ha.NEGATED


@dataclass(frozen=True)
class Rated:
    """Rated outputs as the page uses them.

    Attributes:
        data: :class:`~bertscore_viz.files.human_scores.HumanScored`.
        key: identifies the input and the choices that read it; ``key[0]`` is the input file's hash.
        documents: ``(n,)`` document of each output (summary level), or None.
        system_scores: ``{system: human system-level score}``, or None.
        label: where the outputs come from, for captions (e.g. ``"wmt22 en-de, reference refA, human scores mqm"``).
        lower_is_better: the user's metric columns (``data.metrics``) that are better when lower.
    """

    data: HumanScored
    key: tuple
    documents: list | None = None
    system_scores: dict | None = None
    label: str = ""
    lower_is_better: tuple = ()

    @property
    def texts_key(self) -> tuple:
        """The input file and the texts of its rated outputs (what the model pass and sentence metrics depend on)."""
        digest = hashlib.sha256()
        for cand, refs in zip(self.data.candidates, self.data.references):
            digest.update(cand.encode("utf-8", "surrogatepass") + b"\x00")
            digest.update("\x01".join(refs).encode("utf-8", "surrogatepass") + b"\x02")
        return (self.key[0], len(self.data), digest.hexdigest())


def _work() -> dict:
    work = st.session_state.setdefault(WORK_KEY, {})
    for name, empty in (("rated", None), ("pass", None), ("sentence", None), ("reports", {}), ("extra", {})):
        work.setdefault(name, empty)
    work.setdefault("counts", {"model": 0, "sentence": 0, "report": 0})
    return work


def counts() -> dict:
    """``{"model": passes, "sentence": sentence-metric passes, "report": reports}`` computed in this session."""
    return dict(_work()["counts"])


def kept_rated(key: tuple) -> Rated | None:
    """The rated outputs read under ``key`` earlier in the session (reading a file again on every run is avoided)."""
    item = _work()["rated"]
    return item if item is not None and item.key == key else None


def keep_rated(rated: Rated) -> Rated:
    """Keep ``rated`` as the page's input: other outputs drop the model pass, sentence metrics and reports of the
    previous ones, another file also what was kept with it (:func:`extra`)."""
    work = _work()
    previous = work["rated"]
    if previous is None or previous.key != rated.key:
        work["reports"] = {}
        if previous is None or previous.texts_key != rated.texts_key:
            work.update({"pass": None, "sentence": None})
        if previous is None or previous.key[0] != rated.key[0]:
            work["extra"] = {}
    work["rated"] = rated
    return rated


def extra() -> dict:
    """A dict kept with the input file's work (e.g. the mt-metrics-eval language pair read), emptied with it."""
    return _work()["extra"]


def context_documents(rated: Rated) -> list[str] | None:
    """Each output's document for document context, its system's own (outputs of several systems are scored in
    one list), or None when the input names no documents."""
    return system_documents(rated.data.doc_ids, rated.data.systems)


def scores_for(settings, rated: Rated) -> ha.LayerScores:
    """Every layer's P/R/F1 of the outputs: one model pass, kept while the input, model, idf, long-text mode and
    document context stay the same."""
    options = gateway.options(settings, rescale=False)
    spec = options.spec
    docs = context_documents(rated) if options.context else None
    docs_key = hashlib.sha256("\x00".join(docs).encode("utf-8", "surrogatepass")).hexdigest() if docs else None
    # the model, its precision, idf, the long-text mode, the context and the documents it reads
    key = (rated.texts_key, options.embedding_key(), options.idf, docs_key)
    work = _work()
    if work["pass"] is not None and work["pass"].key == key:
        return work["pass"].value
    scorer = gateway.scorer(settings, rescale=False)
    data = rated.data
    progress = progress_callback(f"Embedding {len(data):,} rated outputs at every layer of {spec.name}")
    try:
        scores = ha.layer_scores(scorer, data.candidates, data.references, progress=progress,
                                 labels=[f"row {r}" for r in data.rows],  # the file's rows, as the problems
                                 doc_ids=docs)
    finally:
        progress.bar.empty()
    work["counts"]["model"] += 1
    work.update({"pass": Keyed(key, scores), "reports": {}})
    return scores


def sentence_scores(rated: Rated) -> dict:
    """Sentence chrF and BLEU of every output (sacrebleu), kept while the input stays the same."""
    work = _work()
    if work["sentence"] is None or work["sentence"].key != rated.texts_key:
        with st.spinner(f"Sentence chrF and BLEU of {len(rated.data):,} outputs…"):
            work["sentence"] = Keyed(rated.texts_key, ha.sentence_metric_scores(rated.data.candidates,
                                                                                 rated.data.references))
        work["counts"]["sentence"] += 1
    return work["sentence"].value


def report_for(scores: ha.LayerScores, layer: int, rated: Rated, n_samples: int, seed: int) -> ha.AgreementReport:
    """The report at ``layer`` from the kept scores: only the correlations and their bootstrap are computed."""
    work = _work()
    key = (work["pass"].key if work["pass"] else None, rated.key, layer, n_samples, seed)
    if key not in work["reports"]:
        if len(work["reports"]) >= MAX_REPORTS:
            work["reports"].pop(next(iter(work["reports"])))
        sentence = {**sentence_scores(rated), **own_metrics(rated)}
        data = rated.data
        with st.spinner(f"Correlations at every level with {n_samples:,} bootstrap resamples…"):
            work["reports"][key] = ha.report_at(scores, layer, data.human, data.systems, data.groups, sentence,
                                                n_samples, seed, rated.documents, rated.system_scores)
        work["counts"]["report"] += 1
    return work["reports"][key]


def own_metrics(rated: Rated) -> dict:
    """The user's metric columns as the report's metrics: ``{name: (n,) scores}``, lower-is-better ones negated
    and named with :data:`NEGATED` (:func:`~bertscore_viz.evaluation.human_agreement.own_metric_scores`)."""
    return ha.own_metric_scores(rated.data.metrics, rated.lower_is_better)


def kept_meta(report: ha.AgreementReport) -> me.MetaEvaluation | None:
    """The pairwise accuracy last computed for ``report`` in this session, or None."""
    kept = _work().get("meta")
    return kept.value[1] if kept is not None and kept.value[0] is report else None


def meta_for(report: ha.AgreementReport, rated: Rated, seed: int) -> me.MetaEvaluation:
    """Pairwise accuracy of every metric of ``report`` (kept beside it), with a progress bar with counts."""
    work = _work()
    key = (id(report), seed)
    kept = work.get("meta")
    if kept is not None and kept.key == key and kept.value[0] is report:
        return kept.value[1]
    progress = progress_callback(f"Pairwise accuracy of {len(report.scores)} metrics", unit="statistics")
    try:
        first = [m for m in ("BERTScore-F1", "BERTScore-P", "BERTScore-R") if m in report.scores]
        scores = {m: report.scores[m] for m in first + [m for m in report.scores if m not in first]}
        result = me.meta_evaluate(scores, report.human, report.systems, rated.documents, seed=seed,
                                  progress=progress)
    finally:
        progress.bar.empty()
    work["meta_runs"] = work.get("meta_runs", 0) + 1  # read by tests; not in counts(), whose keys tests compare
    work["meta"] = Keyed(key, (report, result))
    return result
