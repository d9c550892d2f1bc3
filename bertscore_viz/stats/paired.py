"""One paired test of two systems, whatever the test: its p values, its result type and its sentence.

Two tests, both as sacrebleu makes them and both two-sided ("is there a difference?"; the direction is read from the
scores): the paired bootstrap (:mod:`bertscore_viz.stats.analysis`: the resampled absolute differences centred on
their mean, ``c`` of them larger than the observed one, ``p = (c + 1) / (n + 1)``; sacrebleu 2.x
``_compute_p_value``) and paired approximate randomization (:mod:`bertscore_viz.stats.randomization`). Either gives
a :class:`PairedResult`. Also given: the one-sided p of Koehn (2004), ``(c + 1) / (n + 1)`` where ``c`` counts the
resamples in which the baseline is at least as good as the system.

Two systems with identical segment scores, or a test set of one segment, get ``p = 1`` (sacrebleu gives
``1 / (n + 1)``, which would call a system significantly different from itself, or from anything on one segment).

Every sentence states the difference with the sign of "first named minus second named"; every p names its family
("Holm-adjusted over 6 comparisons"; uncorrected: "one of 6 comparisons").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "BOOTSTRAP", "METHODS", "RANDOMIZATION", "PairedResult", "describe", "family_text", "format_difference",
    "format_p", "format_p_family", "p_value", "p_value_from_samples", "p_value_one_sided",
]

#: The two paired tests a :class:`PairedResult` comes from.
BOOTSTRAP = "bootstrap"
RANDOMIZATION = "randomization"
METHODS = (BOOTSTRAP, RANDOMIZATION)


def p_value(system: np.ndarray, baseline: np.ndarray, system_samples: np.ndarray,
            baseline_samples: np.ndarray) -> float:
    """sacrebleu's paired-bootstrap p of a system against a baseline (two-sided), from the resampled means."""
    system = np.asarray(system, dtype=np.float64)
    baseline = np.asarray(baseline, dtype=np.float64)
    if len(system) < 2 or (system.shape == baseline.shape and np.array_equal(system, baseline)):
        return 1.0  # identical systems, or one segment (every resample is the same): no evidence of a difference
    return p_value_from_samples(abs(float(system.mean()) - float(baseline.mean())), system_samples,
                                baseline_samples)


def p_value_from_samples(observed: float, system_samples: np.ndarray, baseline_samples: np.ndarray) -> float:
    """sacrebleu's ``_compute_p_value`` of the paired bootstrap: the resampled absolute differences centred on their
    mean, ``c`` of them larger than the ``observed`` absolute difference, ``p = (c + 1) / (n + 1)``."""
    sample_diffs = np.abs(np.asarray(system_samples, dtype=np.float64) - np.asarray(baseline_samples,
                                                                                      dtype=np.float64))
    stats = sample_diffs - sample_diffs.mean()
    c = int(np.sum(stats > observed))
    return (c + 1) / (len(stats) + 1)


def p_value_one_sided(system_samples: np.ndarray, baseline_samples: np.ndarray,
                      higher_is_better: bool = True) -> float:
    """Koehn's one-sided p that the system is better: ``(c + 1) / (n + 1)``, c = resamples where the baseline's
    score is at least as good as the system's (``>=``; ``<=`` when lower is better)."""
    base, system = np.asarray(baseline_samples), np.asarray(system_samples)
    c = int(np.sum(base >= system if higher_is_better else base <= system))
    return (c + 1) / (len(system_samples) + 1)


@dataclass(frozen=True)
class PairedResult:
    """One system against a baseline system, by the paired bootstrap or by approximate randomization: the one
    result type of a paired test.

    Attributes:
        system, baseline: names; system_mean, baseline_mean: their corpus scores; difference: system - baseline.
        p: the two-sided p (Holm-adjusted when ``correction`` is set); p_raw: the unadjusted p (None: ``p``).
        p_one_sided: Koehn's p that the system is better (the bootstrap's; None for approximate randomization).
        correction: None or "holm".
        family: how many comparisons the p belongs to (and, with Holm, was corrected over): the bootstrap's
            k (k - 1) / 2 pairs, approximate randomization's k - 1 tests against the baseline; None when unknown.
        higher_is_better: False for a metric where lower is better (TER): the better system is the lower one.
        method: :data:`BOOTSTRAP` or :data:`RANDOMIZATION`.
    """

    system: str
    baseline: str
    system_mean: float
    baseline_mean: float
    p: float
    p_one_sided: float | None
    p_raw: float | None = None
    correction: str | None = None
    family: int | None = None
    higher_is_better: bool = True
    method: str = BOOTSTRAP

    @property
    def difference(self) -> float:
        return self.system_mean - self.baseline_mean

    def significant(self, alpha: float = 0.05) -> bool:
        return self.p < alpha

    def p_text(self) -> str:
        """``"p = 0.006, Holm-adjusted over 6 comparisons"`` (bootstrap, 3 decimals: 1,000 resamples reach 0.001);
        ``"approximate randomization p = 0.0001, uncorrected, one of 2 tests"`` (4 decimals: 10,000 trials)."""
        if self.method == RANDOMIZATION:
            fam = family_text(self.correction, self.family).replace("comparisons", "tests")
            return f"approximate randomization p = {self.p:.4f}" + (f", {fam}" if fam else "")
        return format_p_family(self.p, self.correction, self.family)

    def sentence(self, metric: str = "F1", alpha: float = 0.05) -> str:
        """:func:`describe` with this test's p.

        >>> PairedResult("B", "A", 0.9, 0.8, 1 / 10001, None, 1 / 10001, None, 2, method="randomization").sentence()
        'B is better than A on F1: B − A = +0.1000 (approximate randomization p = 0.0001, uncorrected, one of 2 tests)'
        >>> PairedResult("B", "A", 40.0, 50.0, 0.002, 0.001, higher_is_better=False).sentence("TER")
        'B is better than A on TER: B − A = -10.0000 (p = 0.002)'
        """
        return describe(self.system, self.baseline, self.system_mean, self.baseline_mean, self.p, metric, alpha,
                        self.correction, self.family, self.higher_is_better, p_text=self.p_text())

    def as_dict(self) -> dict:
        out = {"system": self.system, "baseline": self.baseline, "system_mean": self.system_mean,
               "baseline_mean": self.baseline_mean, "difference": self.difference, "p": self.p,
               "p_raw": self.p if self.p_raw is None else self.p_raw, "correction": self.correction,
               "family": self.family}
        return out if self.p_one_sided is None else out | {"p_one_sided": self.p_one_sided}


def format_p(p: float) -> str:
    """``0.002``; the smallest p of 1,000 resamples (1/1001) shows as ``0.001``."""
    return f"{p:.3f}"


def family_text(correction: str | None, family: int | None) -> str:
    """What a p value was corrected over: ``"Holm-adjusted over 6 comparisons"``, ``"uncorrected, one of 6
    comparisons"``; ``""`` for the only comparison (two systems, nothing to correct) or an unknown family."""
    if correction == "holm":
        return f"Holm-adjusted over {family} comparisons" if family else "Holm-adjusted"
    if family and family > 1:
        return f"uncorrected, one of {family} comparisons"
    return ""


def format_p_family(p: float, correction: str | None, family: int | None) -> str:
    """``"p = 0.006, Holm-adjusted over 6 comparisons"``: a p value with its family."""
    fam = family_text(correction, family)
    return f"p = {format_p(p)}" + (f", {fam}" if fam else "")


def format_difference(a: str, b: str, diff: float) -> str:
    """``"B − A = +0.1000"``: the difference with the sign of the names as written (first minus second)."""
    return f"{a} − {b} = {diff:+.4f}"


def describe(system: str, baseline: str, system_mean: float, baseline_mean: float, p: float,
             metric: str = "F1", alpha: float = 0.05, correction: str | None = None,
             family: int | None = None, higher_is_better: bool = True, p_text: str | None = None) -> str:
    """A plain sentence whose difference reads as worded: the first system named minus the second.

    A significant difference names the better system first, so its difference is positive (negative for a metric
    where lower is better, ``higher_is_better=False``: TER); otherwise the systems keep the order given.
    ``p_text``: the p as the test words it (default :func:`format_p_family`).

    >>> describe("B", "A", 0.9, 0.8, 0.002)
    'B is better than A on F1: B − A = +0.1000 (p = 0.002)'
    >>> describe("B", "A", 0.7, 0.8, 0.002)
    'A is better than B on F1: A − B = +0.1000 (p = 0.002)'
    >>> describe("B", "A", 0.80, 0.81, 0.4)
    'B and A are not significantly different on F1: B − A = -0.0100 (p = 0.400)'
    >>> describe("B", "A", 0.9, 0.8, 0.006, correction="holm", family=6)
    'B is better than A on F1: B − A = +0.1000 (p = 0.006, Holm-adjusted over 6 comparisons)'
    >>> describe("B", "A", 40.0, 50.0, 0.002, "TER", higher_is_better=False)
    'B is better than A on TER: B − A = -10.0000 (p = 0.002)'
    """
    p_text = format_p_family(p, correction, family) if p_text is None else p_text
    if p < alpha and system_mean != baseline_mean:
        system_better = (system_mean > baseline_mean) == higher_is_better
        better, worse, first, second = ((system, baseline, system_mean, baseline_mean) if system_better
                                        else (baseline, system, baseline_mean, system_mean))
        return (f"{better} is better than {worse} on {metric}: {format_difference(better, worse, first - second)} "
                f"({p_text})")
    return (f"{system} and {baseline} are not significantly different on {metric}: "
            f"{format_difference(system, baseline, system_mean - baseline_mean)} ({p_text})")
