"""Where a metric and the human judges disagree most: the outputs whose metric rank and human rank differ most, in
both directions.

**Ranks.** Scores are ranked from the lowest (rank 1) to the highest (rank m) among the m outputs ranked together,
ties getting the average of the ranks they span (Spearman's convention, ``scipy.stats.rankdata(method="average")``).
Outputs with a missing (NaN) metric or human score are left out of the ranking and counted.

**Scope** (``within``): ``"group"`` ranks the outputs of each group (e.g. a language pair) among themselves, as the
WMT metrics tasks evaluate segment-level agreement per language pair, since metric scores of different language
pairs are not on the same footing; ``"all"`` ranks the whole set together. Without group labels both are the
same. The default is ``"group"``.

**Rank difference, as a percentile difference.** Each rank becomes a percentile ``100 (rank - 1) / (m - 1)`` of its
ranking scope (0 = the lowest score, 100 = the highest; 50 for a scope of one output), so that differences are
comparable across scopes and data sets of different sizes. ``difference = metric percentile - human percentile``,
from -100 to 100:

* **metric too kind**: ``difference > 0``, the metric places the output higher than the humans do;
* **metric too harsh**: ``difference < 0``, the metric places it lower.

The N largest of each direction are listed, largest first; equal differences in index order (deterministic).
Filters by group and by system are applied after ranking: the ranks (and so the list) do not depend on which
outputs are shown.

The "human" side can be any other score: pass chrF as ``human`` (and name it) to list where BERTScore and chrF
disagree; pass chrF as ``metric`` to list where chrF and the humans disagree. Scores are plain arrays.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bertscore_viz.errors import InputError, shorten

__all__ = [
    "DIRECTIONS",
    "SCOPES",
    "Disagreement",
    "Disagreements",
    "average_ranks",
    "disagreements",
    "rank_percentiles",
]

#: ``within`` values: rank inside each group, or the whole set.
SCOPES = ("group", "all")
#: The two directions: the metric too kind (ranks higher than humans) and too harsh (lower).
DIRECTIONS = ("too_kind", "too_harsh")


def average_ranks(values) -> np.ndarray:
    """Ranks from 1 (lowest) to m (highest), ties getting the mean of the ranks they span.

    Args:
        values: ``(m,)`` finite numbers.

    Returns:
        ``(m,)`` float64 ranks (e.g. ``[10, 20, 20, 5]`` -> ``[2, 3.5, 3.5, 1]``).
    """
    x = np.asarray(values, dtype=np.float64)
    m = len(x)
    order = np.argsort(x, kind="stable")
    sorted_x = x[order]
    ranks = np.empty(m, dtype=np.float64)
    # runs of equal values in sorted order share the mean of positions start+1 .. stop
    starts = np.flatnonzero(np.r_[True, sorted_x[1:] != sorted_x[:-1]]) if m else np.zeros(0, dtype=np.int64)
    stops = np.r_[starts[1:], m] if m else starts
    for start, stop in zip(starts, stops):
        ranks[order[start:stop]] = (start + 1 + stop) / 2.0
    return ranks


def rank_percentiles(values) -> np.ndarray:
    """``100 (rank - 1) / (m - 1)`` of :func:`average_ranks`: 0 for the lowest, 100 for the highest, 50 when m = 1."""
    ranks = average_ranks(values)
    m = len(ranks)
    if m == 1:
        return np.full(1, 50.0)
    return 100.0 * (ranks - 1.0) / (m - 1.0)


@dataclass(frozen=True)
class Disagreement:
    """One output where the metric and the humans disagree.

    Attributes:
        index: the output's position in the arrays given.
        metric, human: its two scores.
        metric_rank, human_rank: average ranks (1 = lowest) within its scope; scope_size: outputs in that scope.
        metric_percentile, human_percentile: ``100 (rank - 1) / (scope_size - 1)``.
        difference: ``metric_percentile - human_percentile`` (> 0: metric too kind; < 0: too harsh).
        group, system: its labels, or None.
    """

    index: int
    metric: float
    human: float
    metric_rank: float
    human_rank: float
    scope_size: int
    metric_percentile: float
    human_percentile: float
    difference: float
    group: str | None = None
    system: str | None = None

    @property
    def direction(self) -> str:
        """``"too_kind"`` or ``"too_harsh"``."""
        return "too_kind" if self.difference > 0 else "too_harsh"

    def as_dict(self) -> dict:
        return {"index": self.index, "metric": self.metric, "human": self.human, "metric_rank": self.metric_rank,
                "human_rank": self.human_rank, "scope_size": self.scope_size,
                "metric_percentile": round(self.metric_percentile, 6),
                "human_percentile": round(self.human_percentile, 6), "difference": round(self.difference, 6),
                "direction": self.direction, "group": self.group, "system": self.system}


@dataclass(frozen=True)
class Disagreements:
    """The largest disagreements in each direction.

    Attributes:
        metric_name, human_name: what was compared (e.g. ``"BERTScore-F1"`` against ``"human"``, or ``"chrF"``).
        within: ``"group"`` or ``"all"`` (see the module docstring); n: rows listed at most per direction.
        too_kind: metric percentile above the human one, largest difference first.
        too_harsh: metric percentile below the human one, largest difference (most negative) first.
        n_ranked: outputs ranked; n_missing: left out for a NaN score; n_shown: outputs passing the filters.
        groups, systems: the filters applied (None = all).
    """

    metric_name: str
    human_name: str
    within: str
    n: int
    too_kind: tuple[Disagreement, ...]
    too_harsh: tuple[Disagreement, ...]
    n_ranked: int
    n_missing: int
    n_shown: int
    groups: tuple[str, ...] | None = None
    systems: tuple[str, ...] | None = None

    def rows(self) -> tuple[Disagreement, ...]:
        """Both directions, too kind first."""
        return self.too_kind + self.too_harsh

    def as_dict(self) -> dict:
        return {"metric": self.metric_name, "human": self.human_name, "within": self.within, "n": self.n,
                "rank_difference": "metric percentile - human percentile, percentile = 100 (rank - 1) / (m - 1), "
                                   "average ranks for ties, ranked within " + ("each group" if self.within == "group"
                                                                               else "the whole set"),
                "n_ranked": self.n_ranked, "n_missing": self.n_missing, "n_shown": self.n_shown,
                "filters": {"groups": None if self.groups is None else list(self.groups),
                            "systems": None if self.systems is None else list(self.systems)},
                "too_kind": [r.as_dict() for r in self.too_kind],
                "too_harsh": [r.as_dict() for r in self.too_harsh]}


def _labels(labels, n: int, what: str) -> list[str] | None:
    if labels is None:
        return None
    out = [None if x is None else str(x) for x in labels]
    if len(out) != n:
        raise InputError(f"Expected one {what} label per output: {n} outputs, {len(out)} {what} labels.")
    return out


def _check_scores(metric, human) -> tuple[np.ndarray, np.ndarray]:
    try:
        m = np.array(metric, dtype=np.float64)
        h = np.array(human, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"Scores must be numbers; got {shorten(metric)} and {shorten(human)}.") from None
    if m.ndim != 1 or h.shape != m.shape:
        raise InputError(f"Expected one metric score and one human score per output (two 1-D arrays of the same "
                         f"length), got shapes {m.shape} and {h.shape}.")
    if np.isinf(m).any() or np.isinf(h).any():
        raise InputError("A score is infinite; give finite numbers (NaN marks a missing score and is left out).")
    return m, h


def _filter(values: list[str] | None, wanted, what: str) -> tuple[str, ...] | None:
    if wanted is None:
        return None
    wanted = (wanted,) if isinstance(wanted, str) else tuple(str(w) for w in wanted)
    if values is None:
        raise InputError(f"Cannot filter by {what}: no {what} labels were given.")
    unknown = sorted(set(wanted) - set(values))
    if unknown:
        raise InputError(f"Unknown {what}(s) {shorten(unknown)}; have {shorten(sorted(set(values)))}.")
    return wanted


def disagreements(metric, human, n: int = 10, groups=None, systems=None, within: str = "group",
                  only_groups=None, only_systems=None, metric_name: str = "BERTScore-F1",
                  human_name: str = "human") -> Disagreements:
    """The ``n`` outputs whose metric and human percentile ranks differ most, in each direction.

    Args:
        metric: ``(m,)`` metric scores (BERTScore F1, chrF, ...); NaN = missing.
        human: ``(m,)`` human scores (or another metric's, to compare two metrics); NaN = missing.
        n: rows per direction (at least 1).
        groups, systems: ``(m,)`` labels per output, or None.
        within: ``"group"`` (rank inside each group; the whole set when ``groups`` is None) or ``"all"``.
        only_groups, only_systems: show only these groups / systems (a name or names); ranks are unaffected.
        metric_name, human_name: how the result names the two scores.

    Returns:
        :class:`Disagreements`.

    Raises:
        InputError: arrays of different lengths, an infinite score, labels of the wrong length, an unknown
            scope, group or system, or ``n`` below 1.
    """
    m, h = _check_scores(metric, human)
    size = len(m)
    if within not in SCOPES:
        raise InputError(f"within must be one of {list(SCOPES)}, got {shorten(within)}.")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise InputError(f"The number of rows must be a whole number of at least 1, got {shorten(n)}.")
    group_of = _labels(groups, size, "group")
    system_of = _labels(systems, size, "system")
    keep_groups = _filter(group_of, only_groups, "group")
    keep_systems = _filter(system_of, only_systems, "system")

    usable = ~(np.isnan(m) | np.isnan(h))
    scope_key = group_of if (within == "group" and group_of is not None) else [None] * size
    rows: list[Disagreement] = []
    members: dict = {}
    for i in np.flatnonzero(usable):
        members.setdefault(scope_key[i], []).append(int(i))
    for members_of_scope in members.values():
        idx = np.array(members_of_scope, dtype=np.int64)
        rm, rh = average_ranks(m[idx]), average_ranks(h[idx])
        pm, ph = rank_percentiles(m[idx]), rank_percentiles(h[idx])
        # from the rank difference (exact: ranks are multiples of 1/2), so equal differences compare equal
        diff = 100.0 * (rm - rh) / (len(idx) - 1) if len(idx) > 1 else np.zeros(1)
        for j, i in enumerate(idx):
            rows.append(Disagreement(int(i), float(m[i]), float(h[i]), float(rm[j]), float(rh[j]), len(idx),
                                     float(pm[j]), float(ph[j]), float(diff[j]),
                                     None if group_of is None else group_of[i],
                                     None if system_of is None else system_of[i]))
    shown = [r for r in rows
             if (keep_groups is None or r.group in keep_groups) and (keep_systems is None or r.system in keep_systems)]
    kind = sorted((r for r in shown if r.difference > 0), key=lambda r: (-r.difference, r.index))[:n]
    harsh = sorted((r for r in shown if r.difference < 0), key=lambda r: (r.difference, r.index))[:n]
    return Disagreements(metric_name, human_name, within, int(n), tuple(kind), tuple(harsh), len(rows),
                         int(size - usable.sum()), len(shown), keep_groups, keep_systems)
