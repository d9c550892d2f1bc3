"""Correlations of bootstrap resamples, vectorised over the resamples (numpy only, no scipy).

A bootstrap resample of ``n`` paired points is described by its **counts**: how many times each original point was
drawn. A statistic of the resampled points (with their repeats) is a weighted statistic of the original points, so
one pass over the ``n`` points serves every resample at once. All counts, their running sums and the ranks below
are whole numbers (or halves) far below 2**24, exact in float32; every sum of products is taken in float64.

* **Pearson**: the sums of x, y, x², y² and xy of each resample are one matrix product ``features @ counts``. Each
  side is first centred and scaled by its largest deviation, which changes no correlation and keeps the sums far
  from overflow and underflow at any scale of the scores.
* **Spearman** (Pearson of average ranks, as ``scipy.stats.spearmanr``): the points are sorted once; a tie group's
  average rank in a resample is the number of drawn points below it plus (its drawn count + 1) / 2, repeats of a
  point being ties. The sum of squared rank deviations is ``(N³ - N - sum of (t³ - t) over tie groups) / 12``.
* **Kendall tau-b** (as ``scipy.stats.kendalltau``): the numerator ``sum over pairs of sign(dx) sign(dy)`` of a
  resample is ``sum_{i<j} c_i c_j sign(x_i - x_j) sign(y_i - y_j)`` over distinct original points (repeats of one
  point are tied on both sides and add nothing). The points are cut into blocks of neighbouring x values and,
  separately, of neighbouring y values (whole tie groups per block). Pairs in different x blocks and different y
  blocks have the signs of their blocks, so their sum comes from the grid of drawn counts per (x block, y block)
  by running sums; pairs inside an x block, and pairs inside a y block across x blocks, are summed exactly with one
  small dense sign matrix per block (a batched matrix product). About ``4 n k`` multiply-adds per resample for
  blocks of ``k`` points plus ``(n / k)²`` grid cells, instead of ``n²``. The denominators (untied pairs on each
  side) are ``(N² - sum of squared tie-group counts) / 2``, repeats included, as tau-b counts them.

A statistic is NaN for a resample in which one side takes a single value. The results equal scipy's on the
explicitly resampled arrays (tests: to 1e-9, with ties).

Running sums along the points are a loop over the points' rows (each a vector over the resamples): numpy's
``cumsum`` along the first axis of an ``(n, m)`` array is about ten times slower.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from bertscore_viz.errors import InputError

__all__ = ["DENSE_KENDALL_POINTS", "STATISTICS", "Ties", "block_size", "counts_of", "resampled_correlations",
           "matmul", "rowwise_kendall", "rowwise_pearson", "tie_groups"]

STATISTICS = ("pearson", "spearman", "kendall")
#: Up to this many points the Kendall numerator is one dense ``n x n`` block (smaller blocks do not pay off).
DENSE_KENDALL_POINTS = 128


@dataclass(frozen=True)
class Ties:
    """The tie structure of one side.

    Attributes:
        order: ``(n,)`` the points sorted by value (stable).
        starts, ends: ``(g,)`` first and one-past-last sorted positions of each tie group.
        dense: ``(n,)`` each point's tie group (0 = the smallest value).
    """

    order: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    dense: np.ndarray

    @property
    def n_groups(self) -> int:
        return len(self.starts)

    @property
    def has_ties(self) -> bool:
        return self.n_groups < len(self.order)

    @property
    def sizes(self) -> np.ndarray:
        return self.ends - self.starts


def tie_groups(values) -> Ties:
    """Sort ``values`` ``(n,)`` once and find its runs of equal values."""
    v = np.asarray(values, dtype=np.float64)
    order = np.argsort(v, kind="stable")
    s = v[order]
    first = np.r_[True, s[1:] != s[:-1]] if len(s) else np.zeros(0, dtype=bool)
    starts = np.flatnonzero(first)
    dense = np.empty(len(v), dtype=np.int64)
    dense[order] = np.cumsum(first) - 1
    return Ties(order, starts, np.r_[starts[1:], len(v)].astype(np.int64), dense)


def counts_of(indices: np.ndarray, n: int) -> np.ndarray:
    """How often each of ``n`` points is drawn in each resample.

    Args:
        indices: ``(m, n)`` resample indices (one row per resample).
        n: the number of points.

    Returns:
        ``(n, m)`` float32 counts, points along the first axis (a gather of points is a gather of rows).
    """
    m = indices.shape[0]
    flat = (indices + n * np.arange(m)[:, None]).ravel()
    return np.ascontiguousarray(np.bincount(flat, minlength=m * n).reshape(m, n).T, dtype=np.float32)


def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` through torch, which keeps to its own thread setting: numpy's OpenBLAS spins all its threads and,
    on a busy machine, took 100 times longer for the same product.

    Args:
        a, b: ``(..., i, j)`` and ``(..., j, k)`` arrays of one float dtype (batched when 3-D).

    Returns:
        ``(..., i, k)`` numpy array.
    """
    return torch.matmul(torch.from_numpy(np.ascontiguousarray(a)), torch.from_numpy(np.ascontiguousarray(b))).numpy()


def _running(a: np.ndarray) -> np.ndarray:
    """Inclusive running sums along the first axis, with a row of zeros in front: ``(n + 1, ...)``."""
    out = np.empty((a.shape[0] + 1,) + a.shape[1:], dtype=a.dtype)
    out[0] = 0
    out[1:] = a
    for i in range(1, out.shape[0]):
        np.add(out[i], out[i - 1], out=out[i])
    return out


@dataclass(frozen=True)
class _Side:
    """One side in one chunk of resamples: its group weights, doubled centred ranks and squared-weight sums."""

    ties: Ties
    sorted_counts: np.ndarray  # (n, m) counts in sorted order
    weights: np.ndarray  # (g, m) drawn count of each tie group
    ranks2: np.ndarray  # (g, m) 2 * (average rank - (N + 1) / 2), whole numbers
    sum_w2: np.ndarray  # (m,) float64
    sum_w3: np.ndarray  # (m,) float64


def _power_sums(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(sum of w², sum of w³)`` over the first axis, in float64."""
    w64 = w.astype(np.float64)
    w2 = w64 * w64
    return w2.sum(axis=0), np.einsum("gm,gm->m", w2, w64)


def _side(counts: np.ndarray, ties: Ties, n_total: float, untied_sums: tuple) -> _Side:
    """``untied_sums``: :func:`_power_sums` of ``counts``, the same for every side without ties."""
    g = counts[ties.order]
    run = _running(g)
    if ties.has_ties:
        w = run[ties.ends] - run[ties.starts]
        ranks2 = run[ties.ends] + run[ties.starts] - n_total
        sum_w2, sum_w3 = _power_sums(w)
    else:
        w = g
        ranks2 = run[1:] + run[:-1] - n_total
        sum_w2, sum_w3 = untied_sums
    return _Side(ties, g, w, ranks2, sum_w2, sum_w3)


def _scaled(v: np.ndarray) -> np.ndarray:
    c = v - v.mean()
    top = np.max(np.abs(c)) if len(c) else 0.0
    return c / top if top > 0 else c


def _pearson(counts: np.ndarray, xs: np.ndarray, y: np.ndarray, n_total: float) -> np.ndarray:
    """``(k, m)`` Pearson r of each of ``k`` metrics ``xs`` ``(k, n)`` with ``y`` in each resample."""
    ys = _scaled(y)
    xsc = np.stack([_scaled(x) for x in xs])
    features = np.concatenate([ys[None], ys[None] ** 2, xsc, xsc ** 2, xsc * ys[None]])
    sums = matmul(features, counts.astype(np.float64))  # (2 + 3k, m)
    k = len(xs)
    sy, syy = sums[0], sums[1]
    sx, sxx, sxy = sums[2:2 + k], sums[2 + k:2 + 2 * k], sums[2 + 2 * k:]
    cov = sxy - sx * sy / n_total
    vx = sxx - sx * sx / n_total
    vy = syy - sy * sy / n_total
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.clip(cov / np.sqrt(vx * vy), -1.0, 1.0)


def _rank_variance4(side: _Side, n_total: float) -> np.ndarray:
    """Sum of squared doubled rank deviations: ``4 (N³ - N - sum (w³ - w)) / 12``."""
    return (n_total ** 3 - n_total - (side.sum_w3 - n_total)) / 3.0


def _spearman(counts: np.ndarray, x: _Side, human_weighted: np.ndarray, vy4: np.ndarray,
              n_total: float) -> np.ndarray:
    """``(m,)`` Spearman rho of one metric with the human side; ``human_weighted``: counts times human rank."""
    qs = human_weighted[x.ties.order]
    if x.ties.has_ties:
        run = _running(qs)
        qs = run[x.ties.ends] - run[x.ties.starts]
    cov4 = np.einsum("gm,gm->m", x.ranks2, qs, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.clip(cov4 / np.sqrt(_rank_variance4(x, n_total) * vy4), -1.0, 1.0)


# --- many short rows (systems, documents) -------------------------------------------------------------------------
def rowwise_pearson(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson r of each row pair of ``(r, n)`` arrays; NaN for a constant row.

    Returns:
        ``(r,)`` values.
    """
    xc = x - x.mean(axis=1, keepdims=True)
    yc = y - y.mean(axis=1, keepdims=True)
    den = np.sqrt((xc * xc).sum(axis=1) * (yc * yc).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (xc * yc).sum(axis=1) / den
    r[~(den > 0)] = np.nan
    return np.clip(r, -1.0, 1.0)


def rowwise_kendall(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall tau-b of each row pair of ``(r, n)`` arrays from the signs of all pairs (for short rows): the sum of
    ``sign(dx) sign(dy)`` over pairs is ``n_c - n_d`` and the sums of squared signs count the untied pairs. A NaN
    value drops its point (every pair with it has sign 0). NaN when fewer than 3 points remain or a side is
    constant.

    Returns:
        ``(r,)`` values.
    """
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


# --- Kendall ------------------------------------------------------------------------------------------------------
def block_size(n: int) -> int:
    """Points per Kendall block: all of them up to :data:`DENSE_KENDALL_POINTS`, else about ``6 n^(1/3)``, which
    balances the dense blocks (``~ n k`` multiply-adds) against the grid (``~ (n / k)²`` cells); measured on 560
    and 3,360 points."""
    return n if n <= DENSE_KENDALL_POINTS else max(32, int(round(6.0 * n ** (1 / 3))))


@dataclass(frozen=True)
class _Blocks:
    """Blocks of one side: each point's block, and the padded member positions (in sorted order) of the blocks
    that hold more than one tie group (a block of one tie group has no pair that counts)."""

    of_point: np.ndarray  # (n,) block of each point
    n_blocks: int
    index: np.ndarray  # (b, size) sorted positions, padded with 0
    real: np.ndarray  # (b, size) False for padding


def _blocks(ties: Ties, k: int) -> _Blocks:
    sizes = ties.sizes
    before = ties.starts
    big = sizes >= k  # a tie group of k points or more is a block of its own
    keys = np.stack([before // k, np.where(big, np.arange(ties.n_groups) + 1, 0)], axis=1)
    _, group_block = np.unique(keys, axis=0, return_inverse=True)
    group_block = group_block.ravel()
    n_blocks = int(group_block.max()) + 1 if len(group_block) else 0
    groups_in = np.bincount(group_block, minlength=n_blocks)
    first = np.r_[0, np.cumsum(np.bincount(group_block, weights=sizes, minlength=n_blocks))[:-1]].astype(np.int64)
    length = np.bincount(group_block, weights=sizes, minlength=n_blocks).astype(np.int64)
    keep = np.flatnonzero((groups_in > 1) & (length > 1))
    size = int(length[keep].max()) if len(keep) else 0
    offsets = np.arange(size)
    real = offsets[None, :] < length[keep][:, None]
    index = np.where(real, first[keep][:, None] + offsets[None, :], 0)
    return _Blocks(group_block[ties.dense], n_blocks, index, real)


def _block_sum(sorted_counts: np.ndarray, blocks: _Blocks, order: np.ndarray, x: np.ndarray, y: np.ndarray,
               other_block: np.ndarray | None) -> np.ndarray:
    """``(m,)``: sum over pairs inside each block of ``c_i c_j sign(dx) sign(dy)``, leaving out pairs in the same
    block of ``other_block`` (per point), as one batched product of sign matrices with the blocks' counts."""
    if not len(blocks.index):
        return np.zeros(sorted_counts.shape[1])
    points = order[blocks.index]  # (b, size) original point of each position
    xe, ye = x[points], y[points]
    signs = np.sign(xe[:, :, None] - xe[:, None, :]) * np.sign(ye[:, :, None] - ye[:, None, :])
    signs *= blocks.real[:, :, None] & blocks.real[:, None, :]  # padding takes part in no pair
    if other_block is not None:
        ob = other_block[points]
        signs[ob[:, :, None] == ob[:, None, :]] = 0.0
    gathered = sorted_counts[blocks.index]  # (b, size, m)
    products = matmul(signs.astype(np.float32), gathered)  # exact: whole numbers below 2**24
    return 0.5 * np.einsum("bsm,bsm->m", products, gathered, dtype=np.float64)


def _grid_sum(counts: np.ndarray, bx: np.ndarray, by: np.ndarray, px: int, py: int) -> np.ndarray:
    """``(m,)``: sum over pairs in different x blocks and different y blocks of ``c_i c_j sign(dx) sign(dy)``,
    from the drawn counts of each (x block, y block) cell."""
    m = counts.shape[1]
    cell = bx * py + by
    order = np.argsort(cell, kind="stable")
    cells = cell[order]
    ends = np.r_[np.flatnonzero(np.diff(cells)) + 1, len(cells)]
    starts = np.r_[0, ends[:-1]]
    run = _running(counts[order])
    grid = np.zeros((px * py, m))
    grid[cells[starts]] = run[ends] - run[starts]
    grid = grid.reshape(px, py, m)
    left = _running(grid)[:-1]  # drawn counts in earlier x blocks, per y block
    below = _running(left.transpose(1, 0, 2))[:-1].transpose(1, 0, 2)  # ... and in lower y blocks
    above = left.sum(axis=1, keepdims=True) - below - left
    # a pair (earlier x block i, later x block j) has sign(x_i - x_j) = -1, so it adds -sign(y_i - y_j): +1 when
    # the earlier point is lower in y (concordant)
    return np.einsum("pqm,pqm->m", grid, below - above)


def _kendall_numerator(counts: np.ndarray, xs: _Side, ys: _Side, x: np.ndarray, y: np.ndarray,
                       y_blocks: _Blocks, k: int) -> np.ndarray:
    x_blocks = _blocks(xs.ties, k)
    total = _block_sum(xs.sorted_counts, x_blocks, xs.ties.order, x, y, None)
    if x_blocks.n_blocks > 1:
        total += _block_sum(ys.sorted_counts, y_blocks, ys.ties.order, x, y, x_blocks.of_point)
        total += _grid_sum(counts, x_blocks.of_point, y_blocks.of_point, x_blocks.n_blocks, y_blocks.n_blocks)
    return total


def _kendall(numerator: np.ndarray, xs: _Side, ys: _Side, n_total: float) -> np.ndarray:
    untied_x = (n_total * n_total - xs.sum_w2) / 2.0
    untied_y = (n_total * n_total - ys.sum_w2) / 2.0
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.clip(numerator / np.sqrt(untied_x * untied_y), -1.0, 1.0)


def resampled_correlations(counts: np.ndarray, metrics, human, statistics=STATISTICS) -> dict[str, np.ndarray]:
    """Each statistic of each metric with ``human`` in each resample.

    Args:
        counts: ``(n, m)`` drawn counts of the ``n`` points in ``m`` resamples (:func:`counts_of`); every column
            sums to the same resample size.
        metrics: ``(k, n)`` finite scores of ``k`` metrics.
        human: ``(n,)`` finite human scores.
        statistics: any of ``"pearson"``, ``"spearman"``, ``"kendall"``.

    Returns:
        ``{statistic: (k, m) values}``; NaN for a resample in which one side takes a single value.

    Raises:
        InputError: an unknown statistic.
    """
    unknown = set(statistics) - set(STATISTICS)
    if unknown:
        raise InputError(f"statistics must be among {', '.join(STATISTICS)}, got {sorted(unknown)}.")
    xs = np.atleast_2d(np.asarray(metrics, dtype=np.float64))
    y = np.asarray(human, dtype=np.float64)
    counts = np.ascontiguousarray(counts, dtype=np.float32)
    n, m = counts.shape
    n_total = float(counts[:, 0].sum(dtype=np.float64)) if m else 0.0
    out = {s: np.empty((len(xs), m)) for s in statistics}
    if "pearson" in statistics:
        out["pearson"][:] = _pearson(counts, xs, y, n_total)
    untied_sums = _power_sums(counts)
    human = _side(counts, tie_groups(y), n_total, untied_sums)
    constant_y = human.sum_w2 == n_total * n_total  # one group holds every drawn point
    human_weighted = counts * human.ranks2[human.ties.dense] if "spearman" in statistics else None
    vy4 = _rank_variance4(human, n_total)
    k = block_size(n)
    y_blocks = _blocks(human.ties, k) if "kendall" in statistics else None
    for j, x in enumerate(xs):
        side = _side(counts, tie_groups(x), n_total, untied_sums)
        if "spearman" in statistics:
            out["spearman"][j] = _spearman(counts, side, human_weighted, vy4, n_total)
        if "kendall" in statistics:
            numerator = _kendall_numerator(counts, side, human, x, y, y_blocks, k)
            out["kendall"][j] = _kendall(numerator, side, human, n_total)
        constant = constant_y | (side.sum_w2 == n_total * n_total)
        for values in out.values():
            values[j][constant] = np.nan
    return out
