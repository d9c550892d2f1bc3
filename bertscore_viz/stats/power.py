"""Statistical power of the Compare page's paired test: the smallest difference a test set can detect, and the test
set a difference needs.

**The test.** The Compare page tests two systems with :mod:`bertscore_viz.stats.analysis`: sacrebleu's
paired bootstrap (``B = 1000`` resamples of the segments, seed 12345). It depends on the per-segment differences
``d = A - B`` only: with ``m_b`` the mean of ``d`` in resample ``b``, the statistic ``|m_b|`` is centred on its mean
over the resamples, ``c`` counts centred values above the observed ``|mean(d)|``, and the pair is called different
when ``p = (c + 1) / (B + 1) < alpha``.

**Its critical value.** The bootstrap distribution of ``m_b`` is close to ``N(mean(d), se^2)`` with
``se = sd_0(d) / sqrt(n)`` (``sd_0``: the plug-in standard deviation, divisor ``n``, which is what resampling
sees). In units of ``se``, with ``t = |mean(d)| / se`` and ``X ~ N(t, 1)``, the p value is
``P(|X| - E|X| > t)``, where ``E|X| = t (1 - 2 Phi(-t)) + 2 phi(t)`` (folded normal). The test rejects when ``t``
exceeds the ``k`` that solves ``P(|X| - E|X| > k) = alpha_B``, with ``alpha_B = (c_max + 0.5) / B`` and
``c_max = ceil(alpha (B + 1)) - 2`` the largest count that still rejects. For ``alpha = 0.05`` and ``B = 1000``,
``k = 1.60``: once ``|mean(d)|`` is a few standard errors from 0, ``|m_b|`` is ``m_b`` and the centred statistic is
``N(0, se^2)``, so the test is one tail of width alpha on each side, not two tails of alpha / 2. The page's test
therefore rejects about 11% of true nulls at alpha = 0.05 (shown by :func:`simulate_power` at ``delta = 0``);
``k = 1.96`` would be the critical value of a two-sided z test at 5%.

**Power and the minimum detectable difference (MDE).** With ``sd`` the observed standard deviation of ``d``
(divisor ``n - 1``) as the estimate of the segments' spread, a test set of ``n`` segments whose true mean
difference is ``delta`` gives ``mean(d) ~ N(delta, sd^2 / n)`` (normal approximation) and rejects when
``|mean(d)| > k sd sqrt((n - 1) / n) / sqrt(n)``, so

    power(delta, n) = Phi(delta / s - k') + Phi(-delta / s - k'),   s = sd / sqrt(n),   k' = k sqrt((n - 1) / n)

and the MDE at power ``1 - beta`` is the ``delta`` where this reaches ``1 - beta`` (solved exactly; the second term
is negligible there), i.e. ``MDE = (k' + z_{1-beta}) sd / sqrt(n)``: 2.44 standard errors at 80% power, alpha 0.05
and 1,000 resamples. The segments needed for a difference ``delta`` are the smallest ``n`` whose power reaches
``1 - beta``, about ``((k + z_{1-beta}) sd / delta)^2``.

**Validation.** :func:`simulate_power` draws test sets of ``n`` segments from the observed differences shifted to
mean ``delta`` (so their spread and shape are the observed ones), runs the page's own test on each
(:func:`~bertscore_viz.stats.resampling.bootstrap_means` and
:func:`~bertscore_viz.stats.paired.p_value`) and reports the rejection rate with its Monte-Carlo
standard error; ``tests/unit/test_power.py`` holds the formula to it.

Under Holm's correction the page compares ``p`` with a stricter threshold that depends on the other pairs; passing
``alpha / family`` (Bonferroni, Holm's first step) gives a conservative MDE.

numpy and the standard library only: the normal distribution is :func:`normal_cdf` (``math.erfc``) and
:func:`normal_quantile` (Acklam's approximation refined by one Halley step, exact to about 1e-15).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from bertscore_viz.errors import InputError, shorten
from bertscore_viz.stats.paired import p_value
from bertscore_viz.stats.resampling import DEFAULT_SAMPLES, DEFAULT_SEED, bootstrap_means

__all__ = [
    "DEFAULT_ALPHA",
    "DEFAULT_POWER",
    "MAX_SEGMENTS",
    "PowerAnalysis",
    "PowerSimulation",
    "SegmentsNeeded",
    "critical_value",
    "normal_cdf",
    "normal_pdf",
    "normal_quantile",
    "paired_differences",
    "power_analysis",
    "power_of",
    "simulate_power",
]

DEFAULT_ALPHA = 0.05
DEFAULT_POWER = 0.80
#: Largest number of segments :meth:`PowerAnalysis.segments_needed` reports; beyond it the answer is "more".
MAX_SEGMENTS = 10 ** 12

# Acklam's rational approximation of the normal quantile (coefficients as published).
_A = (-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02, 1.383577518672690e+02,
      -3.066479806614716e+01, 2.506628277459239e+00)
_B = (-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02, 6.680131188771972e+01,
      -1.328068155288572e+01)
_C = (-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00, -2.549732539343734e+00,
      4.374664141464968e+00, 2.938163982698783e+00)
_D = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00)
_P_LOW = 0.02425


def normal_cdf(x: float) -> float:
    """Standard normal distribution function ``Phi(x)`` (``math.erfc``: accurate in both tails)."""
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def normal_pdf(x: float) -> float:
    """Standard normal density ``phi(x)``."""
    return math.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)


def normal_quantile(p: float) -> float:
    """The standard normal quantile ``Phi^-1(p)``.

    Acklam's rational approximation (relative error below 1.2e-9) refined by one Halley step on
    :func:`normal_cdf`, which brings it to machine precision.

    Args:
        p: a probability.

    Returns:
        ``-inf`` at 0, ``inf`` at 1, NaN outside [0, 1] or for NaN.
    """
    p = float(p)
    if not 0.0 <= p <= 1.0:
        return math.nan
    if p == 0.0:
        return -math.inf
    if p == 1.0:
        return math.inf
    if p < _P_LOW or p > 1.0 - _P_LOW:
        q = math.sqrt(-2.0 * math.log(p if p < _P_LOW else 1.0 - p))
        x = (((((_C[0] * q + _C[1]) * q + _C[2]) * q + _C[3]) * q + _C[4]) * q + _C[5]) / \
            ((((_D[0] * q + _D[1]) * q + _D[2]) * q + _D[3]) * q + 1.0)
        x = x if p < _P_LOW else -x
    else:
        q = p - 0.5
        r = q * q
        x = (((((_A[0] * r + _A[1]) * r + _A[2]) * r + _A[3]) * r + _A[4]) * r + _A[5]) * q / \
            (((((_B[0] * r + _B[1]) * r + _B[2]) * r + _B[3]) * r + _B[4]) * r + 1.0)
    # one Halley step; Phi(x) - p is taken from the nearer tail (Phi(x) - p = (1 - p) - Phi(-x)) to keep precision
    e = normal_cdf(x) - p if p < 0.5 else (1.0 - p) - normal_cdf(-x)
    u = e * math.sqrt(2.0 * math.pi) * math.exp(0.5 * x * x)
    return x - u / (1.0 + 0.5 * x * u)


def _bootstrap_tail(t: float) -> float:
    """``P(|X| - E|X| > t)`` for ``X ~ N(t, 1)``: the p value (continuous) of the centred bootstrap test at an
    observed mean difference of ``t`` standard errors."""
    mean_abs = t * (1.0 - 2.0 * normal_cdf(-t)) + 2.0 * normal_pdf(t)
    u = mean_abs + t
    return normal_cdf(t - u) + normal_cdf(-t - u)


def _largest_rejecting_count(alpha: float, n_samples: int) -> int:
    """The largest ``c`` with ``(c + 1) / (n_samples + 1) < alpha``; -1 when no count rejects."""
    m = alpha * (n_samples + 1)
    return int(math.ceil(m)) - 2


def critical_value(alpha: float = DEFAULT_ALPHA, n_samples: int = DEFAULT_SAMPLES) -> float:
    """The page's paired bootstrap test's critical value ``k``, in standard errors of the mean difference.

    Solves ``P(|X| - E|X| > k) = alpha_B`` for ``X ~ N(k, 1)`` by bisection, with
    ``alpha_B = (c_max + 0.5) / n_samples`` (see the module docstring). 1.60 at alpha 0.05 and 1,000 resamples.

    Args:
        alpha: the significance level the page compares p with.
        n_samples: the bootstrap resamples.

    Returns:
        ``k``; ``inf`` when ``n_samples`` is too small for any p to fall below ``alpha``.

    Raises:
        InputError: alpha not in (0, 1) or fewer than one resample.
    """
    _check_probability(alpha, "alpha")
    if int(n_samples) != n_samples or n_samples < 1:
        raise InputError(f"The number of resamples must be a whole number of at least 1, got {shorten(n_samples)}.")
    c_max = _largest_rejecting_count(alpha, int(n_samples))
    if c_max < 0:
        return math.inf
    target = min(0.5, (c_max + 0.5) / int(n_samples))
    lo, hi = 0.0, 40.0
    for _ in range(200):  # the tail falls monotonically from 0.42 at t = 0
        mid = 0.5 * (lo + hi)
        if _bootstrap_tail(mid) > target:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def power_of(delta: float, sd: float, n: int, k: float) -> float:
    """Normal-approximation power of the page's test: ``Phi(delta / s - k') + Phi(-delta / s - k')`` with
    ``s = sd / sqrt(n)`` and ``k' = k sqrt((n - 1) / n)``.

    Args:
        delta: the true mean difference per segment.
        sd: the standard deviation of the per-segment differences (divisor ``n - 1``).
        n: segments in the test set (at least 2).
        k: :func:`critical_value`.
    """
    if n < 2 or not math.isfinite(k):
        return 0.0
    if sd == 0.0:
        return 1.0 if delta != 0.0 else 0.0
    s = sd / math.sqrt(n)
    kk = k * math.sqrt((n - 1) / n)
    return normal_cdf(delta / s - kk) + normal_cdf(-delta / s - kk)


def _check_probability(x: float, name: str) -> None:
    if not isinstance(x, (int, float, np.floating, np.integer)) or not 0.0 < float(x) < 1.0:
        raise InputError(f"{name} must be a probability strictly between 0 and 1, got {shorten(x)}.")


def paired_differences(a, b) -> np.ndarray:
    """``a - b`` per segment, as float64, after checking that both systems scored the same segments.

    Args:
        a, b: ``(n,)`` segment scores of the two systems, in the same segment order.

    Returns:
        ``(n,)`` float64, a new array.

    Raises:
        InputError: different lengths, not one-dimensional, or a non-finite score.
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.ndim != 1 or b.ndim != 1 or a.shape != b.shape:
        raise InputError(f"The paired test needs the two systems' scores on the same segments: got shapes {a.shape} "
                         f"and {b.shape}. Give one score per segment for each system, in the same order.")
    d = a - b
    _check_finite(d)
    return d


def _check_finite(d: np.ndarray) -> None:
    bad = np.flatnonzero(~np.isfinite(d))
    if len(bad):
        raise InputError(f"{len(bad)} segment difference(s) are not finite numbers (first at index {int(bad[0])}): "
                         "a segment needs a score from both systems. Drop those segments first.")


@dataclass(frozen=True)
class SegmentsNeeded:
    """How many segments a difference needs.

    Attributes:
        delta: the difference asked about (system A minus system B, in score units).
        n: the smallest test-set size whose power reaches the target; None when no size does (see ``note``).
        power: the target power; alpha: the level.
        note: why ``n`` is None or what to keep in mind; ``""`` when there is nothing to add.
    """

    delta: float
    n: int | None
    power: float
    alpha: float
    note: str = ""

    def sentence(self, metric: str = "F1") -> str:
        if self.n is None:
            return self.note
        return (f"Detecting a difference of {abs(self.delta):.4f} {metric} with {self.power:.0%} power at alpha "
                f"{self.alpha:g} needs about {self.n:,} segments." + (f" {self.note}" if self.note else ""))

    def as_dict(self) -> dict:
        return {"delta": self.delta, "segments": self.n, "power": self.power, "alpha": self.alpha,
                "note": self.note}


@dataclass(frozen=True)
class PowerAnalysis:
    """Power of the Compare page's paired test on one test set.

    Attributes:
        n: segments; mean_difference: mean of ``d``; sd: standard deviation of ``d`` (divisor ``n - 1``).
        alpha, power: the level and the target power; n_samples: the test's bootstrap resamples.
        critical_value: ``k`` of :func:`critical_value`, in standard errors.
        mde: the minimum detectable difference (absolute, score units) at ``power``; NaN when undefined.
        note: why ``mde`` is NaN, or ``""``.
    """

    n: int
    mean_difference: float
    sd: float
    alpha: float
    power: float
    n_samples: int
    critical_value: float
    mde: float
    note: str = ""

    @property
    def standard_error(self) -> float:
        """``sd / sqrt(n)``; NaN below two segments."""
        return self.sd / math.sqrt(self.n) if self.n >= 2 else math.nan

    def power_at(self, delta: float) -> float:
        """Normal-approximation power of this test set at a true mean difference ``delta`` (NaN when undefined)."""
        if self.n < 2 or not math.isfinite(self.sd):
            return math.nan
        return power_of(float(delta), self.sd, self.n, self.critical_value)

    def segments_needed(self, delta: float) -> SegmentsNeeded:
        """The smallest test set (segments drawn like these) whose power at a true difference ``delta`` reaches
        :attr:`power`.

        Args:
            delta: the difference to detect, in score units (its sign does not matter: the test is two-sided).
        """
        delta = float(delta)
        if not math.isfinite(delta):
            raise InputError(f"The difference to detect must be a finite number, got {shorten(delta)}.")
        if self.n < 2 or not math.isfinite(self.sd):
            return SegmentsNeeded(delta, None, self.power, self.alpha, self.note)
        if delta == 0.0:
            return SegmentsNeeded(delta, None, self.power, self.alpha,
                                  "A difference of 0 cannot be detected with any number of segments.")
        if not math.isfinite(self.critical_value):
            return SegmentsNeeded(delta, None, self.power, self.alpha, self.note)
        if self.sd == 0.0:
            return SegmentsNeeded(delta, 2, self.power, self.alpha,
                                  "Every segment difference is the same here (sd = 0): any constant non-zero "
                                  "difference is detected; real test sets vary more.")
        z = normal_quantile(self.power)
        guess = max(2, int(math.ceil(((self.critical_value + z) * self.sd / delta) ** 2)))
        if guess > MAX_SEGMENTS:
            return SegmentsNeeded(delta, None, self.power, self.alpha,
                                  f"Detecting {abs(delta):.3g} would need more than {MAX_SEGMENTS:,} segments.")
        return SegmentsNeeded(delta, _smallest_n(abs(delta), self.sd, self.critical_value, self.power, guess),
                              self.power, self.alpha)

    def sentence(self, metric: str = "F1") -> str:
        """``"With 500 segments this test detects a difference of 0.0123 F1 or more with 80% power ..."``."""
        if not math.isfinite(self.mde):
            return self.note
        return (f"With {self.n:,} segments the paired bootstrap test (alpha {self.alpha:g}, {self.n_samples:,} "
                f"resamples) detects a difference of {self.mde:.4f} {metric} or more with {self.power:.0%} power "
                f"(sd of the segment differences {self.sd:.4f}).")

    def as_dict(self) -> dict:
        def num(x: float):
            return float(x) if math.isfinite(x) else None

        return {"segments": self.n, "mean_difference": num(self.mean_difference), "sd": num(self.sd),
                "alpha": self.alpha, "power": self.power, "n_samples": self.n_samples,
                "critical_value": num(self.critical_value), "mde": num(self.mde), "note": self.note,
                "method": "normal approximation of sacrebleu's paired bootstrap: MDE = (k' + z_power) sd / sqrt(n)"}


def _smallest_n(delta: float, sd: float, k: float, target: float, guess: int) -> int:
    """The smallest n >= 2 with ``power_of(delta, sd, n, k) >= target``, searched around ``guess`` (power grows
    with n)."""
    lo, hi = 1, max(2, guess)
    while power_of(delta, sd, hi, k) < target:
        lo, hi = hi, hi * 2
    while hi - lo > 1:  # power(lo) < target <= power(hi), with power(1) = 0
        mid = (lo + hi) // 2
        if power_of(delta, sd, mid, k) >= target:
            hi = mid
        else:
            lo = mid
    return hi


def _solve_mde(sd: float, n: int, k: float, target: float) -> float:
    """The ``delta >= 0`` where :func:`power_of` reaches ``target`` (bisection; power grows with delta)."""
    s = sd / math.sqrt(n)
    lo, hi = 0.0, (k + normal_quantile(target) + 10.0) * s
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if power_of(mid, sd, n, k) < target:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def power_analysis(differences, alpha: float = DEFAULT_ALPHA, power: float = DEFAULT_POWER,
                   n_samples: int = DEFAULT_SAMPLES) -> PowerAnalysis:
    """Minimum detectable difference of the page's paired test on this test set, with the segments' observed spread.

    Args:
        differences: ``(n,)`` per-segment ``A - B`` (:func:`paired_differences`).
        alpha: the level the page uses (0.05; under Holm pass ``alpha / family`` for a conservative answer).
        power: the target power (0.8).
        n_samples: the page's bootstrap resamples (1,000 without correction).

    Returns:
        :class:`PowerAnalysis`; ``mde`` is NaN with a ``note`` below two segments, when every difference is the
        same (sd = 0: the normal approximation has nothing to go on) or when no p can fall below alpha.

    Raises:
        InputError: a non-finite difference, alpha or power outside (0, 1), bad resamples.
    """
    d = np.asarray(differences, dtype=np.float64)
    if d.ndim != 1:
        raise InputError(f"Expected one difference per segment (a 1-D array), got shape {d.shape}.")
    _check_finite(d)
    _check_probability(alpha, "alpha")
    _check_probability(power, "power")
    k = critical_value(alpha, n_samples)
    n = int(len(d))
    mean = float(d.mean()) if n else math.nan
    if n < 2:
        return PowerAnalysis(n, mean, math.nan, float(alpha), float(power), int(n_samples), k, math.nan,
                             f"Power needs at least 2 segments, got {n}: the spread of the differences is unknown "
                             "and a paired bootstrap of one segment always gives p = 1.")
    sd = float(d.std(ddof=1)) if np.any(d != d[0]) else 0.0  # equal values can give an sd of 1e-18, not 0
    if not math.isfinite(k):
        return PowerAnalysis(n, mean, sd, float(alpha), float(power), int(n_samples), k, math.nan,
                             f"With {n_samples:,} resamples no p can fall below {alpha:g} ((c + 1) / "
                             f"({n_samples} + 1) is at least {1 / (n_samples + 1):.3g}): no difference is "
                             "detectable. Use more resamples.")
    if sd == 0.0:
        return PowerAnalysis(n, mean, 0.0, float(alpha), float(power), int(n_samples), k, math.nan,
                             f"Every one of the {n} segment differences equals {mean:.6g} (sd = 0): the normal "
                             "approximation has no spread to work with. The test calls any constant non-zero "
                             "difference significant and a zero one not.")
    return PowerAnalysis(n, mean, sd, float(alpha), float(power), int(n_samples), k, _solve_mde(sd, n, k, power))


@dataclass(frozen=True)
class PowerSimulation:
    """Rejection rate of the page's test on simulated test sets.

    Attributes:
        delta: the true mean difference of the simulated test sets; n: their segments.
        n_sims: test sets simulated; rejections: how many the test called different (p < alpha).
        alpha, n_samples: the test's level and resamples.
    """

    delta: float
    n: int
    n_sims: int
    rejections: int
    alpha: float
    n_samples: int

    @property
    def rate(self) -> float:
        """Rejections / simulations: the simulated power (the size at ``delta = 0``)."""
        return self.rejections / self.n_sims

    @property
    def stderr(self) -> float:
        """Monte-Carlo standard error of :attr:`rate`: ``sqrt(rate (1 - rate) / n_sims)``."""
        r = self.rate
        return math.sqrt(r * (1.0 - r) / self.n_sims)


def simulate_power(differences, delta: float, n: int | None = None, n_sims: int = 1000,
                   alpha: float = DEFAULT_ALPHA, n_samples: int = DEFAULT_SAMPLES, seed: int = 0,
                   bootstrap_seed: int | None = DEFAULT_SEED) -> PowerSimulation:
    """Run the page's paired test on test sets resampled from the observed differences, shifted to mean ``delta``.

    Each simulated test set draws ``n`` segments with replacement from ``d - mean(d) + delta`` (the observed spread
    and shape, a known true difference), runs :func:`~bertscore_viz.stats.resampling.bootstrap_means` and
    :func:`~bertscore_viz.stats.paired.p_value` on it as the page does (the same resamples and seed),
    and counts ``p < alpha``.

    Args:
        differences: ``(m,)`` observed per-segment differences (at least 2).
        delta: the true mean difference of the simulated test sets.
        n: segments per simulated test set (default ``m``).
        n_sims: test sets to simulate.
        seed: seed of the test-set draws; bootstrap_seed: the test's own seed (the page's, ``DEFAULT_SEED``).

    Returns:
        :class:`PowerSimulation`.

    Raises:
        InputError: fewer than 2 differences, a non-finite one, or bad counts.
    """
    d = np.asarray(differences, dtype=np.float64)
    if d.ndim != 1 or len(d) < 2:
        raise InputError(f"Simulation needs at least 2 observed segment differences (a 1-D array), got shape "
                         f"{d.shape}.")
    _check_finite(d)
    n = len(d) if n is None else int(n)
    if n < 1 or n_sims < 1:
        raise InputError(f"Segments per test set and simulations must be at least 1, got n={n}, n_sims={n_sims}.")
    _check_probability(alpha, "alpha")
    pool = d - d.mean() + float(delta)
    rng = np.random.default_rng(seed)
    zeros = np.zeros(n)
    rejections = 0
    for _ in range(int(n_sims)):
        sample = pool[rng.integers(0, len(pool), size=n)]
        means = bootstrap_means({"A": sample, "B": zeros}, n_samples, bootstrap_seed)
        rejections += p_value(sample, zeros, means["A"], means["B"]) < alpha
    return PowerSimulation(float(delta), n, int(n_sims), int(rejections), float(alpha), int(n_samples))
