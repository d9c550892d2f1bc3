"""Meta-evaluation of metrics against human judgments by pairwise accuracy (pure numpy; layer 3).

Three statistics, each with a seeded resampled interval and a seeded test between two metrics, written after
google-research/mt-metrics-eval (``stats.py``, ``tau_optimization.py``, ``pce.py``) and reproducing its numbers:

* **segment level, acc_eq** (Deutsch, Foster and Freitag, "Ties Matter", EMNLP 2023): over pairs of translations
  of the same item (``grouping="item"``, the accuracy of each item averaged over items) or over all pairs of scored
  cells (``grouping="none"``), the fraction of pairs where the metric agrees with the humans, a tie agreeing only
  with a tie; a metric difference of at most ``epsilon`` is a tie (:func:`pairwise_accuracy`), and tie calibration
  picks the ``epsilon`` that maximises it (:func:`tie_calibrated_accuracy`);
* **system level, soft pairwise accuracy** (Thompson et al., WMT 2024): for every pair of systems, one minus the
  distance between the p values of "A is better than B" from a paired permutation test on the human and on the
  metric segment scores, averaged over pairs (:func:`soft_pairwise_accuracy`);
* **system level, pairwise accuracy** (Kocmi et al., WMT 2021): the fraction of system pairs whose metric
  difference has the sign of the human difference (:func:`system_pairwise_accuracy`).

Shapes: segment-level acc_eq takes ``(items, systems)`` matrices; the system-level statistics take
``(systems, segments)`` matrices of segment scores (as mt-metrics-eval's ``pce.py``). A human NaN means "not
judged": the cell leaves every pair (acc_eq), the segment leaves every system (system level: the permutation test
is paired, so every system keeps the same segments). A metric NaN where the humans judged is refused: a metric must
score everything the humans scored.

Intervals resample items (acc_eq) or segments (system level) with replacement,
``numpy.random.default_rng(seed).choice(n, size=(n_resamples, n))``, and read sacrebleu's 95% percentile indices
(:func:`~bertscore_viz.stats.resampling.percentile_ci`). Tests between two metrics are mt-metrics-eval's
permutation tests (not a bootstrap): the p value that metric A is better than metric B is the fraction of
permutations whose difference A - B is at least the observed one (no early stopping).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from bertscore_viz.errors import InputError, shorten
from bertscore_viz.stats.resampling import DEFAULT_SAMPLES, DEFAULT_SEED, percentile_ci

__all__ = [
    "GROUPINGS", "MAX_PAIRS", "MetricComparison", "PairwiseAccuracy", "SystemAccuracy", "accuracy_interval",
    "compare_accuracy", "compare_soft_pairwise", "compare_system_accuracy", "pairwise_accuracy",
    "pairwise_p_values", "permutation_flips", "soft_pairwise_accuracy", "soft_pairwise_interval",
    "system_accuracy_interval", "system_pairwise_accuracy", "tie_calibrated_accuracy",
]

#: ``"item"``: pairs of systems within one item, averaged over items; ``"none"``: all pairs of scored cells.
GROUPINGS = ("item", "none")
#: The most pairs one statistic enumerates (``grouping="none"`` has cells x cells / 2 of them): above it, an error.
MAX_PAIRS = 4_000_000
#: Permutation sums within this fraction of the summed absolute differences count as ties (scores such as 0.2 do
#: not add up exactly in floating point; an exact tie counts as "at least as large", as in ``pce.py``).
_TIE_TOLERANCE = 1e-9
#: Cells drawn per block of permutations.
_BLOCK_CELLS = 2_000_000


@dataclass(frozen=True)
class PairwiseAccuracy:
    """acc_eq at one ``epsilon``: the value and the pooled counts of the pairs it was computed from."""

    accuracy: float
    epsilon: float
    grouping: str
    groups: int  # groups with at least one pair (the items averaged over; 1 for "none")
    pairs: int
    concordant: int
    discordant: int
    ties_human: int  # tied only in the human scores
    ties_metric: int  # tied only in the metric (|difference| <= epsilon)
    ties_both: int

    @property
    def agreements(self) -> int:
        """Pairs counted as agreeing: concordant or tied in both."""
        return self.concordant + self.ties_both


@dataclass(frozen=True)
class SystemAccuracy:
    """System-level pairwise accuracy: the agreeing pairs of systems out of all pairs."""

    accuracy: float
    agreements: int
    pairs: int


@dataclass(frozen=True)
class MetricComparison:
    """A permutation test between two metrics: their values, ``delta = a - b`` and the p value that A is better."""

    a: float
    b: float
    delta: float
    p_value: float
    n_resamples: int


# ---------------------------------------------------------------------------------------------------- checking


def _matrix(values, name: str) -> np.ndarray:
    try:
        m = np.array(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name} must be numbers (NaN for missing); got {shorten(values)}.") from exc
    if m.ndim != 2:
        raise InputError(f"{name} must be a 2-D array; got {m.ndim} dimension(s), shape {m.shape}.")
    if np.isinf(m).any():
        raise InputError(f"{name} holds an infinite score; use finite numbers, NaN for a missing one.")
    return m


def _checked(human, metric, shape_text: str) -> tuple[np.ndarray, np.ndarray]:
    h, m = _matrix(human, "human"), _matrix(metric, "metric")
    if h.shape != m.shape:
        raise InputError(f"human and metric must have the same shape {shape_text}; got {h.shape} and {m.shape}.")
    missing = ~np.isnan(h) & np.isnan(m)
    if missing.any():
        at = tuple(int(i) for i in np.argwhere(missing)[0])
        raise InputError(f"the metric has no score at {at} where the humans have one: score every judged cell "
                         "(or set the human score to NaN to leave the cell out).")
    return h, m


def _check_grouping(grouping: str) -> None:
    if grouping not in GROUPINGS:
        raise InputError(f"grouping must be one of {GROUPINGS}; got {shorten(grouping)}.")


def _check_count(n: int, name: str) -> None:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise InputError(f"{name} must be a positive whole number; got {shorten(n)}.")


# ---------------------------------------------------------------------------------------------- acc_eq (segments)


def _pairs(human: np.ndarray, metric: np.ndarray, grouping: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every judged pair as (group, human difference, metric difference); within a group, pairs in row-major order
    of (first, second) with first < second (systems of an item, or all cells flattened row by row)."""
    if grouping == "item":
        n_items, n_sys = human.shape
        first, second = np.triu_indices(n_sys, 1)
        dh, dm = human[:, first] - human[:, second], metric[:, first] - metric[:, second]
        keep = ~np.isnan(dh)
        group = np.broadcast_to(np.arange(n_items)[:, None], dh.shape)
        return group[keep], dh[keep], dm[keep]
    h, m = human.ravel(), metric.ravel()
    judged = ~np.isnan(h)
    h, m = h[judged], m[judged]
    n_pairs = len(h) * (len(h) - 1) // 2
    if n_pairs > MAX_PAIRS:
        raise InputError(f"grouping='none' over {len(h)} judged cells makes {n_pairs} pairs, more than {MAX_PAIRS}; "
                         "use grouping='item' (pairs of systems within an item), or fewer cells.")
    first, second = np.triu_indices(len(h), 1)
    return np.zeros(len(first), dtype=np.intp), h[first] - h[second], m[first] - m[second]


def _outcomes(dh: np.ndarray, dm: np.ndarray, epsilon: float) -> dict[str, np.ndarray]:
    human_tie = dh == 0
    metric_tie = np.abs(dm) <= epsilon
    concordant = ~human_tie & ~metric_tie & (np.sign(dh) == np.sign(dm))
    return {"concordant": concordant, "discordant": ~human_tie & ~metric_tie & ~concordant,
            "ties_human": human_tie & ~metric_tie, "ties_metric": ~human_tie & metric_tie,
            "ties_both": human_tie & metric_tie}


def _group_mean(group: np.ndarray, agree: np.ndarray, n_groups: int) -> tuple[float, int]:
    """The mean over groups of each group's fraction of agreeing pairs (math.fsum: the same value whatever the
    order), and how many groups have pairs."""
    pairs = np.bincount(group, minlength=n_groups)
    hits = np.bincount(group, weights=agree, minlength=n_groups)
    used = pairs > 0
    fractions = [float(a) / float(n) for a, n in zip(hits[used].astype(np.int64), pairs[used])]
    if not fractions:
        return float("nan"), 0
    return math.fsum(fractions) / len(fractions), len(fractions)


def _check_epsilon(epsilon: float) -> float:
    number = not isinstance(epsilon, bool) and isinstance(epsilon, (int, float, np.integer, np.floating))
    if not number or not math.isfinite(epsilon) or epsilon < 0:
        raise InputError(f"epsilon must be a finite number >= 0 (a metric difference up to it is a tie); "
                         f"got {shorten(epsilon)}.")
    return float(epsilon)


def pairwise_accuracy(human, metric, *, epsilon: float = 0.0, grouping: str = "item") -> PairwiseAccuracy:
    """acc_eq: the fraction of pairs where metric and humans agree, a tie agreeing only with a tie.

    ``human`` and ``metric`` are ``(items, systems)`` matrices, NaN for a cell the humans did not judge. A pair is
    a human tie when its two human scores are equal, a metric tie when ``|metric difference| <= epsilon``;
    it agrees when both are ties or neither is and the differences have the same sign (mt-metrics-eval's
    ``KendallVariants(variant="acc23", epsilon=...)``). ``grouping="item"`` averages the accuracy of each item
    with at least one judged pair (``average_by="item"``); ``"none"`` pools all pairs of judged cells
    (``average_by="none"``, at most :data:`MAX_PAIRS`). ``accuracy`` is NaN when there is no pair.
    """
    _check_grouping(grouping)
    epsilon = _check_epsilon(epsilon)
    h, m = _checked(human, metric, "(items, systems)")
    group, dh, dm = _pairs(h, m, grouping)
    outcomes = _outcomes(dh, dm, epsilon)
    counts = {k: int(v.sum()) for k, v in outcomes.items()}
    value, groups = _group_mean(group, outcomes["concordant"] | outcomes["ties_both"], h.shape[0])
    return PairwiseAccuracy(value, epsilon, grouping, groups, len(dh), **counts)


def _calibration_curve(group: np.ndarray, dh: np.ndarray, dm: np.ndarray, n_groups: int
                       ) -> tuple[np.ndarray, np.ndarray]:
    """acc_eq at every candidate epsilon, 0 and each distinct |metric difference|, in one sweep: a pair with
    ``|dm| <= epsilon`` agrees when the humans tie, any other pair when it is concordant."""
    pairs = np.bincount(group, minlength=n_groups).astype(np.float64)
    used = int((pairs > 0).sum())
    agree0 = _outcomes(dh, dm, 0.0)
    concordant = agree0["concordant"].astype(np.float64)
    weight = 1.0 / (pairs[group] * used)
    base = float((concordant * weight).sum())
    distance = np.abs(dm)
    order = np.argsort(distance, kind="stable")
    gain = np.cumsum(((dh == 0).astype(np.float64) - concordant)[order] * weight[order])
    sorted_distance = distance[order]
    last = np.r_[sorted_distance[1:] != sorted_distance[:-1], True]
    candidates, values = sorted_distance[last], base + gain[last]
    if candidates[0] != 0.0:
        candidates, values = np.r_[0.0, candidates], np.r_[base, values]
    return candidates, values


def tie_calibrated_accuracy(human, metric, *, grouping: str = "item") -> tuple[PairwiseAccuracy, float]:
    """Tie calibration: the largest acc_eq over candidate epsilons, and the epsilon that gives it.

    Candidates are 0 and every distinct ``|metric difference|`` of a judged pair (mt-metrics-eval's
    ``tau_optimization.tau_optimization``, as ``stats.KendallWithTiesOpt(variant="acc23", sample_rate=1.0)``):
    all pairs, none sampled (mt-metrics-eval's default ``sample_rate=0.1`` draws a random tenth). The pairs are
    capped by :data:`MAX_PAIRS` for ``grouping="none"`` only; ``"item"`` has items x systems^2 / 2 of them.
    Equal maxima go to the smallest epsilon (``np.nanargmax``'s first); values within 1e-12 count as equal, the
    float sweep's rounding, and the returned accuracy is recomputed by :func:`pairwise_accuracy` at that epsilon.
    """
    _check_grouping(grouping)
    h, m = _checked(human, metric, "(items, systems)")
    group, dh, dm = _pairs(h, m, grouping)
    if len(dh) == 0:
        return pairwise_accuracy(h, m, grouping=grouping), 0.0
    candidates, values = _calibration_curve(group, dh, dm, h.shape[0])
    best = int(np.flatnonzero(values >= values.max() - 1e-12)[0])
    epsilon = float(candidates[best])
    return pairwise_accuracy(h, m, epsilon=epsilon, grouping=grouping), epsilon


def _item_fractions(human: np.ndarray, metric: np.ndarray, epsilon: float) -> np.ndarray:
    group, dh, dm = _pairs(human, metric, "item")
    o = _outcomes(dh, dm, epsilon)
    pairs = np.bincount(group, minlength=human.shape[0]).astype(np.float64)
    hits = np.bincount(group, weights=o["concordant"] | o["ties_both"], minlength=human.shape[0])
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(pairs > 0, hits / pairs, np.nan)


def _resamples(n: int, n_resamples: int, seed: int | None) -> np.ndarray:
    return np.random.default_rng(seed).choice(n, size=(n_resamples, n), replace=True)


def accuracy_interval(human, metric, *, epsilon: float, grouping: str = "item", n_resamples: int = DEFAULT_SAMPLES,
                      seed: int | None = DEFAULT_SEED) -> tuple[float, float]:
    """95% bootstrap interval of acc_eq at a fixed ``epsilon`` (the calibrated one, not re-calibrated per resample),
    resampling items: a resample's value is the mean over its drawn items that have pairs. Only
    ``grouping="item"``: pooled pairs across cells do not split into items."""
    _check_grouping(grouping)
    if grouping != "item":
        raise InputError("accuracy_interval resamples items, so it needs grouping='item'; grouping='none' pools "
                         "pairs across items, which a resample of items cannot keep apart.")
    _check_count(n_resamples, "n_resamples")
    h, m = _checked(human, metric, "(items, systems)")
    fractions = _item_fractions(h, m, _check_epsilon(epsilon))
    draws = fractions[_resamples(len(fractions), n_resamples, seed)]
    counted = (~np.isnan(draws)).sum(axis=1)
    totals = np.nansum(draws, axis=1)
    return percentile_ci(np.divide(totals, counted, out=np.full(len(totals), np.nan), where=counted > 0))


def _pair_agreement(h: np.ndarray, m: np.ndarray, epsilon: float, grouping: str
                    ) -> tuple[np.ndarray, np.ndarray]:
    group, dh, dm = _pairs(h, m, grouping)
    o = _outcomes(dh, dm, epsilon)
    return group, (o["concordant"] | o["ties_both"]).astype(np.float64)


def compare_accuracy(human, metric_a, metric_b, *, epsilon_a: float | None = None, epsilon_b: float | None = None,
                     grouping: str = "item", n_resamples: int = DEFAULT_SAMPLES,
                     seed: int | None = DEFAULT_SEED) -> MetricComparison:
    """Is metric A's acc_eq better than metric B's? mt-metrics-eval's ``stats.PairwisePermutationSigDiff``.

    Each metric keeps its own epsilon (tie-calibrated when None). A permutation swaps, pair by pair with
    probability 1/2, the two metrics' agreement with the humans (``rng.random((n_resamples, pairs)) < 0.5`` in
    blocks of rows, ``default_rng(seed)``); the p value is the fraction of permutations whose acc_eq difference
    A - B is at least the observed one.
    """
    _check_grouping(grouping)
    _check_count(n_resamples, "n_resamples")
    h, a = _checked(human, metric_a, "(items, systems)")
    _, b = _checked(human, metric_b, "(items, systems)")
    eps_a = tie_calibrated_accuracy(h, a, grouping=grouping)[1] if epsilon_a is None else _check_epsilon(epsilon_a)
    eps_b = tie_calibrated_accuracy(h, b, grouping=grouping)[1] if epsilon_b is None else _check_epsilon(epsilon_b)
    value_a = pairwise_accuracy(h, a, epsilon=eps_a, grouping=grouping).accuracy
    value_b = pairwise_accuracy(h, b, epsilon=eps_b, grouping=grouping).accuracy
    group, agree_a = _pair_agreement(h, a, eps_a, grouping)
    _, agree_b = _pair_agreement(h, b, eps_b, grouping)
    pairs = np.bincount(group).astype(np.float64)
    weight = 1.0 / (pairs[group] * int((pairs > 0).sum())) if len(group) else np.zeros(0)
    difference = (agree_a - agree_b) * weight
    observed = float(difference.sum())
    rng = np.random.default_rng(seed)
    at_least, done = 0, 0
    rows = max(1, _BLOCK_CELLS // max(1, len(difference)))
    while done < n_resamples:
        take = min(rows, n_resamples - done)
        signs = np.where(rng.random((take, len(difference))) < 0.5, -1.0, 1.0)
        at_least += int((signs @ difference >= observed - _TIE_TOLERANCE * np.abs(difference).sum()).sum())
        done += take
    return MetricComparison(value_a, value_b, value_a - value_b, at_least / n_resamples, n_resamples)


# -------------------------------------------------------------------------------------------------- system level


def _segments(human, metric) -> tuple[np.ndarray, np.ndarray]:
    """(systems, segments) matrices reduced to the segments every system's humans judged."""
    h, m = _checked(human, metric, "(systems, segments)")
    judged = ~np.isnan(h).any(axis=0)
    if h.shape[0] < 2 or not judged.any():
        raise InputError(f"system-level statistics need at least 2 systems and one segment judged for every "
                         f"system; got shape {h.shape} with {int(judged.sum())} fully judged segment(s).")
    return h[:, judged], m[:, judged]


def permutation_flips(n_segments: int, n_resamples: int, seed: int | None) -> np.ndarray:
    """The permutations of :func:`pairwise_p_values`: ``(n_resamples, n_segments)``, True where a segment's two
    scores swap. ``pce.compute_pairwise_p_values``'s draw, so its seed gives its permutations:
    ``numpy.random.default_rng(seed).random(..., dtype=np.float32)``, swapped where ``np.rint`` makes it 0, i.e.
    ``<= 0.5``. One draw serves human and metric, as ``pce.py`` with a fixed seed."""
    return np.random.default_rng(seed).random((n_resamples, n_segments), dtype=np.float32) <= 0.5


def _p_values(scores: np.ndarray, flips: np.ndarray) -> np.ndarray:
    n_sys = scores.shape[0]
    first, second = np.triu_indices(n_sys, 1)
    differences = scores[first] - scores[second]  # (pairs, segments)
    # Swapping segment k changes the difference of sums by -2 d_k: the permuted difference is at least the
    # observed one when the swapped differences sum to at most 0.
    swapped = flips.astype(np.float64) @ differences.T  # (resamples, pairs)
    tolerance = _TIE_TOLERANCE * np.abs(differences).sum(axis=1)
    p = np.full((n_sys, n_sys), np.nan)
    p[first, second] = (swapped <= tolerance).mean(axis=0)
    return p


def pairwise_p_values(segment_scores, n_resamples: int = DEFAULT_SAMPLES, seed: int | None = DEFAULT_SEED
                      ) -> np.ndarray:
    """Paired permutation p values that system i is better than system j (upper triangle, NaN elsewhere) from
    ``(systems, segments)`` scores: the fraction of permutations whose difference of sums is at least the
    observed one (``pce.compute_pairwise_p_values``, in float64, the identical permutation included)."""
    _check_count(n_resamples, "n_resamples")
    s = _matrix(segment_scores, "segment_scores")
    if np.isnan(s).any():
        raise InputError("segment_scores has a NaN: a paired permutation test needs every system's score of "
                         "every segment.")
    return _p_values(s, permutation_flips(s.shape[1], n_resamples, seed))


def _spa(human_p: np.ndarray, metric: np.ndarray, flips: np.ndarray) -> float:
    metric_p = _p_values(metric, flips)
    upper = np.triu_indices(metric.shape[0], 1)
    return float(1.0 - np.mean(np.abs(human_p[upper] - metric_p[upper])))


def soft_pairwise_accuracy(human_segment_scores, metric_segment_scores, n_resamples: int = DEFAULT_SAMPLES,
                           seed: int | None = DEFAULT_SEED) -> float:
    """Soft pairwise accuracy (1 - pairwise confidence error): per pair of systems, ``1 - |p_human - p_metric|``
    with :func:`pairwise_p_values` of both from the same permutations, averaged over pairs
    (``pce.compute_one_minus_pce``, ``stats.PairwiseConfidenceError``). Scores are ``(systems, segments)``."""
    _check_count(n_resamples, "n_resamples")
    h, m = _segments(human_segment_scores, metric_segment_scores)
    flips = permutation_flips(h.shape[1], n_resamples, seed)
    return _spa(_p_values(h, flips), m, flips)


def _bootstrap(h: np.ndarray, m: np.ndarray, statistic: Callable[[np.ndarray, np.ndarray], float],
               n_resamples: int, seed: int | None) -> tuple[float, float]:
    draws = _resamples(h.shape[1], n_resamples, seed)
    return percentile_ci(np.array([statistic(h[:, d], m[:, d]) for d in draws]))


def soft_pairwise_interval(human_segment_scores, metric_segment_scores, n_resamples: int = 100,
                           n_permutations: int = DEFAULT_SAMPLES, seed: int | None = DEFAULT_SEED
                           ) -> tuple[float, float]:
    """95% bootstrap interval of soft pairwise accuracy, resampling segments (the same permutation flips, by
    position, in every resample). Costs ``n_resamples x n_permutations x segments x systems``: 100 by default."""
    _check_count(n_resamples, "n_resamples")
    _check_count(n_permutations, "n_permutations")
    h, m = _segments(human_segment_scores, metric_segment_scores)
    flips = permutation_flips(h.shape[1], n_permutations, seed)
    return _bootstrap(h, m, lambda hh, mm: _spa(_p_values(hh, flips), mm, flips), n_resamples, seed)


def _zscore(x: np.ndarray) -> np.ndarray:
    sd = x.std()
    return (x - x.mean()) / sd if sd > 0 else x - x.mean()


def _perm_both(m_a: np.ndarray, m_b: np.ndarray, statistic: Callable[[np.ndarray], float], n_resamples: int,
               seed: int | None) -> MetricComparison:
    """mt-metrics-eval's ``stats.PermutationSigDiff`` (PERM-BOTH): both metrics z-scored over all cells, each cell
    swapped between them with probability 1/2 (``default_rng(seed).random(shape) < 0.5`` per permutation)."""
    value_a, value_b = statistic(m_a), statistic(m_b)
    za, zb = _zscore(m_a), _zscore(m_b)
    observed = statistic(za) - statistic(zb)
    rng, at_least = np.random.default_rng(seed), 0
    for _ in range(n_resamples):
        swap = rng.random(za.shape) < 0.5
        at_least += int(statistic(np.where(swap, zb, za)) - statistic(np.where(swap, za, zb)) >= observed - 1e-12)
    return MetricComparison(value_a, value_b, value_a - value_b, at_least / n_resamples, n_resamples)


def compare_soft_pairwise(human_segment_scores, metric_a, metric_b, n_resamples: int = DEFAULT_SAMPLES,
                          n_permutations: int = DEFAULT_SAMPLES, seed: int | None = DEFAULT_SEED
                          ) -> MetricComparison:
    """Is metric A's soft pairwise accuracy better than B's? PERM-BOTH over segment scores (mt-metrics-eval's
    ``CompareMetricsWithPairwiseConfidenceError`` -> ``PermutationSigDiff``); the inner p values use
    :func:`permutation_flips` (``n_permutations``, ``seed``) throughout. ``(systems, segments)`` matrices."""
    _check_count(n_resamples, "n_resamples")
    _check_count(n_permutations, "n_permutations")
    h, a = _segments(human_segment_scores, metric_a)
    _, b = _segments(human_segment_scores, metric_b)
    flips = permutation_flips(h.shape[1], n_permutations, seed)
    human_p = _p_values(h, flips)
    return _perm_both(a, b, lambda m: _spa(human_p, m, flips), n_resamples, seed)


def _agreement(human_system: np.ndarray, metric_system: np.ndarray) -> SystemAccuracy:
    first, second = np.triu_indices(len(human_system), 1)
    agree = np.sign(human_system[first] - human_system[second]) == np.sign(metric_system[first]
                                                                            - metric_system[second])
    pairs = len(first)
    return SystemAccuracy(float(agree.sum()) / pairs if pairs else float("nan"), int(agree.sum()), pairs)


def system_pairwise_accuracy(human_system, metric_system) -> SystemAccuracy:
    """The fraction of system pairs whose metric difference has the sign of the human difference (mt-metrics-eval's
    ``stats.Agreement``: a human tie agrees only with an exact metric tie; a system without a human score is
    left out). One score per system in each vector."""
    h = np.array(human_system, dtype=np.float64) if np.ndim(human_system) == 1 else None
    m = np.array(metric_system, dtype=np.float64) if np.ndim(metric_system) == 1 else None
    if h is None or m is None or h.shape != m.shape:
        raise InputError(f"human_system and metric_system must be 1-D with one score per system, the same "
                         f"length; got shapes {np.shape(human_system)} and {np.shape(metric_system)}.")
    h2, m2 = _checked(h[None, :], m[None, :], "(systems,)")
    judged = ~np.isnan(h2[0])
    return _agreement(h2[0][judged], m2[0][judged])


def _system_accuracy(h: np.ndarray, m: np.ndarray) -> float:
    return _agreement(h.mean(axis=1), m.mean(axis=1)).accuracy


def system_accuracy_interval(human_segment_scores, metric_segment_scores, n_resamples: int = DEFAULT_SAMPLES,
                             seed: int | None = DEFAULT_SEED) -> tuple[float, float]:
    """95% bootstrap interval of system-level pairwise accuracy, resampling segments; a system's score is the
    mean of its drawn segments. ``(systems, segments)`` matrices."""
    _check_count(n_resamples, "n_resamples")
    h, m = _segments(human_segment_scores, metric_segment_scores)
    return _bootstrap(h, m, _system_accuracy, n_resamples, seed)


def compare_system_accuracy(human_segment_scores, metric_a, metric_b, n_resamples: int = DEFAULT_SAMPLES,
                            seed: int | None = DEFAULT_SEED) -> MetricComparison:
    """Is metric A's system-level pairwise accuracy better than B's? PERM-BOTH over segment scores (a system's
    score the mean of its segments), as ``stats.PermutationSigDiff`` with ``stats.Agreement``."""
    _check_count(n_resamples, "n_resamples")
    h, a = _segments(human_segment_scores, metric_a)
    _, b = _segments(human_segment_scores, metric_b)
    return _perm_both(a, b, lambda m: _system_accuracy(h, m), n_resamples, seed)
