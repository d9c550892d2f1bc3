"""What the Compare page keeps for a browser session: one typed object instead of loose session keys.

Everything is derived from the input file and kept only while that file is the input: the parsed table (or the
test sets of an mt-metrics-eval zip and the language pairs read from it), the dataset built with the column mapping,
the model pass (each pair's P/R/F per layer, idf off and on: a few numbers per pair), the scores at the last few
settings, the significance of each, sacrebleu's chrF, BLEU and TER of the dataset and their resamples, and a results
file read from a ``scores.parquet``. A new file, or **Forget**, drops all of it (:meth:`CompareState.forget`), so a
session holds one dataset's work at a time. Other pages read what they need through the functions at the bottom
(:func:`dataset_references`), never through this object's fields.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import numpy as np
import streamlit as st

from bertscore_viz.app.state.kept import Keyed

__all__ = ["STATE_KEY", "INPUT_KEY", "MAX_KEPT_RESULTS", "MAX_KEPT_EVALSETS", "ParsedTable", "PerDataset",
           "LastPass", "KeptResultsFile", "KeptMtme", "KeptReport", "CompareState", "compare_state", "compare_input",
           "set_input", "forget_input", "dataset_references", "dataset_raw_f1"]

T = TypeVar("T")

#: Where the session keeps the object.
STATE_KEY = "compare_state"
#: The input ``{"name", "data", "origin"}``: the uploader and "Load example" put it here (tests may too).
INPUT_KEY = "compare_input"
#: Most settings (layer, idf, rescaling, baseline) whose scores are kept at once.
MAX_KEPT_RESULTS = 8
#: Most language pairs of an mt-metrics-eval zip kept read at once.
MAX_KEPT_EVALSETS = 2


def _bounded_put(store: dict, key, value) -> None:
    if key not in store and len(store) >= MAX_KEPT_RESULTS:
        store.pop(next(iter(store)))
    store[key] = value


@dataclass(frozen=True)
class ParsedTable:
    """The parsed input file: its key, the table and the problems met reading it."""

    key: Any
    table: Any
    problems: Any


@dataclass(frozen=True)
class PerDataset(Generic[T]):
    """A value computed once per dataset (this session's own object: identity tells it is unchanged) and model."""

    dataset: Any
    model: str
    value: T


@dataclass(frozen=True)
class LastPass:
    """The last model pass made on the page: its scoring key, how long it took, in which run, at which layer."""

    key: str
    seconds: float
    run_id: Any
    layer: int


@dataclass(frozen=True)
class KeptResultsFile:
    """A results file (``scores.parquet``) read: its file key, the table, and ``{rescaled: loaded results}``."""

    key: Any
    table: Any
    loaded: dict


@dataclass(frozen=True)
class KeptMtme:
    """An mt-metrics-eval zip: its file key, ``{test set: language pairs}``, ``{(test set, lp): EvalSet}`` read."""

    key: Any
    catalogue: dict
    evalsets: dict


@dataclass(frozen=True)
class KeptReport:
    """The HTML report made last: what it depends on, the scores it shows, and the report."""

    key: Any
    comparison: Any
    report: Any


@dataclass
class CompareState:
    """The Compare page's work for one input file.

    Attributes:
        upload_id: ``file_id`` of the upload adopted last (a file is adopted once, not on every run showing it).
        table: the parsed input (:class:`ParsedTable`).
        dataset: ``Keyed(key=(file key, mapping, empty-cell rule), value=the dataset built from it)``.
        dataset_key: ``PerDataset(dataset, model, value=compare.dataset_key(dataset, model))``.
        language: ``PerDataset(dataset, model, value=the language warning or None)``.
        baseline_language: ``PerDataset(dataset, language, value=the warning that the text is not in the
            rescaling baseline's language, or None)``.
        stats: ``Keyed(key=scoring key, value=ComparisonStats)`` of the model pass(es).
        last_pass: the last model pass made on this page (:class:`LastPass`).
        results: scores per setting (layer, idf, rescaling, baseline), the last :data:`MAX_KEPT_RESULTS`.
        significance: bootstrap and tests per (scores, metric, correction).
        results_file: a ``scores.parquet`` read (:class:`KeptResultsFile`).
        trimmed, trimmed_to: ``PerDataset(dataset, "positions", its segments with an empty reference)``;
            ``PerDataset(dataset, "", the dataset without them)``.
        surface: ``PerDataset(dataset, "", the background job computing sacrebleu's chrF, BLEU and TER of it)``
            (:class:`~bertscore_viz.serving.sentence_metrics.SentenceMetricsJob`).
        words: ``PerDataset(dataset, "", the median length in words of its texts)`` (where calibration bands apply).
        resampled: each sacrebleu metric's resampled corpus scores per (metric, resamples), for ``surface``.
        mtme: an mt-metrics-eval zip read (:class:`KeptMtme`).
        report: the HTML report made last (:class:`KeptReport`).
        chosen: keys of system choices the user made (A, B, baseline); the others follow the ranking.
        shown_index: segment positions of the rows the segment table shows (a clicked row maps to its segment).
        jump_to_drill: a segment row was clicked: the next run opens the Drill-down tab.
    """

    upload_id: str | None = None
    table: ParsedTable | None = None
    dataset: Keyed | None = None
    dataset_key: PerDataset | None = None
    language: PerDataset | None = None
    baseline_language: PerDataset | None = None
    stats: Keyed | None = None
    last_pass: LastPass | None = None
    results: dict = field(default_factory=dict)
    significance: dict = field(default_factory=dict)
    results_file: KeptResultsFile | None = None
    trimmed: PerDataset | None = None
    trimmed_to: PerDataset | None = None
    surface: PerDataset | None = None
    words: PerDataset | None = None
    resampled: dict = field(default_factory=dict)
    mtme: KeptMtme | None = None
    report: KeptReport | None = None
    chosen: set = field(default_factory=set)
    shown_index: list = field(default_factory=list)
    jump_to_drill: bool = False

    def forget(self) -> None:
        """Drop everything derived from the input (the input itself is dropped by :func:`forget_input`)."""
        keep_upload = self.upload_id
        if self.surface:  # the sentence metrics of the old input stop at once
            self.surface.value.cancel()
        self.__init__()  # type: ignore[misc]
        self.upload_id = keep_upload

    def put_result(self, key, value) -> None:
        _bounded_put(self.results, key, value)

    def put_significance(self, key, value) -> None:
        _bounded_put(self.significance, key, value)

    def put_resampled(self, key, value) -> None:
        _bounded_put(self.resampled, key, value)

    def once_per_dataset(self, slot: str, ds, model: str, compute) -> Any:
        """``compute()`` once per dataset and model, kept in ``slot`` (``"dataset_key"``, ``"language"``,
        ``"trimmed"``, ``"surface"``...): the dataset object is this session's own, so identity tells it is
        unchanged."""
        cached = getattr(self, slot)
        if cached and cached.dataset is ds and cached.model == model:
            return cached.value
        value = compute()
        setattr(self, slot, PerDataset(ds, model, value))
        return value


def compare_state() -> CompareState:
    """This browser session's Compare state (created on first use)."""
    state = st.session_state.get(STATE_KEY)
    if not isinstance(state, CompareState):
        state = st.session_state[STATE_KEY] = CompareState()
    return state


def compare_input() -> dict | None:
    return st.session_state.get(INPUT_KEY)


def set_input(name: str, data: bytes, origin: str) -> None:
    """A new input file: everything computed from the previous one is dropped."""
    compare_state().forget()
    st.session_state[INPUT_KEY] = {"name": name, "data": data, "origin": origin}


def forget_input() -> None:
    """No input, nothing computed from one."""
    compare_state().forget()
    st.session_state.pop(INPUT_KEY, None)


def dataset_references() -> list[str] | None:
    """The references of the dataset loaded on Compare (flattened, in order), or None: where Inspect can take
    idf from."""
    state = st.session_state.get(STATE_KEY)
    if not isinstance(state, CompareState) or not state.dataset:
        return None
    ds = state.dataset.value
    if not getattr(ds, "ok", False):
        return None
    return [r for group in ds.references for r in group] or None


def dataset_raw_f1(model: str, layer: int, idf: bool):
    """The raw F1 of every system and segment of the dataset scored on Compare at this model, layer and idf
    (``(values, texts, description)``: candidate | reference for each value), or None when it was not scored so.
    The Baselines page shows rescaling on the user's own data with it, at no model pass."""

    state = st.session_state.get(STATE_KEY)
    if not isinstance(state, CompareState) or not state.dataset:
        return None
    ds = state.dataset.value
    for comparison in reversed(list(state.results.values())):
        if comparison.layer != layer or comparison.idf != idf or not comparison.results:
            continue
        first = next(iter(comparison.results.values()))
        if first.signature.model != model:
            continue
        values = np.concatenate([res.raw_f1 for res in comparison.results.values()])
        texts = [f"{name}: {cand} | {refs[0]}" for name, res in comparison.results.items()
                 for cand, refs in zip(ds.systems.get(name, []), ds.references)]
        k, n = len(comparison.results), len(first.raw_f1)
        return values, texts, f"the Compare dataset ({k} systems x {n:,} segments)"
    return None
