"""The pairs an evaluation harness collects, scored in one batched call by one scorer per set of options.

lm-evaluation-harness and lighteval call a metric once per sample; BERTScore is cheapest (and, with idf, only
defined) over the whole set of pairs at once. Both adapters therefore let the per-sample step carry the prediction
and its references through and score every pair of a task here, in the engine's length-sorted batches:

* :func:`options_from` checks the metric's keyword arguments (a task file's ``idf: true``, ``layer: 6``) once and
  turns them into :class:`~bertscore_viz.engine.options.ScoringOptions`;
* :func:`scorer_for` keeps one :class:`~bertscore_viz.engine.scorer.Scorer` per options, so the model loads once per
  process however many tasks and metrics use it;
* :func:`score_pairs` scores the pairs and keeps the last few results, so that P, R and F1 (three metrics to the
  harness, each aggregated on its own) cost one model pass.

Numbers: exactly ``bertscore_viz.score(predictions, references, **options)`` of the same pairs; with ``idf=True``
the idf comes from every reference of those pairs (the task's), as bert-score counts it over a corpus.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import fields
from functools import lru_cache
from typing import Any

from bertscore_viz.engine.options import ScoringOptions
from bertscore_viz.engine.results import ScoreResult
from bertscore_viz.engine.scorer import Scorer
from bertscore_viz.errors import InputError, shorten

__all__ = ["FIELDS", "options_from", "options_key", "scorer_for", "score_pairs", "reference_group"]

#: The three numbers, in the order of :class:`~bertscore_viz.engine.results.ScoreResult`'s attributes.
FIELDS = ("precision", "recall", "f1")
#: Results kept by :func:`score_pairs` (P, R and F1 of a few tasks).
_KEPT_RESULTS = 4
_results: OrderedDict[tuple, ScoreResult] = OrderedDict()
_lock = threading.Lock()


def options_key(options: Mapping[str, Any]) -> tuple:
    """A metric's keyword arguments as a hashable, ordered key (what an item carries to the aggregation)."""
    return tuple(sorted(options.items()))


@lru_cache(maxsize=32)
def _options(key: tuple) -> ScoringOptions:
    given = dict(key)
    own = {f.name for f in fields(ScoringOptions)}
    unknown = sorted(set(given) - own)
    if unknown:
        raise InputError(f"Unknown BERTScore option(s) {', '.join(unknown)} in the task's metric; expected some of: "
                         f"{', '.join(sorted(own))} (the fields of bertscore_viz.ScoringOptions).")
    resolved = ScoringOptions(**given)
    if resolved.context:
        raise InputError("Document context (context > 0) is not offered in the harness metrics: a task's samples "
                         "carry no document ids. Score the outputs with bertscore_viz.score(..., context=k, "
                         "doc_ids=ids) instead (docs/CONTEXT.md).")
    return resolved


def options_from(options: Mapping[str, Any] | tuple) -> ScoringOptions:
    """The checked options of a metric's keyword arguments (a mapping, or :func:`options_key` of one).

    Raises:
        InputError, ModelError: an unknown option, or a value the engine refuses (before any model loads).
    """
    try:
        return _options(options if isinstance(options, tuple) else options_key(options))
    except TypeError as exc:  # an unhashable value (a list where a name was expected)
        raise InputError(f"BERTScore options must be plain values (names, numbers, true/false), got {options!r} "
                         f"({exc}).") from None


@lru_cache(maxsize=8)
def scorer_for(options: ScoringOptions) -> Scorer:
    """The one scorer of these options in this process (the model itself is shared by every scorer of it)."""
    return options.scorer()


def reference_group(references: Any, where: str) -> tuple[str, ...]:
    """One sample's references as a tuple of strings: a string is one reference, a list several.

    Raises:
        InputError: not a string or a non-empty list of strings (``where`` says which sample).
    """
    group = (references,) if isinstance(references, str) else references
    if isinstance(group, (bytes, bytearray, Mapping)) or not isinstance(group, Sequence) or not group or any(
            not isinstance(r, str) for r in group):
        raise InputError(f"The references of {where} must be a string or a non-empty list of strings, got "
                         f"{type(references).__name__} {shorten(references)}.")
    return tuple(group)


def score_pairs(predictions: Sequence[str], references: Sequence[Sequence[str]],
                options: ScoringOptions) -> ScoreResult:
    """BERTScore of every prediction against its references (a tuple of strings each), in one call; the same
    pairs and options again (the next of P, R, F1) return the kept result.

    Raises:
        InputError: a prediction that is not a string (named by index), from the engine.
    """
    key = (options, tuple(predictions), tuple(tuple(r) for r in references))
    with _lock:
        kept = _results.get(key)
        if kept is not None:
            _results.move_to_end(key)
            return kept
    result = scorer_for(options).score(list(predictions), [list(r) for r in references])
    with _lock:
        _results[key] = result
        while len(_results) > _KEPT_RESULTS:
            _results.popitem(last=False)
    return result
