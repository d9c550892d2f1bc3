"""The batched torch kernels against hand-computed values and against the numpy path, padding included."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from bertscore_viz.engine import tensor_ops as T
from tests import numpy_reference as S


def _pad(arrays, dtype=torch.float32):
    return T.pad_sequences([torch.as_tensor(a, dtype=dtype) for a in arrays])


def test_hand_values_one_pair():
    # unit vectors: cand rows e1, e2; ref rows e1, (e1+e2)/sqrt2, -e2
    cand = torch.tensor([[[1.0, 0.0], [0.0, 1.0]]])
    ref = torch.tensor([[[1.0, 0.0], [1 / math.sqrt(2), 1 / math.sqrt(2)], [0.0, -1.0]]])
    mask_c = torch.ones(1, 2, dtype=torch.bool)
    mask_r = torch.ones(1, 3, dtype=torch.bool)
    w_c = torch.ones(1, 2, dtype=torch.float64)
    w_r = torch.ones(1, 3, dtype=torch.float64)
    (p, r, f), (cb, rb) = T.bertscore(cand, mask_c, w_c, ref, mask_r, w_r, return_maxima=True)
    # rows: max(1, .7071, 0) = 1; max(0, .7071, -1) = .7071 -> P = .853553
    # columns: max(1, 0) = 1; max(.7071, .7071) = .7071; max(0, -1) = 0 -> R = .569036
    np.testing.assert_allclose(cb.numpy(), [[1.0, 1 / math.sqrt(2)]], atol=1e-6)
    np.testing.assert_allclose(rb.numpy(), [[1.0, 1 / math.sqrt(2), 0.0]], atol=1e-6)
    P = (1 + 1 / math.sqrt(2)) / 2
    R = (1 + 1 / math.sqrt(2)) / 3
    assert p.item() == pytest.approx(P, abs=1e-6)
    assert r.item() == pytest.approx(R, abs=1e-6)
    assert f.item() == pytest.approx(2 * P * R / (P + R), abs=1e-6)
    assert p.dtype == torch.float64


def test_padding_never_wins_a_maximum():
    # every real similarity of the candidate token is negative; the reference is padded in this batch
    cand = torch.tensor([[[1.0, 0.0]], [[1.0, 0.0]]])
    ref, mask_r = _pad([[[-1.0, 0.0]], [[0.0, 1.0], [0.6, 0.8]]])
    mask_c = torch.ones(2, 1, dtype=torch.bool)
    w_c = torch.ones(2, 1, dtype=torch.float64)
    w_r = mask_r.double()
    cb, rb = T.greedy_maxima(T.similarity(cand, ref), mask_c, mask_r)
    assert cb[0, 0].item() == pytest.approx(-1.0)  # not the padded 0
    assert rb[0, 1].item() == 0.0  # padded position: 0, carries weight 0
    p, r, f = T.precision_recall_f1(cb, rb, w_c, w_r)
    assert p[0].item() == pytest.approx(-1.0) and r[0].item() == pytest.approx(-1.0)
    assert p[1].item() == pytest.approx(0.6) and r[1].item() == pytest.approx((0.0 + 0.6) / 2)


def test_degenerate_weights_give_nan_and_f_zero_empty_gives_zero():
    cand = torch.tensor([[[1.0, 0.0]], [[1.0, 0.0]]])
    ref = torch.tensor([[[1.0, 0.0]], [[1.0, 0.0]]])
    m = torch.ones(2, 1, dtype=torch.bool)
    w_c = torch.tensor([[1.0], [1.0]], dtype=torch.float64)
    w_r = torch.tensor([[0.0], [1.0]], dtype=torch.float64)
    p, r, f = T.bertscore(cand, m, w_c, ref, m, w_r, ref_empty=torch.tensor([False, True]))
    assert p[0].item() == 1.0 and math.isnan(r[0].item()) and f[0].item() == 0.0
    assert (p[1].item(), r[1].item(), f[1].item()) == (0.0, 0.0, 0.0)


def test_smooth_maximum_bounds_and_limit():
    sim = torch.tensor([[[0.2, 0.9, 0.5]]])
    m_c = torch.ones(1, 1, dtype=torch.bool)
    m_r = torch.ones(1, 3, dtype=torch.bool)
    exact, _ = T.greedy_maxima(sim, m_c, m_r)
    soft, _ = T.greedy_maxima(sim, m_c, m_r, temperature=0.1)
    sharp, _ = T.greedy_maxima(sim, m_c, m_r, temperature=1e-3)
    # t * log(sum exp(s / t)) >= max, and tends to it: t=0.1 -> 0.9 + 0.1 * log(1 + e^-4 + e^-7)
    assert soft.item() == pytest.approx(0.9 + 0.1 * math.log(1 + math.exp(-4) + math.exp(-7)), abs=1e-6)
    assert exact.item() == pytest.approx(0.9) and sharp.item() == pytest.approx(0.9, abs=1e-5)
    with pytest.raises(ValueError, match="temperature"):
        T.greedy_maxima(sim, m_c, m_r, temperature=0.0)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_batched_equals_numpy_per_pair(seed):
    """Random pairs of mixed lengths in one padded batch give the numpy path's numbers for each pair."""
    rng = np.random.default_rng(seed)
    h = 16
    lens_c = rng.integers(3, 12, size=7)
    lens_r = rng.integers(3, 15, size=7)
    cands = [S.normalize(rng.normal(size=(n, h))) for n in lens_c]
    refs = [S.normalize(rng.normal(size=(n, h))) for n in lens_r]
    # idf-like weights, specials (first and last) 0
    wc = [np.r_[0.0, rng.uniform(0.1, 2, n - 2), 0.0] for n in lens_c]
    wr = [np.r_[0.0, rng.uniform(0.1, 2, n - 2), 0.0] for n in lens_r]
    c, mc = _pad(cands)
    r, mr = _pad(refs)
    tc, _ = _pad(wc, torch.float64)
    tr, _ = _pad(wr, torch.float64)
    p, rr, f = T.bertscore(c, mc, tc, r, mr, tr)
    for i in range(7):
        sim = S.cosine_matrix(cands[i], refs[i])
        cb, _, rb, _ = S.greedy_match(sim)
        ep, er, ef = S.precision_recall_f1(cb, rb, wc[i], wr[i])
        assert abs(p[i].item() - ep) < 1e-6 and abs(rr[i].item() - er) < 1e-6 and abs(f[i].item() - ef) < 1e-6


def test_unnormalized_inputs_are_normalized_and_not_modified():
    cand = torch.tensor([[[3.0, 4.0], [0.0, 0.0]]])  # second row is padding (zero vector)
    ref = torch.tensor([[[0.0, 2.0]]])
    before = cand.clone()
    m_c = torch.tensor([[True, False]])
    m_r = torch.ones(1, 1, dtype=torch.bool)
    p, r, f = T.bertscore(cand, m_c, m_c.double(), ref, m_r, m_r.double(), normalized=False)
    assert p.item() == pytest.approx(0.8) and r.item() == pytest.approx(0.8)
    assert torch.equal(cand, before)


def test_multi_reference_max_matches_numpy_including_nan():
    scores = torch.tensor([[0.1, 0.9, 0.2], [0.5, 0.3, 0.4], [0.7, 0.7, 0.7],
                           [0.2, float("nan"), 0.0], [0.3, 0.1, 0.6]], dtype=torch.float64)
    groups = [(0, 2), (2, 3), (3, 5)]
    best, arg = T.multi_reference_max(scores, groups)
    eb, ea = S.multi_reference_max(scores.numpy(), groups)
    np.testing.assert_array_equal(np.isnan(best.numpy()), np.isnan(eb))
    np.testing.assert_allclose(np.nan_to_num(best.numpy()), np.nan_to_num(eb))
    np.testing.assert_array_equal(arg.numpy(), ea)


def test_rescale_round_trip():
    x = torch.tensor([[0.9, 0.8, 0.85]], dtype=torch.float64)
    b = [0.8, 0.7, 0.75]
    y = T.rescale(x, b)
    np.testing.assert_allclose(y.numpy(), [[0.5, 1 / 3, 0.4]], atol=1e-12)
    back = y * (1 - torch.tensor(b, dtype=torch.float64)) + torch.tensor(b, dtype=torch.float64)
    np.testing.assert_allclose(back.numpy(), x.numpy(), atol=1e-12)


def test_gradients_flow_to_real_tokens_only_and_pass_gradcheck():
    torch.manual_seed(0)
    cand = torch.randn(2, 4, 5, dtype=torch.float64, requires_grad=True)
    ref = torch.randn(2, 3, 5, dtype=torch.float64)
    m_c = torch.tensor([[True, True, True, False], [True, True, False, False]])
    m_r = torch.tensor([[True, True, True], [True, True, False]])
    w_c = m_c.double()
    w_r = m_r.double()
    p, r, f = T.bertscore(cand, m_c, w_c, ref, m_r, w_r, normalized=False)
    f.sum().backward()
    assert torch.all(cand.grad[~m_c] == 0)
    assert torch.all(torch.isfinite(cand.grad))
    assert cand.grad[m_c].abs().sum() > 0

    def fn(x):
        return T.bertscore(x, m_c, w_c, ref, m_r, w_r, normalized=False, temperature=0.3)[2]

    assert torch.autograd.gradcheck(fn, (cand.detach().requires_grad_(),))


def test_pad_sequences_of_nothing_is_an_empty_batch():
    out, mask = T.pad_sequences([])
    assert out.shape == (0, 0) and mask.shape == (0, 0) and mask.dtype == torch.bool
    out, _ = T.pad_sequences([], dtype=torch.float64, device="meta")
    assert out.dtype == torch.float64 and out.device.type == "meta"
    padded, mask = T.pad_sequences([torch.ones(2, 3), torch.ones(1, 3)], value=-1.0)
    assert padded.shape == (2, 2, 3) and padded[1, 1, 0].item() == -1.0 and mask.tolist() == [[1, 1], [1, 0]]


def test_f1_for_scoring_divides_as_numpy_does():
    """P + R = 0 with P, R != 0 (only possible with negative similarities): numpy gives an infinite F1, which the
    scoring path reproduces (safe=False); the training path gives 0 with finite gradients."""
    p = torch.tensor([0.5, 0.0, 0.3, float("nan")], dtype=torch.float64)
    r = torch.tensor([-0.5, 0.0, 0.6, 0.2], dtype=torch.float64)
    expected = S.f1_score(p.numpy(), r.numpy())
    got = T.f1_score(p, r, safe=False).numpy()
    np.testing.assert_array_equal(got, expected)
    assert np.isinf(got[0]) and got[1] == 0 and got[3] == 0
    safe = T.f1_score(p.requires_grad_(True), r, safe=True)
    assert safe[0].item() == 0
    safe.sum().backward()
    assert torch.all(torch.isfinite(p.grad[:3]))
