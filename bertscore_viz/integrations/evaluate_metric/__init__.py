"""The 🤗 evaluate metric shipped with the package, and the computation behind it (no ``evaluate`` import here).

``evaluate.load(path)`` loads a local metric when ``path`` is a ``.py`` file, or a folder holding a script of the
folder's own name; it copies the script into its modules cache and imports it from there, so the script imports
this package absolutely and loads offline. :func:`evaluate_metric_path` gives the script's path (``bertscore.py``:
the metric is named ``bertscore``, as the hub's). The script's ``_compute`` is :func:`hub_compute`, which takes the
hub bertscore's arguments and returns its keys, with the numbers of this engine.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from bertscore_viz.engine.arguments import normalize_inputs
from bertscore_viz.engine.options import ScoringOptions
from bertscore_viz.errors import InputError, shorten
from bertscore_viz.models.spec import default_model_name
from bertscore_viz.progress import progress_bar

__all__ = ["SCRIPT", "evaluate_metric_path", "hub_compute", "check_hub_inputs", "scorer_options"]

#: The metric script evaluate loads.
SCRIPT = Path(__file__).resolve().with_name("bertscore.py")


def evaluate_metric_path() -> str:
    """The path to pass to ``evaluate.load`` for this package's BERTScore: ``evaluate.load(evaluate_metric_path())``
    (also printed by ``python -m bertscore_viz.integrations.evaluate_metric``)."""
    return str(SCRIPT)


def scorer_options(lang: str | None = None, model_type: str | None = None, num_layers: int | None = None,
                   idf: bool = False, device: str | None = None, batch_size: int = 64, nthreads: int = 4,
                   all_layers: bool = False, rescale_with_baseline: bool = False, baseline_path: str | None = None,
                   use_fast_tokenizer: bool = False, long_texts: str = "truncate",
                   precision: str = "fp32") -> dict:
    """The :class:`~bertscore_viz.engine.scorer.Scorer` options for the hub bertscore's ``compute()`` arguments.

    ``nthreads`` is accepted and has no effect (tokenization here needs no thread pool), as is
    ``use_fast_tokenizer`` (the engine's tokenizer gives bert-score's token ids either way; the parity tests hold
    it to that). ``long_texts`` and ``precision`` are this engine's own options.

    Raises:
        InputError: neither ``lang`` nor ``model_type`` (as the hub metric), ``all_layers=True``, an idf dict,
            rescaling without a language or baseline file.
    """
    if model_type is None and lang is None:
        raise InputError("Either 'lang' (e.g. 'en') or 'model_type' (a model name or directory) must be given, as "
                         "for the hub bertscore: compute(predictions=..., references=..., lang='en').")
    if all_layers:
        raise InputError("all_layers=True (bert-score's scores of every layer at once) is not offered here. Score "
                         "one layer with num_layers=N, or use bertscore_viz.Scorer().match(cands, refs, "
                         "layers='all') for every layer from one model pass.")
    if isinstance(idf, dict):
        raise InputError("idf as a precomputed dict is not accepted: pass idf=True to weight tokens by idf from the "
                         "references of the call (bert-score's and the hub's default), or use "
                         "bertscore_viz.Scorer(idf_sentences=...) for idf from other sentences.")
    if rescale_with_baseline and lang is None and baseline_path is None:
        raise InputError("Rescaling needs the language of the baseline: pass lang='en' (or baseline_path=FILE).")
    for name, value in (("use_fast_tokenizer", use_fast_tokenizer), ("idf", idf)):
        if not isinstance(value, bool):
            raise InputError(f"{name} must be True or False, got {value!r}.")
    return dict(model=model_type if model_type is not None else default_model_name(lang), layer=num_layers,
                idf=idf, rescale_with_baseline=rescale_with_baseline, lang=lang or "en",
                baseline_path=baseline_path, batch_size=batch_size, device=device, long_texts=long_texts,
                precision=precision)


def check_hub_inputs(predictions, references) -> tuple[list[str], list[list[str]]]:
    """The predictions as a list of strings and one non-empty list of reference strings per prediction, checked
    before ``evaluate`` sees them (it would iterate a single string's characters, as bert-score does: the metric
    refuses it instead).

    Raises:
        InputError: a single string (``predictions='abc'`` is not three predictions), ``None``, numbers, dicts
            (whose keys would be read as texts) or lone surrogates among the texts, unequal lengths; each named by
            index.
    """
    if isinstance(predictions, str):
        raise InputError(f"predictions is a single string {shorten(predictions)}; evaluate and bert-score would "
                         "score each of its characters as a prediction. Give a list: predictions=[...].")
    if isinstance(references, str):
        raise InputError(f"references is a single string {shorten(references)}; evaluate and bert-score would "
                         "read each of its characters as a reference. Give a list: references=[...].")
    return normalize_inputs(predictions, references)


def hub_compute(predictions: Sequence[str], references: Sequence, scorers: dict | None = None,
                verbose: bool = False, **kwargs) -> dict:
    """BERTScore with the hub bertscore's arguments and return keys.

    Args:
        predictions: ``(n,)`` candidate sentences.
        references: ``(n,)`` reference sentences, or one list of references per prediction (the maximum of P, R
            and F1 over them, as bert-score).
        scorers: a dict the caller keeps between calls: the scorer of the last settings is reused (the model is
            loaded once per process in any case).
        verbose: a progress bar on stderr.
        **kwargs: :func:`scorer_options`' arguments (the hub's ``lang``, ``model_type``, ``num_layers``, ``idf``,
            ``device``, ``batch_size``, ``nthreads``, ``all_layers``, ``rescale_with_baseline``, ``baseline_path``,
            ``use_fast_tokenizer``; ours ``long_texts``, ``precision``).

    Returns:
        ``{"precision": [n floats], "recall": [...], "f1": [...], "hashcode": signature}``; the hashcode is this
        engine's signature (bert-score's hash format with ``version=bertscore-viz-...``). idf, when on, comes from
        the references of this call.
    """
    options = scorer_options(**kwargs)
    key = tuple(sorted((k, repr(v)) for k, v in options.items()))
    scorers = {} if scorers is None else scorers
    if key not in scorers:
        scorers.clear()
        scorers[key] = ScoringOptions(**options).scorer()
    scorer = scorers[key]
    preds, refs = check_hub_inputs(predictions, references)
    if verbose:
        with progress_bar("embedding", "sentences") as bar:
            res = scorer.score(preds, refs, progress=bar)
    else:
        res = scorer.score(preds, refs)
    return {"precision": [float(x) for x in res.precision], "recall": [float(x) for x in res.recall],
            "f1": [float(x) for x in res.f1], "hashcode": str(res.signature)}
