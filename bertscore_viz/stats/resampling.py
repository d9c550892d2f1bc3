"""sacrebleu's bootstrap resamples, the resampled corpus scores of any metric, and percentile intervals.

A metric enters the statistics in one of two forms (the same resamples, ``numpy.random.default_rng(seed).choice(n,
size=(n_samples, n), replace=True)``, serve both and every system: the tests are paired):

* **segment scores** whose corpus score is their mean (BERTScore's F1, COMET, a human score):
  ``{system: (n,) scores}``; a resample's score is the mean of the drawn segments (:func:`bootstrap_means`);
* **sufficient statistics** whose corpus score is a function of their sum over segments (sacrebleu's chrF, BLEU,
  TER): ``{system: (n, k) statistics}`` and ``aggregate((k,) summed statistics) -> score``; a resample's score is
  ``aggregate`` of the drawn segments' summed statistics (:func:`resampled_corpus_scores`).

**Missing scores.** A paired test needs a score of every segment from every system: :func:`segment_scores` refuses
a NaN or infinite score with an :class:`~bertscore_viz.errors.InputError` naming the system and the segment (no
value stands in for a missing one here: 0 means "worst" for chrF and "best" for TER). A front end that has a rule
of its own applies it first (BERTScore counts an undefined segment as 0, as bert-score does:
:func:`bertscore_viz.evaluation.compare.counted`). A system with no segments has a NaN score and ranks last
(:func:`bertscore_viz.stats.ranking.rank_order`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping

import numpy as np

from bertscore_viz.errors import InputError, shorten

__all__ = [
    "DEFAULT_SAMPLES", "DEFAULT_SEED", "HOLM_HEADROOM", "INTERVAL_SAMPLES", "MAX_RESAMPLED_CELLS", "MAX_SAMPLES",
    "bootstrap_interval", "bootstrap_means", "percentile_ci", "resample_indices", "resampled_corpus_scores",
    "resamples_for", "segment_scores", "smallest_p",
]

#: sacrebleu's ``SACREBLEU_SEED``: the seed of every resampling and randomization unless one is given.
DEFAULT_SEED = 12345
#: sacrebleu's bootstrap resamples (``--paired-bs-n``).
DEFAULT_SAMPLES = 1000
#: Resamples drawn per block, so 10,000 segments x 1,000 resamples never hold a 10^7 index matrix at once.
_BLOCK_CELLS = 2_000_000
#: Under Holm, the resamples are raised until the smallest adjusted p, family / (n + 1), is this far below alpha.
HOLM_HEADROOM = 10
#: Resamples an interval is read from (the first ones drawn), with or without Holm's extra resamples for the tests.
INTERVAL_SAMPLES = DEFAULT_SAMPLES
#: Ceilings of that raise: resamples, and resampled cells (resamples x segments: the bootstrap's time and memory).
MAX_SAMPLES = 100_000
MAX_RESAMPLED_CELLS = 300_000_000


def resamples_for(n_systems: int, n_segments: int, correction: str | None, alpha: float = 0.05,
                  base: int = DEFAULT_SAMPLES) -> int:
    """How many resamples a test needs so that it can reach significance.

    With ``n`` resamples no p is below ``1 / (n + 1)``; Holm multiplies the smallest of the k (k - 1) / 2 pairwise
    p values by their number, so with 1,000 resamples and 11 or more systems (55 pairs) no pair can ever be
    significant at 0.05. Without correction: sacrebleu's ``base`` (1,000), its numbers unchanged. Under Holm:
    enough that ``family / (n + 1)`` is :data:`HOLM_HEADROOM` times below ``alpha``, at least ``base``, at most
    :data:`MAX_SAMPLES` and :data:`MAX_RESAMPLED_CELLS` / segments.
    """
    if correction != "holm":
        return base
    family = max(1, n_systems * (n_systems - 1) // 2)
    needed = 1000 * math.ceil(HOLM_HEADROOM * family / alpha / 1000)  # a round number: family / (n + 1) < the aim
    cap = min(MAX_SAMPLES, max(base, MAX_RESAMPLED_CELLS // max(1, n_segments)))
    return int(min(max(base, needed), cap))


def smallest_p(n_samples: int, family: int, correction: str | None) -> float:
    """The smallest p a test can report: ``1 / (n + 1)``, times the family size under Holm (at most 1)."""
    p = 1.0 / (n_samples + 1)
    return min(1.0, p * family) if correction == "holm" else p


def segment_scores(scores: Mapping[str, object], what: str = "segments") -> dict[str, np.ndarray]:
    """``{system: (n,) float64}`` after checking that every system has one finite score per segment.

    Raises:
        InputError: systems of different lengths, a score array that is not 1-D, or a NaN / infinite score.
    """
    arrays = {k: np.asarray(v, dtype=np.float64) for k, v in scores.items()}
    for name, v in arrays.items():
        if v.ndim != 1:
            raise InputError(f"Expected one score per segment for system {shorten(name)} (a 1-D array), got shape "
                             f"{v.shape}.")
        bad = np.flatnonzero(~np.isfinite(v))
        if len(bad):
            raise InputError(f"System {shorten(name)} has {len(bad)} missing (NaN or infinite) score(s), first at "
                             f"segment {int(bad[0])}: a paired test needs every system's score of every segment. "
                             "Drop those segments for every system, or give them a score.")
    lengths = sorted({len(v) for v in arrays.values()})
    if len(lengths) > 1:
        raise InputError(f"All systems need the same number of {what}, got {lengths}.")
    return arrays


def resample_indices(n: int, n_samples: int, seed: int | None = DEFAULT_SEED,
                     max_cells: int | None = None) -> Iterator[tuple[int, int, np.ndarray]]:
    """sacrebleu's resamples, ``numpy.random.default_rng(seed).choice(n, size=(n_samples, n), replace=True)``, drawn
    in row blocks of at most ``max_cells`` indices (default a module constant): the blocks consume the generator
    exactly as one call does, so their rows are that call's rows, without holding ``n_samples x n`` indices at once.

    Args:
        n: segments (at least 1); n_samples: resamples; seed: None = not reproducible.

    Yields:
        ``(start, stop, idx)``: resamples ``start`` to ``stop`` as an ``(stop - start, n)`` int64 array.
    """
    rng = np.random.default_rng(seed)
    block = max(1, (_BLOCK_CELLS if max_cells is None else max_cells) // max(1, n))
    for start in range(0, n_samples, block):
        stop = min(n_samples, start + block)
        yield start, stop, rng.choice(n, size=(stop - start, n), replace=True)


def bootstrap_means(scores: Mapping[str, object], n_samples: int = DEFAULT_SAMPLES,
                    seed: int | None = DEFAULT_SEED,
                    progress: Callable[[int, int], None] | None = None) -> dict[str, np.ndarray]:
    """The mean of each system's segment scores in each resample; the same resamples for every system.

    Args:
        scores: ``{system: (n,) segment scores}``, all of the same length ``n``.
        n_samples: number of resamples.
        seed: seed of ``numpy.random.default_rng`` (None = not reproducible).
        progress: ``progress(done, total)`` in resamples, after each block.

    Returns:
        ``{system: (n_samples,) float64}``; NaN for no segments.

    Raises:
        InputError: systems with different numbers of segments.
    """
    arrays = {k: np.asarray(v, dtype=np.float64) for k, v in scores.items()}
    lengths = {len(v) for v in arrays.values()}
    if len(lengths) > 1:
        raise InputError(f"All systems need the same number of segments, got {sorted(lengths)}.")
    n = lengths.pop() if lengths else 0
    out = {k: np.empty(n_samples, dtype=np.float64) for k in arrays}
    if n == 0:
        for v in out.values():
            v.fill(np.nan)
        return out
    for start, stop, idx in resample_indices(n, n_samples, seed):
        for k, v in arrays.items():
            out[k][start:stop] = v[idx].mean(axis=1)
        if progress is not None:
            progress(stop, n_samples)
    return out


def resampled_corpus_scores(statistics: Mapping[str, np.ndarray], aggregate: Callable[[np.ndarray], float],
                            n_samples: int = DEFAULT_SAMPLES, seed: int | None = DEFAULT_SEED,
                            progress: Callable[[int, int], None] | None = None) -> dict[str, np.ndarray]:
    """Each system's corpus score in each resample, for a metric computed from summed per-segment statistics.

    In each resample a system's statistics of the drawn segments are summed (in their own dtype: sacrebleu's are
    float32) and ``aggregate`` turns the sum into the score (sacrebleu's ``_compute_score_from_stats``).

    Args:
        statistics: ``{system: (n, k) statistics}``, every system on the same ``n`` segments.
        aggregate: ``(k,) summed statistics -> corpus score``.
        n_samples, seed: the resamples (:func:`resample_indices`).
        progress: ``progress(done, total)`` in resampled scores (systems x resamples).

    Returns:
        ``{system: (n_samples,) float64}``.
    """
    n = len(next(iter(statistics.values()))) if statistics else 0
    out = {s: np.empty(n_samples, dtype=np.float64) for s in statistics}
    total = n_samples * len(statistics)
    for start, stop, idx in resample_indices(n, n_samples, seed):
        for k, (system, values) in enumerate(statistics.items()):
            column = out[system]
            for r, rows in enumerate(idx):
                column[start + r] = aggregate(values[rows].sum(0))
            if progress is not None:
                progress(start * len(statistics) + (k + 1) * (stop - start), total)
    return out


def percentile_ci(samples: np.ndarray) -> tuple[float, float]:
    """95% interval of resampled scores, with sacrebleu's ``estimate_ci`` indices (``n // 40`` from each end)."""
    s = np.sort(np.asarray(samples, dtype=np.float64))
    n = len(s)
    if n == 0 or np.isnan(s).all():
        return float("nan"), float("nan")
    lo = n // 40
    return float(s[lo]), float(s[n - lo - 1])


def bootstrap_interval(values, n_samples: int = DEFAULT_SAMPLES, seed: int | None = DEFAULT_SEED
                       ) -> tuple[float, float]:
    """The 95% bootstrap interval of the mean of ``values`` (:func:`bootstrap_means` and :func:`percentile_ci`):
    the interval the page gives a system, for any group of segments. ``(nan, nan)`` for no values."""
    return percentile_ci(bootstrap_means({"x": values}, n_samples, seed)["x"])
