"""Agreement of metrics with human scores: segment- and system-level correlations with bootstrap intervals, and
whether the best metric's lead over the second is significant. Pure functions over arrays (no model, no I/O).

Definitions (scipy's, so that a number here equals ``scipy.stats`` on the same arrays):

* **Pearson** r (``pearsonr``), **Spearman** rho (``spearmanr``: Pearson of average ranks), **Kendall** tau-b
  (``kendalltau``, which corrects for ties on either side).
* **Segment level**: every (candidate, human score) pair is one point. **System level**: a system's metric score is
  the mean of its segments' metric scores, its human score the mean of its segments' human scores; Pearson and
  Kendall over the systems (WMT's system-level setting; Spearman is not reported with few points).
* **Bootstrap 95% intervals**: segments are resampled with replacement, ``numpy.random.default_rng(seed)``
  ``.choice(n, size=(n_samples, n))``, as :mod:`bertscore_viz.evaluation.significance` and sacrebleu draw them
  (default 1,000 resamples, seed 12345, so that a run is reproducible); the interval is the 2.5th and 97.5th
  percentile of the resampled statistic. At system level the same resampled segments are averaged per system.
  Every metric sees the same resamples (paired).
* **The lead**: metrics are ranked by the primary statistic (segment-level Pearson unless told otherwise); the
  lead of the first over the second is tested with a paired bootstrap on those same resamples:
  ``p = (c + 1) / (n_samples + 1)`` where ``c`` counts the resamples in which the first is not ahead (its
  statistic minus the second's is at most 0). One-sided: "is the best really better than the runner-up?".
* A statistic is NaN (and said so) where it is undefined: fewer than 3 points, or one side constant.
* Pairs whose human score or metric score is missing or not finite are dropped before anything is computed, the
  same pairs for every metric, and listed with the reason; correlations never silently drop points.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy import stats
from scipy.stats import rankdata

from bertscore_viz.evaluation.significance import DEFAULT_SAMPLES, DEFAULT_SEED

STATISTICS = ("pearson", "spearman", "kendall")
SYSTEM_STATISTICS = ("pearson", "kendall")
#: Resamples drawn per block (bounded memory: at most this many cells of the index matrix at once).
_BLOCK_CELLS = 2_000_000


# --- one statistic ------------------------------------------------------------------------------------------------
def correlation(x, y, statistic: str = "pearson") -> float:
    """One correlation as scipy computes it; NaN when undefined (fewer than 3 points, or a constant side)."""

    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if statistic not in STATISTICS:
        raise ValueError(f"statistic must be one of {', '.join(STATISTICS)}, got {statistic!r}.")
    if len(x) != len(y):
        raise ValueError(f"x and y have {len(x)} and {len(y)} values; they must be paired.")
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy's ConstantInputWarning etc.: handled above
        if statistic == "pearson":
            return float(stats.pearsonr(x, y)[0])
        if statistic == "spearman":
            return float(stats.spearmanr(x, y)[0])
        return float(stats.kendalltau(x, y)[0])


def _rowwise_pearson(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson r of each row pair of ``(m, n)`` arrays; NaN for a constant row."""
    xc = x - x.mean(axis=1, keepdims=True)
    yc = y - y.mean(axis=1, keepdims=True)
    den = np.sqrt((xc * xc).sum(axis=1) * (yc * yc).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (xc * yc).sum(axis=1) / den
    r[~(den > 0)] = np.nan
    return np.clip(r, -1.0, 1.0)


def _rowwise_kendall(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall tau-b of each row pair of ``(m, k)`` arrays from the signs of all pairs (for small ``k``): the sum
    of ``sign(dx) sign(dy)`` over pairs is ``n_c - n_d`` and the sums of squared signs are the untied pairs, which
    is tau-b. A NaN value drops its point (every pair with it has sign 0). NaN when fewer than 3 points remain or
    a side is constant."""
    with np.errstate(invalid="ignore"):
        sx = np.nan_to_num(np.sign(x[:, :, None] - x[:, None, :]))
        sy = np.nan_to_num(np.sign(y[:, :, None] - y[:, None, :]))
    ok = np.isfinite(x) & np.isfinite(y)
    sx *= ok[:, :, None] & ok[:, None, :]
    sy *= ok[:, :, None] & ok[:, None, :]
    den = np.sqrt((sx * sx).sum(axis=(1, 2)) * (sy * sy).sum(axis=(1, 2)))
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = (sx * sy).sum(axis=(1, 2)) / den
    tau[~(den > 0) | (ok.sum(axis=1) < 3)] = np.nan
    return tau


def _resampled(x: np.ndarray, y: np.ndarray, statistic: str) -> np.ndarray:
    """The statistic of each resample: ``x``, ``y`` are ``(m, n)`` resampled rows."""

    if statistic == "pearson":
        return _rowwise_pearson(x, y)
    if statistic == "spearman":
        return _rowwise_pearson(rankdata(x, axis=1), rankdata(y, axis=1))
    return np.array([correlation(a, b, "kendall") for a, b in zip(x, y)])


def resample_indices(n: int, n_samples: int = DEFAULT_SAMPLES, seed: int | None = DEFAULT_SEED):
    """Blocks of ``(rows, n)`` resample indices, drawn as one ``rng.choice(n, size=(n_samples, n))`` would be."""
    rng = np.random.default_rng(seed)
    block = max(1, _BLOCK_CELLS // max(n, 1))
    for start in range(0, n_samples, block):
        yield rng.choice(n, size=(min(n_samples, start + block) - start, n), replace=True)


def percentile_interval(samples: np.ndarray) -> tuple[float, float]:
    """2.5th and 97.5th percentiles of the finite resampled values; NaN when fewer than half are finite."""
    s = np.asarray(samples, dtype=np.float64)
    finite = s[np.isfinite(s)]
    if len(finite) < max(1, len(s) // 2):
        return (math.nan, math.nan)
    lo, hi = np.percentile(finite, [2.5, 97.5])
    return (float(lo), float(hi))


# --- a report -----------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LevelResult:
    """One metric at one level: the statistics, their 95% intervals, and how many points they rest on."""

    values: dict
    ci95: dict
    n: int

    def as_dict(self) -> dict:
        out = {k: _num(v) for k, v in self.values.items()}
        out["ci95"] = {k: [_num(lo), _num(hi)] for k, (lo, hi) in self.ci95.items()}
        out["n"] = self.n
        return out


@dataclass(frozen=True)
class Lead:
    """The best metric's lead over the second on the primary statistic, with its paired-bootstrap p."""

    best: str
    second: str
    statistic: str
    level: str
    difference: float
    p_value: float

    def significant(self, alpha: float = 0.05) -> bool:
        return bool(self.p_value < alpha)

    def sentence(self, alpha: float = 0.05) -> str:
        what = f"{self.level}-level {self.statistic.capitalize()}"
        verdict = "significantly" if self.significant(alpha) else "not significantly"
        return (f"{self.best} leads {self.second} on {what} by {self.difference:+.4f}: {verdict} "
                f"(paired bootstrap, one-sided p = {self.p_value:.3f}).")

    def as_dict(self) -> dict:
        return {"best": self.best, "second": self.second, "statistic": self.statistic, "level": self.level,
                "difference": _num(self.difference), "p_value": _num(self.p_value),
                "significant": self.significant()}


@dataclass(frozen=True)
class Agreement:
    """Correlations of several metrics with one set of human scores.

    Attributes:
        segment: ``{metric: LevelResult}`` at segment level.
        system: ``{metric: LevelResult}`` at system level (empty without systems, or with fewer than 3).
        lead: the best metric's lead over the second (None with fewer than two metrics or undefined statistics).
        n_pairs: pairs used; dropped: ``[(row index, reason)]`` of pairs left out.
        n_systems: systems at system level; n_samples, seed: the bootstrap's.
    """

    segment: dict
    system: dict
    lead: Lead | None
    n_pairs: int
    dropped: list = field(default_factory=list)
    n_systems: int = 0
    n_samples: int = DEFAULT_SAMPLES
    seed: int | None = DEFAULT_SEED

    def as_dict(self) -> dict:
        metrics = {}
        for name, seg in self.segment.items():
            metrics[name] = {"segment": seg.as_dict()}
            if name in self.system:
                metrics[name]["system"] = self.system[name].as_dict()
        return {"n_pairs": self.n_pairs, "n_systems": self.n_systems, "metrics": metrics,
                "lead": None if self.lead is None else self.lead.as_dict(),
                "dropped": [{"row": int(i), "reason": r} for i, r in self.dropped],
                "bootstrap": {"resamples": self.n_samples, "seed": self.seed}}


def _num(v: float) -> float | None:
    return None if v is None or not math.isfinite(v) else round(float(v), 6)


def usable_pairs(metrics: dict[str, np.ndarray], human) -> tuple[np.ndarray, list[tuple[int, str]]]:
    """A mask of the pairs every metric and the human score have a finite value for, and the dropped ones."""
    human = np.asarray(human, dtype=np.float64)
    keep = np.isfinite(human)
    dropped = [(int(i), "the human score is missing or not a number") for i in np.flatnonzero(~keep)]
    for name, values in metrics.items():
        values = np.asarray(values, dtype=np.float64)
        if values.shape != human.shape:
            raise ValueError(f"{name} has {values.shape[0]} values for {human.shape[0]} human scores.")
        bad = keep & ~np.isfinite(values)
        dropped += [(int(i), f"{name} is undefined for this pair") for i in np.flatnonzero(bad)]
        keep &= np.isfinite(values)
    return keep, sorted(dropped)


def agreement(metrics: dict[str, np.ndarray], human, systems=None, n_samples: int = DEFAULT_SAMPLES,
              seed: int | None = DEFAULT_SEED, primary: str = "pearson") -> Agreement:
    """Segment- and (with ``systems``) system-level correlations of each metric with ``human``.

    Args:
        metrics: ``{name: (n,) scores}``, in the order they should be listed.
        human: ``(n,)`` human scores (NaN = missing: the pair is dropped).
        systems: ``(n,)`` system name of each pair, or None.
        n_samples, seed: the bootstrap's resamples and seed.
        primary: the statistic that ranks metrics for the lead test.
    """
    if primary not in STATISTICS:
        raise ValueError(f"primary must be one of {', '.join(STATISTICS)}, got {primary!r}.")
    keep, dropped = usable_pairs(metrics, human)
    h = np.asarray(human, dtype=np.float64)[keep]
    ms = {k: np.asarray(v, dtype=np.float64)[keep] for k, v in metrics.items()}
    sys_codes, n_systems = None, 0
    if systems is not None:
        names = np.asarray(systems, dtype=object)[keep]
        uniq, sys_codes = np.unique(names.astype(str), return_inverse=True)
        n_systems = len(uniq)
        if n_systems < 3:
            sys_codes = None
    n = len(h)
    seg_samples = {k: {s: [] for s in STATISTICS} for k in ms}
    sys_samples = {k: {s: [] for s in SYSTEM_STATISTICS} for k in ms}
    if n >= 3 and n_samples > 0:
        for idx in resample_indices(n, n_samples, seed):
            hh = h[idx]
            for k, v in ms.items():
                vv = v[idx]
                for s in STATISTICS:
                    seg_samples[k][s].append(_resampled(vv, hh, s))
                if sys_codes is not None:
                    hs, vs = _system_means(hh, sys_codes[idx], n_systems), _system_means(vv, sys_codes[idx], n_systems)
                    for s in SYSTEM_STATISTICS:
                        sys_samples[k][s].append(_resampled_systems(vs, hs, s))
    segment, system = {}, {}
    for k, v in ms.items():
        values = {s: correlation(v, h, s) for s in STATISTICS}
        samples = {s: np.concatenate(seg_samples[k][s]) if seg_samples[k][s] else np.array([]) for s in STATISTICS}
        segment[k] = LevelResult(values, {s: percentile_interval(samples[s]) for s in STATISTICS}, n)
        seg_samples[k] = samples
        if sys_codes is not None:
            hs, vs = _system_means(h[None], sys_codes[None], n_systems)[0], _system_means(v[None], sys_codes[None],
                                                                                         n_systems)[0]
            sv = {s: correlation(vs, hs, s) for s in SYSTEM_STATISTICS}
            ssamp = {s: np.concatenate(sys_samples[k][s]) for s in SYSTEM_STATISTICS}
            system[k] = LevelResult(sv, {s: percentile_interval(ssamp[s]) for s in SYSTEM_STATISTICS}, n_systems)
    lead = _lead(segment, seg_samples, primary, "segment", n_samples)
    return Agreement(segment, system, lead, n, dropped, n_systems if sys_codes is not None else 0, n_samples, seed)


def _system_means(values: np.ndarray, codes: np.ndarray, k: int) -> np.ndarray:
    """``(m, k)`` mean per system of each row of ``(m, n)`` values; NaN for a system absent from a resample."""
    m = values.shape[0]
    flat = (codes + k * np.arange(m)[:, None]).ravel()
    sums = np.bincount(flat, weights=values.ravel(), minlength=m * k).reshape(m, k)
    counts = np.bincount(flat, minlength=m * k).reshape(m, k)
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums / counts


def _resampled_systems(vs: np.ndarray, hs: np.ndarray, statistic: str) -> np.ndarray:
    """System-level statistic of each resample (``(m, k)`` system means; NaN = a system absent from it)."""
    if statistic == "kendall":
        return _rowwise_kendall(vs, hs)
    ok = np.isfinite(vs) & np.isfinite(hs)
    if ok.all():
        return _rowwise_pearson(vs, hs)
    out = np.empty(len(vs))
    for i, (a, b, keep) in enumerate(zip(vs, hs, ok)):
        out[i] = correlation(a[keep], b[keep], statistic)
    return out


def _lead(results: dict, samples: dict, statistic: str, level: str, n_samples: int) -> Lead | None:
    ranked = sorted((k for k in results if math.isfinite(results[k].values[statistic])),
                    key=lambda k: -results[k].values[statistic])
    if len(ranked) < 2:
        return None
    best, second = ranked[:2]
    diff = results[best].values[statistic] - results[second].values[statistic]
    a, b = samples[best][statistic], samples[second][statistic]
    if len(a) == 0:
        return Lead(best, second, statistic, level, diff, math.nan)
    d = a - b
    not_ahead = int(np.sum(~(d > 0)))  # NaN resamples count against the lead
    return Lead(best, second, statistic, level, diff, (not_ahead + 1) / (len(d) + 1))
