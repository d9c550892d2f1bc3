"""Paired bootstrap resampling and bootstrap confidence intervals over segment scores, as sacrebleu does them.

Matches sacrebleu 2.x ``sacrebleu.significance`` (``_paired_bs_test``, ``_bootstrap_resample``,
``estimate_ci``, ``_compute_p_value``) for a corpus score that is the mean of segment scores (BERTScore's
system score):

* indices ``numpy.random.default_rng(seed).choice(n, size=(n_samples, n), replace=True)``, the same resamples
  for every system (paired), default ``n_samples = 1000`` and ``seed = 12345`` (sacrebleu's ``SACREBLEU_SEED``);
* test statistic: the absolute difference of the two systems' means; the resampled absolute differences are
  centred on their mean, ``c`` counts centred differences larger than the observed one, and
  ``p = (c + 1) / (n_samples + 1)`` (two-sided: "is there a difference?"; the direction is read from the means);
* 95% interval: the resampled means sorted, the values at ``n // 40`` and ``n - n // 40 - 1``.

One deviation: two systems with identical segment scores, or a test set of one segment, get ``p = 1``
(sacrebleu gives ``1 / (n + 1)`` because every centred difference is 0 and none is larger than 0, which would
call a system significantly different from itself, or from anything on one segment).

Also given: the one-sided p of Koehn (2004), ``(c + 1) / (n + 1)`` where ``c`` counts the resamples in which
the baseline's mean is at least the system's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

DEFAULT_SEED = 12345
DEFAULT_SAMPLES = 1000
#: Resamples drawn per block, so 10,000 segments x 1,000 resamples never hold a 10^7 index matrix at once.
_BLOCK_CELLS = 2_000_000


def bootstrap_means(scores: dict[str, np.ndarray], n_samples: int = DEFAULT_SAMPLES,
                    seed: int | None = DEFAULT_SEED) -> dict[str, np.ndarray]:
    """The mean of each system's segment scores in each resample; the same resamples for every system.

    Args:
        scores: ``{system: (n,) segment scores}``, all of the same length ``n``.
        n_samples: number of resamples.
        seed: seed of ``numpy.random.default_rng`` (None = not reproducible).

    Returns:
        ``{system: (n_samples,) float64}``.
    """
    arrays = {k: np.asarray(v, dtype=np.float64) for k, v in scores.items()}
    lengths = {len(v) for v in arrays.values()}
    if len(lengths) > 1:
        raise ValueError(f"All systems need the same number of segments, got {sorted(lengths)}.")
    n = lengths.pop() if lengths else 0
    out = {k: np.empty(n_samples, dtype=np.float64) for k in arrays}
    if n == 0:
        for v in out.values():
            v.fill(np.nan)
        return out
    rng = np.random.default_rng(seed)
    # Drawing the (n_samples, n) indices in row blocks consumes the generator exactly as one call does.
    block = max(1, _BLOCK_CELLS // n)
    for start in range(0, n_samples, block):
        stop = min(n_samples, start + block)
        idx = rng.choice(n, size=(stop - start, n), replace=True)
        for k, v in arrays.items():
            out[k][start:stop] = v[idx].mean(axis=1)
    return out


def percentile_ci(samples: np.ndarray) -> tuple[float, float]:
    """95% interval of resampled means, with sacrebleu's ``estimate_ci`` indices (``n // 40`` from each end)."""
    s = np.sort(np.asarray(samples, dtype=np.float64))
    n = len(s)
    if n == 0 or np.isnan(s).all():
        return float("nan"), float("nan")
    lo = n // 40
    return float(s[lo]), float(s[n - lo - 1])


def p_value(system: np.ndarray, baseline: np.ndarray, system_samples: np.ndarray,
            baseline_samples: np.ndarray) -> float:
    """sacrebleu's paired-bootstrap p of a system against a baseline (two-sided), from the resampled means."""
    system = np.asarray(system, dtype=np.float64)
    baseline = np.asarray(baseline, dtype=np.float64)
    if len(system) < 2 or (system.shape == baseline.shape and np.array_equal(system, baseline)):
        return 1.0  # identical systems, or one segment (every resample is the same): no evidence of a difference
    diff = abs(float(system.mean()) - float(baseline.mean()))
    sample_diffs = np.abs(system_samples - baseline_samples)
    stats = sample_diffs - sample_diffs.mean()
    c = int(np.sum(stats > diff))
    return (c + 1) / (len(stats) + 1)


def p_value_one_sided(system_samples: np.ndarray, baseline_samples: np.ndarray) -> float:
    """Koehn's one-sided p: ``(c + 1) / (n + 1)``, c = resamples where the baseline's mean >= the system's."""
    c = int(np.sum(np.asarray(baseline_samples) >= np.asarray(system_samples)))
    return (c + 1) / (len(system_samples) + 1)


@dataclass(frozen=True)
class SystemInterval:
    system: str
    mean: float
    low: float
    high: float

    def as_dict(self) -> dict:
        return {"system": self.system, "mean": self.mean, "ci_low": self.low, "ci_high": self.high}


@dataclass(frozen=True)
class PairedResult:
    """One system against a baseline system.

    Attributes:
        system, baseline: names; system_mean, baseline_mean: corpus means; difference: system - baseline.
        p: sacrebleu's two-sided paired-bootstrap p; p_one_sided: Koehn's p that the system is better.
    """

    system: str
    baseline: str
    system_mean: float
    baseline_mean: float
    p: float
    p_one_sided: float

    @property
    def difference(self) -> float:
        return self.system_mean - self.baseline_mean

    def significant(self, alpha: float = 0.05) -> bool:
        return self.p < alpha

    def sentence(self, metric: str = "F1", alpha: float = 0.05) -> str:
        return describe(self.system, self.baseline, self.system_mean, self.baseline_mean, self.p, metric, alpha)

    def as_dict(self) -> dict:
        return {"system": self.system, "baseline": self.baseline, "system_mean": self.system_mean,
                "baseline_mean": self.baseline_mean, "difference": self.difference, "p": self.p,
                "p_one_sided": self.p_one_sided}


def format_p(p: float) -> str:
    """``0.002``; the smallest p of 1,000 resamples (1/1001) shows as ``0.001``."""
    return f"{p:.3f}"


def describe(system: str, baseline: str, system_mean: float, baseline_mean: float, p: float,
             metric: str = "F1", alpha: float = 0.05) -> str:
    """A plain sentence: ``"B is better than A on F1 (p = 0.002)"`` or ``"... not significantly different ..."``.

    >>> describe("B", "A", 0.9, 0.8, 0.002)
    'B is better than A on F1 (p = 0.002)'
    >>> describe("B", "A", 0.80, 0.81, 0.4)
    'B and A are not significantly different on F1 (p = 0.400)'
    """
    if p < alpha and system_mean != baseline_mean:
        better, worse = (system, baseline) if system_mean > baseline_mean else (baseline, system)
        return f"{better} is better than {worse} on {metric} (p = {format_p(p)})"
    return f"{system} and {baseline} are not significantly different on {metric} (p = {format_p(p)})"


@dataclass(frozen=True)
class Significance:
    """Intervals per system, tests against a baseline and the pairwise matrix, for one metric.

    Attributes:
        metric: e.g. ``"F1"``; n_samples, seed: the resampling used (shown with the results).
        intervals: one per system, in the order given.
        versus_baseline: every other system against ``baseline``.
        matrix: ``(k, k)`` two-sided p of every pair (1 on the diagonal), in the order of ``systems``.
    """

    metric: str
    n_samples: int
    seed: int | None
    systems: tuple[str, ...]
    baseline: str
    intervals: tuple[SystemInterval, ...]
    versus_baseline: tuple[PairedResult, ...]
    matrix: np.ndarray

    def interval(self, system: str) -> SystemInterval:
        return next(i for i in self.intervals if i.system == system)

    def pair(self, a: str, b: str) -> float:
        return float(self.matrix[self.systems.index(a), self.systems.index(b)])

    def as_dict(self) -> dict:
        return {"metric": self.metric, "n_samples": self.n_samples, "seed": self.seed,
                "method": "paired bootstrap resampling (sacrebleu), p = (c + 1) / (n + 1)",
                "systems": list(self.systems), "baseline": self.baseline,
                "intervals": [i.as_dict() for i in self.intervals],
                "versus_baseline": [r.as_dict() | {"sentence": r.sentence(self.metric)} for r in self.versus_baseline],
                "pairwise_p": {a: {b: float(self.matrix[i, j]) for j, b in enumerate(self.systems)}
                               for i, a in enumerate(self.systems)}}


def analyse(scores: dict[str, np.ndarray], baseline: str | None = None, metric: str = "F1",
            n_samples: int = DEFAULT_SAMPLES, seed: int | None = DEFAULT_SEED) -> Significance:
    """Confidence intervals, tests against ``baseline`` (default: the first system) and all pairs.

    Args:
        scores: ``{system: (n,) segment scores}``.
    """
    names = tuple(scores)
    if not names:
        raise ValueError("No systems to analyse.")
    baseline = names[0] if baseline is None else baseline
    if baseline not in scores:
        raise ValueError(f"Unknown baseline system {baseline!r}; have {list(names)}.")
    arrays = {k: np.asarray(v, dtype=np.float64) for k, v in scores.items()}
    samples = bootstrap_means(arrays, n_samples, seed)
    means = {k: float(v.mean()) if len(v) else float("nan") for k, v in arrays.items()}
    intervals = tuple(SystemInterval(k, means[k], *percentile_ci(samples[k])) for k in names)
    k = len(names)
    matrix = np.ones((k, k))
    for i in range(k):
        for j in range(i + 1, k):
            a, b = names[i], names[j]
            matrix[i, j] = matrix[j, i] = p_value(arrays[a], arrays[b], samples[a], samples[b])
    versus = tuple(
        PairedResult(s, baseline, means[s], means[baseline], float(matrix[names.index(s), names.index(baseline)]),
                     p_value_one_sided(samples[s], samples[baseline]))
        for s in names if s != baseline)
    return Significance(metric, n_samples, seed, names, baseline, intervals, versus, matrix)
