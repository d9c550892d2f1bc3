"""BERTScore as lighteval metrics: per-sample P, R and F1 of a task's generations, scored in one batched call.

lighteval's own BERTScore (``Metrics.bert_score``) loads bert-score with its own defaults and has open problems
(lighteval #310). These are three ``SampleLevelMetric`` objects, ``bertscore_precision``, ``bertscore_recall`` and
``bertscore_f1``, for a custom task's ``LightevalTaskConfig(metrics=bertscore_metrics(...))``:

* each is ``batched_compute``: lighteval hands it every sample of the task at once, which it scores in one call
  (:mod:`bertscore_viz.integrations.harness.pairs`; the three share that one model pass);
* each sample's value is its own P, R or F1 (what lighteval's details show), and the corpus value is their mean
  (``np.mean``, whose standard error lighteval computes in closed form);
* the prediction is the model's (post-processed) first generation, the references every gold of the ``Doc``
  (``doc.get_golds()``): with several, the maximum of each of P, R and F1 is taken, as bert-score does.

The numbers are ``bertscore_viz.score(predictions, references, **options)``'s. With ``idf=True`` the idf comes
from every reference of the samples scored together: lighteval gives a metric all of a task's samples in one call
(in one process), so that is the task's references, and the mean is still the corpus mean.
"""

from __future__ import annotations

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

try:  # optional dependency: only this module needs lighteval
    from lighteval.metrics.metrics_sample import SampleLevelComputation
    from lighteval.metrics.utils.metric_utils import SampleLevelMetric
    from lighteval.tasks.requests import SamplingMethod
except ImportError as _exc:
    raise missing_package("bertscore_viz.integrations.harness.lighteval_metric", "lighteval", _exc) from _exc

__all__ = ["METRIC_NAMES", "BertScoreSamples", "bertscore_metrics"]

#: The metric names lighteval reports, one per number.
METRIC_NAMES = {field: f"bertscore_{field}" for field in FIELDS}


class BertScoreSamples(SampleLevelComputation):
    """The per-sample P, R or F1 (``field``) of every sample lighteval gives at once, with the options of
    :class:`~bertscore_viz.ScoringOptions` (``options``: :func:`~bertscore_viz.integrations.harness.pairs.options_key`
    of them)."""

    def __init__(self, field: str, options: tuple) -> None:
        if field not in FIELDS:
            raise InputError(f"field must be one of {', '.join(FIELDS)}, got {field!r}.")
        self.field = field
        self.options = options

    def compute(self, responses: list | None = None, docs: list | None = None, **kwargs: Any) -> list[float]:
        """One value per sample, in lighteval's order (lighteval calls it with every ``responses`` and ``docs`` of
        the task at once, as a batched metric).

        Raises:
            InputError: called one sample at a time, a sample without a generation or without a gold.
        """
        if not isinstance(responses, list) or not isinstance(docs, list) or len(responses) != len(docs):
            raise InputError("BertScoreSamples scores a task's samples at once: use it in a SampleLevelMetric with "
                             "batched_compute=True (bertscore_metrics() builds them).")
        predictions, references = [], []
        for i, (response, doc) in enumerate(zip(responses, docs)):
            texts = response.final_text
            if not texts or not isinstance(texts[0], str):
                raise InputError(f"Sample {i} of task {doc.task_name!r} has no generated text to score: BERTScore "
                                 "is a metric of generative tasks.")
            predictions.append(texts[0])
            references.append(reference_group(doc.get_golds(), f"sample {i} of task {doc.task_name!r}"))
        result = score_pairs(predictions, references, options_from(self.options))
        return np.asarray(getattr(result, self.field), dtype=np.float64).tolist()


def bertscore_metrics(**options: Any) -> list[SampleLevelMetric]:
    """``bertscore_precision``, ``bertscore_recall`` and ``bertscore_f1`` as lighteval metrics, for a task's
    ``metrics=``; ``options`` are fields of :class:`~bertscore_viz.ScoringOptions` (``layer=6``, ``idf=True``,
    ``model="path/to/model"``, ...), checked here.

    Raises:
        InputError, ModelError: an unknown option or a value the engine refuses (before any model loads).
    """
    key = options_key(options)
    options_from(key)
    return [SampleLevelMetric(metric_name=METRIC_NAMES[field], higher_is_better=True,
                              category=SamplingMethod.GENERATIVE, sample_level_fn=BertScoreSamples(field, key),
                              corpus_level_fn=np.mean, batched_compute=True)
            for field in FIELDS]
