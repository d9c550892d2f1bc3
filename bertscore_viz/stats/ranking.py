"""Ranking systems by a score: natural name order for ties, and WMT-style clusters ("systems not significantly
different") from pairwise p values (pure functions; :mod:`bertscore_viz.stats.analysis` computes the p values).

A metric where lower is better (TER) passes ``higher_is_better=False``: the best system is then the lowest. A system
whose score is NaN (no segments) is ranked last, after every system with a score, and is never significantly better
or worse than another (NaN compares false).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

__all__ = ["Cluster", "SystemStanding", "clusters", "natural_key", "rank_order"]


def natural_key(name: str) -> tuple:
    """Sort key that orders digits by value: ``M2 < M10`` (``sorted(names, key=natural_key)``).

    >>> sorted(["M10", "M2", "m1", "M1"], key=natural_key)
    ['M1', 'm1', 'M2', 'M10']
    """
    parts = re.split(r"(\d+)", str(name))
    folded = tuple((0, int(p), "") if p.isdigit() else (1, 0, p.casefold()) for p in parts if p != "")
    return folded, str(name)


def rank_order(means: dict[str, float], higher_is_better: bool = True) -> list[str]:
    """Names by score, best first (the highest, or the lowest when ``higher_is_better`` is False, as for TER); ties
    (and NaN, last) in natural name order."""
    sign = -1.0 if higher_is_better else 1.0

    def key(s):
        m = means[s]
        return (1 if m != m else 0, sign * m if m == m else 0.0, natural_key(s))

    return sorted(means, key=key)


@dataclass(frozen=True)
class Cluster:
    """A group of systems (WMT style), best group first: every system of a group is significantly better than
    every system of each lower group; inside a group some pairs may still differ significantly.

    Attributes:
        rank: 1-based cluster number; systems: names by score, best first.
    """

    rank: int
    systems: tuple[str, ...]


@dataclass(frozen=True)
class SystemStanding:
    """One system's place: its cluster, pairwise wins and losses (significant at alpha), and rank range."""

    system: str
    mean: float
    cluster: int
    wins: int
    losses: int
    rank_low: int
    rank_high: int

    def as_dict(self) -> dict:
        return {"system": self.system, "mean": self.mean, "cluster": self.cluster, "wins": self.wins,
                "losses": self.losses, "rank_range": [self.rank_low, self.rank_high]}


def clusters(systems, means: dict[str, float], matrix: np.ndarray, alpha: float = 0.05,
             higher_is_better: bool = True) -> tuple[tuple[Cluster, ...], tuple[SystemStanding, ...]]:
    """WMT-style clusters from pairwise p values.

    Systems are ordered by score (:func:`rank_order`); a boundary goes after position i exactly when every system
    at positions <= i is significantly better (p < alpha, higher mean) than every system after it, so each
    system of a cluster beats all systems of every lower cluster. Inside a cluster some pairs may still differ
    significantly (the best of a 15-system cluster can beat 13 of the others): only no boundary separates all of
    its upper part from all of its lower part; ``wins`` and ``losses`` say what each system beats. ``wins`` counts
    the systems a system is significantly better than, ``losses`` those significantly better than it; the rank
    range is ``1 + losses`` to ``k - wins``.

    Args:
        systems: names in the order of ``matrix``; means: corpus score of each; matrix: ``(k, k)`` p values.
        higher_is_better: False when the lower score is the better one (TER).
    """
    systems = list(systems)
    k = len(systems)
    pos = {s: i for i, s in enumerate(systems)}
    order = rank_order({s: means[s] for s in systems}, higher_is_better)

    def beats(a: str, b: str) -> bool:
        return bool(matrix[pos[a], pos[b]] < alpha and (means[a] > means[b]) == higher_is_better
                    and means[a] != means[b])

    groups: list[list[str]] = [[]]
    for i, s in enumerate(order):
        groups[-1].append(s)
        if i + 1 < k and all(beats(a, b) for a in order[:i + 1] for b in order[i + 1:]):
            groups.append([])
    cl = tuple(Cluster(r + 1, tuple(g)) for r, g in enumerate(groups))
    where = {s: c.rank for c in cl for s in c.systems}
    standings = []
    for s in order:
        wins = sum(beats(s, t) for t in order if t != s)
        losses = sum(beats(t, s) for t in order if t != s)
        standings.append(SystemStanding(s, float(means[s]), where[s], wins, losses, 1 + losses, k - wins))
    return cl, tuple(standings)
