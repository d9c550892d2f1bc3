"""What a metric difference means: how often humans agree with the sign of a metric delta of a given size (numpy
only; layer 3).

After Kocmi, Zouhar, Federmann and Post, "Navigating the Metrics Maze: Reconciling Score Magnitudes and
Accuracies" (ACL 2024, §2-3; their tool: github.com/kocmitom/MT-Thresholds, ``python-tool/mt_thresholds.py``):

* **System pairs.** A system's score is the mean of its segment scores; a pair's *metric delta* is
  ``metric(a) - metric(b)`` and its *human delta* ``human(a) - human(b)`` (:func:`system_pairs`; pairs only within
  a group, e.g. a language pair or a test set; systems scored on the same segments: :func:`paired_delta_agreement`).
* **Agreement.** A pair agrees when ``sign(metric delta) == sign(human delta)`` (the paper's pairwise accuracy, after
  Kocmi et al., WMT 2021). Each pair is placed at ``|metric delta|``, as the paper's curves are drawn over
  non-negative deltas. A metric delta of exactly 0 has sign 0 and so disagrees with every human difference.
* **Human ties** (our choice; the paper does not say): a pair whose ``|human delta| <= tie_tolerance`` (default 0:
  only exact ties) has no human ranking to agree with; it leaves the curve and is counted in ``n_human_ties``.
* **The curve: binning, not "at least d".** As the paper (§3.2): the pairs are sorted by ``|metric delta|`` and, for
  each delta level, the ``window_pairs`` pairs closest to it form a bin; the curve is each bin's mean delta against
  the fraction of its pairs that agree. The paper uses 300 pairs per bin over thousands of pairs (ToShip23);
  :func:`default_window` uses ``min(300, max(20, n // 4))`` pairs, so a data set of 45 pairs has bins of 20.
* **The fitted curve.** As the paper (§3.3) and MT-Thresholds' ``accuracy()``: ``f(x) = phi1 / (1 + exp(-phi2 x))``
  fitted by least squares to the bins (the paper uses Levenberg-Marquardt; here ``phi1`` is solved in closed form
  for each ``phi2`` and ``phi2 > 0`` is searched on a log grid then by golden section: the same least-squares
  optimum). ``phi1`` is a fraction here (MT-Thresholds states it in percent).
* **Interval** (ours): each bin's 95% Wilson score interval, with n the number of *distinct system pairs* in the bin
  (not its rows: resampled rows of one system pair are not independent).
* **Few pairs, resampled** (optional, ours): with ``subsets > 0``, :func:`system_pairs` adds, for every system pair,
  ``subsets`` comparisons on a random subset of the segments (``subset_fraction`` of each system's segments, or of
  the items when ``items`` are given, the same items for every system of the group), seeded. These are not new
  system pairs: they are the same systems compared on smaller test sets, whose deltas are noisier (for the metric
  and for the humans) than on the whole set, so agreement on them tends to understate agreement at full size. The
  sentence says how many comparisons and how many system pairs they come from.
* **Too few.** :meth:`DeltaAgreement.sentence` declines to give a number when the bin around the delta has fewer
  than :data:`MIN_WINDOW_PAIRS` comparisons or the data have fewer than :data:`MIN_SYSTEM_PAIRS` distinct system
  pairs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from bertscore_viz.errors import InputError, shorten

__all__ = [
    "BIN_PAIRS", "CURVE_POINTS", "DEFAULT_SUBSET_FRACTION", "MIN_SYSTEM_PAIRS", "MIN_WINDOW_PAIRS", "DeltaAgreement",
    "SystemPairs", "Window", "default_window", "delta_agreement", "fit_sigmoid", "paired_delta_agreement",
    "pairs_agreement", "segment_delta_agreement", "sigmoid", "system_pairs", "wilson_interval",
]

#: Pairs per bin in the paper (§3.2, Appendix D).
BIN_PAIRS = 300
#: Fewer comparisons than this in the bin around a delta: too few to say (and the smallest default bin).
MIN_WINDOW_PAIRS = 20
#: Fewer distinct system pairs than this in the whole data: too few to say, however many resampled comparisons.
MIN_SYSTEM_PAIRS = 10
#: Bins drawn on the curve (at evenly spaced ranks of the sorted deltas).
CURVE_POINTS = 50
#: Fraction of the segments in one resampled comparison.
DEFAULT_SUBSET_FRACTION = 0.5
_Z95 = 1.959963984540054


@dataclass(frozen=True)
class SystemPairs:
    """Every pair of systems within a group, as rows (one per system pair, plus its resampled comparisons).

    Attributes:
        metric_deltas: ``{metric: (rows,) metric(a) - metric(b)}``; human_delta: ``(rows,)`` human(a) - human(b).
        system_a, system_b, group: ``(rows,)`` names (str); pair_id: ``(rows,)`` int, the system pair a row belongs
            to (a resampled row shares its pair's id); resampled: ``(rows,)`` bool, True for a subset's row.
        n_system_pairs: distinct system pairs; subsets: resampled comparisons per pair (0: none);
        subset_fraction: the fraction of segments (or items) in each.
    """

    metric_deltas: dict[str, np.ndarray]
    human_delta: np.ndarray
    system_a: np.ndarray
    system_b: np.ndarray
    group: np.ndarray
    pair_id: np.ndarray
    resampled: np.ndarray
    n_system_pairs: int
    subsets: int = 0
    subset_fraction: float = DEFAULT_SUBSET_FRACTION


@dataclass(frozen=True)
class Window:
    """The bin of comparisons nearest one delta: ``n`` comparisons from ``n_system_pairs`` system pairs, ``agree``
    of them agreeing (``probability``), its 95% interval ``low``..``high``, its deltas ``delta_low``..``delta_high``
    and their mean ``mean_delta``."""

    delta: float
    n: int
    n_system_pairs: int
    agree: int
    probability: float
    low: float
    high: float
    delta_low: float
    delta_high: float
    mean_delta: float


@dataclass(frozen=True)
class DeltaAgreement:
    """The probability that humans agree with the sign of a metric delta, as a function of its size.

    Attributes:
        deltas, probability, low, high: the curve: each bin's mean ``|metric delta|``, the fraction agreeing and its
            95% Wilson interval (n = distinct system pairs in the bin); delta_low, delta_high: each bin's extent.
        phi: the fitted sigmoid's ``(phi1, phi2)`` (NaN when it cannot be fitted).
        pair_deltas, pair_agree, pair_ids: every counted comparison, sorted by ``pair_deltas`` (``|metric delta|``).
        n_pairs: comparisons counted; n_system_pairs: distinct system pairs among them; n_human_ties: comparisons
            left out as human ties; window_pairs: comparisons per bin; subsets, subset_fraction: as
            :class:`SystemPairs` (0: every comparison is a system pair on all its segments).
    """

    deltas: np.ndarray
    probability: np.ndarray
    low: np.ndarray
    high: np.ndarray
    delta_low: np.ndarray
    delta_high: np.ndarray
    phi: tuple[float, float]
    pair_deltas: np.ndarray
    pair_agree: np.ndarray
    pair_ids: np.ndarray
    n_pairs: int
    n_system_pairs: int
    n_human_ties: int
    window_pairs: int
    subsets: int = 0
    subset_fraction: float = DEFAULT_SUBSET_FRACTION
    tie_tolerance: float = 0.0
    extra: dict = field(default_factory=dict)

    def fitted(self, delta):
        """The fitted sigmoid at ``|delta|`` (a float for a float, an array for an array)."""
        return sigmoid(np.abs(np.asarray(delta, dtype=np.float64)), *self.phi)

    def at(self, delta: float) -> Window:
        """The bin of the ``window_pairs`` comparisons whose ``|metric delta|`` is nearest ``|delta|``."""
        return _window(self.pair_deltas, self.pair_agree, self.pair_ids, abs(float(delta)), self.window_pairs)

    def too_few(self, delta: float) -> bool:
        """True when the data cannot say how often humans agree with a delta of this size."""
        return (self.n_system_pairs < MIN_SYSTEM_PAIRS or self.n_pairs < MIN_WINDOW_PAIRS
                or self.at(delta).n < MIN_WINDOW_PAIRS)

    def sentence(self, delta: float, metric_name: str) -> str:
        """One sentence for a reader: how often a difference of this size agreed with the human ranking."""
        size = _number(abs(float(delta)))
        if self.too_few(delta):
            return (f"too few rated system pairs ({self.n_system_pairs}) to say how often humans agree with a "
                    "difference of this size")
        w = self.at(delta)
        span = f"{_number(w.delta_low)} to {_number(w.delta_high)}"
        if self.subsets:
            what = (f"{w.n} comparisons of the rated data whose {metric_name} differences are nearest it ({span}; "
                    f"from {w.n_system_pairs} of the {self.n_system_pairs} system pairs, each compared on all its "
                    f"segments and on {self.subsets} random subsets of {self.subset_fraction:.0%})")
        elif w.n == self.n_pairs:
            what = f"{w.n} system pairs of the rated data (differences {span})"
        else:
            what = (f"{w.n} system pairs of the rated data whose {metric_name} differences are nearest it ({span}; "
                    f"{self.n_pairs} pairs in all)")
        beyond = (f", larger than any rated difference (the largest is {_number(w.delta_high)})"
                  if abs(float(delta)) > w.delta_high else "")
        return (f"a difference of {size} {metric_name} agreed with the human ranking in {w.probability:.0%} of the "
                f"{what}{beyond}; 95% interval {w.low:.0%} to {w.high:.0%}")


def _number(x: float) -> str:
    return f"{x:.3g}"


def sigmoid(x, phi1: float, phi2: float):
    """``phi1 / (1 + exp(-phi2 x))``, the paper's curve (MT-Thresholds' ``accuracy``, as a fraction)."""
    x = np.asarray(x, dtype=np.float64)
    out = phi1 / (1.0 + np.exp(-np.clip(phi2 * x, -700.0, 700.0)))
    return float(out) if out.ndim == 0 else out


def _sse(x: np.ndarray, y: np.ndarray, phi2: float) -> tuple[float, float]:
    s = 1.0 / (1.0 + np.exp(-np.clip(phi2 * x, -700.0, 700.0)))
    phi1 = float(s @ y / (s @ s))
    return float(np.sum((y - phi1 * s) ** 2)), phi1


def fit_sigmoid(x, y) -> tuple[float, float]:
    """Least-squares ``(phi1, phi2)`` of :func:`sigmoid` through the points ``(x, y)``, ``phi2 > 0``.

    For a fixed ``phi2`` the best ``phi1`` is linear least squares; ``log(phi2)`` is searched on a grid of 400
    points spanning ``1e-3 .. 1e4`` over the largest ``x``, then refined by golden section between the best grid
    point's neighbours. NaN, NaN with fewer than 2 points or all ``x`` equal to 0.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if len(x) < 2 or not np.any(x > 0):
        return math.nan, math.nan
    scale = float(np.max(np.abs(x)))
    grid = np.linspace(math.log(1e-3 / scale), math.log(1e4 / scale), 400)
    errors = [_sse(x, y, math.exp(g))[0] for g in grid]
    best = int(np.argmin(errors))
    lo, hi = grid[max(best - 1, 0)], grid[min(best + 1, len(grid) - 1)]
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    a, b = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
    for _ in range(80):
        if _sse(x, y, math.exp(a))[0] <= _sse(x, y, math.exp(b))[0]:
            hi, b = b, a
            a = hi - ratio * (hi - lo)
        else:
            lo, a = a, b
            b = lo + ratio * (hi - lo)
    phi2 = math.exp((lo + hi) / 2.0)
    if errors[best] < _sse(x, y, phi2)[0]:
        phi2 = math.exp(grid[best])
    return _sse(x, y, phi2)[1], phi2


def wilson_interval(agree: int, n: int) -> tuple[float, float]:
    """95% Wilson score interval of ``agree / n`` (NaN, NaN for n = 0)."""
    return _wilson_fraction(agree / n, n) if n > 0 else (math.nan, math.nan)


def default_window(n_pairs: int) -> int:
    """Comparisons per bin: ``min(300, max(20, n // 4))``, never more than ``n_pairs``."""
    return max(1, min(BIN_PAIRS, max(MIN_WINDOW_PAIRS, n_pairs // 4), n_pairs))


def _window(deltas: np.ndarray, agree: np.ndarray, ids: np.ndarray, centre: float, k: int) -> Window:
    """The ``k`` comparisons nearest ``centre`` (``deltas`` sorted; a tie in distance goes to the earlier one)."""
    if len(deltas) == 0:
        return Window(centre, 0, 0, 0, math.nan, math.nan, math.nan, math.nan, math.nan, math.nan)
    chosen = np.argsort(np.abs(deltas - centre), kind="stable")[:k]
    n_sys = len(np.unique(ids[chosen]))
    hits = int(np.sum(agree[chosen]))
    p = hits / len(chosen)
    low, high = _wilson_fraction(p, n_sys)  # the fraction over the bin's rows, its n the distinct system pairs
    d = deltas[chosen]
    return Window(centre, len(chosen), n_sys, hits, p, low, high, float(d.min()), float(d.max()), float(d.mean()))


def _wilson_fraction(p: float, n: int) -> tuple[float, float]:
    z2 = _Z95 * _Z95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = _Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def _vector(values, name: str) -> np.ndarray:
    try:
        v = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name} must be numbers; got {shorten(values)}.") from exc
    if v.ndim != 1:
        raise InputError(f"{name} must be one number per entry (1-D); got shape {v.shape}.")
    bad = np.flatnonzero(~np.isfinite(v))
    if len(bad):
        raise InputError(f"{name} has {len(bad)} value(s) that are not finite numbers (NaN or infinite), the first "
                         f"at position {int(bad[0])}; remove those entries or give a number.")
    return v


def delta_agreement(metric_delta, human_delta, *, pair_ids=None, higher_is_better: bool = True,
                    tie_tolerance: float = 0.0, window_pairs: int | None = None, points: int = CURVE_POINTS,
                    subsets: int = 0, subset_fraction: float = DEFAULT_SUBSET_FRACTION) -> DeltaAgreement:
    """The curve of agreement over ``|metric delta|`` from comparisons' metric and human deltas (module docstring).

    Args:
        metric_delta, human_delta: ``(n,)`` each comparison's ``a - b`` (metric, humans; higher human is better).
        pair_ids: ``(n,)`` the system pair of each comparison (default: each is its own); the intervals count
            distinct ids.
        higher_is_better: False for a metric where lower is better (TER): its deltas are negated for the sign.
        tie_tolerance: ``|human delta| <= tie_tolerance`` is a human tie, left out.
        window_pairs: comparisons per bin (default :func:`default_window`).
        points: bins drawn on the curve, at evenly spaced ranks of the sorted deltas.
        subsets, subset_fraction: recorded for the sentence (as :class:`SystemPairs`).
    """
    m = _vector(metric_delta, "metric_delta")
    h = _vector(human_delta, "human_delta")
    if len(m) != len(h):
        raise InputError(f"metric_delta and human_delta must have one value per comparison; got {len(m)} and "
                         f"{len(h)}.")
    ids = np.arange(len(m)) if pair_ids is None else np.asarray(pair_ids)
    if ids.shape != m.shape:
        raise InputError(f"pair_ids must have one id per comparison ({len(m)}); got shape {ids.shape}.")
    if not (math.isfinite(tie_tolerance) and tie_tolerance >= 0):
        raise InputError(f"tie_tolerance must be a finite number >= 0; got {shorten(tie_tolerance)}.")
    if points < 1 or (window_pairs is not None and window_pairs < 1):
        raise InputError(f"points and window_pairs must be positive; got {points} and {window_pairs}.")
    signed = m if higher_is_better else -m
    kept = np.abs(h) > tie_tolerance
    agree_all = np.sign(signed) == np.sign(h)
    order = np.argsort(np.abs(signed[kept]), kind="stable")
    deltas, agree, kept_ids = np.abs(signed[kept])[order], agree_all[kept][order], ids[kept][order]
    n = len(deltas)
    k = default_window(n) if window_pairs is None else min(int(window_pairs), max(n, 1))
    ranks = np.unique(np.round(np.linspace(0, n - 1, min(points, n))).astype(int)) if n else np.array([], int)
    bins: list[Window] = []
    for r in ranks:  # near the ends several levels share one bin: drawn once
        b = _window(deltas, agree, kept_ids, float(deltas[r]), k)
        if not bins or (b.delta_low, b.delta_high, b.agree) != (bins[-1].delta_low, bins[-1].delta_high,
                                                                 bins[-1].agree):
            bins.append(b)
    def column(attr: str) -> np.ndarray:
        return np.array([getattr(b, attr) for b in bins], dtype=np.float64)

    x, y = column("mean_delta"), column("probability")
    return DeltaAgreement(x, y, column("low"), column("high"), column("delta_low"), column("delta_high"),
                          phi=fit_sigmoid(x, y), pair_deltas=deltas,
                          pair_agree=agree, pair_ids=kept_ids, n_pairs=n, n_system_pairs=len(np.unique(kept_ids)),
                          n_human_ties=int(np.sum(~kept)), window_pairs=k, subsets=int(subsets),
                          subset_fraction=float(subset_fraction), tie_tolerance=float(tie_tolerance))


def _labels(values, name: str, n: int) -> np.ndarray:
    arr = np.asarray(list(values), dtype=object)
    if arr.shape != (n,):
        raise InputError(f"{name} must have one entry per segment ({n}); got {len(arr)}.")
    return np.array([str(x) for x in arr], dtype=object)


def _checked_segments(scores: Mapping[str, ArrayLike], human, systems, groups, items):
    if not scores:
        raise InputError("scores must name at least one metric: {metric: (n,) segment scores}.")
    h = _vector(human, "human scores")
    metrics = {name: _vector(v, f"the {name} scores") for name, v in scores.items()}
    for name, v in metrics.items():
        if len(v) != len(h):
            raise InputError(f"the {name} scores and the human scores must have one value per segment; got "
                             f"{len(v)} and {len(h)}.")
    sys_ = _labels(systems, "systems", len(h))
    grp = _labels(groups, "groups", len(h)) if groups is not None else np.full(len(h), "", dtype=object)
    its = _labels(items, "items", len(h)) if items is not None else None
    return metrics, h, sys_, grp, its


def _subset_masks(sys_: np.ndarray, its: np.ndarray | None, in_group: np.ndarray, fraction: float,
                  rng: np.random.Generator) -> np.ndarray:
    """One resampled comparison's segments of one group: ``fraction`` of the items (the same for every system) or
    of each system's own segments, drawn without replacement (at least one)."""
    mask = np.zeros(len(sys_), dtype=bool)
    if its is not None:
        keys = np.unique(its[in_group])
        drawn = rng.choice(keys, size=max(1, round(fraction * len(keys))), replace=False)
        return in_group & np.isin(its, drawn)
    for name in np.unique(sys_[in_group]):
        where = np.flatnonzero(in_group & (sys_ == name))
        mask[rng.choice(where, size=max(1, round(fraction * len(where))), replace=False)] = True
    return mask


def system_pairs(scores: Mapping[str, ArrayLike], human, systems, groups=None, *, items=None,
                 subsets: int = 0, subset_fraction: float = DEFAULT_SUBSET_FRACTION, seed: int = 0) -> SystemPairs:
    """Every pair of systems within a group, with each metric's and the humans' delta of system means.

    Args:
        scores: ``{metric: (n,) segment scores}``; human: ``(n,)`` human scores (higher is better; NaN refused);
        systems: ``(n,)`` the system of each segment; groups: optional ``(n,)`` labels (language pairs, test
            sets): pairs only within one group; items: optional ``(n,)`` segment ids, used only by the subsets.
        subsets: resampled comparisons per system pair (0: none; module docstring); subset_fraction: in (0, 1];
            seed: numpy's ``default_rng`` seed of the subsets.
    """
    metrics, h, sys_, grp, its = _checked_segments(scores, human, systems, groups, items)
    if subsets < 0 or not 0 < subset_fraction <= 1:
        raise InputError(f"subsets must be >= 0 and subset_fraction in (0, 1]; got {subsets} and {subset_fraction}.")
    rng = np.random.default_rng(seed)
    rows: list[tuple] = []
    pair = 0
    for g in dict.fromkeys(grp):
        in_group = grp == g
        names = sorted(set(sys_[in_group]))
        masks = [in_group] + [_subset_masks(sys_, its, in_group, subset_fraction, rng) for _ in range(subsets)]
        means = [{s: (h[mk & (sys_ == s)], {m: v[mk & (sys_ == s)] for m, v in metrics.items()}) for s in names}
                 for mk in masks]
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                for r, table in enumerate(means):
                    (ha, ma), (hb, mb) = table[a], table[b]
                    if len(ha) and len(hb):
                        rows.append((a, b, g, pair, r > 0, ha.mean() - hb.mean(),
                                     {m: ma[m].mean() - mb[m].mean() for m in metrics}))
                pair += 1
    if pair == 0:
        raise InputError("system pairs need at least 2 systems in one group; got "
                         f"{len(set(sys_))} system(s) in {len(set(grp))} group(s).")
    col = list(zip(*rows))
    return SystemPairs({m: np.array([d[m] for d in col[6]]) for m in metrics}, np.array(col[5], dtype=np.float64),
                       np.array(col[0], dtype=object), np.array(col[1], dtype=object), np.array(col[2], dtype=object),
                       np.array(col[3], dtype=np.int64), np.array(col[4], dtype=bool), pair, int(subsets),
                       float(subset_fraction))


def pairs_agreement(pairs: SystemPairs, metric: str, **options) -> DeltaAgreement:
    """:func:`delta_agreement` of one metric of :func:`system_pairs` (options as there)."""
    if metric not in pairs.metric_deltas:
        raise InputError(f"no metric {shorten(metric)} in the system pairs; they have {sorted(pairs.metric_deltas)}.")
    return delta_agreement(pairs.metric_deltas[metric], pairs.human_delta, pair_ids=pairs.pair_id,
                           subsets=pairs.subsets, subset_fraction=pairs.subset_fraction, **options)


def segment_delta_agreement(scores: Mapping[str, ArrayLike], human, systems, groups=None, *, items=None,
                            higher_is_better: Mapping[str, bool] | None = None, tie_tolerance: float = 0.0,
                            window_pairs: int | None = None, subsets: int = 0,
                            subset_fraction: float = DEFAULT_SUBSET_FRACTION,
                            seed: int = 0) -> dict[str, DeltaAgreement]:
    """From rated segments to every metric's curve: :func:`system_pairs` then :func:`delta_agreement` per metric
    (``higher_is_better``: ``{metric: False}`` for a lower-is-better one; default True)."""
    pairs = system_pairs(scores, human, systems, groups, items=items, subsets=subsets,
                         subset_fraction=subset_fraction, seed=seed)
    direction = dict(higher_is_better or {})
    return {m: pairs_agreement(pairs, m, higher_is_better=direction.get(m, True), tie_tolerance=tie_tolerance,
                               window_pairs=window_pairs) for m in scores}


def paired_delta_agreement(metric: Mapping[str, ArrayLike], human: Mapping[str, ArrayLike], *,
                           higher_is_better: bool = True, tie_tolerance: float = 0.0, window_pairs: int | None = None,
                           subsets: int = 0, subset_fraction: float = DEFAULT_SUBSET_FRACTION,
                           seed: int = 0) -> DeltaAgreement:
    """The curve from systems scored on the same segments (a comparison's layout): ``metric`` and ``human`` are
    ``{system: (n,) scores}`` with the same systems and n; segment i of every system is item i, so resampled subsets
    (``subsets > 0``) take the same segments from every system. A NaN human score is refused: drop the segments
    the humans did not rate, from every system, first."""
    if set(metric) != set(human):
        raise InputError(f"metric and human scores must name the same systems; got {sorted(map(str, metric))} and "
                         f"{sorted(map(str, human))}.")
    names = list(metric)
    columns = {s: (_vector(metric[s], f"the metric scores of {s}"), _vector(human[s], f"the human scores of {s}"))
               for s in names}
    lengths = {len(m) for m, h in columns.values()} | {len(h) for m, h in columns.values()}
    if len(lengths) != 1:
        raise InputError("every system needs a metric and a human score of every segment (the same n); got "
                         + ", ".join(f"{s}: {len(m)} and {len(h)}" for s, (m, h) in columns.items()) + ".")
    n = lengths.pop()
    return segment_delta_agreement(
        {"metric": np.concatenate([columns[s][0] for s in names])}, np.concatenate([columns[s][1] for s in names]),
        np.repeat(np.array(names, dtype=object), n), items=np.tile(np.arange(n), len(names)),
        higher_is_better={"metric": higher_is_better}, tie_tolerance=tie_tolerance, window_pairs=window_pairs,
        subsets=subsets, subset_fraction=subset_fraction, seed=seed)["metric"]
