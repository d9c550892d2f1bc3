"""Every system of a test set against every other on one metric: bootstrap intervals, paired bootstrap tests of
all pairs (sacrebleu's), Holm over their family, and WMT-style clusters: :class:`Significance`.

Matches sacrebleu 2.x ``sacrebleu.significance`` (``_paired_bs_test``, ``_bootstrap_resample``, ``estimate_ci``,
``_compute_p_value``): the same resamples for every system (:func:`~bertscore_viz.stats.resampling.resample_indices`,
default 1,000 and seed 12345), the p of :func:`~bertscore_viz.stats.paired.p_value_from_samples`, the 95% interval
of :func:`~bertscore_viz.stats.resampling.percentile_ci`.

Any metric, in either of its forms (:mod:`bertscore_viz.stats.resampling`), and either direction
(``higher_is_better=False``: TER, an error rate):

* :func:`analyse`: ``{system: (n,) segment scores}`` whose corpus score is their mean (BERTScore, COMET, humans);
* :func:`analyse_statistics`: ``{system: (n, k) sufficient statistics}`` and the function that turns their sum into
  the corpus score (chrF, BLEU, TER);
* :func:`analyse_resampled`: each system's corpus score and its score in every resample, already computed.

On top of the tests:

* systems are ordered by score (best first; ties in natural name order, ``sys2`` before ``sys10``; no score last);
* optional Holm (1979) step-down correction over ONE family: the k (k - 1) / 2 pairs of systems. The tests against a
  baseline system are among those pairs and read their p from it, so a pair has the same p wherever it appears (the
  answer, the sentences, the clusters, the matrix);
* clusters as the WMT findings papers rank systems (:func:`~bertscore_viz.stats.ranking.clusters`), with each
  system's pairwise wins, losses and rank range.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

import numpy as np

from bertscore_viz.errors import InputError, shorten
from bertscore_viz.stats.corrections import check_correction, holm_matrix
from bertscore_viz.stats.paired import (
    PairedResult,
    family_text,
    format_p_family,
    p_value,
    p_value_from_samples,
    p_value_one_sided,
)
from bertscore_viz.stats.ranking import Cluster, SystemStanding, clusters, rank_order
from bertscore_viz.stats.resampling import (
    DEFAULT_SAMPLES,
    DEFAULT_SEED,
    INTERVAL_SAMPLES,
    bootstrap_means,
    percentile_ci,
    resampled_corpus_scores,
    resamples_for,
    segment_scores,
    smallest_p,
)

__all__ = ["Significance", "SystemInterval", "analyse", "analyse_resampled", "analyse_statistics"]


@dataclass(frozen=True)
class SystemInterval:
    system: str
    mean: float
    low: float
    high: float

    def as_dict(self) -> dict:
        return {"system": self.system, "mean": self.mean, "ci_low": self.low, "ci_high": self.high}


@dataclass(frozen=True)
class Significance:
    """Intervals per system, tests against a baseline and the pairwise matrix, for one metric.

    Attributes:
        metric: e.g. ``"F1"``; n_samples, seed: the resampling used (shown with the results).
        systems: by score, best first (ties in natural name order).
        intervals: one per system, in the order of ``systems``.
        versus_baseline: every other system against ``baseline``, in the order of ``systems``.
        matrix: ``(k, k)`` two-sided p of every pair (1 on the diagonal), in the order of ``systems``;
            Holm-adjusted over the k (k - 1) / 2 pairs when ``correction == "holm"`` (``matrix_raw`` unadjusted).
            The tests against the baseline read their p from it: one family, one p per pair.
        correction: None or ``"holm"``; alpha: the significance level.
        clusters, standings: WMT-style groups and each system's wins, losses and rank range (see :func:`clusters`).
        samples: each system's resampled means (kept so that :meth:`rebase` needs no new resampling).
        higher_is_better: False for a metric where the lower score is the better one (TER): ``systems`` then run
            from the lowest score up.
    """

    metric: str
    n_samples: int
    seed: int | None
    systems: tuple[str, ...]
    baseline: str
    intervals: tuple[SystemInterval, ...]
    versus_baseline: tuple[PairedResult, ...]
    matrix: np.ndarray
    matrix_raw: np.ndarray | None = None
    correction: str | None = None
    alpha: float = 0.05
    clusters: tuple[Cluster, ...] = ()
    standings: tuple[SystemStanding, ...] = ()
    samples: dict | None = field(default=None, compare=False, repr=False)
    higher_is_better: bool = True

    @property
    def family(self) -> int:
        """The comparisons every p belongs to (and, with Holm, was corrected over): the k (k - 1) / 2 pairs."""
        return self.n_pairwise_comparisons

    def family_text(self) -> str:
        """``"Holm-adjusted over 6 comparisons"`` / ``"uncorrected, one of 6 comparisons"`` / ``""``."""
        return family_text(self.correction, self.family)

    def p_text(self, a: str, b: str) -> str:
        """The p of the pair ``a``, ``b`` with its family: the same text wherever the pair appears."""
        return format_p_family(self.pair(a, b), self.correction, self.family)

    @property
    def n_baseline_comparisons(self) -> int:
        """Tests against the baseline: k - 1."""
        return len(self.versus_baseline)

    @property
    def n_pairwise_comparisons(self) -> int:
        """Pairs behind the matrix and the clusters: k (k - 1) / 2."""
        k = len(self.systems)
        return k * (k - 1) // 2

    def standing(self, system: str) -> SystemStanding:
        return next(s for s in self.standings if s.system == system)

    @property
    def smallest_p(self) -> float:
        """The smallest p any test here can report (see :func:`smallest_p`)."""
        return smallest_p(self.n_samples, self.family, self.correction)

    def resolution_note(self) -> str:
        """What the number of resamples allows: the smallest p, and whether it can fall below alpha."""
        text = f"With {self.n_samples:,} resamples no p is below {1 / (self.n_samples + 1):.2g}"
        if self.correction == "holm" and self.family > 1:
            text += (f"; Holm multiplies the smallest of the {self.family} p values by {self.family}, so the "
                     f"smallest attainable adjusted p is {self.smallest_p:.2g}")
        text += "."
        if self.smallest_p >= self.alpha:
            text += (f" No difference can reach p < {self.alpha:g} with these resamples, however large: the test "
                     "cannot tell, it does not say the systems are alike.")
        return text

    def comparisons_note(self) -> str:
        """How many tests were made and whether they were corrected, in one sentence."""
        k = len(self.systems)
        text = (f"Tests made: {self.n_baseline_comparisons} against the baseline, among the "
                f"{self.n_pairwise_comparisons} pairwise test(s) of {k} systems; a difference is called "
                f"significant when its p < {self.alpha:g}")
        if self.correction == "holm":
            return text + (f", with Holm's correction over all {self.n_pairwise_comparisons} pairs as one family "
                           f"(family-wise error at most {self.alpha:g}; a pair has the same p "
                           "everywhere).")
        expected = self.alpha * self.n_pairwise_comparisons
        return text + (f", uncorrected: among {self.n_pairwise_comparisons} pairs about {expected:.1f} could "
                       "look significant by chance alone. Turn on Holm's correction to control this."
                       if self.n_pairwise_comparisons > 1 else ".")

    def interval(self, system: str) -> SystemInterval:
        return next(i for i in self.intervals if i.system == system)

    def pair(self, a: str, b: str) -> float:
        return float(self.matrix[self.systems.index(a), self.systems.index(b)])

    def rebase(self, baseline: str) -> Significance:
        """The same analysis against another baseline system (no new resampling: the tests against the baseline
        read the pairwise p values, the one-sided p the kept resamples)."""
        if baseline == self.baseline:
            return self
        if baseline not in self.systems:
            raise InputError(f"Unknown baseline system {shorten(baseline)}; have {list(self.systems)}.")
        if self.samples is None:
            raise InputError("This analysis kept no resamples; run analyse(..., baseline=...) instead.")
        means = {i.system: i.mean for i in self.intervals}
        return replace(self, baseline=baseline,
                       versus_baseline=_versus(self.systems, baseline, means, self.matrix, self.matrix_raw,
                                               self.samples, self.correction, self.higher_is_better))

    def as_dict(self) -> dict:
        return {"metric": self.metric, "n_samples": self.n_samples, "seed": self.seed,
                "method": "paired bootstrap resampling (sacrebleu), p = (c + 1) / (n + 1)",
                "higher_is_better": self.higher_is_better, "alpha": self.alpha, "correction": self.correction,
                "family": self.family,
                "comparisons": {"versus_baseline": self.n_baseline_comparisons,
                                "pairwise": self.n_pairwise_comparisons},
                "systems": list(self.systems), "baseline": self.baseline,
                "intervals": [i.as_dict() for i in self.intervals],
                "versus_baseline": [r.as_dict() | {"sentence": r.sentence(self.metric, self.alpha)}
                                    for r in self.versus_baseline],
                "clusters": [list(c.systems) for c in self.clusters],
                "standings": [s.as_dict() for s in self.standings],
                "pairwise_p": {a: {b: float(self.matrix[i, j]) for j, b in enumerate(self.systems)}
                               for i, a in enumerate(self.systems)}}


def _versus(names, baseline: str, means: dict, matrix: np.ndarray, raw: np.ndarray | None, samples: dict,
            correction: str | None, higher_is_better: bool = True) -> tuple[PairedResult, ...]:
    """Every other system against ``baseline``: the p of the pair from the (adjusted) matrix, so that a pair has
    one p; the family is the k (k - 1) / 2 pairs."""
    names = list(names)
    k = len(names)
    family = k * (k - 1) // 2
    raw = matrix if raw is None else raw
    b = names.index(baseline)
    return tuple(
        PairedResult(s, baseline, means[s], means[baseline], float(matrix[names.index(s), b]),
                     p_value_one_sided(samples[s], samples[baseline], higher_is_better),
                     float(raw[names.index(s), b]), correction, family, higher_is_better)
        for s in names if s != baseline)


def _checked_options(correction: str | None, systems) -> None:
    check_correction(correction)
    if not systems:
        raise InputError("No systems to analyse.")


def _check_baseline(baseline: str | None, names) -> None:
    if baseline is not None and baseline not in names:
        raise InputError(f"Unknown baseline system {shorten(baseline)}; have {list(names)}.")


def _pairwise(names: tuple[str, ...], p_of: Callable[[str, str], float | None]) -> np.ndarray:
    """``(k, k)`` raw p of every pair in the order of ``names`` (1 on the diagonal and where ``p_of`` is None)."""
    k = len(names)
    raw = np.ones((k, k))
    for i in range(k):
        for j in range(i + 1, k):
            p = p_of(names[i], names[j])
            if p is not None:
                raw[i, j] = raw[j, i] = p
    return raw


def _assemble(metric: str, names: tuple[str, ...], baseline: str | None, means: dict, samples: dict, raw: np.ndarray,
              n_samples: int, seed: int | None, correction: str | None, alpha: float,
              higher_is_better: bool) -> Significance:
    """Intervals, the tests against the baseline, the (Holm-adjusted) matrix and the clusters from the raw p of
    every pair (``raw``, in the order of ``names``)."""
    baseline = names[0] if baseline is None else baseline
    _check_baseline(baseline, names)
    # the interval from the first DEFAULT_SAMPLES resamples, whatever was drawn for the tests: the same draws (a
    # longer draw begins with the shorter one), so Holm's extra resamples sharpen the p values, not the interval
    intervals = tuple(SystemInterval(k, means[k], *percentile_ci(samples[k][:INTERVAL_SAMPLES])) for k in names)
    matrix = holm_matrix(raw) if correction == "holm" else raw
    versus = _versus(names, baseline, means, matrix, raw, samples, correction, higher_is_better)
    cl, standings = clusters(names, means, matrix, alpha, higher_is_better)
    return Significance(metric, n_samples, seed, names, baseline, intervals, versus, matrix, raw, correction,
                        alpha, cl, standings, samples, higher_is_better)


def analyse(scores: Mapping[str, np.ndarray], baseline: str | None = None, metric: str = "F1",
            n_samples: int | None = DEFAULT_SAMPLES, seed: int | None = DEFAULT_SEED, correction: str | None = None,
            alpha: float = 0.05, progress=None, higher_is_better: bool = True) -> Significance:
    """Confidence intervals, tests against ``baseline`` and all pairs, clusters; systems ordered by score.

    Args:
        scores: ``{system: (n,) segment scores}`` (any order: the result is ordered by score); the corpus score is
            their mean. Every score must be finite (:func:`~bertscore_viz.stats.resampling.segment_scores`).
        baseline: default the top-ranked system.
        metric: its name, for the sentences; higher_is_better: False for a metric where lower is better.
        correction: None, or ``"holm"`` to adjust the p values over the family of the k (k - 1) / 2 pairs (the
            tests against the baseline are among them and read the same adjusted p).
        n_samples: resamples; None = :func:`resamples_for` (1,000 uncorrected; under Holm as many as the family
            needs to be able to reach ``alpha``, within a ceiling).
        progress: ``progress(done, total)`` in resamples.

    Raises:
        InputError: an unknown correction or baseline, no systems, unequal lengths or a missing score.
    """
    _checked_options(correction, scores)
    arrays = segment_scores(scores)
    means = {k: float(v.mean()) if len(v) else float("nan") for k, v in arrays.items()}
    names = tuple(rank_order(means, higher_is_better))
    _check_baseline(baseline, names)
    if n_samples is None:
        n_samples = resamples_for(len(arrays), max((len(v) for v in arrays.values()), default=0), correction, alpha)
    samples = bootstrap_means(arrays, n_samples, seed, progress)
    raw = _pairwise(names, lambda a, b: p_value(arrays[a], arrays[b], samples[a], samples[b]))
    return _assemble(metric, names, baseline, means, samples, raw, n_samples, seed, correction, alpha,
                     higher_is_better)


def analyse_resampled(scores: Mapping[str, float], samples: Mapping[str, np.ndarray], metric: str,
                      baseline: str | None = None, n_segments: int | None = None,
                      identical: frozenset = frozenset(), seed: int | None = DEFAULT_SEED,
                      correction: str | None = None, alpha: float = 0.05,
                      higher_is_better: bool = True) -> Significance:
    """:func:`analyse` for a corpus score that is not a mean of segment scores (chrF, BLEU, TER), from each
    system's corpus score and its score in every resample (the same resamples for every system, as
    :func:`~bertscore_viz.stats.resampling.resample_indices` draws them).

    The p of a pair is sacrebleu's (:func:`p_value_from_samples` with the observed ``|score_a - score_b|``), the
    interval sacrebleu's indices over the resampled scores (:func:`percentile_ci`), Holm and clusters as in
    :func:`analyse`. As there, a pair of systems with identical outputs (``identical``: frozensets of two names), or
    a test set of one segment, gets ``p = 1``.

    Args:
        scores: ``{system: corpus score}``; samples: ``{system: (n_samples,) resampled corpus scores}``.
        metric: its name (``"chrF"``); n_segments: the test set's size (1: every p is 1).
        higher_is_better: False for TER (the best system has the lowest score).

    Raises:
        InputError: an unknown correction or baseline, no systems, or resamples of different lengths.
    """
    _checked_options(correction, scores)
    arrays = {k: np.asarray(samples[k], dtype=np.float64) for k in scores}
    lengths = {len(v) for v in arrays.values()}
    if len(lengths) != 1:
        raise InputError(f"Every system needs the same number of resampled scores, got {sorted(lengths)}.")
    means = {k: float(v) for k, v in scores.items()}
    names = tuple(rank_order(means, higher_is_better))

    def p_of(a: str, b: str) -> float | None:
        if frozenset((a, b)) in identical or (n_segments is not None and n_segments < 2):
            return None  # no evidence of a difference (sacrebleu would give 1 / (n + 1))
        return p_value_from_samples(abs(means[a] - means[b]), arrays[a], arrays[b])

    return _assemble(metric, names, baseline, means, arrays, _pairwise(names, p_of), lengths.pop(), seed,
                     correction, alpha, higher_is_better)


def _statistics(statistics: Mapping[str, object]) -> dict[str, np.ndarray]:
    arrays = {k: np.asarray(v) for k, v in statistics.items()}
    shapes = {k: v.shape for k, v in arrays.items()}
    if any(len(s) != 2 for s in shapes.values()) or len({s[0] for s in shapes.values()}) > 1:
        raise InputError(f"Expected every system's sufficient statistics as an (n segments, k) array on the same "
                         f"segments; got shapes {shapes}.")
    bad = [k for k, v in arrays.items() if not np.all(np.isfinite(v))]
    if bad:
        raise InputError(f"System {shorten(bad[0])} has missing (NaN or infinite) statistics: a paired test needs "
                         "every system's statistics of every segment.")
    return arrays


def analyse_statistics(statistics: Mapping[str, np.ndarray], aggregate: Callable[[np.ndarray], float], metric: str,
                       higher_is_better: bool = True, baseline: str | None = None,
                       n_samples: int | None = DEFAULT_SAMPLES, seed: int | None = DEFAULT_SEED,
                       correction: str | None = None, alpha: float = 0.05, progress=None,
                       corpus: Mapping[str, float] | None = None, identical: frozenset | None = None
                       ) -> Significance:
    """:func:`analyse` for a metric computed from per-segment sufficient statistics (chrF, BLEU, TER): each
    resample's corpus score is ``aggregate`` of the drawn segments' summed statistics
    (:func:`~bertscore_viz.stats.resampling.resampled_corpus_scores`), then :func:`analyse_resampled`.

    Args:
        statistics: ``{system: (n, k) statistics}`` (sacrebleu's: float32).
        aggregate: ``(k,) summed statistics -> corpus score``.
        corpus: the corpus scores (default ``aggregate`` of each system's statistics summed over all segments).
        identical: pairs (frozensets of two names) that get ``p = 1``; default the systems whose statistics are
            equal on every segment.
        n_samples: None = :func:`resamples_for`; the other arguments as in :func:`analyse`.

    Raises:
        InputError: as :func:`analyse`, or statistics that are not ``(n, k)`` arrays on the same segments.
    """
    _checked_options(correction, statistics)
    arrays = _statistics(statistics)
    n = len(next(iter(arrays.values())))
    if corpus is None:
        corpus = {k: float(aggregate(v.sum(0))) for k, v in arrays.items()}
    if identical is None:
        names = list(arrays)
        identical = frozenset(frozenset((a, b)) for i, a in enumerate(names) for b in names[i + 1:]
                              if np.array_equal(arrays[a], arrays[b]))
    if n_samples is None:
        n_samples = resamples_for(len(arrays), n, correction, alpha)
    samples = resampled_corpus_scores(arrays, aggregate, n_samples, seed, progress)
    return analyse_resampled(corpus, samples, metric, baseline, n, identical, seed, correction, alpha,
                             higher_is_better)
