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

The same test serves corpus metrics whose score is not a mean of segment scores (chrF, BLEU, TER:
:mod:`bertscore_viz.evaluation.sacrebleu_metrics`): :func:`analyse_resampled` takes each system's corpus score and
its score in every resample (recomputed by sacrebleu from the resampled segments' statistics), and applies the same
p value, interval, Holm and clusters; ``higher_is_better=False`` orders a metric where lower is better (TER).

Also given: the one-sided p of Koehn (2004), ``(c + 1) / (n + 1)`` where ``c`` counts the resamples in which
the baseline's mean is at least the system's.

On top of the tests (pure functions, pinned by hand-computed unit tests):

* systems are ordered by score (best first; ties in natural name order, ``sys2`` before ``sys10``);
* every sentence states the difference with the sign of "first named minus second named";
* optional Holm (1979) step-down correction over ONE family: the k (k - 1) / 2 pairs of systems. The tests
  against a baseline system are among those pairs and read their p from it, so a pair has the same p wherever
  it appears (the answer, the sentences, the clusters, the matrix), and every p names its family ("Holm-adjusted
  over 6 comparisons"; uncorrected: "one of 6 comparisons");
* clusters as the WMT findings papers rank systems: systems ordered by score, a cluster boundary wherever every
  system above it is significantly better than every system below it; with each system's pairwise wins
  (systems it is significantly better than), losses and rank range (1 + losses .. k - wins).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from bertscore_viz.evaluation.ranking import (  # re-exported: the page, the CLI and the tests read them here
    Cluster,
    SystemStanding,
    clusters,
    holm,
    natural_key,
    rank_order,
)

__all__ = [
    "CORRECTIONS", "DEFAULT_SAMPLES", "DEFAULT_SEED", "HOLM_HEADROOM", "INTERVAL_SAMPLES", "MAX_RESAMPLED_CELLS",
    "MAX_SAMPLES", "Cluster",
    "PairedResult", "Significance", "SystemInterval", "SystemStanding", "analyse", "analyse_resampled",
    "bootstrap_interval", "bootstrap_means", "clusters", "describe", "family_text", "format_difference", "format_p",
    "format_p_family", "holm", "natural_key", "p_value", "p_value_from_samples", "p_value_one_sided",
    "percentile_ci", "rank_order", "resample_indices", "resamples_for", "smallest_p",
]

DEFAULT_SEED = 12345
DEFAULT_SAMPLES = 1000
#: Resamples drawn per block, so 10,000 segments x 1,000 resamples never hold a 10^7 index matrix at once.
_BLOCK_CELLS = 2_000_000
#: Multiple-comparison corrections offered: None (each test at alpha) or Holm's step-down.
CORRECTIONS = (None, "holm")
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


def resample_indices(n: int, n_samples: int, seed: int | None = DEFAULT_SEED, max_cells: int | None = None):
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


def bootstrap_means(scores: dict[str, np.ndarray], n_samples: int = DEFAULT_SAMPLES,
                    seed: int | None = DEFAULT_SEED, progress=None) -> dict[str, np.ndarray]:
    """The mean of each system's segment scores in each resample; the same resamples for every system.

    Args:
        scores: ``{system: (n,) segment scores}``, all of the same length ``n``.
        n_samples: number of resamples.
        seed: seed of ``numpy.random.default_rng`` (None = not reproducible).
        progress: ``progress(done, total)`` in resamples, after each block.

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
    for start, stop, idx in resample_indices(n, n_samples, seed):
        for k, v in arrays.items():
            out[k][start:stop] = v[idx].mean(axis=1)
        if progress is not None:
            progress(stop, n_samples)
    return out


def bootstrap_interval(values, n_samples: int = DEFAULT_SAMPLES, seed: int | None = DEFAULT_SEED
                       ) -> tuple[float, float]:
    """The 95% bootstrap interval of the mean of ``values`` (:func:`bootstrap_means` and :func:`percentile_ci`):
    the interval the page gives a system, for any group of segments. ``(nan, nan)`` for no values."""
    return percentile_ci(bootstrap_means({"x": values}, n_samples, seed)["x"])


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
        p: sacrebleu's two-sided paired-bootstrap p (Holm-adjusted when ``correction`` is set);
        p_one_sided: Koehn's p that the system is better; p_raw: the unadjusted p; correction: None or "holm".
        family: how many comparisons the p belongs to (and, with Holm, was corrected over): the k (k - 1) / 2
            pairs of the analysis; None when unknown.
        higher_is_better: False for a metric where lower is better (TER): the better system is the lower one.
    """

    system: str
    baseline: str
    system_mean: float
    baseline_mean: float
    p: float
    p_one_sided: float
    p_raw: float | None = None
    correction: str | None = None
    family: int | None = None
    higher_is_better: bool = True

    @property
    def difference(self) -> float:
        return self.system_mean - self.baseline_mean

    def significant(self, alpha: float = 0.05) -> bool:
        return self.p < alpha

    def sentence(self, metric: str = "F1", alpha: float = 0.05) -> str:
        return describe(self.system, self.baseline, self.system_mean, self.baseline_mean, self.p, metric, alpha,
                        self.correction, self.family, self.higher_is_better)

    def as_dict(self) -> dict:
        return {"system": self.system, "baseline": self.baseline, "system_mean": self.system_mean,
                "baseline_mean": self.baseline_mean, "difference": self.difference, "p": self.p,
                "p_raw": self.p if self.p_raw is None else self.p_raw, "correction": self.correction,
                "family": self.family, "p_one_sided": self.p_one_sided}


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
             family: int | None = None, higher_is_better: bool = True) -> str:
    """A plain sentence whose difference reads as worded: the first system named minus the second.

    A significant difference names the better system first, so its difference is positive (negative for a metric
    where lower is better, ``higher_is_better=False``: TER); otherwise the systems keep the order given.

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
    p_text = format_p_family(p, correction, family)
    if p < alpha and system_mean != baseline_mean:
        system_better = (system_mean > baseline_mean) == higher_is_better
        better, worse, first, second = ((system, baseline, system_mean, baseline_mean) if system_better
                                        else (baseline, system, baseline_mean, system_mean))
        return (f"{better} is better than {worse} on {metric}: {format_difference(better, worse, first - second)} "
                f"({p_text})")
    return (f"{system} and {baseline} are not significantly different on {metric}: "
            f"{format_difference(system, baseline, system_mean - baseline_mean)} ({p_text})")


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
            raise ValueError(f"Unknown baseline system {baseline!r}; have {list(self.systems)}.")
        if self.samples is None:
            raise ValueError("This analysis kept no resamples; run analyse(..., baseline=...) instead.")
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


def _holm_matrix(matrix: np.ndarray) -> np.ndarray:
    k = len(matrix)
    iu = np.triu_indices(k, 1)
    out = np.ones_like(matrix)
    adj = holm(matrix[iu])
    out[iu] = adj
    out[(iu[1], iu[0])] = adj
    return out


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
    if correction not in CORRECTIONS:
        raise ValueError(f"Unknown correction {correction!r}; use one of {list(CORRECTIONS)}.")
    if not systems:
        raise ValueError("No systems to analyse.")


def _assemble(metric: str, names: tuple[str, ...], baseline: str | None, means: dict, samples: dict, raw: np.ndarray,
              n_samples: int, seed: int | None, correction: str | None, alpha: float,
              higher_is_better: bool) -> Significance:
    """Intervals, the tests against the baseline, the (Holm-adjusted) matrix and the clusters from the raw p of
    every pair (``raw``, in the order of ``names``)."""
    baseline = names[0] if baseline is None else baseline
    if baseline not in names:
        raise ValueError(f"Unknown baseline system {baseline!r}; have {list(names)}.")
    # the interval from the first DEFAULT_SAMPLES resamples, whatever was drawn for the tests: the same draws (a
    # longer draw begins with the shorter one), so Holm's extra resamples sharpen the p values, not the interval
    intervals = tuple(SystemInterval(k, means[k], *percentile_ci(samples[k][:INTERVAL_SAMPLES])) for k in names)
    matrix = _holm_matrix(raw) if correction == "holm" else raw
    versus = _versus(names, baseline, means, matrix, raw, samples, correction, higher_is_better)
    cl, standings = clusters(names, means, matrix, alpha, higher_is_better)
    return Significance(metric, n_samples, seed, names, baseline, intervals, versus, matrix, raw, correction,
                        alpha, cl, standings, samples, higher_is_better)


def analyse(scores: dict[str, np.ndarray], baseline: str | None = None, metric: str = "F1",
            n_samples: int | None = DEFAULT_SAMPLES, seed: int | None = DEFAULT_SEED, correction: str | None = None,
            alpha: float = 0.05, progress=None) -> Significance:
    """Confidence intervals, tests against ``baseline`` and all pairs, clusters; systems ordered by score.

    Args:
        scores: ``{system: (n,) segment scores}`` (any order: the result is ordered by score).
        baseline: default the top-ranked system.
        correction: None, or ``"holm"`` to adjust the p values over the family of the k (k - 1) / 2 pairs (the
            tests against the baseline are among them and read the same adjusted p).
        n_samples: resamples; None = :func:`resamples_for` (1,000 uncorrected; under Holm as many as the family
            needs to be able to reach ``alpha``, within a ceiling).
        progress: ``progress(done, total)`` in resamples.
    """
    _checked_options(correction, scores)
    arrays = {k: np.asarray(v, dtype=np.float64) for k, v in scores.items()}
    means = {k: float(v.mean()) if len(v) else float("nan") for k, v in arrays.items()}
    names = tuple(rank_order(means))
    if baseline is not None and baseline not in scores:
        raise ValueError(f"Unknown baseline system {baseline!r}; have {list(names)}.")
    if n_samples is None:
        n_samples = resamples_for(len(arrays), max((len(v) for v in arrays.values()), default=0), correction, alpha)
    samples = bootstrap_means(arrays, n_samples, seed, progress)
    k = len(names)
    raw = np.ones((k, k))
    for i in range(k):
        for j in range(i + 1, k):
            a, b = names[i], names[j]
            raw[i, j] = raw[j, i] = p_value(arrays[a], arrays[b], samples[a], samples[b])
    return _assemble(metric, names, baseline, means, samples, raw, n_samples, seed, correction, alpha, True)


def analyse_resampled(scores: dict[str, float], samples: dict[str, np.ndarray], metric: str,
                      baseline: str | None = None, n_segments: int | None = None,
                      identical: frozenset = frozenset(), seed: int | None = DEFAULT_SEED,
                      correction: str | None = None, alpha: float = 0.05,
                      higher_is_better: bool = True) -> Significance:
    """:func:`analyse` for a corpus score that is not a mean of segment scores (chrF, BLEU, TER), from each
    system's corpus score and its score in every resample (the same resamples for every system, as
    :func:`resample_indices` draws them).

    The p of a pair is sacrebleu's (:func:`p_value_from_samples` with the observed ``|score_a - score_b|``), the
    interval sacrebleu's indices over the resampled scores (:func:`percentile_ci`), Holm and clusters as in
    :func:`analyse`. As there, a pair of systems with identical outputs (``identical``: frozensets of two names), or
    a test set of one segment, gets ``p = 1``.

    Args:
        scores: ``{system: corpus score}``; samples: ``{system: (n_samples,) resampled corpus scores}``.
        metric: its name (``"chrF"``); n_segments: the test set's size (1: every p is 1).
        higher_is_better: False for TER (the best system has the lowest score).

    Raises:
        ValueError: an unknown correction or baseline, no systems, or resamples of different lengths.
    """
    _checked_options(correction, scores)
    arrays = {k: np.asarray(samples[k], dtype=np.float64) for k in scores}
    lengths = {len(v) for v in arrays.values()}
    if len(lengths) != 1:
        raise ValueError(f"Every system needs the same number of resampled scores, got {sorted(lengths)}.")
    means = {k: float(v) for k, v in scores.items()}
    names = tuple(rank_order(means, higher_is_better))
    k = len(names)
    raw = np.ones((k, k))
    for i in range(k):
        for j in range(i + 1, k):
            a, b = names[i], names[j]
            if frozenset((a, b)) in identical or (n_segments is not None and n_segments < 2):
                continue  # no evidence of a difference (sacrebleu would give 1 / (n + 1))
            raw[i, j] = raw[j, i] = p_value_from_samples(abs(means[a] - means[b]), arrays[a], arrays[b])
    return _assemble(metric, names, baseline, means, arrays, raw, lengths.pop(), seed, correction, alpha,
                     higher_is_better)
