"""Scoring several systems on one test set, and the numbers behind the Compare page (pure, no Streamlit; the
page's tables of them: :mod:`bertscore_viz.figures.tables`).

The model runs once per layer asked for: every system's outputs go into ONE :meth:`Scorer.match` call, so each
reference (and each output two systems share) is embedded once. Only each pair's raw P/R/F is kept, without and
with idf (``keep="scores"``: computed on the device, a few numbers per pair), so :func:`results_for` gives one
:class:`ScoreResult` per system for the idf and rescaling settings without a model pass, and memory does not grow
with the texts' lengths. Another layer is one more pass (:func:`add_layers`); a drill-down explains its one pair
again. idf comes from the references of the uploaded set (the same for every system, exactly as when each system
is scored on its own).
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from bertscore_viz.engine.languages import baseline_language_message, dataset_languages
from bertscore_viz.engine.results import ScoreResult
from bertscore_viz.engine.scorer import MatchStats, Scorer
from bertscore_viz.errors import BaselineError
from bertscore_viz.files.dataset import Dataset
from bertscore_viz.stats.analysis import Significance, analyse
from bertscore_viz.stats.paired import describe
from bertscore_viz.stats.ranking import rank_order
from bertscore_viz.stats.resampling import DEFAULT_SAMPLES, DEFAULT_SEED, bootstrap_means, percentile_ci

if TYPE_CHECKING:  # annotations only
    from bertscore_viz.evaluation.calibration import CalibrationReading

__all__ = [
    "Comparison", "ComparisonStats", "LENGTH_BUCKETS", "LengthBucket", "METRICS", "MIN_BUCKET_SEGMENTS", "add_layers",
    "baseline_language_note", "bucket_intervals", "bucket_label", "calibration_readings", "counted", "counted_mean",
    "dataset_key", "empty_reference_note", "empty_reference_positions", "flat_doc_ids", "headline",
    "language_report",
    "long_text_counts", "results_for", "score_dataset", "segment_labels", "significance", "without_segments",
]

METRICS = ("P", "R", "F1")
#: Reference-length buckets, in words of the first reference: (low, high) inclusive.
LENGTH_BUCKETS = ((1, 10), (11, 20), (21, 30), (31, 45), (46, 70), (71, None))
#: A length bucket with fewer segments is merged with its neighbour: fewer say too little to draw an interval.
MIN_BUCKET_SEGMENTS = 5


@dataclass(frozen=True)
class ComparisonStats:
    """The model pass(es) for a dataset: every system's pairs, system-major, as one :class:`MatchStats` that keeps
    each pair's P/R/F per computed layer, without and with idf.

    Attributes:
        systems: names in file order; pairs: the statistics of all of them (system ``k`` is candidates
            ``k * n_segments`` to ``(k + 1) * n_segments``); n_segments: segments per system.
    """

    systems: tuple[str, ...]
    pairs: MatchStats
    n_segments: int

    @property
    def layers(self) -> tuple[int, ...]:
        """The layers computed."""
        return self.pairs.layers

    @functools.cached_property
    def per_system(self) -> tuple[MatchStats, ...]:
        """One :class:`MatchStats` per system, aligned with the dataset's segments (views, no copies)."""
        n = self.n_segments
        return tuple(self.pairs.select(i * n, (i + 1) * n) for i in range(len(self.systems)))

    def stats(self, system: str) -> MatchStats:
        return self.per_system[self.systems.index(system)]


def _flat_pairs(dataset: Dataset) -> tuple[tuple[str, ...], list[str], list[list[str]]]:
    names = tuple(dataset.systems)
    candidates: list[str] = []
    references: list[list[str]] = []
    for name in names:
        candidates.extend(dataset.systems[name])
        references.extend(dataset.references)
    return names, candidates, references


def flat_doc_ids(scorer: Scorer, dataset: Dataset) -> list[str] | None:
    """Each pair's document for a scorer with document context (docs/CONTEXT.md), system-major as the pairs are:
    a segment's document id made the system's own (``"<k>\x1f<id>"``), so that a segment's previous segments are
    those of the same system and document, never another system's; "" (no document) stays "". None without
    context or without documents."""
    if not getattr(scorer, "context", 0) or dataset.doc_ids is None:
        return None
    return [f"{k}\x1f{d}" if d else "" for k in range(len(dataset.systems)) for d in dataset.doc_ids]


def score_dataset(scorer: Scorer, dataset: Dataset, progress: Callable[[int, int], None] | None = None,
                  layers: Sequence[int] | str | None = None) -> ComparisonStats:
    """Embed and match every system's outputs against the references in one model pass, keeping each pair's P/R/F
    at ``layers`` (default: the scorer's layer; ``"all"``: every layer), without and with idf.

    Args:
        scorer: a Scorer of the model (its layer is the default; its idf and rescaling do not matter here).
        dataset: from :func:`bertscore_viz.files.upload.parse_upload`; must be ``ok``.
        progress: ``progress(done, total)`` in distinct sentences embedded.
        layers: the layers to compute.
    """
    names, candidates, references = _flat_pairs(dataset)
    idf = scorer.idf_weights([r for group in dataset.references for r in group])
    stats = scorer.match(candidates, references, layers=layers if layers is not None else (scorer.layer,),
                         progress=progress, keep="scores", idf_weights=idf,
                         **_docs(flat_doc_ids(scorer, dataset)))
    return ComparisonStats(names, stats, dataset.n_segments)


def _docs(doc_ids: list[str] | None) -> dict:
    """``doc_ids=`` for :meth:`Scorer.match` only when there are documents (a scorer without context takes none)."""
    return {} if doc_ids is None else {"doc_ids": doc_ids}


def long_text_counts(stats: MatchStats, max_length: int) -> tuple[int, int]:
    """How many texts of a scored input are longer than the model's maximum (each system's outputs counted, each
    distinct reference once), and how many tokens truncate mode dropped from them (0 in window mode)."""
    n_long, cut = 0, 0
    for ids, dropped in zip(stats.cand_ids, stats.cand_truncated):
        if dropped or len(ids) > max_length:
            n_long, cut = n_long + 1, cut + int(dropped)
    seen: set[str] = set()
    for text, ids, dropped in zip(stats.references, stats.ref_ids, stats.ref_truncated):
        if text not in seen and (dropped or len(ids) > max_length):
            n_long, cut = n_long + 1, cut + int(dropped)
        seen.add(text)
    return n_long, cut


def add_layers(scorer: Scorer, dataset: Dataset, cstats: ComparisonStats, layers: Sequence[int],
               progress: Callable[[int, int], None] | None = None) -> ComparisonStats:
    """``cstats`` with the pairs' P/R/F at more layers (one model pass, the same idf weights)."""
    todo = [int(x) for x in layers if int(x) not in cstats.layers]
    if not todo:
        return cstats
    _, candidates, references = _flat_pairs(dataset)
    more = scorer.match(candidates, references, layers=todo, progress=progress, keep="scores",
                        idf_weights=cstats.pairs.table_idf, **_docs(flat_doc_ids(scorer, dataset)))
    return replace(cstats, pairs=cstats.pairs.with_table(more))


def counted(scores) -> np.ndarray:
    """The one rule for an undefined segment score (NaN precision or recall under degenerate idf, listed in the
    warnings): it counts as 0, as bert-score counts an undefined F1, in every number about a system (its mean, rank,
    interval, tests, clusters, the headline, the system and rank tables, the length buckets, the calibration
    reading, power), so that one such segment cannot make a system's mean or every p value meaningless, and every
    place shows the same mean. The segment table shows the segment's score as missing (NaN)."""
    return np.nan_to_num(np.asarray(scores, dtype=np.float64), nan=0.0)


def counted_mean(scores) -> float:
    """The mean of :func:`counted` scores: a system's score; NaN for no segments (ranked last)."""
    values = counted(scores)
    return float(values.mean()) if len(values) else float("nan")


@dataclass(frozen=True)
class Comparison:
    """Every system's scores at one setting.

    Attributes:
        results: ``{system: ScoreResult}``, best mean F1 first (ties in natural name order), so every table,
            list and chart built from it is in rank order.
        rescaled: the numbers are rescaled; note: why rescaling was asked for but not done (else None).
        layer, idf: the setting.
    """

    results: dict[str, ScoreResult]
    layer: int
    idf: bool
    rescaled: bool
    note: str | None = None

    @property
    def systems(self) -> list[str]:
        return list(self.results)

    @property
    def signature(self) -> str:
        return str(next(iter(self.results.values())).signature)

    def scores(self, metric: str = "F1") -> dict[str, np.ndarray]:
        """Every system's segment scores as scored (an undefined one is NaN: what the segment table shows)."""
        attr = {"P": "precision", "R": "recall", "F1": "f1"}[metric]
        return {k: getattr(v, attr) for k, v in self.results.items()}

    def counted_scores(self, metric: str = "F1") -> dict[str, np.ndarray]:
        """Every system's segment scores as every system-level number counts them (:func:`counted`: NaN is 0)."""
        return {k: counted(v) for k, v in self.scores(metric).items()}

    def means(self, metric: str = "F1") -> dict[str, float]:
        """Every system's score on ``metric``: :func:`counted_mean` of its segment scores."""
        return {k: counted_mean(v) for k, v in self.scores(metric).items()}

    def to_pandas(self):
        """A ``pandas.DataFrame``, one row per system in rank order: ``system``, ``precision``, ``recall``, ``f1``
        (each system's score: the mean of its reported segment scores, an undefined one counted as 0, as every
        system-level number counts it), ``raw_precision``, ``raw_recall``, ``raw_f1`` (the same before rescaling) and
        ``segments``. ``df.attrs`` holds ``signature``, ``layer``, ``idf``, ``rescaled``, ``note`` and ``warnings``.
        The intervals and clusters: ``figures.tables.system_table(c, significance(c))``.

        Raises:
            MissingExtraError: pandas is not installed (it comes with ``bertscore-viz[app]``).
        """
        try:
            import pandas as pd  # optional: the [app] extra
        except ImportError:
            from bertscore_viz.extras import MissingExtraError, missing_extra_message
            raise MissingExtraError(missing_extra_message("Comparison.to_pandas()", "pandas", "app")) from None
        df = pd.DataFrame([{"system": name} | {k: counted_mean(getattr(res, k)) for k in (
            "precision", "recall", "f1", "raw_precision", "raw_recall", "raw_f1")} | {"segments": len(res)}
            for name, res in self.results.items()],
            columns=["system", "precision", "recall", "f1", "raw_precision", "raw_recall", "raw_f1", "segments"])
        df.attrs.update({"signature": self.signature if self.results else None, "layer": self.layer, "idf": self.idf,
                         "rescaled": self.rescaled, "note": self.note, "warnings": self.warnings()})
        return df

    def warnings(self) -> list[str]:
        """Each system's scoring warnings, ``"name: warning"``; a warning every system has (an empty reference
        is the same segment for all) is given once, as ``"every system (k): warning"``."""
        per_system = {name: list(dict.fromkeys(res.warnings)) for name, res in self.results.items()}
        common = set.intersection(*(set(w) for w in per_system.values())) if len(per_system) > 1 else set()
        first = next(iter(per_system.values()), [])
        out = [f"every system ({len(per_system)}): {w}" for w in first if w in common]
        for name, warns in per_system.items():
            out.extend(f"{name}: {w}" for w in warns if w not in common)
        return out


def results_for(scorer: Scorer, cstats: ComparisonStats, layer: int | None = None, idf: bool | None = None,
                rescale: bool = False, labels: Sequence[str] | None = None) -> Comparison:
    """Per-system results for a layer / idf / rescaling setting, without a model pass.

    When rescaling is asked for and no baseline exists for the model and layer, the numbers are raw and
    ``note`` carries the engine's message. ``labels``: how warnings name each segment (default its index from 0;
    the app passes :func:`segment_labels`, the file's rows).
    """
    layer = scorer.layer if layer is None else int(layer)
    idf = scorer.idf if idf is None else bool(idf)
    baseline = None
    note = None
    if rescale:
        try:
            baseline = scorer.baseline_for(layer)
        except BaselineError as exc:
            note = str(exc)
    results = {name: scorer.result(stats, layer=layer, idf=idf, baseline=baseline, labels=labels)
               for name, stats in zip(cstats.systems, cstats.per_system)}
    means = {k: counted_mean(v.f1) for k, v in results.items()}
    results = {k: results[k] for k in rank_order(means)}
    return Comparison(results, layer, idf, baseline is not None, note)


def segment_labels(dataset) -> list[str]:
    """Each segment named as the file's problems table names rows: ``row 6`` (wide layout: the segment's row);
    in the long layout, where each system has its own row, the segment id and its first row."""
    mapping = getattr(dataset, "mapping", None)
    if mapping is not None and mapping.layout == "long":
        return [f"segment {s} (from row {r})" for s, r in zip(dataset.segment_ids, dataset.rows)]
    return [f"row {r}" for r in dataset.rows]


# --- tables -------------------------------------------------------------------------------------------------------
def significance(comparison: Comparison, baseline: str | None = None, metric: str = "F1",
                 n_samples: int | None = None, seed: int | None = DEFAULT_SEED,
                 correction: str | None = None, progress=None) -> Significance:
    """Bootstrap intervals, paired tests and WMT-style clusters of the systems on one metric.

    ``baseline`` defaults to the top-ranked system; ``correction="holm"`` adjusts the p values for the number
    of comparisons (see :func:`bertscore_viz.evaluation.significance.analyse`). ``n_samples``: default
    sacrebleu's 1,000 without correction, and under Holm as many as the number of systems needs
    (:func:`~bertscore_viz.evaluation.significance.resamples_for`).

    Undefined segment scores count as 0 (:func:`counted`).
    """
    return analyse(comparison.counted_scores(metric), baseline, metric, n_samples, seed, correction,
                   progress=progress)


def calibration_readings(comparison: Comparison, calibration) -> dict[str, CalibrationReading]:
    """Each system's mean raw F1 (no idf: what a calibration places; rescaling keeps a score's percentile) read on
    ``calibration`` at the comparison's layer: ``{system: CalibrationReading}``.

    Raises:
        BaselineError: the calibration does not cover the layer.
    """
    return {name: calibration.reading(counted_mean(res.raw_f1), comparison.layer, "f1")
            for name, res in comparison.results.items()}


def bucket_label(low: int, high: int | None) -> str:
    return f"{low}+ words" if high is None else f"{low}–{high} words"


def _merged_buckets(counts: list[int], min_segments: int) -> list[list[int]]:
    """Groups of adjacent bucket indices, each with at least ``min_segments`` segments where the data allow: the
    smallest group joins its smaller neighbour until none is below the bound (or one group is left)."""
    groups = [[i] for i, c in enumerate(counts) if c > 0]
    size = {i: c for i, c in enumerate(counts)}

    def total(g: list[int]) -> int:
        return sum(size[i] for i in g)

    while len(groups) > 1 and min(total(g) for g in groups) < min_segments:
        k = min(range(len(groups)), key=lambda j: (total(groups[j]), j))
        if k == 0:
            other = 1
        elif k == len(groups) - 1:
            other = k - 1
        else:
            other = k - 1 if total(groups[k - 1]) <= total(groups[k + 1]) else k + 1
        lo, hi = sorted((k, other))
        groups[lo:hi + 1] = [groups[lo] + groups[hi]]
    return groups


@dataclass(frozen=True)
class LengthBucket:
    """One system's mean score in one reference-length bucket, with its 95% bootstrap interval.

    Attributes:
        label: the bucket (``"11–20 words"``; merged ones ``"21–70 words"``); system: the system's name.
        segments: segments in the bucket; mean, low, high: the mean score and its interval.
    """

    label: str
    system: str
    segments: int
    mean: float
    low: float
    high: float


def bucket_intervals(dataset: Dataset, comparison: Comparison, metric: str = "F1",
                     min_segments: int = MIN_BUCKET_SEGMENTS, n_samples: int = DEFAULT_SAMPLES,
                     seed: int | None = DEFAULT_SEED) -> list[LengthBucket]:
    """Mean score per system in each reference-length bucket (words of the first reference), with its 95%
    bootstrap interval (the page's: sacrebleu's resamples of the bucket's segments, the same for every system).

    Buckets (:data:`LENGTH_BUCKETS`) with fewer than ``min_segments`` segments are merged with a neighbour
    (``"21–70 words"``), so that no mean and interval rests on one to four segments; a dataset smaller than the
    bound is one bucket.

    Returns:
        One :class:`LengthBucket` per bucket and system, buckets in length order (empty ones left out), systems in
        the comparison's order (the page's table of them: :func:`bertscore_viz.figures.tables.length_buckets`).
    """

    lengths = np.array([len(r[0].split()) for r in dataset.references])
    masks = []
    for low, high in LENGTH_BUCKETS:
        lo = 0 if low == 1 else low  # an empty reference (0 words) goes with the shortest
        masks.append((lengths >= lo) & ((lengths <= high) if high is not None else True))
    scores = comparison.counted_scores(metric)
    rows: list[LengthBucket] = []
    for group in _merged_buckets([int(m.sum()) for m in masks], min_segments):
        mask = np.logical_or.reduce([masks[i] for i in group])
        label = bucket_label(LENGTH_BUCKETS[group[0]][0], LENGTH_BUCKETS[group[-1]][1])
        resampled = bootstrap_means({name: s[mask] for name, s in scores.items()}, n_samples, seed)
        for name, s in scores.items():
            low, high = percentile_ci(resampled[name])
            rows.append(LengthBucket(label, name, int(mask.sum()), float(np.mean(s[mask])), low, high))
    return rows


# --- empty references ----------------------------------------------------------------------------------------------
def empty_reference_positions(dataset: Dataset) -> list[int]:
    """Positions (from 0) of the segments whose every reference is empty (or white space): scored 0 by every
    system, as bert-score does."""
    return [i for i, refs in enumerate(dataset.references) if not any(r.strip() for r in refs)]


def without_segments(dataset: Dataset, positions: Sequence[int]) -> Dataset:
    """The dataset without the segments at ``positions`` (for every system); its problems list stays the file's.
    Returns the same object when there is nothing to leave out."""
    drop = set(int(i) for i in positions)
    if not drop:
        return dataset
    keep = [i for i in range(dataset.n_segments) if i not in drop]
    return Dataset({name: [outs[i] for i in keep] for name, outs in dataset.systems.items()},
                   [list(dataset.references[i]) for i in keep],
                   None if dataset.sources is None else [dataset.sources[i] for i in keep],
                   [dataset.segment_ids[i] for i in keep], [dataset.rows[i] for i in keep],
                   list(dataset.problems), dataset.mapping)


def empty_reference_note(dataset: Dataset, positions: Sequence[int], left_out: bool, shown: int = 20) -> str:
    """One sentence for the whole dataset about its segments with an empty reference, naming their rows as the
    problems table does (the first ``shown``), and what was done with them."""
    labels = segment_labels(dataset)
    names = ", ".join(labels[i] for i in list(positions)[:shown]) + (
        f" and {len(positions) - shown:,} more" if len(positions) > shown else "")
    head = f"{len(positions):,} of {dataset.n_segments:,} segments have an empty reference ({names})"
    if left_out:
        return (f"{head}: they are left out for every system, so every mean, interval and test is over the other "
                f"{dataset.n_segments - len(positions):,} segments.")
    return (f"{head}: every system scores 0 on them (BERTScore, as bert-score does; chrF and BLEU 0, TER 100), "
            "and they count in every system's mean and interval, lowering all systems alike.")


def headline(comparison: Comparison, sig: Significance) -> dict:
    """The answer in a few fields: the best system, its score and interval, the margin over the runner-up and
    whether that margin is significant, plus a sentence.

    The p of best vs runner-up is the pair's p in ``sig`` (its matrix: with Holm, adjusted over the k (k - 1) / 2
    pairs), the same p the Significance tab's sentences and matrix show for that pair; ``p_text`` names its
    family."""
    # the analysis's own means and order (its metric's direction; a metric of one's own is not in the comparison)
    means = {iv.system: iv.mean for iv in sig.intervals}
    ranked = list(sig.systems)
    best = ranked[0]
    iv = sig.interval(best)
    out = {"best": best, "metric": sig.metric, "score": means[best], "ci_low": iv.low, "ci_high": iv.high,
           "runner_up": None, "margin": None, "p": None, "p_text": None, "significant": None}
    if len(ranked) == 1:
        out["sentence"] = f"Only one system: {best}, {sig.metric} {means[best]:.4f}."
        return out
    second = ranked[1]
    p = sig.pair(best, second)
    margin = abs(means[best] - means[second])
    out.update(runner_up=second, margin=margin, p=p, p_text=sig.p_text(best, second),
               significant=bool(p < sig.alpha))
    out["sentence"] = describe(best, second, means[best], means[second], p, sig.metric, sig.alpha, sig.correction,
                               sig.family, sig.higher_is_better)
    return out


def language_report(dataset: Dataset, model: str):
    """Segments whose references or outputs are outside the model's languages (a script it does not read, or
    Latin-script text in another language), per system: :class:`bertscore_viz.engine.languages.DatasetLanguages`; its
    ``message()`` is the page's one summary (None when all is well or the model is not in the catalog)."""

    return dataset_languages(dataset.references, dataset.systems, model)


def baseline_language_note(dataset: Dataset, lang: str) -> str | None:
    """A warning when the dataset's references are mostly not in the language of the rescaling baseline
    (:func:`bertscore_viz.engine.languages.baseline_language_message`)."""

    return baseline_language_message([group[0] for group in dataset.references if group], lang)


def dataset_key(dataset: Dataset, model: str = "") -> str:
    """A hash of exactly what is scored (outputs, references, documents when given) and the model: the cache key of
    a model pass."""

    h = hashlib.sha256(model.encode("utf-8"))
    what = [list(dataset.systems), list(dataset.systems.values()), dataset.references]
    if dataset.doc_ids is not None:  # documents change the vectors under context: keys without them are as before
        what.append(dataset.doc_ids)
    h.update(json.dumps(what, ensure_ascii=False).encode("utf-8"))
    return h.hexdigest()[:24]
