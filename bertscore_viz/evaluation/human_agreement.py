"""Does BERTScore agree with your judges? BERTScore P, R and F1 (at the chosen layer and, from the same model pass,
at every layer), sentence chrF and sentence BLEU, each correlated with the human scores of rated outputs at every
level the data allow: segment, system (outputs name their system), summary (outputs name their document or segment,
several per document), and against human system-level scores when given.

One model pass (``Scorer.match(..., layers="all", keep="scores")``) gives every layer's P/R/F of every output;
sacrebleu gives the sentence-level baselines (``sentence_chrf`` and ``sentence_bleu`` with their defaults, against
all references of the output). Correlations, intervals and the lead tests are
:func:`bertscore_viz.evaluation.correlation.agreement`'s. Rescaling is linear and increasing, so it changes no
correlation: the raw scores are used whatever the rescaling setting.

The model pass and the sentence metrics are computed once (:func:`layer_scores`, :func:`sentence_metric_scores`);
:func:`report_at` then costs only the correlations and their bootstrap, so another layer, seed or number of
resamples never scores again.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import sacrebleu

from bertscore_viz.engine.arguments import normalize_inputs
from bertscore_viz.errors import InputError
from bertscore_viz.evaluation.correlation import Agreement, agreement, correlation
from bertscore_viz.evaluation.significance import DEFAULT_SAMPLES, DEFAULT_SEED

__all__ = ["BERTSCORE_METRICS", "NEGATED", "SENTENCE_METRICS", "AgreementReport", "LayerScores",
           "layer_correlations", "layer_scores", "own_metric_scores", "report_at", "run_agreement",
           "sentence_metric_scores"]

ProgressFn = Callable[[int, int], None]
BERTSCORE_METRICS = ("BERTScore-P", "BERTScore-R", "BERTScore-F1")


#: sacrebleu's sentence-level metrics, default settings (BLEU: exp smoothing, 13a tokenizer).
SENTENCE_METRICS = {"chrF": sacrebleu.sentence_chrf, "BLEU": sacrebleu.sentence_bleu}


def sentence_metric_scores(candidates, references, metrics=("chrF", "BLEU")) -> dict[str, np.ndarray]:
    """sacrebleu's sentence chrF and BLEU (default settings) of every output against all its references (a list
    of references per output)."""
    return {name: np.array([SENTENCE_METRICS[name](c, list(r)).score for c, r in zip(candidates, references)])
            for name in metrics}


#: Added to the name of a lower-is-better metric column: its scores are negated for agreement statistics.
NEGATED = " (negated)"


def own_metric_scores(columns: dict, lower_is_better=()) -> dict[str, np.ndarray]:
    """The user's metric columns (``{column: scores}``) as metrics of a report: ``{name: (n,) scores}``. A column
    in ``lower_is_better`` is negated and its name ends with :data:`NEGATED`; a column named like a built-in metric
    (BERTScore-F1, chrF, ...) is named ``"NAME (column)"``."""
    taken = set(BERTSCORE_METRICS) | set(SENTENCE_METRICS)
    out = {}
    for col, values in columns.items():
        name = f"{col} (column)" if col in taken else str(col)
        v = np.asarray(values, dtype=np.float64)
        if col in lower_is_better:
            name, v = name + NEGATED, -v
        out[name] = v
    return out


def layer_correlations(values, human) -> tuple[list[float], list[float]]:
    """Segment-level Pearson r and Kendall tau-b (scipy's) of each row of ``values`` ``(n_layers, n)`` with
    ``human`` ``(n,)``, over the outputs where both are finite; NaN where undefined. The one per-layer correlation
    of the package: ``tune-layers``, ``correlate`` and the Agreement page's layer curve."""
    human = np.asarray(human, dtype=np.float64)
    finite = np.isfinite(human)
    pearson, kendall = [], []
    for row in np.asarray(values, dtype=np.float64):
        ok = finite & np.isfinite(row)
        pearson.append(correlation(row[ok], human[ok], "pearson"))
        kendall.append(correlation(row[ok], human[ok], "kendall"))
    return pearson, kendall


@dataclass(frozen=True)
class AgreementReport:
    """Agreement of every metric with the human scores of one data set.

    Attributes:
        overall: all outputs together; by_group: ``{group: Agreement}`` (empty without groups).
        layers: ``{"P"|"R"|"F1": [segment-level Pearson at layer 0, 1, ...]}``, from the same pass;
            layers_kendall: the same with Kendall's tau-b.
        layer: the layer of the BERTScore rows; tuned_layer: the model's shipped default (None if unknown);
            best_layer: the layer whose F1 has the highest segment-level Pearson here.
        scores: ``{metric: (n,) score of each output}`` (BERTScore at ``layer``, raw), for scatter plots and exports.
        human: the human scores; systems, groups: per output or None.
        signature: the BERTScore settings; idf: whether idf weighting was used.
        documents: the document of each output (summary level), or None; system_scores: human system-level
            scores given (``{system: score}``), or None.
    """

    overall: Agreement
    by_group: dict
    layers: dict
    layers_kendall: dict
    layer: int
    tuned_layer: int | None
    best_layer: int | None
    scores: dict
    human: np.ndarray
    systems: list | None
    groups: list | None
    signature: str
    idf: bool
    warnings: list = field(default_factory=list)
    documents: list | None = None
    system_scores: dict | None = None

    def as_dict(self) -> dict:
        out = self.overall.as_dict()
        out["layers"] = {k: [_num(x) for x in v] for k, v in self.layers.items()}
        out["layers_kendall"] = {k: [_num(x) for x in v] for k, v in self.layers_kendall.items()}
        out.update(layer=self.layer, tuned_layer=self.tuned_layer, best_layer=self.best_layer,
                   signature=self.signature, idf=self.idf, warnings=list(self.warnings))
        if self.by_group:
            out["groups"] = {g: a.as_dict() for g, a in self.by_group.items()}
        return out


def _num(v: float) -> float | None:
    return None if v is None or not math.isfinite(v) else round(float(v), 6)


@dataclass(frozen=True)
class LayerScores:
    """Every layer's raw P, R, F1 of every output, from one model pass, and what a report needs of the scorer.

    Attributes:
        values: ``(n_layers, 3, n)`` raw P, R, F1; warnings: the engine's warnings per layer.
        signature: ``{layer: signature text}``; idf: whether idf weighting was used; tuned_layer: the model's
            default layer (None if unknown).
    """

    values: np.ndarray
    warnings: dict
    signature: dict
    idf: bool
    tuned_layer: int | None

    @property
    def n_layers(self) -> int:
        return int(self.values.shape[0])


def layer_scores(scorer, candidates, references, progress: ProgressFn | None = None,
                 labels=None, doc_ids=None) -> LayerScores:
    """One model pass (``match(..., layers="all", keep="scores")``): every layer's raw P/R/F1 of every output.
    ``labels``: how warnings name each output (e.g. ``"row 6"``: a file's rows), default its index from 0;
    ``doc_ids``: with a scorer's document context, each output's document (:func:`~bertscore_viz.evaluation.
    documents.system_documents` keeps systems apart), else None."""
    stats = scorer.match(candidates, references, layers="all", keep="scores", progress=progress, doc_ids=doc_ids)
    values, warnings, signature = [], {}, {}
    for layer in stats.layers:
        res = scorer.result(stats, layer=layer, baseline=None, labels=labels)
        values.append(np.stack([res.raw_precision, res.raw_recall, res.raw_f1]))
        warnings[layer] = list(res.warnings)
        signature[layer] = str(res.signature)
    return LayerScores(np.stack(values), warnings, signature, scorer.idf, scorer.spec.default_layer)


def run_agreement(scorer, candidates, references, human, systems=None, groups=None,
                  n_samples: int = DEFAULT_SAMPLES, seed: int | None = DEFAULT_SEED,
                  sentence_metrics: bool = True, progress: ProgressFn | None = None,
                  labels=None, documents=None, system_scores: dict | None = None,
                  extra_metrics: dict | None = None, doc_ids=None) -> AgreementReport:
    """Score every output at every layer (one model pass) and correlate each metric with ``human``.

    Args:
        scorer: a :class:`~bertscore_viz.engine.scorer.Scorer` (model, layer, idf; its rescaling is ignored).
        candidates, references: the outputs and their references (a string or a list per output).
        human: one human score per output.
        systems, groups: per output, or None.
        progress: ``progress(done, total)`` in sentences embedded.
        labels: how warnings name each output (default its index from 0).
        documents: the document of each output (summary level), or None.
        system_scores: ``{system: human system-level score}``, or None.
        extra_metrics: ``{name: (n,) scores}`` of other metrics (e.g. :func:`own_metric_scores`), or None.
        doc_ids: with a scorer's document context, each output's document for context (systems kept apart:
            :func:`~bertscore_viz.evaluation.documents.system_documents`), or None.

    Returns:
        :class:`AgreementReport` at the scorer's layer.

    Raises:
        InputError: not one human score per output, or the engine's errors for the texts.
    """
    candidates, references = normalize_inputs(candidates, references)
    if np.asarray(human).shape != (len(candidates),):
        raise InputError(f"Expected one human score per output: {len(candidates)} outputs, "
                         f"{np.asarray(human).size} scores.")
    scores = layer_scores(scorer, candidates, references, progress, labels, doc_ids)
    sentence = sentence_metric_scores(candidates, references) if sentence_metrics else {}
    for name, values in (extra_metrics or {}).items():
        if np.shape(values) != (len(candidates),):
            raise InputError(f"{name!r} has {np.size(values)} score(s) for {len(candidates)} outputs.")
        sentence[name] = np.asarray(values, dtype=np.float64)
    return report_at(scores, scorer.layer, human, systems, groups, sentence, n_samples, seed, documents,
                     system_scores)


def _subset(values, mask: np.ndarray):
    return None if values is None else np.asarray(values, dtype=object)[mask]


def report_at(scores: LayerScores, layer: int, human, systems=None, groups=None, sentence: dict | None = None,
              n_samples: int = DEFAULT_SAMPLES, seed: int | None = DEFAULT_SEED, documents=None,
              system_scores: dict | None = None) -> AgreementReport:
    """The report for one layer from scores already computed (no model pass): another layer, seed or number of
    resamples costs only the correlations and their bootstrap.

    Args:
        scores: :func:`layer_scores`' result; layer: the layer of the BERTScore rows.
        human: one human score per output; systems, groups, documents: per output, or None.
        sentence: ``{name: (n,) scores}`` of other metrics (:func:`sentence_metric_scores`), or None.
        n_samples, seed: the bootstrap's.
        system_scores: ``{system: human system-level score}`` (for all outputs together, not per group), or None.

    Returns:
        :class:`AgreementReport`.

    Raises:
        InputError: a layer that was not computed.
    """
    human = np.asarray(human, dtype=np.float64)
    if not 0 <= layer < scores.n_layers:
        raise InputError(f"Layer {layer} was not computed (layers 0 to {scores.n_layers - 1}).")
    metrics = dict(zip(BERTSCORE_METRICS, scores.values[layer]))
    metrics.update(sentence or {})
    overall = agreement(metrics, human, systems, n_samples, seed, documents=documents, system_scores=system_scores)
    layers, layers_k = {}, {}
    for k, name in enumerate(("P", "R", "F1")):
        layers[name], layers_k[name] = layer_correlations(scores.values[:, k], human)
    f1 = [x if math.isfinite(x) else -math.inf for x in layers["F1"]]
    best = int(np.argmax(f1)) if any(math.isfinite(x) for x in layers["F1"]) else None
    by_group = {}
    if groups is not None:
        g = np.asarray(groups, dtype=object)
        for name in sorted(set(groups)):
            mask = g == name
            sub = {k: np.asarray(v)[mask] for k, v in metrics.items()}
            by_group[name] = agreement(sub, human[mask], _subset(systems, mask), n_samples, seed,
                                       documents=_subset(documents, mask))
    return AgreementReport(overall, by_group, layers, layers_k, layer, scores.tuned_layer, best, metrics, human,
                           None if systems is None else list(systems), None if groups is None else list(groups),
                           scores.signature[layer], scores.idf, scores.warnings[layer],
                           None if documents is None else list(documents),
                           None if system_scores is None else dict(system_scores))
