"""BERTScore as an lm-evaluation-harness metric: a per-sample step and an aggregation that scores the task at once.

lm-eval calls a metric once per sample and reduces the per-sample values with the metric's aggregation.
``evaluate``'s BERTScore returns a dict of lists, which the harness cannot take (``KeyError: 'bertscore'``,
lm-evaluation-harness #1302). Here the per-sample step, :func:`bertscore`, scores nothing: it returns one item per
number, ``{"bertscore_precision": item, "bertscore_recall": item, "bertscore_f1": item}``, each item carrying the
prediction, its reference and the metric's options; the aggregation, :func:`bertscore_aggregate`, scores every
item of the task in one batched call (:mod:`bertscore_viz.integrations.harness.pairs`) and returns the mean. That
mean is ``bertscore_viz.score(predictions, references, **options)``'s mean, with idf (``idf: true``) counted over
every reference of the task, as bert-score counts it over a corpus.

A task names them with ``!function`` (no registration needed, works from lm-eval's command line)::

    metric_list:
      - metric: !function bertscore_viz.integrations.harness.lm_eval_metric.bertscore
        aggregation: !function bertscore_viz.integrations.harness.lm_eval_metric.bertscore_aggregate
        higher_is_better: true
        layer: 6            # any field of bertscore_viz.ScoringOptions (model, idf, rescale_with_baseline, ...)

or, in Python after :func:`register` (lm-eval's registry), as ``metric: bertscore``. The reported keys are
``bertscore_precision``, ``bertscore_recall`` and ``bertscore_f1``. No standard error is reported (lm-eval
bootstraps only its own aggregations).

**Several references per sample.** lm-eval scores a ``doc_to_target`` list one reference at a time and keeps
1.0 or 0.0 (it is made for exact match): :func:`bertscore` refuses that path with a message. Give the task a
``process_results`` that calls :func:`bertscore_results` instead (docs/HARNESSES.md shows one); the maximum over
the references is then taken of each of P, R and F1, as bert-score does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from bertscore_viz.errors import InputError
from bertscore_viz.integrations import missing_package
from bertscore_viz.integrations.harness.pairs import (
    FIELDS,
    options_from,
    options_key,
    reference_group,
    score_pairs,
)

try:  # optional dependency: only this module needs lm-eval
    from lm_eval.api import registry as lm_registry
except ImportError as _exc:
    raise missing_package("bertscore_viz.integrations.harness.lm_eval_metric", "lm-eval", _exc) from _exc

__all__ = ["METRIC_NAMES", "bertscore", "bertscore_results", "bertscore_aggregate", "register"]

#: The keys lm-eval reports, one per number.
METRIC_NAMES = {field: f"bertscore_{field}" for field in FIELDS}
_MULTI_TARGET = ("lm-eval scored one reference of a sample with several (doc_to_target returned a list), and would "
                 "keep 1.0 or 0.0 of them: BERTScore takes the maximum over all references at once. Give the task "
                 "`process_results: !function <your utils>.process_results`, where process_results(doc, results) "
                 "returns bertscore_results(results[0], <the doc's references>) (docs/HARNESSES.md).")


class _Items(dict):
    """The per-sample items by key; lm-eval's several-targets path looks up the metric's own name, which is not
    one of them: that lookup says what to do instead of a bare ``KeyError: 'bertscore'``."""

    def __missing__(self, key):
        raise InputError(_MULTI_TARGET)


def bertscore_results(prediction: str, references: str | Sequence[str], **options: Any) -> dict[str, tuple]:
    """The items of one sample, ``{"bertscore_f1": (field, prediction, references, options), ...}``, for a task's
    ``process_results`` (one reference, or a list of several); ``options`` are fields of
    :class:`~bertscore_viz.ScoringOptions`, checked here.

    Raises:
        InputError, ModelError: a prediction that is not a string, no references, an unknown option.
    """
    if not isinstance(prediction, str):
        raise InputError(f"The model's output must be a string, got {type(prediction).__name__}: BERTScore scores "
                         "generated text (output_type: generate_until).")
    group = reference_group(references, "this sample")
    key = options_key(options)
    options_from(key)  # an unknown option fails at the first sample, not after the whole run
    return _Items({METRIC_NAMES[f]: (f, prediction, group, key) for f in FIELDS})


def bertscore(references: Sequence[str] | None = None, predictions: Sequence[str] | None = None,
              **options: Any) -> dict[str, tuple]:
    """lm-eval's per-sample metric: called as ``bertscore(references=[gold], predictions=[output], **options)``
    (the options are the other keys of the task's ``metric_list`` entry). Returns :func:`bertscore_results`'s items.

    Raises:
        InputError: not one prediction and one reference.
    """
    if not isinstance(references, (list, tuple)) or not isinstance(predictions, (list, tuple)) or len(
            predictions) != 1 or len(references) != 1:
        raise InputError("bertscore is lm-eval's per-sample metric: it takes references=[gold] and "
                         f"predictions=[output], got references={references!r}, predictions={predictions!r}.")
    if not isinstance(references[0], str):
        raise InputError(_MULTI_TARGET)
    return bertscore_results(predictions[0], references[0], **options)


def bertscore_aggregate(items: Sequence[tuple]) -> float:
    """lm-eval's aggregation: the mean P, R or F1 (which one the items say) of every sample of the task, scored in
    one batched call; NaN when the task has no samples.

    Raises:
        InputError: items that are not :func:`bertscore`'s, or that mix numbers or options.
    """
    items = list(items)
    if not items:
        return float("nan")
    if any(not isinstance(it, (tuple, list)) or len(it) != 4 or it[0] not in FIELDS for it in items):
        raise InputError("bertscore_aggregate aggregates the items of bertscore / bertscore_results, got "
                         f"{items[0]!r}...: set `aggregation` to bertscore_aggregate only for those metrics.")
    field, key = items[0][0], tuple(map(tuple, items[0][3]))
    if any(it[0] != field or tuple(map(tuple, it[3])) != key for it in items):
        raise InputError("The samples of one BERTScore metric were given different numbers or options; give each "
                         "metric_list entry one set of options.")
    result = score_pairs([it[1] for it in items], [tuple(it[2]) for it in items], options_from(key))
    return float(np.mean(getattr(result, field)))


def register() -> None:
    """Register ``bertscore`` in lm-eval's registry, as a metric (:func:`bertscore`, higher is better, aggregated
    by :func:`bertscore_aggregate`) and as an aggregation: then a task built in this process may say
    ``metric: bertscore``. Registering again is a no-op.

    Raises:
        InputError: another ``bertscore`` is already registered there.
    """
    for registry, target in ((lm_registry.aggregation_registry, bertscore_aggregate),
                             (lm_registry.metric_registry, bertscore)):
        if "bertscore" in registry and registry.get("bertscore") is not target:
            raise InputError("lm-eval already has another metric or aggregation named 'bertscore'; name ours in the "
                             "task with !function bertscore_viz.integrations.harness.lm_eval_metric.bertscore.")
    if "bertscore" not in lm_registry.aggregation_registry:
        lm_registry.register_aggregation("bertscore")(bertscore_aggregate)
    if "bertscore" not in lm_registry.metric_registry:
        lm_registry.register_metric(metric="bertscore", higher_is_better=True, aggregation="bertscore")(bertscore)
