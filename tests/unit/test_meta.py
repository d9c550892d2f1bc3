"""Meta-evaluation by pairwise accuracy (bertscore_viz.stats.meta) against hand-computed cases, mt-metrics-eval's own
published test numbers, and slow, obvious loops written here from the papers' definitions.

The generated data mimics WMT MQM: several systems per item, human scores that are multiples of -1/5 and often 0
(ties frequent), a few cells not judged (NaN), metric scores rounded so that they tie too.
"""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import combinations

import numpy as np
import pytest

from bertscore_viz.errors import InputError
from bertscore_viz.stats import meta

NAN = float("nan")


def mqm_like(n_items: int, n_systems: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(items, systems) human MQM-like scores with NaNs, and two metrics: a decent one and a noisy one."""
    rng = np.random.default_rng(seed)
    errors = rng.integers(0, 26, size=(n_items, n_systems)) * (rng.random((n_items, n_systems)) < 0.5)
    human = -errors / 5.0
    human[rng.random(human.shape) < 0.08] = NAN
    good = np.round(human * 0.1 + rng.normal(0, 0.2, human.shape), 1)
    noisy = np.round(rng.normal(0, 1, human.shape), 1)
    return human, good, noisy


# ----------------------------------------------------------------------------- slow, obvious reference computations


def slow_counts(human, metric, epsilon, grouping):
    """Per group: (agreeing pairs, pairs), enumerated in plain loops."""
    if grouping == "item":
        groups = [[(h, m) for h, m in zip(hr, mr) if not math.isnan(h)] for hr, mr in zip(human, metric)]
    else:
        groups = [[(h, m) for hr, mr in zip(human, metric) for h, m in zip(hr, mr) if not math.isnan(h)]]
    out = []
    for cells in groups:
        agree = total = 0
        for (h1, m1), (h2, m2) in combinations(cells, 2):
            human_tie, metric_tie = h1 == h2, abs(m1 - m2) <= epsilon
            both_tie = human_tie and metric_tie
            same_order = not human_tie and not metric_tie and (h1 > h2) == (m1 > m2)
            agree += int(bool(both_tie or same_order))
            total += 1
        if total:
            out.append((agree, total))
    return out


def slow_accuracy(human, metric, epsilon=0.0, grouping="item"):
    counts = slow_counts(human, metric, epsilon, grouping)
    return math.fsum(a / n for a, n in counts) / len(counts)


def slow_exact(human, metric, epsilon, grouping):
    counts = slow_counts(human, metric, epsilon, grouping)
    return sum((Fraction(int(a), int(n)) for a, n in counts), Fraction(0)) / len(counts)


def slow_calibration(human, metric, grouping):
    """The paper's search: every distinct |metric difference| of a judged pair, and 0; exact fractions; the
    smallest epsilon among the maxima."""
    if grouping == "item":
        rows = [[m for h, m in zip(hr, mr) if not math.isnan(h)] for hr, mr in zip(human, metric)]
    else:
        rows = [[m for hr, mr in zip(human, metric) for h, m in zip(hr, mr) if not math.isnan(h)]]
    candidates = {0.0} | {abs(a - b) for row in rows for a, b in combinations(row, 2)}
    values = {e: slow_exact(human, metric, e, grouping) for e in sorted(candidates)}
    best = max(values.values())
    return min(e for e, v in values.items() if v == best)


def slow_p_values(scores, flips, tolerance=1e-6):
    """p that system i beats j: the fraction of permutations (swap segment k where flips[r, k]) whose difference of
    sums is at least the observed one, up to a tolerance for float sums."""
    n_sys, n_seg = scores.shape
    p = np.full((n_sys, n_sys), np.nan)
    for i, j in combinations(range(n_sys), 2):
        observed = math.fsum(scores[i]) - math.fsum(scores[j])
        scale = math.fsum(abs(scores[i, k] - scores[j, k]) for k in range(n_seg))
        hits = 0
        for row in flips:
            a = math.fsum(scores[j, k] if row[k] else scores[i, k] for k in range(n_seg))
            b = math.fsum(scores[i, k] if row[k] else scores[j, k] for k in range(n_seg))
            hits += a - b >= observed - tolerance * max(scale, 1.0)
        p[i, j] = hits / len(flips)
    return p


def slow_spa(human, metric, flips):
    ph, pm = slow_p_values(human, flips), slow_p_values(metric, flips)
    pairs = list(combinations(range(human.shape[0]), 2))
    return 1.0 - sum(abs(ph[i, j] - pm[i, j]) for i, j in pairs) / len(pairs)


def slow_system_accuracy(human_system, metric_system):
    agree = total = 0
    for i, j in combinations(range(len(human_system)), 2):
        agree += np.sign(human_system[i] - human_system[j]) == np.sign(metric_system[i] - metric_system[j])
        total += 1
    return agree / total


# ------------------------------------------------------------------------------------------ hand-computed cases

# 2 items x 3 systems. Item 0: human (1, 2, 2), metric (0, .5, .375); item 1: human (3, 1, 2), metric (1, .25, .25).
# Pairs in order (0,1), (0,2), (1,2):
#   item 0: human diffs -1, -1, 0; metric diffs -.5, -.375, .125 -> con, con, tied only in human
#   item 1: human diffs  2,  1, -1; metric diffs .75, .75, 0      -> con, con, tied only in metric
# epsilon 0: 2/3 per item, acc_eq 2/3. epsilon .125: item 0's (1,2) ties in both -> 3/3, item 1 2/3 -> 5/6.
# epsilon .375: item 0's (0,2) is now a metric tie against a human difference -> 2/3 again, total 2/3.
# epsilon .5: item 0 1/3; epsilon .75: item 1 0/3. Calibration: 5/6 at epsilon .125.
HAND_HUMAN = np.array([[1.0, 2.0, 2.0], [3.0, 1.0, 2.0]])
HAND_METRIC = np.array([[0.0, 0.5, 0.375], [1.0, 0.25, 0.25]])


def test_hand_case_by_item():
    r = meta.pairwise_accuracy(HAND_HUMAN, HAND_METRIC)
    assert r.accuracy == 2 / 3
    assert (r.concordant, r.discordant, r.ties_human, r.ties_metric, r.ties_both) == (4, 0, 1, 1, 0)
    assert (r.pairs, r.groups, r.agreements, r.grouping, r.epsilon) == (6, 2, 4, "item", 0.0)
    assert meta.pairwise_accuracy(HAND_HUMAN, HAND_METRIC, epsilon=0.125).accuracy == (1 + 2 / 3) / 2
    assert meta.pairwise_accuracy(HAND_HUMAN, HAND_METRIC, epsilon=0.375).accuracy == 2 / 3
    assert meta.pairwise_accuracy(HAND_HUMAN, HAND_METRIC, epsilon=0.75).accuracy == pytest.approx(1 / 6)
    best, epsilon = meta.tie_calibrated_accuracy(HAND_HUMAN, HAND_METRIC)
    assert (best.accuracy, epsilon, best.epsilon) == ((1 + 2 / 3) / 2, 0.125, 0.125)


def test_hand_case_no_grouping():
    # The 6 cells flattened: human (1, 2, 2, 3, 1, 2), metric (0, .5, .375, 1, .25, .25): 15 pairs.
    # Human ties: (0,4) (1,2) (1,5) (2,5), each with different metric scores -> 4 tied only in human.
    # (4,5): human 1 < 2, metric .25 = .25 -> tied only in metric. The other 10 pairs are concordant.
    r = meta.pairwise_accuracy(HAND_HUMAN, HAND_METRIC, grouping="none")
    assert (r.accuracy, r.pairs, r.groups) == (10 / 15, 15, 1)
    assert (r.concordant, r.ties_human, r.ties_metric, r.discordant, r.ties_both) == (10, 4, 1, 0, 0)


def test_hand_case_system_level():
    # (0,1): + and + agree; (0,2): + and - disagree; (1,2): - and - agree -> 2/3.
    r = meta.system_pairwise_accuracy([3.0, 1.0, 2.0], [0.9, 0.1, 0.95])
    assert (r.accuracy, r.agreements, r.pairs) == (2 / 3, 2, 3)
    # A human tie agrees only with an exact metric tie: (0,1) tie vs + -> no; the others agree -> 2/3.
    assert meta.system_pairwise_accuracy([1.0, 1.0, 2.0], [0.5, 0.4, 0.9]).accuracy == 2 / 3
    assert meta.system_pairwise_accuracy([1.0, 1.0, 2.0], [0.5, 0.5, 0.9]).accuracy == 1.0
    # A system without a human score leaves every pair: only (0,2) is left, and it agrees.
    assert meta.system_pairwise_accuracy([1.0, NAN, 2.0], [0.1, 0.9, 0.2]).pairs == 1


def test_hand_case_p_values():
    # A beats B on both segments: the permuted difference reaches the observed one only when nothing is swapped;
    # B's difference (-2) is reached by every permutation; the p of a system against itself-like copy is 1.
    flips = meta.permutation_flips(2, 400, 7)
    p = meta.pairwise_p_values(np.array([[1.0, 1.0], [0.0, 0.0], [0.0, 0.0]]), 400, 7)
    assert p[0, 1] == (~flips).all(axis=1).mean()
    assert 0.15 < p[0, 1] < 0.35 and p[1, 2] == 1.0 and np.isnan(p[1, 0])
    reversed_metric = np.array([[0.0, 0.0], [1.0, 1.0], [0.5, 0.5]])
    assert meta.pairwise_p_values(reversed_metric, 400, 7)[0, 1] == 1.0


# ------------------------------------------------------------------------------ mt-metrics-eval's published numbers


def test_mt_metrics_eval_tau_optimization_cases():
    # tau_optimization_test.py: one row, metric (0, 2, 6, 8); best threshold 0 with human (1, 2, 3, 4), and 4 with
    # human (1, 1, 1, 4) at 4/6.
    best, eps = meta.tie_calibrated_accuracy([[1, 2, 3, 4]], [[0, 2, 6, 8]])
    assert (best.accuracy, eps) == (1.0, 0.0)
    best, eps = meta.tie_calibrated_accuracy([[1, 1, 1, 4]], [[0, 2, 6, 8]])
    assert (best.accuracy, eps) == (4 / 6, 4.0)
    curve = [meta.pairwise_accuracy([[1, 1, 1, 4]], [[0, 2, 6, 8]], epsilon=e).accuracy for e in (0, 2, 4, 6, 8)]
    assert curve == [3 / 6, 3 / 6, 4 / 6, 4 / 6, 3 / 6]


def test_mt_metrics_eval_regression_example():
    # tau_optimization_test.py's test_regression_example (rows are the groups). mt-metrics-eval drops a pair when
    # either score is None; here the one metric None under a human score becomes a human NaN (same pairs).
    metric = [[0, 5, 2, 3, 2], [0, 2, 1, 5, 3], [9, 1, 5, 3, 8], [9, 3, 4, 4, 1], [0, 0, 0, 0, 0]]
    human = [[1, 5, 2, 1, 1], [NAN, 2, 2, 1, 4], [5, 9, 2, 8, 7], [7, 6, NAN, 3, 2], [NAN] * 5]
    expected = [0.4666666666666667, 0.4916666666666668, 0.38333333333333347, 0.29166666666666674,
                0.2666666666666667, 0.2, 0.15833333333333335, 0.15833333333333335, 0.1166666666666667]
    for eps, value in zip(range(9), expected):
        assert meta.pairwise_accuracy(human, metric, epsilon=eps).accuracy == pytest.approx(value, abs=1e-12)
    best, eps = meta.tie_calibrated_accuracy(human, metric)
    assert eps == 1.0 and best.accuracy == pytest.approx(0.4916666666666668, abs=1e-12) and best.groups == 4


# ------------------------------------------------------------------------------ generated WMT-like data, slow loops


@pytest.mark.parametrize("grouping,n_items", [("item", 40), ("none", 12)])
def test_acc_eq_and_calibration_equal_slow_loops(grouping, n_items):
    human, good, noisy = mqm_like(n_items, 6, seed=3)
    for metric in (good, noisy):
        for eps in (0.0, 0.1, 0.30000000000000004):
            assert meta.pairwise_accuracy(human, metric, epsilon=eps, grouping=grouping).accuracy == \
                slow_accuracy(human, metric, eps, grouping)
        best, eps = meta.tie_calibrated_accuracy(human, metric, grouping=grouping)
        assert eps == slow_calibration(human, metric, grouping)
        assert best.accuracy == slow_accuracy(human, metric, eps, grouping)
        assert abs(Fraction(float(best.accuracy)) - slow_exact(human, metric, eps, grouping)) <= Fraction(1, 10**15)


def test_calibration_beats_every_epsilon_and_ties_are_frequent():
    human, good, _ = mqm_like(60, 8, seed=11)
    r0 = meta.pairwise_accuracy(human, good)
    assert r0.ties_human > r0.pairs // 10  # the generator does make human ties frequent
    best, eps = meta.tie_calibrated_accuracy(human, good)
    assert eps > 0 and best.accuracy > r0.accuracy
    for e in np.linspace(0, 1, 21):
        assert meta.pairwise_accuracy(human, good, epsilon=float(e)).accuracy <= best.accuracy


def test_nan_cells_leave_their_pairs():
    human, good, _ = mqm_like(10, 4, seed=5)
    human[0, :3] = NAN  # item 0 keeps one judged system: no pair
    r = meta.pairwise_accuracy(human, good)
    assert r.groups == sum(1 for row in human if (~np.isnan(row)).sum() >= 2)
    assert r.accuracy == slow_accuracy(human, good)
    # A metric score where the humans did not judge does not matter.
    changed = good.copy()
    changed[0, 0] = 123.0
    changed[np.isnan(human)] = NAN
    assert meta.pairwise_accuracy(human, changed).accuracy == r.accuracy


def test_one_system_per_segment_has_no_pairs():
    # data/wmt16-da-to-english's shape: one system per segment.
    r = meta.pairwise_accuracy(np.array([[0.1], [0.5]]), np.array([[0.2], [0.3]]))
    assert math.isnan(r.accuracy) and r.pairs == 0 and r.groups == 0


def test_accuracy_interval_reproduces_the_seeded_resamples():
    human, good, _ = mqm_like(30, 5, seed=8)
    eps = meta.tie_calibrated_accuracy(human, good)[1]
    low, high = meta.accuracy_interval(human, good, epsilon=eps, n_resamples=80, seed=4)
    draws = np.random.default_rng(4).choice(30, size=(80, 30), replace=True)
    values = sorted(slow_accuracy(human[d], good[d], eps) for d in draws)
    assert low == pytest.approx(values[80 // 40], abs=1e-12)
    assert high == pytest.approx(values[80 - 80 // 40 - 1], abs=1e-12)
    assert low <= meta.pairwise_accuracy(human, good, epsilon=eps).accuracy <= high


def test_compare_accuracy_reproduces_the_pair_permutations():
    human, good, noisy = mqm_like(25, 4, seed=9)
    r = meta.compare_accuracy(human, good, noisy, epsilon_a=0.1, epsilon_b=0.2, n_resamples=200, seed=6)
    assert r.a == slow_accuracy(human, good, 0.1) and r.b == slow_accuracy(human, noisy, 0.2)
    # Each pair's agreement, item by item, systems (i, j) with i < j; weight 1 / (pairs of its item x items).
    rows = []
    for hr, ar, br in zip(human, good, noisy):
        judged = [k for k in range(4) if not math.isnan(hr[k])]
        pairs = list(combinations(judged, 2))
        for i, j in pairs:
            agree_a = slow_accuracy(hr[None, [i, j]], ar[None, [i, j]], 0.1)
            agree_b = slow_accuracy(hr[None, [i, j]], br[None, [i, j]], 0.2)
            rows.append((agree_a - agree_b, len(pairs)))
    n_items = sum(1 for hr in human if (~np.isnan(hr)).sum() >= 2)
    d = np.array([x / (n * n_items) for x, n in rows])
    signs = np.where(np.random.default_rng(6).random((200, len(d))) < 0.5, -1.0, 1.0)
    expected = np.mean([float(s @ d) >= d.sum() - 1e-9 * np.abs(d).sum() for s in signs])
    assert r.p_value == expected and r.delta == pytest.approx(r.a - r.b)
    assert r.p_value < 0.05  # the decent metric is significantly better than noise
    same = meta.compare_accuracy(human, good, good, n_resamples=50)
    assert same.delta == 0 and same.p_value == 1.0


# ------------------------------------------------------------------------------------------------ system level


def systems_by_segments(n_sys: int, n_seg: int, seed: int):
    rng = np.random.default_rng(seed)
    quality = np.linspace(0, 3, n_sys)[:, None]
    human = -np.minimum(25, rng.poisson(3 + quality, (n_sys, n_seg))) / 5.0
    good = np.round(human + rng.normal(0, 1.0, human.shape), 2)
    noisy = np.round(rng.normal(0, 1.0, human.shape), 2)
    return human, good, noisy


def test_soft_pairwise_accuracy_equals_slow_permutations():
    human, good, noisy = systems_by_segments(4, 30, seed=2)
    flips = np.random.default_rng(13).random((200, 30), dtype=np.float32) <= 0.5
    assert (meta.permutation_flips(30, 200, 13) == flips).all()
    for metric in (good, noisy, human):
        spa = meta.soft_pairwise_accuracy(human, metric, n_resamples=200, seed=13)
        assert spa == pytest.approx(slow_spa(human, metric, flips), abs=1e-6)
    assert meta.soft_pairwise_accuracy(human, human, n_resamples=200, seed=13) == 1.0
    np.testing.assert_allclose(meta.pairwise_p_values(human, 200, 13), slow_p_values(human, flips), atol=1e-12)


def test_p_values_use_pce_py_permutations_for_its_seed():
    # pce.compute_pairwise_p_values(seg_scores, num_permutations, seed) draws rng.random(float32), rounds with
    # np.rint to 0/1 and maps to -1/+1 (+1 keeps a segment); its p counts null_delta >= test_delta over sums.
    # Re-done here in float64 on continuous scores (no exact ties), the same seed gives the same p values.
    rng = np.random.default_rng(0)
    scores = rng.normal(0, 1, (5, 40)) + np.linspace(0, 0.6, 5)[:, None]
    u = np.random.default_rng(4).random((300, 40), dtype=np.float32)
    two_m_minus_one = np.rint(u).astype(np.float64) * 2 - 1
    partial = two_m_minus_one @ scores.T
    totals = scores.sum(axis=1)
    ours = meta.pairwise_p_values(scores, 300, 4)
    for i, j in combinations(range(5), 2):
        assert ours[i, j] == np.mean(partial[:, i] - partial[:, j] >= totals[i] - totals[j])


def test_soft_pairwise_drops_segments_a_system_was_not_judged_on():
    human, good, _ = systems_by_segments(3, 20, seed=4)
    holed = human.copy()
    holed[1, 5] = NAN
    keep = [k for k in range(20) if k != 5]
    assert meta.soft_pairwise_accuracy(holed, good, 100, 1) == \
        meta.soft_pairwise_accuracy(human[:, keep], good[:, keep], 100, 1)


def test_system_level_intervals_and_tests():
    human, good, noisy = systems_by_segments(5, 60, seed=6)
    spa_low, spa_high = meta.soft_pairwise_interval(human, good, n_resamples=20, n_permutations=100, seed=3)
    assert 0 <= spa_low <= spa_high <= 1
    low, high = meta.system_accuracy_interval(human, good, n_resamples=100, seed=3)
    draws = np.random.default_rng(3).choice(60, size=(100, 60), replace=True)
    values = sorted(slow_system_accuracy(human[:, d].mean(axis=1), good[:, d].mean(axis=1)) for d in draws)
    assert (low, high) == (values[2], values[97])
    cmp = meta.compare_system_accuracy(human, good, noisy, n_resamples=100, seed=3)
    assert cmp.a == slow_system_accuracy(human.mean(axis=1), good.mean(axis=1)) and cmp.a > cmp.b
    assert cmp.p_value < 0.1
    assert meta.compare_system_accuracy(human, noisy, good, n_resamples=100, seed=3).p_value > 0.5
    spa_cmp = meta.compare_soft_pairwise(human, good, noisy, n_resamples=30, n_permutations=100, seed=3)
    assert spa_cmp.delta > 0 and spa_cmp.p_value < 0.2


def test_perm_both_reproduces_its_seeded_swaps():
    human, good, noisy = systems_by_segments(4, 15, seed=1)

    def z(x):
        return (x - x.mean()) / x.std()

    za, zb = z(good), z(noisy)
    rng = np.random.default_rng(21)
    observed = slow_system_accuracy(human.mean(1), za.mean(1)) - slow_system_accuracy(human.mean(1), zb.mean(1))
    hits = 0
    for _ in range(60):
        swap = rng.random(za.shape) < 0.5
        a, b = np.where(swap, zb, za), np.where(swap, za, zb)
        hits += slow_system_accuracy(human.mean(1), a.mean(1)) - slow_system_accuracy(human.mean(1), b.mean(1)) \
            >= observed - 1e-12
    assert meta.compare_system_accuracy(human, good, noisy, n_resamples=60, seed=21).p_value == hits / 60


# ----------------------------------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("call,message", [
    (lambda: meta.pairwise_accuracy([[1, 2]], [[1, 2, 3]]), "same shape"),
    (lambda: meta.pairwise_accuracy([1, 2], [1, 2]), "2-D"),
    (lambda: meta.pairwise_accuracy([[1, 2]], [[1, NAN]]), "no score at (0, 1)"),
    (lambda: meta.pairwise_accuracy([[1, 2]], [[1, 2]], grouping="sys"), "grouping must be one of"),
    (lambda: meta.pairwise_accuracy([[1, 2]], [[1, 2]], epsilon=-0.1), "epsilon must be"),
    (lambda: meta.pairwise_accuracy([[1, 2]], [[1, 2]], epsilon=float("nan")), "epsilon must be"),
    (lambda: meta.compare_accuracy([[1, 2]], [[1, 2]], [[1, 2, 3]]), "same shape"),
    (lambda: meta.compare_system_accuracy([[1, 2], [2, 1]], [[1, 2], [2, 1]], [[1, 2], [2, 1]], 0), "positive"),
    (lambda: meta.pairwise_accuracy([["a", 2]], [[1, 2]]), "must be numbers"),
    (lambda: meta.pairwise_accuracy([[1, np.inf]], [[1, 2]]), "infinite"),
    (lambda: meta.pairwise_accuracy(np.zeros((1000, 3)), np.zeros((1000, 3)), grouping="none"), "use grouping='item'"),
    (lambda: meta.accuracy_interval([[1, 2]], [[1, 2]], epsilon=0, grouping="none"), "needs grouping='item'"),
    (lambda: meta.accuracy_interval([[1, 2]], [[1, 2]], epsilon=0, n_resamples=0), "positive whole number"),
    (lambda: meta.soft_pairwise_accuracy([[1, 2]], [[1, 2]], 10, 1), "at least 2 systems"),
    (lambda: meta.pairwise_p_values([[1, NAN], [1, 2]], 10, 1), "NaN"),
    (lambda: meta.system_pairwise_accuracy([1, 2], [1, 2, 3]), "one score per system"),
])
def test_bad_input_is_refused_clearly(call, message):
    with pytest.raises(InputError) as err:
        call()
    assert message in str(err.value)
