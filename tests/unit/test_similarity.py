"""Every formula of bertscore_viz.similarity against values computed by hand (in the comments)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests import numpy_reference as S

SQ5 = math.sqrt(5.0)


# --- cosine ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "cand, ref, expected",
    [
        # orthonormal candidate rows against (1,0) and (1,1)/sqrt2: cosines 1, 1/sqrt2, 0, 1/sqrt2
        ([[1, 0], [0, 1]], [[1, 0], [1, 1]], [[1.0, 1 / math.sqrt(2)], [0.0, 1 / math.sqrt(2)]]),
        # length does not matter: (3,4).(4,3) = 24, |.| = 5 each -> 24/25
        ([[3, 4]], [[4, 3]], [[0.96]]),
        ([[30, 40]], [[0.4, 0.3]], [[0.96]]),
        # opposite vectors -> -1
        ([[1, 2, 3]], [[-1, -2, -3]], [[-1.0]]),
    ],
)
def test_cosine_matrix_hand_values(cand, ref, expected):
    sim = S.cosine_matrix(np.array(cand, dtype=float), np.array(ref, dtype=float))
    assert sim.shape == (len(cand), len(ref))
    np.testing.assert_allclose(sim, expected, atol=1e-6)


def test_cosine_matrix_batched_leading_axes():
    # two "layers": the second is the first scaled by 7, which cannot change any cosine
    cand = np.array([[[1.0, 0.0], [1.0, 1.0]], [[7.0, 0.0], [7.0, 7.0]]])
    ref = np.array([[[0.0, 2.0]], [[0.0, 2.0]]])
    sim = S.cosine_matrix(cand, ref)
    assert sim.shape == (2, 2, 1)
    np.testing.assert_allclose(sim[0], [[0.0], [1 / math.sqrt(2)]], atol=1e-6)
    np.testing.assert_allclose(sim[1], sim[0], atol=1e-6)


def test_normalize_gives_unit_rows_and_new_array():
    x = np.array([[3.0, 4.0], [0.0, 2.0]])
    before = x.copy()
    n = S.normalize(x)
    np.testing.assert_allclose(n, [[0.6, 0.8], [0.0, 1.0]], atol=1e-7)
    np.testing.assert_array_equal(x, before)


# --- greedy matching --------------------------------------------------------------------------------------------
def test_greedy_match_hand_values():
    sim = np.array([[0.9, 0.1, 0.3],
                    [0.2, 0.8, 0.5]])
    cand_best, cand_idx, ref_best, ref_idx = S.greedy_match(sim)
    # rows: 0.9 at column 0, 0.8 at column 1; columns: 0.9 (row 0), 0.8 (row 1), 0.5 (row 1)
    np.testing.assert_allclose(cand_best, [0.9, 0.8])
    np.testing.assert_array_equal(cand_idx, [0, 1])
    np.testing.assert_allclose(ref_best, [0.9, 0.8, 0.5])
    np.testing.assert_array_equal(ref_idx, [0, 1, 1])


def test_greedy_match_keeps_negative_maxima():
    # a row whose similarities are all negative keeps its true (negative) maximum, never 0 (see the padding
    # difference with bert-score documented in tests/parity)
    sim = np.array([[-0.3, -0.1], [0.4, -0.2]])
    cand_best, _, ref_best, _ = S.greedy_match(sim)
    np.testing.assert_allclose(cand_best, [-0.1, 0.4])
    np.testing.assert_allclose(ref_best, [0.4, -0.1])


# --- weighted mean ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "values, weights, expected",
    [
        ([0.9, 0.8], [1, 3], 0.825),  # (0.9 + 3 * 0.8) / 4
        ([0.9, 0.8], [1, 1], 0.85),
        ([1.0, 0.5, 0.2], [0, 1, 0], 0.5),  # weight-0 tokens (CLS/SEP) do not count
        # idf toy: cat = 0.287682, dog = 0.693147 -> (0.287682 * 0.6 + 0.693147 * 0.9) / 0.980829
        ([0.6, 0.9], [0.287682, 0.693147], (0.287682 * 0.6 + 0.693147 * 0.9) / 0.980829),
    ],
)
def test_weighted_mean_hand_values(values, weights, expected):
    assert S.weighted_mean(np.array(values), np.array(weights)) == pytest.approx(expected, abs=1e-12)


def test_weighted_mean_zero_weights_is_nan():
    # as the reference: sum(w) = 0 -> 0/0 -> NaN (degenerate idf)
    assert np.isnan(S.weighted_mean(np.array([0.5, 0.7]), np.array([0.0, 0.0])))


# --- F1 ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "p, r, expected",
    [
        (0.8, 0.6, 0.96 / 1.4),  # 2 * 0.48 / 1.4 = 0.685714
        (0.5, 0.5, 0.5),
        (1.0, 0.0, 0.0),
        (0.0, 0.0, 0.0),  # 0/0 -> NaN -> 0
        (float("nan"), 0.5, 0.0),  # degenerate idf: P NaN -> F 0
        (0.5, float("nan"), 0.0),
        (1.0000001, 1.0000001, 1.0000001),  # not clamped (a self-match can exceed 1)
    ],
)
def test_f1_hand_values(p, r, expected):
    assert float(S.f1_score(p, r)) == pytest.approx(expected, abs=1e-12)


def test_f1_vectorised():
    np.testing.assert_allclose(S.f1_score([0.8, 0.0], [0.6, 0.0]), [0.96 / 1.4, 0.0])


# --- one pair, built by hand ------------------------------------------------------------------------------------
def _toy_pair():
    """Candidate [CLS] a b [SEP] against reference [CLS] a c [SEP] in R^4 (e1..e4 the unit vectors).

    CLS = e1 on both sides, a = e2 on both sides, b = e3, SEP = e4 on both sides, c = (e3/2 + e4) / |.|, |.| = sqrt(5)/2
    so cos(b, c) = 0.5 / (sqrt(5)/2) = 1/sqrt5 = 0.447214 and cos(SEP, c) = 1 / (sqrt(5)/2) = 2/sqrt5 = 0.894427.
    """
    e = np.eye(4)
    cand = np.stack([e[0], e[1], e[2], e[3]])
    ref = np.stack([e[0], e[1], 0.5 * e[2] + e[3], e[3]])
    weights = np.array([0.0, 1.0, 1.0, 0.0])  # CLS and SEP weigh 0
    return cand, ref, weights


def test_toy_pair_similarity_matrix():
    cand, ref, _ = _toy_pair()
    sim = S.cosine_matrix(cand, ref)
    # rows: cand CLS, a, b, SEP; columns: ref CLS, a, c, SEP
    expected = [[1, 0, 0, 0],
                [0, 1, 0, 0],
                [0, 0, 1 / SQ5, 0],
                [0, 0, 2 / SQ5, 1]]
    np.testing.assert_allclose(sim, expected, atol=1e-6)


def test_toy_pair_special_tokens_take_part_in_matching():
    cand, ref, w = _toy_pair()
    cb, ci, rb, ri = S.greedy_match(S.cosine_matrix(cand, ref))
    # the reference token c matches the candidate SEP (2/sqrt5), not b (1/sqrt5)
    assert ri[2] == 3
    assert rb[2] == pytest.approx(2 / SQ5, abs=1e-6)
    p, r, f = S.precision_recall_f1(cb, rb, w, w)
    # P = (1 + 1/sqrt5) / 2 = 0.723607; R = (1 + 2/sqrt5) / 2 = 0.947214; F = 2PR/(P+R) = 0.820447
    assert float(p) == pytest.approx(0.7236068, abs=1e-6)
    assert float(r) == pytest.approx(0.9472136, abs=1e-6)
    assert float(f) == pytest.approx(0.8204475, abs=1e-6)


def test_toy_pair_does_not_modify_inputs():
    cand, ref, w = _toy_pair()
    copies = [x.copy() for x in (cand, ref, w)]
    sim = S.cosine_matrix(cand, ref)
    sim_copy = sim.copy()
    cb, _, rb, _ = S.greedy_match(sim)
    cb_copy, rb_copy = cb.copy(), rb.copy()
    S.precision_recall_f1(cb, rb, w, w)
    S.rescale(cb, 0.5)
    for a, b in zip((cand, ref, w, sim, cb, rb), copies + [sim_copy, cb_copy, rb_copy]):
        np.testing.assert_array_equal(a, b)


def test_precision_recall_f1_with_idf_weights():
    # cand best [_, 0.6, 0.9, _] with idf weights [0, cat=0.287682, dog=0.693147, 0]
    cb = np.array([1.0, 0.6, 0.9, 1.0])
    rb = np.array([1.0, 0.7, 1.0])
    wc = np.array([0.0, 0.287682, 0.693147, 0.0])
    wr = np.array([0.0, 1.386294, 0.0])  # an unseen token, then SEP
    p, r, f = S.precision_recall_f1(cb, rb, wc, wr)
    exp_p = (0.287682 * 0.6 + 0.693147 * 0.9) / (0.287682 + 0.693147)  # 0.812007
    assert float(p) == pytest.approx(exp_p, abs=1e-9)
    assert float(r) == pytest.approx(0.7, abs=1e-12)
    assert float(f) == pytest.approx(2 * exp_p * 0.7 / (exp_p + 0.7), abs=1e-9)


@pytest.mark.parametrize("cand_empty, ref_empty", [(True, False), (False, True), (True, True)])
def test_empty_side_scores_zero(cand_empty, ref_empty):
    p, r, f = S.precision_recall_f1(np.array([0.9, 0.8]), np.array([0.7, 0.6]), np.array([0.0, 0.0]),
                                    np.array([0.0, 0.0]), cand_empty, ref_empty)
    assert (float(p), float(r), float(f)) == (0.0, 0.0, 0.0)


def test_degenerate_weights_give_nan_and_f1_zero():
    # every reference token weighs 0 (idf from one reference): R = 0/0 = NaN, F = NaN -> 0 as in the reference
    p, r, f = S.precision_recall_f1(np.array([0.9, 0.8]), np.array([0.7, 0.6]), np.array([1.0, 1.0]),
                                    np.array([0.0, 0.0]))
    assert float(p) == pytest.approx(0.85)
    assert np.isnan(r)
    assert float(f) == 0.0


def test_precision_recall_f1_over_layers():
    # leading axis = layers; weights shared
    cb = np.array([[0.5, 0.7], [0.9, 0.1]])
    rb = np.array([[0.6], [0.2]])
    p, r, f = S.precision_recall_f1(cb, rb, np.array([1.0, 1.0]), np.array([1.0]))
    np.testing.assert_allclose(p, [0.6, 0.5])
    np.testing.assert_allclose(r, [0.6, 0.2])
    np.testing.assert_allclose(f, [0.6, 2 * 0.5 * 0.2 / 0.7])


# --- several references -----------------------------------------------------------------------------------------
def test_multi_reference_max_takes_p_r_f_separately():
    # candidate 0 has two references, candidate 1 one. As bert-score (``all_preds[s:e].max(dim=0)``), the maximum
    # is element-wise: P from reference 0, R and F from reference 1.
    f_a = 2 * 0.9 * 0.5 / 1.4  # 0.642857
    f_b = 2 * 0.6 * 0.8 / 1.4  # 0.685714
    scores = np.array([[0.9, 0.5, f_a],
                       [0.6, 0.8, f_b],
                       [0.3, 0.4, 2 * 0.12 / 0.7]])
    best, arg = S.multi_reference_max(scores, [(0, 2), (2, 3)])
    np.testing.assert_allclose(best, [[0.9, 0.8, f_b], [0.3, 0.4, 2 * 0.12 / 0.7]])
    np.testing.assert_array_equal(arg, [[0, 1, 1], [0, 0, 0]])


def test_multi_reference_max_propagates_nan_like_torch_max():
    scores = np.array([[np.nan, 0.5, 0.0], [0.7, 0.6, 0.65]])
    best, _ = S.multi_reference_max(scores, [(0, 2)])
    assert np.isnan(best[0, 0])
    np.testing.assert_allclose(best[0, 1:], [0.6, 0.65])


def test_multi_reference_max_no_candidates():
    best, arg = S.multi_reference_max(np.zeros((0, 3)), [])
    assert best.shape[0] == 0 and arg.shape[0] == 0


# --- rescaling --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "x, b, expected",
    [
        (0.9, 0.8, 0.5),  # (0.9 - 0.8) / 0.2
        (0.8, 0.8, 0.0),
        (1.0, 0.8, 1.0),
        (0.7, 0.8, -0.5),  # below the baseline: negative
        (0.0, 0.5, -1.0),  # an empty sentence's 0 rescales to -b/(1-b)
    ],
)
def test_rescale_hand_values(x, b, expected):
    assert float(S.rescale(x, b)) == pytest.approx(expected, abs=1e-12)


def test_rescale_separate_baselines_for_p_r_f():
    raw = np.array([[0.9, 0.85, 0.875], [0.8, 0.7, 0.75]])
    b = np.array([0.8, 0.7, 0.75])
    out = S.rescale(raw, b)
    # row 0: (0.1/0.2, 0.15/0.3, 0.125/0.25); row 1: (0, 0, 0)
    np.testing.assert_allclose(out, [[0.5, 0.5, 0.5], [0.0, 0.0, 0.0]], atol=1e-12)


def test_rescale_preserves_order():
    x = np.array([0.1, 0.5, 0.7, 0.95])
    assert list(np.argsort(S.rescale(x, 0.83))) == list(np.argsort(x))
