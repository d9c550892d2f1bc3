"""Agreement of metrics with human scores at every level (segment, system, summary) with bootstrap intervals, and
whether the best metric's lead over the second is significant at each. Pure functions over arrays (no model, no
I/O).

Definitions (scipy's, so that a number here equals ``scipy.stats`` on the same arrays):

* **Pearson** r (``pearsonr``), **Spearman** rho (``spearmanr``: Pearson of average ranks), **Kendall** tau-b
  (``kendalltau``, which corrects for ties on either side).
* **Segment level**: every (candidate, human score) pair is one point.
* **System level**: a system's metric score is the mean of its segments' metric scores, its human score the mean
  of its segments' human scores; Pearson and Kendall over the systems (WMT's system-level setting; Spearman is not
  reported with few points). Needs at least 3 systems. When human **system-level scores** are given (e.g.
  mt-metrics-eval's ``sys`` files), the metric's system means are also correlated with them (``system_gold``).
* **Summary level**: per document, the correlation across its outputs, averaged over documents
  (:mod:`bertscore_viz.evaluation.levels`).
* **Bootstrap 95% intervals**: at segment and system level the outputs are resampled with replacement,
  ``numpy.random.default_rng(seed).choice(n, size=(n_samples, n))``, as :mod:`bertscore_viz.evaluation.significance`
  and sacrebleu draw them (default 1,000 resamples, seed 12345, so that a run is reproducible); at system level
  each resample's outputs are re-averaged per system. At summary level the documents are resampled. The interval
  is the 2.5th and 97.5th percentile of the resampled statistic; every metric sees the same resamples (paired).
  The resampled statistics are computed for all resamples at once (:mod:`bertscore_viz.evaluation.resampled`).
* **The lead**, at each level: metrics are ranked by the level's statistic (``primary``, segment-level Pearson
  unless told otherwise; Pearson at system level when ``primary`` is Spearman); the lead of the first over the
  second is tested with a paired bootstrap on that level's resamples: ``p = (c + 1) / (n_samples + 1)`` where
  ``c`` counts the resamples in which the first is not ahead (its statistic minus the second's is at most 0).
  One-sided: "is the best really better than the runner-up?".
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

from bertscore_viz.errors import InputError
from bertscore_viz.evaluation import MAX_RESAMPLES, MIN_RESAMPLES
from bertscore_viz.evaluation import levels as lv
from bertscore_viz.evaluation.resampled import (
    counts_of,
    matmul,
    resampled_correlations,
    rowwise_kendall,
    rowwise_pearson,
)
from bertscore_viz.evaluation.significance import DEFAULT_SAMPLES, DEFAULT_SEED

__all__ = ["STATISTICS", "SYSTEM_STATISTICS", "MIN_RESAMPLES", "MAX_RESAMPLES", "check_resamples", "Agreement",
           "Lead", "LevelResult", "agreement", "best_metrics",
           "correlation", "percentile_interval", "resample_indices", "usable_pairs"]

STATISTICS = ("pearson", "spearman", "kendall")
SYSTEM_STATISTICS = ("pearson", "kendall")
#: Resamples drawn per block (bounded memory: at most this many cells of the index matrix at once).
_BLOCK_CELLS = 2_000_000


def check_resamples(n_samples, minimum: int = 1) -> int:
    """The bootstrap's number of resamples: 0 (no intervals, no test of the lead), or a whole number from
    ``minimum`` (the command line and the app: :data:`MIN_RESAMPLES`, below which a 95% interval is no use) to
    :data:`MAX_RESAMPLES` (the resampled statistics of every metric, level and statistic are kept for the
    percentiles, so memory grows with the count; the resampling itself is drawn in blocks); else an InputError
    naming the bounds."""
    if isinstance(n_samples, bool) or not isinstance(n_samples, (int, np.integer)):
        raise InputError(f"The number of bootstrap resamples must be a whole number, got {n_samples!r}.")
    if n_samples != 0 and not minimum <= n_samples <= MAX_RESAMPLES:
        raise InputError(f"The number of bootstrap resamples must be 0 (no intervals, no test) or from {minimum:,} "
                         f"to {MAX_RESAMPLES:,} (MAX_RESAMPLES: every resampled statistic is kept in memory), got "
                         f"{n_samples:,}.")
    return int(n_samples)


# --- one statistic ------------------------------------------------------------------------------------------------
def correlation(x, y, statistic: str = "pearson") -> float:
    """One correlation as scipy computes it; NaN when undefined (fewer than 3 points, or a constant side).

    Raises:
        InputError: an unknown statistic, or ``x`` and ``y`` of different lengths.
    """

    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if statistic not in STATISTICS:
        raise InputError(f"statistic must be one of {', '.join(STATISTICS)}, got {statistic!r}.")
    if len(x) != len(y):
        raise InputError(f"x and y have {len(x)} and {len(y)} values; they must be paired.")
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy's ConstantInputWarning etc.: handled above
        if statistic == "pearson":
            return float(stats.pearsonr(x, y)[0])
        if statistic == "spearman":
            return float(stats.spearmanr(x, y)[0])
        return float(stats.kendalltau(x, y)[0])


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
    """The best metric's lead over the second on one level's statistic, with its paired-bootstrap p."""

    best: str
    second: str
    statistic: str
    level: str
    difference: float
    p_value: float

    def significant(self, alpha: float = 0.05) -> bool:
        return bool(self.p_value < alpha)

    def sentence(self, alpha: float = 0.05) -> str:
        what = f"{self.level.split('_')[0]}-level {self.statistic.capitalize()}" + (
            " against the human system scores" if self.level == "system_gold" else "")
        if math.isnan(self.p_value):  # no resamples were drawn: there is no verdict to give
            return (f"{self.best} leads {self.second} on {what} by {self.difference:+.4f} (not tested: no "
                    "bootstrap resamples were drawn).")
        verdict = "significantly" if self.significant(alpha) else "not significantly"
        how = lv.RESAMPLED.get(self.level, "resampling the outputs")
        return (f"{self.best} leads {self.second} on {what} by {self.difference:+.4f}: {verdict} "
                f"(paired bootstrap {how}, one-sided p = {self.p_value:.3f}).")

    def as_dict(self) -> dict:
        return {"best": self.best, "second": self.second, "statistic": self.statistic, "level": self.level,
                "difference": _num(self.difference), "p_value": _num(self.p_value),
                "significant": self.significant()}


@dataclass(frozen=True)
class Agreement:
    """Correlations of several metrics with one set of human scores, at every level the data allow.

    Attributes:
        segment: ``{metric: LevelResult}`` at segment level.
        system: ``{metric: LevelResult}`` at system level (empty without systems, or with fewer than 3).
        lead: the segment level's lead (``leads["segment"]``).
        n_pairs: pairs used; dropped: ``[(row index, reason)]`` of pairs left out.
        n_systems: systems at system level; n_samples, seed: the bootstrap's.
        summary: ``{metric: LevelResult}`` at summary level (empty without documents of 3 or more outputs).
        n_documents: documents at summary level.
        system_gold: ``{metric: LevelResult}``: system means against given human system scores (else empty);
            n_gold_systems: systems with such a score.
        leads: ``{level: Lead}`` where two metrics or more have a defined statistic.
        primary: the statistic that ranks metrics.
        notes: why a level is missing, when the data name systems or documents but the level cannot be computed.
    """

    segment: dict
    system: dict
    lead: Lead | None
    n_pairs: int
    dropped: list = field(default_factory=list)
    n_systems: int = 0
    n_samples: int = DEFAULT_SAMPLES
    seed: int | None = DEFAULT_SEED
    summary: dict = field(default_factory=dict)
    n_documents: int = 0
    system_gold: dict = field(default_factory=dict)
    n_gold_systems: int = 0
    leads: dict = field(default_factory=dict)
    primary: str = "pearson"
    notes: tuple = ()

    def levels(self) -> dict:
        """``{level: {metric: LevelResult}}`` of the levels present, in :data:`levels.LEVELS` order."""
        table = {"segment": self.segment, "system": self.system, "system_gold": self.system_gold,
                 "summary": self.summary}
        return {level: table[level] for level in lv.LEVELS if table[level]}

    def level_statistic(self, level: str) -> str:
        """The statistic that ranks metrics at ``level``."""
        if level in ("system", "system_gold") and self.primary not in SYSTEM_STATISTICS:
            return "pearson"
        return self.primary

    def missing_levels(self) -> list[str]:
        return list(self.notes)

    def headline(self, alpha: float = 0.05) -> list[str]:
        """The verdict at every level, as sentences (:func:`bertscore_viz.evaluation.levels.headline`)."""
        return lv.headline(self, alpha)

    def as_dict(self) -> dict:
        metrics = {}
        for level, results in self.levels().items():
            for name, res in results.items():
                metrics.setdefault(name, {})[level] = res.as_dict()
        return {"n_pairs": self.n_pairs, "n_systems": self.n_systems, "n_documents": self.n_documents,
                "n_gold_systems": self.n_gold_systems, "metrics": metrics,
                "lead": None if self.lead is None else self.lead.as_dict(),
                "leads": {k: v.as_dict() for k, v in self.leads.items()},
                "best": {level: best_metrics(results, self.level_statistic(level))
                         for level, results in self.levels().items()},
                "levels_disagree": lv.levels_disagree(self), "headline": self.headline(),
                "resampled": {level: lv.RESAMPLED[level] for level in self.levels()},
                "primary": self.primary, "notes": list(self.notes),
                "dropped": [{"row": int(i), "reason": r} for i, r in self.dropped],
                "bootstrap": {"resamples": self.n_samples, "seed": self.seed}}


def _num(v: float) -> float | None:
    return None if v is None or not math.isfinite(v) else round(float(v), 6)


def best_metrics(results: dict, statistic: str, decimals: int = 4) -> list[str]:
    """The metrics with the highest ``statistic`` in ``results`` (``{metric: LevelResult}``), all of them when
    several are equal at ``decimals`` decimals (as a table shows them); [] when none is defined."""
    shown = {m: round(r.values[statistic], decimals) for m, r in results.items()
             if statistic in r.values and math.isfinite(r.values[statistic])}
    if not shown:
        return []
    top = max(shown.values())
    return [m for m, v in shown.items() if v == top]


def usable_pairs(metrics: dict[str, np.ndarray], human) -> tuple[np.ndarray, list[tuple[int, str]]]:
    """A mask of the pairs every metric and the human score have a finite value for, and the dropped ones.

    Raises:
        InputError: a metric with another number of values than ``human``.
    """
    human = np.asarray(human, dtype=np.float64)
    keep = np.isfinite(human)
    dropped = [(int(i), "the human score is missing or not a number") for i in np.flatnonzero(~keep)]
    for name, values in metrics.items():
        values = np.asarray(values, dtype=np.float64)
        if values.shape != human.shape:
            raise InputError(f"{name} has {values.shape[0]} values for {human.shape[0]} human scores.")
        bad = keep & ~np.isfinite(values)
        dropped += [(int(i), f"{name} is undefined for this pair") for i in np.flatnonzero(bad)]
        keep &= np.isfinite(values)
    return keep, sorted(dropped)


@dataclass(frozen=True)
class _Systems:
    """The systems of the usable pairs: each pair's system, the names, and human system scores when given."""

    codes: np.ndarray
    names: tuple
    gold: np.ndarray | None  # (S,) human system score, NaN for a system without one


def _systems(systems, keep: np.ndarray, system_scores: dict | None) -> tuple[_Systems | None, list[str]]:
    if systems is None:
        return None, []
    labels = np.asarray([str(s) for s in np.asarray(systems, dtype=object)[keep]], dtype=object)
    names, codes = np.unique(labels, return_inverse=True)
    if len(names) < 3:
        return None, [f"No system level: the outputs name {len(names)} system(s); a system-level correlation "
                      "needs at least 3."]
    gold = None
    if system_scores:
        gold = np.array([float(system_scores.get(n, math.nan)) for n in names], dtype=np.float64)
        gold[~np.isfinite(gold)] = np.nan
    return _Systems(codes.ravel(), tuple(str(n) for n in names), gold), []


def _system_means(counts: np.ndarray, x: np.ndarray, h: np.ndarray, systems: _Systems):
    """Per resample, each system's mean metric ``(k, m, S)`` and mean human score ``(m, S)``; NaN for a system
    absent from a resample."""
    n_sys = len(systems.names)
    onehot = np.zeros((len(h), n_sys))
    onehot[np.arange(len(h)), systems.codes] = 1.0
    rows = np.concatenate([onehot.T, (onehot * h[:, None]).T, (x[:, :, None] * onehot[None]).transpose(0, 2, 1)
                           .reshape(-1, len(h))])
    sums = matmul(rows, counts.astype(np.float64))  # (S * (k + 2), m)
    drawn = sums[:n_sys]
    with np.errstate(invalid="ignore", divide="ignore"):
        human = (sums[n_sys:2 * n_sys] / drawn).T
        metric = (sums[2 * n_sys:].reshape(len(x), n_sys, -1) / drawn[None]).transpose(0, 2, 1)
    return metric, human


def _system_statistic(metric: np.ndarray, human: np.ndarray, statistic: str) -> np.ndarray:
    """``(k, m)``: the statistic over systems of each metric in each resample (NaN = a system absent from it)."""
    k, m, n_sys = metric.shape
    x = metric.reshape(k * m, n_sys)
    y = np.broadcast_to(human[None], metric.shape).reshape(k * m, n_sys)
    if statistic == "kendall":
        return rowwise_kendall(x, y).reshape(k, m)
    ok = np.isfinite(x) & np.isfinite(y)
    out = rowwise_pearson(np.where(ok, x, 0.0), np.where(ok, y, 0.0))
    for i in np.flatnonzero(~ok.all(axis=1)):  # rare: a system with no output in a resample
        out[i] = correlation(x[i][ok[i]], y[i][ok[i]], statistic)
    return out.reshape(k, m)


def _lead(results: dict, samples: dict, statistic: str, level: str) -> Lead | None:
    ranked = sorted((k for k in results if math.isfinite(results[k].values.get(statistic, math.nan))),
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


def _results(names, point: dict, samples: dict, n: int, statistics) -> tuple[dict, dict]:
    """``{metric: LevelResult}`` and ``{metric: {statistic: resampled values}}`` from ``{statistic: (k,)}`` point
    values and ``{statistic: (k, m)}`` resampled values."""
    results, per_metric = {}, {}
    for j, name in enumerate(names):
        per_metric[name] = {s: samples[s][j] for s in statistics}
        results[name] = LevelResult({s: float(point[s][j]) for s in statistics},
                                    {s: percentile_interval(samples[s][j]) for s in statistics}, n)
    return results, per_metric


def _bootstrap(x: np.ndarray, h: np.ndarray, systems: _Systems | None, n_samples: int, seed) -> dict:
    """Resampled statistics of every metric: ``{"segment": {stat: (k, m)}, "system": ..., "system_gold": ...}``."""
    out = {"segment": {s: [] for s in STATISTICS}, "system": {s: [] for s in SYSTEM_STATISTICS},
           "system_gold": {s: [] for s in SYSTEM_STATISTICS}}
    n = len(h)
    has_gold = None if systems is None or systems.gold is None else np.isfinite(systems.gold)
    if n >= 3 and n_samples > 0:
        for idx in resample_indices(n, n_samples, seed):
            counts = counts_of(idx, n)
            for s, v in resampled_correlations(counts, x, h).items():
                out["segment"][s].append(v)
            if systems is None:
                continue
            metric, human = _system_means(counts, x, h, systems)
            for s in SYSTEM_STATISTICS:
                out["system"][s].append(_system_statistic(metric, human, s))
                if has_gold is not None and has_gold.sum() >= 3:
                    gold = np.broadcast_to(systems.gold[has_gold], human[:, has_gold].shape)
                    out["system_gold"][s].append(_system_statistic(metric[:, :, has_gold], gold, s))
    empty = np.zeros((len(x), 0))
    return {level: {s: np.concatenate(v, axis=1) if v else empty for s, v in parts.items()}
            for level, parts in out.items()}


def _system_points(x: np.ndarray, h: np.ndarray, systems: _Systems) -> tuple[np.ndarray, np.ndarray]:
    """Each metric's mean per system ``(k, S)`` and the mean human score per system ``(S,)``, over every output."""
    counts = np.ones((len(h), 1), dtype=np.float32)
    metric, human = _system_means(counts, x, h, systems)
    return metric[:, 0, :], human[0]


def _system_levels(levels: dict, names: list, x: np.ndarray, h: np.ndarray, sys_info: _Systems | None,
                   samples: dict, notes: list) -> int:
    """Add the system level (and the level against human system scores) to ``levels``; the number of systems
    with a human system score."""
    if sys_info is None:
        return 0
    sys_x, sys_h = _system_points(x, h, sys_info)
    point = {s: [correlation(v, sys_h, s) for v in sys_x] for s in SYSTEM_STATISTICS}
    levels["system"] = _results(names, point, samples["system"], len(sys_info.names), SYSTEM_STATISTICS)
    if sys_info.gold is None:
        return 0
    has = np.isfinite(sys_info.gold)
    n_gold = int(has.sum())
    if n_gold >= 3:
        point = {s: [correlation(v[has], sys_info.gold[has], s) for v in sys_x] for s in SYSTEM_STATISTICS}
        levels["system_gold"] = _results(names, point, samples["system_gold"], n_gold, SYSTEM_STATISTICS)
    else:
        notes.append(f"No system level against the human system scores: {n_gold} of the systems have one; a "
                     "correlation needs at least 3.")
    return n_gold


def _summary_level(levels: dict, names: list, x: np.ndarray, h: np.ndarray, labels: np.ndarray, n_samples: int,
                   seed, notes: list) -> int:
    """Add the summary level to ``levels`` (documents resampled); the number of documents it rests on."""
    docs = lv.document_correlations(x, h, labels)
    if docs.n_documents:
        levels["summary"] = _results(names, docs.means(), lv.resampled_document_means(docs, n_samples, seed),
                                     docs.n_documents, STATISTICS)
    elif len(set(map(str, labels))) < len(labels):  # documents named, but none with enough outputs
        notes.append(f"No summary level: no document (segment id) has {lv.MIN_DOCUMENT_OUTPUTS} or more rated "
                     "outputs.")
    return docs.n_documents


def agreement(metrics: dict[str, np.ndarray], human, systems=None, n_samples: int = DEFAULT_SAMPLES,
              seed: int | None = DEFAULT_SEED, primary: str = "pearson", documents=None,
              system_scores: dict | None = None) -> Agreement:
    """Segment-, system- (with ``systems``) and summary-level (with ``documents``) correlations of each metric
    with ``human``.

    Args:
        metrics: ``{name: (n,) scores}``, in the order they should be listed.
        human: ``(n,)`` human scores (NaN = missing: the pair is dropped).
        systems: ``(n,)`` system name of each pair, or None.
        n_samples, seed: the bootstrap's resamples and seed.
        primary: the statistic that ranks metrics for the lead test.
        documents: ``(n,)`` document of each pair (e.g. :func:`levels.document_keys`), or None.
        system_scores: ``{system: human system-level score}`` (e.g. WMT's official ones), or None.

    Returns:
        :class:`Agreement`.

    Raises:
        InputError: an unknown ``primary``, or arrays of different lengths; ``n_samples`` negative,
            not a whole number or above MAX_RESAMPLES.
    """
    if primary not in STATISTICS:
        raise InputError(f"primary must be one of {', '.join(STATISTICS)}, got {primary!r}.")
    n_samples = check_resamples(n_samples)
    keep, dropped = usable_pairs(metrics, human)
    names = list(metrics)
    h = np.asarray(human, dtype=np.float64)[keep]
    x = np.stack([np.asarray(metrics[k], dtype=np.float64)[keep] for k in names]) if names else np.zeros((0, len(h)))
    sys_info, notes = _systems(systems, keep, system_scores)
    samples = _bootstrap(x, h, sys_info, n_samples, seed)
    levels = {"segment": _results(names, {s: [correlation(v, h, s) for v in x] for s in STATISTICS},
                                  samples["segment"], len(h), STATISTICS)}
    n_gold = _system_levels(levels, names, x, h, sys_info, samples, notes)
    n_docs = 0 if documents is None else _summary_level(levels, names, x, h, np.asarray(documents, dtype=object)[keep],
                                                        n_samples, seed, notes)
    leads = {}
    for level, (results, per_metric) in levels.items():
        stat = "pearson" if level.startswith("system") and primary not in SYSTEM_STATISTICS else primary
        lead = _lead(results, per_metric, stat, level)
        if lead is not None:
            leads[level] = lead
    found = {level: results for level, (results, _) in levels.items()}
    return Agreement(found["segment"], found.get("system", {}), leads.get("segment"), len(h), dropped,
                     len(sys_info.names) if sys_info is not None else 0, n_samples, seed, found.get("summary", {}),
                     n_docs, found.get("system_gold", {}), n_gold, leads, primary, tuple(notes))
