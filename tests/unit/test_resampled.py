"""The vectorised bootstrap statistics (issue 30's speed): each resample's Pearson, Spearman and Kendall tau-b from
draw counts equal scipy on the explicitly resampled arrays, with ties, repeats, big tie groups, the dense path
(few points) and the block path (many points), and NaN where a resample leaves one side constant."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from bertscore_viz.evaluation.resampled import (
    DENSE_KENDALL_POINTS,
    block_size,
    counts_of,
    resampled_correlations,
    rowwise_kendall,
    rowwise_pearson,
    tie_groups,
)

SCIPY = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}


def explicit(x: np.ndarray, y: np.ndarray, idx: np.ndarray, statistic: str) -> float:
    """The statistic of one resample, computed by scipy on the resampled arrays themselves."""
    a, b = x[idx], y[idx]
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return math.nan
    return float(SCIPY[statistic](a, b)[0])


def check(metrics: np.ndarray, human: np.ndarray, idx: np.ndarray, tol: float = 1e-9) -> None:
    got = resampled_correlations(counts_of(idx, len(human)), metrics, human)
    for statistic in SCIPY:
        assert got[statistic].shape == (len(metrics), len(idx))
        for k, x in enumerate(metrics):
            for b, row in enumerate(idx):
                want, mine = explicit(x, human, row, statistic), got[statistic][k, b]
                assert (math.isnan(want) and math.isnan(mine)) or mine == pytest.approx(want, abs=tol), \
                    (statistic, k, b, want, mine)


def test_counts_are_how_often_each_point_is_drawn():
    idx = np.array([[0, 0, 2, 3], [1, 1, 1, 1]])
    assert counts_of(idx, 4).T.tolist() == [[2, 0, 1, 1], [0, 4, 0, 0]]


def test_tie_groups_by_hand():
    t = tie_groups([3.0, 1.0, 3.0, 2.0, 1.0])
    assert t.order.tolist() == [1, 4, 3, 0, 2]
    assert t.starts.tolist() == [0, 2, 3] and t.ends.tolist() == [2, 3, 5]
    assert t.dense.tolist() == [2, 0, 2, 1, 0] and t.has_ties


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(-3, 3), st.integers(-3, 3), st.integers(0, 2)), min_size=3, max_size=30),
       st.integers(0, 2**16))
def test_every_statistic_equals_scipy_on_the_resampled_arrays(points, seed):
    metrics = np.array([[float(a) for a, _, _ in points], [float(c) for _, _, c in points]])
    human = np.array([float(b) for _, b, _ in points])
    idx = np.random.default_rng(seed).choice(len(points), size=(8, len(points)))
    check(metrics, human, idx)


@pytest.mark.parametrize("n", [DENSE_KENDALL_POINTS + 1, 700, 2000])
def test_the_block_path_equals_scipy_with_ties_and_a_big_tie_group(n):
    rng = np.random.default_rng(n)
    human = np.round(rng.normal(size=n), 1)  # many ties
    metrics = np.stack([human + rng.normal(size=n),  # continuous
                        np.where(rng.random(n) < 0.3, 0.0, np.round(rng.random(n) * 50)),  # a tie group over k
                        rng.integers(0, 4, size=n).astype(float)])  # four tie groups only
    assert block_size(n) < n  # the blocks, not one dense matrix
    check(metrics, human, rng.choice(n, size=(6, n)))


def test_one_sided_resamples_are_nan_and_one_point_of_a_pair_is_constant():
    x, y = np.array([1.0, 2.0, 3.0]), np.array([3.0, 1.0, 2.0])
    idx = np.array([[0, 0, 0], [1, 1, 2], [0, 1, 2]])
    got = resampled_correlations(counts_of(idx, 3), x[None], y)
    for statistic in SCIPY:
        assert math.isnan(got[statistic][0, 0])  # one point drawn three times
        assert got[statistic][0, 1] == pytest.approx(explicit(x, y, idx[1], statistic))
        assert got[statistic][0, 2] == pytest.approx(explicit(x, y, idx[2], statistic))


def test_any_scale_of_the_scores_gives_the_same_statistics():
    rng = np.random.default_rng(0)
    metric = rng.random(40)
    human = metric + rng.random(40) * 0.3
    idx = rng.choice(40, size=(50, 40))
    base = resampled_correlations(counts_of(idx, 40), metric[None], human)
    for scale in (1e-150, 1e15, 1e200):  # sums of squares would overflow or underflow unscaled
        scaled = resampled_correlations(counts_of(idx, 40), metric[None] * scale, human * scale)
        for statistic in SCIPY:
            np.testing.assert_allclose(scaled[statistic], base[statistic], rtol=1e-9)


def test_rowwise_functions_equal_scipy_and_drop_missing_points():
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=(5, 9)), rng.normal(size=(5, 9))
    for i in range(5):
        assert rowwise_pearson(x, y)[i] == pytest.approx(stats.pearsonr(x[i], y[i])[0], abs=1e-12)
        assert rowwise_kendall(x, y)[i] == pytest.approx(stats.kendalltau(x[i], y[i])[0], abs=1e-12)
    x[0, 2] = np.nan
    assert rowwise_kendall(x, y)[0] == pytest.approx(stats.kendalltau(np.delete(x[0], 2), np.delete(y[0], 2))[0])


def test_an_unknown_statistic_is_refused():
    with pytest.raises(ValueError, match="statistics must be among"):
        resampled_correlations(counts_of(np.zeros((1, 3), dtype=int), 3), np.ones((1, 3)), np.ones(3), ("tau",))
