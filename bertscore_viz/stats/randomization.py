"""Paired approximate randomization (AR) over segment scores, as sacrebleu's ``--paired-ar`` does it.

Matches sacrebleu 2.x ``sacrebleu.significance._paired_ar_test`` (after multeval's
``StratifiedApproximateRandomizationTest``) for a corpus score that is the mean of segment scores (BERTScore's
system score):

* each trial swaps the two systems' outputs on a random half of the segments: the swap mask is
  ``numpy.random.default_rng(seed).integers(2, size=(n_trials, n), dtype=bool)``, one row per trial; where it is
  True the pseudo system A takes the baseline's segment score and B the system's, elsewhere the other way round;
  default ``n_trials = 10000`` and ``seed = 12345`` (sacrebleu's ``--paired-ar-n`` and ``SACREBLEU_SEED``), and the
  same masks for every system compared with the baseline (sacrebleu seeds each comparison alike);
* test statistic: the absolute difference of the two means; ``c`` counts the trials whose absolute difference of
  pseudo-system means is larger than the observed one, and ``p = (c + 1) / (n_trials + 1)`` (two-sided: "is there
  a difference?").

Two deviations, both where sacrebleu's answer depends on floating-point noise or is plainly wrong:

* two systems with identical segment scores, or a test set of one segment, get ``p = 1`` (sacrebleu gives
  ``1 / (n_trials + 1)``: every trial's difference is 0 and none is larger than 0), as the paired bootstrap does in
  :func:`bertscore_viz.stats.paired.p_value`;
* a trial whose difference equals the observed one up to rounding (:data:`TIE_TOLERANCE`) is a tie, not larger, as
  in exact arithmetic. Ties are frequent when the systems agree on many segments (swapping those changes nothing),
  and sacrebleu counts such a tie, or not, depending on the order of a floating-point sum.

Seed 0 is a seed here (sacrebleu takes 0 for "no seed"). The masks are drawn in blocks of rows whose cells are a
multiple of 32 (:data:`_BLOCK_CELLS`), which consumes the generator exactly as one call for the whole matrix does
(numpy draws booleans 32 bits at a time), so memory stays bounded and the masks are sacrebleu's.

With several systems each is tested against one baseline (k - 1 tests, sacrebleu's design); ``correction="holm"``
adjusts those k - 1 p values with Holm's step-down method (their family). Each test gives a
:class:`~bertscore_viz.stats.paired.PairedResult` (``method="randomization"``, no one-sided p), the bootstrap's
result type.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from bertscore_viz.errors import InputError, shorten
from bertscore_viz.stats.corrections import check_correction, holm
from bertscore_viz.stats.paired import RANDOMIZATION, PairedResult
from bertscore_viz.stats.resampling import DEFAULT_SEED, segment_scores

__all__ = ["DEFAULT_TRIALS", "TIE_TOLERANCE", "Randomization", "ar_statistics", "ar_p_value",
           "paired_randomization"]

#: sacrebleu's default number of AR trials (``--paired-ar-n``).
DEFAULT_TRIALS = 10_000
#: Trial differences within this much (times the largest absolute score, at least 1) of the observed difference are
#: ties: far above the rounding of a sum of segment means, far below any real difference of two means.
TIE_TOLERANCE = 1e-10
#: Mask cells drawn per block (a multiple of 32 rows is used, so blocks reproduce one whole draw).
_BLOCK_CELLS = 2_000_000


def _block_rows(n_segments: int, n_trials: int) -> int:
    """Rows of masks per block: a multiple of 32 (so block x segments is a multiple of 32 bits), about
    :data:`_BLOCK_CELLS` cells."""
    rows = max(32, (_BLOCK_CELLS // max(1, n_segments)) // 32 * 32)
    return min(rows, max(32, n_trials))


def ar_statistics(baseline: np.ndarray, systems: np.ndarray, n_trials: int = DEFAULT_TRIALS,
                  seed: int | None = DEFAULT_SEED, progress: Callable[[int, int], None] | None = None,
                  block_rows: int | None = None) -> np.ndarray:
    """Each trial's absolute difference of the two pseudo systems' means, for every system against the baseline.

    Args:
        baseline: ``(n,)`` the baseline's segment scores.
        systems: ``(n, m)`` the segment scores of ``m`` systems (one column each).
        n_trials: trials (rows of swap masks).
        seed: seed of ``numpy.random.default_rng`` (None = not reproducible).
        progress: ``progress(done, total)`` in trials, after each block.
        block_rows: rows per block (default: :func:`_block_rows`); must be a multiple of 32 unless it covers every
            trial, or the masks would differ from sacrebleu's.

    Returns:
        ``(n_trials, m)`` float64: ``|mean(A) - mean(B)|`` of each trial, A taking the baseline's score where the
        mask is True and the system's elsewhere, B the other way round.

    Raises:
        InputError: shapes that do not fit, or a block size that would change the masks.
    """
    base = np.asarray(baseline, dtype=np.float64)
    other = np.asarray(systems, dtype=np.float64)
    if base.ndim != 1 or other.ndim != 2 or other.shape[0] != base.shape[0]:
        raise InputError(f"Expected baseline (n,) and systems (n, m); got {base.shape} and {other.shape}.")
    n, m = other.shape
    rows = _block_rows(n, n_trials) if block_rows is None else int(block_rows)
    if rows < n_trials and rows % 32:
        raise InputError(f"block_rows must be a multiple of 32 (got {rows}): other blocks draw other masks.")
    both = np.concatenate([base[:, None], other], axis=1)  # (n, 1 + m): the baseline first
    out = np.empty((n_trials, m), dtype=np.float64)
    rng = np.random.default_rng(seed)
    for start in range(0, n_trials, rows):
        stop = min(n_trials, start + rows)
        keep = rng.integers(2, size=(stop - start, n), dtype=bool)
        # as sacrebleu: the sums of each side's statistics, then the score of each pseudo system (sum / n)
        kept = keep.astype(np.float64) @ both
        swapped = (~keep).astype(np.float64) @ both
        a = kept[:, :1] + swapped[:, 1:]
        b = swapped[:, :1] + kept[:, 1:]
        out[start:stop] = np.abs(a / n - b / n)
        if progress is not None:
            progress(stop, n_trials)
    return out


def _p_from(trials: np.ndarray, system: np.ndarray, baseline: np.ndarray) -> float:
    """``(c + 1) / (n_trials + 1)``; ties within :data:`TIE_TOLERANCE` are not larger."""
    n = len(system)
    if n < 2 or np.array_equal(system, baseline):
        return 1.0  # identical systems, or one segment: every trial ties the observed difference
    observed = abs(float(np.sum(baseline)) / n - float(np.sum(system)) / n)
    scale = max(1.0, float(np.max(np.abs(system))), float(np.max(np.abs(baseline))))
    c = int(np.sum(trials > observed + TIE_TOLERANCE * scale))
    return (c + 1) / (len(trials) + 1)


def ar_p_value(system, baseline, n_trials: int = DEFAULT_TRIALS, seed: int | None = DEFAULT_SEED) -> float:
    """sacrebleu's paired approximate-randomization p of a system against a baseline (two-sided).

    Args:
        system, baseline: ``(n,)`` segment scores of the same segments.
        n_trials: trials; seed: the generator's seed.

    Returns:
        ``(c + 1) / (n_trials + 1)``; 1.0 for identical scores or one segment.

    Raises:
        InputError: the two arrays differ in length, or ``n_trials`` is below 1.
    """
    sys_ = np.asarray(system, dtype=np.float64)
    base = np.asarray(baseline, dtype=np.float64)
    if sys_.shape != base.shape or sys_.ndim != 1:
        raise InputError(f"Expected two (n,) arrays of segment scores; got {sys_.shape} and {base.shape}.")
    if n_trials < 1:
        raise InputError(f"n_trials must be at least 1, got {n_trials}.")
    if len(sys_) < 2 or np.array_equal(sys_, base):
        return 1.0
    return _p_from(ar_statistics(base, sys_[:, None], n_trials, seed)[:, 0], sys_, base)


@dataclass(frozen=True)
class Randomization:
    """Approximate randomization of every system against one baseline, on one metric.

    Attributes:
        metric: e.g. ``"F1"``; baseline: the baseline system; n_trials, seed: the trials drawn.
        results: one :class:`~bertscore_viz.stats.paired.PairedResult` per other system, in the order given;
            correction: None or ``"holm"``; alpha: the level.
    """

    metric: str
    baseline: str
    n_trials: int
    seed: int | None
    results: tuple[PairedResult, ...]
    correction: str | None = None
    alpha: float = 0.05

    def result(self, system: str) -> PairedResult:
        for r in self.results:
            if r.system == system:
                return r
        raise KeyError(f"No test of {system!r} against {self.baseline!r}; have {[r.system for r in self.results]}.")

    @property
    def smallest_p(self) -> float:
        """The smallest p a test here can report: ``1 / (n_trials + 1)``, times the family under Holm (at most 1)."""
        p = 1.0 / (self.n_trials + 1)
        return min(1.0, p * len(self.results)) if self.correction == "holm" else p

    def as_dict(self) -> dict:
        return {"metric": self.metric, "baseline": self.baseline, "n_trials": self.n_trials, "seed": self.seed,
                "method": "paired approximate randomization (sacrebleu --paired-ar), p = (c + 1) / (n + 1)",
                "alpha": self.alpha, "correction": self.correction, "family": len(self.results),
                "versus_baseline": [r.as_dict() | {"sentence": r.sentence(self.metric, self.alpha)}
                                    for r in self.results]}


def paired_randomization(scores: Mapping[str, np.ndarray], baseline: str, metric: str = "F1",
                         n_trials: int = DEFAULT_TRIALS, seed: int | None = DEFAULT_SEED,
                         correction: str | None = None, alpha: float = 0.05,
                         progress: Callable[[int, int], None] | None = None,
                         higher_is_better: bool = True) -> Randomization:
    """Every system against ``baseline`` by approximate randomization (one set of trials shared by all, as
    sacrebleu's equal seeds give).

    Args:
        scores: ``{system: (n,) segment scores}``, all of the same length and finite; the results keep this order.
        baseline: the system every other one is compared with.
        metric: the name of the scores (for sentences); higher_is_better: False when lower is better (the test is
            two-sided: only the sentences' "better" reads it).
        n_trials: trials (sacrebleu: 10,000); seed: the generator's seed (sacrebleu's, :data:`DEFAULT_SEED`).
        correction: None, or ``"holm"`` over the k - 1 tests.
        progress: ``progress(done, total)`` in trials.

    Returns:
        :class:`Randomization`.

    Raises:
        InputError: an unknown baseline or correction, fewer than two systems, unequal lengths, a missing score,
        ``n_trials`` < 1.
    """
    check_correction(correction)
    if baseline not in scores:
        raise InputError(f"Unknown baseline system {shorten(baseline)}; have {list(scores)}.")
    if len(scores) < 2:
        raise InputError("Approximate randomization needs at least two systems.")
    if n_trials < 1:
        raise InputError(f"n_trials must be at least 1, got {n_trials}.")
    arrays = segment_scores(scores)
    others = [k for k in arrays if k != baseline]
    base = arrays[baseline]
    trials = ar_statistics(base, np.stack([arrays[k] for k in others], axis=1), n_trials, seed, progress)
    raw = np.array([_p_from(trials[:, j], arrays[k], base) for j, k in enumerate(others)])
    adjusted = holm(raw) if correction == "holm" else raw
    mean_b = float(base.mean()) if len(base) else float("nan")
    results = tuple(PairedResult(k, baseline, float(arrays[k].mean()) if len(base) else float("nan"), mean_b,
                                 float(adjusted[j]), None, float(raw[j]), correction, len(others), higher_is_better,
                                 RANDOMIZATION)
                    for j, k in enumerate(others))
    return Randomization(metric, baseline, int(n_trials), seed, results, correction, alpha)
