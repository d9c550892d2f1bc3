"""BERTScore of a 🤗 ``datasets`` dataset's columns, added to it as columns, with the signature in its info.

    from bertscore_viz.integrations.hf_datasets import score_dataset

    scored = score_dataset(ds, candidates="prediction", references=["ref_a", "ref_b"], layer=6)
    scored["bertscore_f1"]            # one value per row, as bertscore_viz.score(...) gives them
    scored.info.description           # ... ends with the signature of these numbers

**What is scored.** Each row's candidate (a string column) against its references: one column of strings, a
column of lists of strings (several references per row), or several columns, whose references are put together;
the maximum over a row's references is taken of each of P, R and F1, as bert-score does. Rows are scored in
batches of ``map_batch_size`` through ``map(batched=True)``, so a dataset larger than memory is scored in pieces.

**Which datasets.** A ``Dataset`` (the new columns are written like any ``map``; a second run with the same data and
settings is read from ``datasets``' cache), an ``IterableDataset`` (streaming: the columns are computed lazily, batch
by batch, as it is iterated; the model loads at the first batch), and a ``DatasetDict`` or ``IterableDatasetDict``,
each split scored on its own.

**idf.** bert-score counts idf over every reference of the corpus, so with ``idf=True`` a ``Dataset``'s references
are read first (one pass over its reference columns) and every batch is scored with those weights: the numbers equal
``score(all candidates, all references, idf=True)`` and so does the signature. A streaming dataset cannot be read
twice: give ``idf_sentences`` (the sentences to count idf over, e.g. its references collected once), or it is
refused. ``idf_sentences`` works for any dataset and is named in the signature (``idf-corpus-N-hash``).

Options: a :class:`~bertscore_viz.ScoringOptions` as ``options=``, or its fields as keyword arguments (``layer=6``,
``model=...``, ``rescale_with_baseline=True``), as :func:`bertscore_viz.score` takes them.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import fields
from typing import Any

from bertscore_viz.engine.options import ScoringOptions
from bertscore_viz.engine.scorer import BertScoreWarning, Scorer
from bertscore_viz.errors import InputError, shorten
from bertscore_viz.integrations import missing_package

try:  # optional dependency: only this module needs datasets
    import datasets
    from datasets.fingerprint import Hasher
except ImportError as _exc:
    raise missing_package("bertscore_viz.integrations.hf_datasets", "datasets", _exc) from _exc

__all__ = ["score_dataset", "OUTPUT_FIELDS", "DEFAULT_MAP_BATCH_SIZE"]

#: The columns added, after the prefix: the reported (rescaled when rescaling is on) P, R and F1.
OUTPUT_FIELDS = ("precision", "recall", "f1")
#: Rows per ``map`` batch: each batch is one scoring call (the engine batches its model passes inside it).
DEFAULT_MAP_BATCH_SIZE = 256


def _no_context(options: ScoringOptions) -> ScoringOptions:
    """Document context needs every segment's document and its previous segments in one call; a dataset is scored
    in batches, so it is refused here with the way that works (docs/CONTEXT.md)."""
    if options.context:
        raise InputError("Document context (context > 0) is not offered for datasets, which are scored batch by "
                         "batch: score the whole column with bertscore_viz.score(candidates, references, "
                         "context=k, doc_ids=ids) instead (docs/CONTEXT.md).")
    return options


def _options(options: ScoringOptions | None, scoring: dict[str, Any]) -> ScoringOptions:
    if options is not None:
        if scoring:
            raise InputError(f"Give either options=ScoringOptions(...) or scoring keywords ({', '.join(scoring)}), "
                             "not both: use options.replace(...) to change some.")
        if not isinstance(options, ScoringOptions):
            raise InputError(f"options must be a bertscore_viz.ScoringOptions, got {type(options).__name__}.")
        return _no_context(options)
    own = {f.name for f in fields(ScoringOptions)}
    unknown = sorted(set(scoring) - own)
    if unknown:
        raise InputError(f"Unknown scoring option(s): {', '.join(unknown)}. Expected some of: {', '.join(sorted(own))}"
                         " (the fields of bertscore_viz.ScoringOptions), idf_sentences, prefix, map_batch_size.")
    return _no_context(ScoringOptions(**scoring))


def _reference_columns(references: str | Sequence[str]) -> list[str]:
    cols = [references] if isinstance(references, str) else list(references) if isinstance(
        references, Sequence) else []
    if not cols or any(not isinstance(c, str) for c in cols):
        raise InputError(f"references must be a column name or a non-empty list of column names, got "
                         f"{shorten(references)}.")
    return cols


def _check_columns(dataset, candidates: str, refs: list[str], outputs: list[str]) -> None:
    """Refuse missing input columns and existing output columns (when the dataset knows its columns)."""
    if not isinstance(candidates, str):
        raise InputError(f"candidates must be a column name, got {shorten(candidates)}.")
    names = dataset.column_names
    if names is None:  # a streaming dataset without known features: checked at the first batch
        return
    missing = [c for c in [candidates, *refs] if c not in names]
    if missing:
        raise InputError(f"No column {', '.join(map(repr, missing))} in the dataset; its columns are: "
                         f"{', '.join(names)}.")
    taken = [c for c in outputs if c in names]
    if taken:
        raise InputError(f"The dataset already has column(s) {', '.join(taken)}: pass another prefix= (e.g. "
                         "prefix='bertscore_run2_') or remove them first.")


def _row_references(batch: dict, refs: list[str], index: int, row: int) -> list[str]:
    """The references of one row of a batch, from every reference column (a string or a list of strings each)."""
    group: list[str] = []
    for col in refs:
        value = batch[col][index]
        if isinstance(value, str):
            group.append(value)
        elif isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
            group.extend(value)
        else:
            raise InputError(f"Row {row}, column {col!r}: expected a reference string or a list of them, got "
                             f"{type(value).__name__} {shorten(value)}.")
    if not group:
        raise InputError(f"Row {row} has no reference in {', '.join(map(repr, refs))}: give at least one.")
    return group


def _scoring_function(scorer: Scorer, candidates: str, refs: list[str], prefix: str):
    """The ``map(batched=True, with_indices=True)`` function: a batch's rows scored in one call."""

    def score_batch(batch: dict, indices: list[int]) -> dict[str, list[float]]:
        missing = [c for c in [candidates, *refs] if c not in batch]
        if missing:
            raise InputError(f"No column {', '.join(map(repr, missing))} in the dataset; its columns are: "
                             f"{', '.join(batch)}.")
        cands = batch[candidates]
        bad = next((i for i, c in enumerate(cands) if not isinstance(c, str)), None)
        if bad is not None:
            raise InputError(f"Row {indices[bad]}, column {candidates!r}: expected a candidate string, got "
                             f"{type(cands[bad]).__name__} {shorten(cands[bad])}.")
        groups = [_row_references(batch, refs, i, row) for i, row in enumerate(indices)]
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always", BertScoreWarning)
            result = scorer.score(list(cands), groups)
        for w in said:  # the engine counts indices from the batch's first row: say which rows the batch holds
            where = f"Rows {indices[0]} to {indices[-1]} (indices below count from row {indices[0]})" if issubclass(
                w.category, BertScoreWarning) else ""
            warnings.warn(f"{where}: {w.message}" if where else w.message, w.category, stacklevel=2)
        return {prefix + name: [float(x) for x in getattr(result, name)] for name in OUTPUT_FIELDS}

    return score_batch


def _all_references(dataset, refs: list[str], batch_size: int) -> list[str]:
    """Every reference of a (non-streaming) dataset, flattened: what idf is counted over."""
    flat: list[str] = []
    columns = dataset.select_columns(refs)
    for start in range(0, len(columns), batch_size):
        batch = columns[start:start + batch_size]
        for i in range(len(batch[refs[0]])):
            flat.extend(_row_references(batch, refs, i, start + i))
    return flat


def _described(info, text: str) -> None:
    info.description = f"{info.description}\n{text}" if info.description else text


def score_dataset(dataset, candidates: str, references: str | Sequence[str], *, options: ScoringOptions | None = None,
                  idf_sentences: Sequence[str] | None = None, prefix: str = "bertscore_",
                  map_batch_size: int = DEFAULT_MAP_BATCH_SIZE, **scoring: Any):
    """The dataset with ``{prefix}precision``, ``{prefix}recall`` and ``{prefix}f1`` added (float64, one value per
    row: ``bertscore_viz.score``'s for the row's candidate and references), and a line naming the columns and the
    signature appended to ``info.description``.

    Args:
        dataset: ``datasets.Dataset``, ``IterableDataset``, ``DatasetDict`` or ``IterableDatasetDict``.
        candidates: the column of candidate strings.
        references: a column (strings, or lists of strings) or a list of columns: each row's references.
        options: a :class:`~bertscore_viz.ScoringOptions`; or give its fields as keyword arguments (``scoring``).
        idf_sentences: fixed sentences to count idf over (turns idf on; needed for idf on a streaming dataset).
        prefix: what the new columns' names start with.
        map_batch_size: rows per ``map`` batch (one scoring call each).

    Raises:
        InputError: an unknown option, a missing column, an output column that exists, a row whose candidate or
            references are not strings (named by row and column), idf on a streaming dataset without
            ``idf_sentences``, or something that is not a dataset.
        ModelError, BaselineError: as the engine raises them, before any row is scored.
    """
    if isinstance(dataset, (datasets.DatasetDict, datasets.IterableDatasetDict)):
        return type(dataset)({split: score_dataset(part, candidates, references, options=options,
                                                   idf_sentences=idf_sentences, prefix=prefix,
                                                   map_batch_size=map_batch_size, **scoring)
                              for split, part in dataset.items()})
    if not isinstance(dataset, (datasets.Dataset, datasets.IterableDataset)):
        raise InputError(f"Expected a datasets.Dataset, IterableDataset, DatasetDict or IterableDatasetDict, got "
                         f"{type(dataset).__name__}.")
    if not isinstance(map_batch_size, int) or isinstance(map_batch_size, bool) or map_batch_size < 1:
        raise InputError(f"map_batch_size must be a whole number of at least 1, got {shorten(map_batch_size)}.")
    if not isinstance(prefix, str):
        raise InputError(f"prefix must be a string, got {shorten(prefix)}.")
    resolved = _options(options, scoring)
    refs = _reference_columns(references)
    outputs = [prefix + name for name in OUTPUT_FIELDS]
    _check_columns(dataset, candidates, refs, outputs)
    streaming = isinstance(dataset, datasets.IterableDataset)
    if idf_sentences is not None:
        scorer = resolved.scorer(idf_sentences=idf_sentences)
    elif resolved.idf and streaming:
        raise InputError("idf over a streaming dataset needs all of its references before the first row is scored, "
                         "and a stream is read once: give idf_sentences=[...] (e.g. the references, collected in a "
                         "first pass), or load the dataset without streaming, or score without idf.")
    elif resolved.idf:
        scorer = resolved.scorer()
        scorer = scorer.replace(idf_weights=scorer.idf_weights(_all_references(dataset, refs, map_batch_size)))
    else:
        scorer = resolved.scorer()
    function = _scoring_function(scorer, candidates, refs, prefix)
    features = None
    if dataset.features is not None:
        features = dataset.features.copy()
        for name in outputs:
            features[name] = datasets.Value("float64")
    if streaming:
        scored = dataset.map(function, batched=True, batch_size=map_batch_size, with_indices=True, features=features)
    else:
        # the fingerprint names what decides the numbers, so datasets need not hash the scorer (and its model)
        fingerprint = Hasher.hash([dataset._fingerprint, resolved.cache_key(), str(scorer.signature),
                                   scorer.idf_source, candidates, refs, prefix])
        scored = dataset.map(function, batched=True, batch_size=map_batch_size, with_indices=True, features=features,
                             new_fingerprint=fingerprint, desc="BERTScore")
    _described(scored.info, f"BERTScore of {candidates!r} against {', '.join(map(repr, refs))} in "
                            f"{', '.join(outputs)}: {scorer.signature}")
    return scored
