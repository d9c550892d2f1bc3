"""Parity with bert-score 0.3.13 on the bundled model, to 1e-5, on real sentences neither side was tuned on.

Covers layers 0 (embeddings), 2, 4 and 6, idf on and off, several references per candidate, rescaling with a
baseline file, batch sizes 1, 3 and 64, shuffled input order, truncation beyond 512 tokens, and edge-case text.
Pairs with a token whose best real similarity is negative are left out (bert-score's padded zeros then make its score
depend on the batch; test_parity_differences.py documents that case); the sets here have none, which is checked.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from bert_score.utils import get_idf_dict, sent_encode

from bertscore_viz import BertScoreWarning, Scorer
from bertscore_viz.engine.cache import CACHE

from .conftest import ATOL, EDGE_CASES, flatten, long_set, multi_reference_set, no_negative_best, parity_set

LAYERS = (0, 2, 4, 6)


@pytest.fixture(scope="module")
def single():
    """The single-reference set, restricted to pairs without negative best matches at the tested layers."""
    cands, refs = parity_set()
    stats = Scorer(layer=6).match(cands, refs, layers=list(LAYERS))
    keep = set(range(len(cands)))
    for layer in LAYERS:
        keep &= set(no_negative_best(stats, layer))
    assert len(keep) == len(cands), "the parity set should have no negative best matches"
    return cands, refs


@pytest.fixture(scope="module")
def multi():
    """Several references per candidate. Unrelated references often have negative best matches at layer 6: those
    candidates are left out (see the module docstring); enough of every group size remain."""
    cands, groups = multi_reference_set()
    stats = Scorer(layer=6).match(cands, groups, layers=[4, 6])
    keep = sorted(set(no_negative_best(stats, 4)) & set(no_negative_best(stats, 6)))
    cands, groups = [cands[i] for i in keep], [groups[i] for i in keep]
    assert len(cands) >= 15
    assert all(sum(len(g) == n for g in groups) >= 3 for n in (1, 2, 3))
    return cands, groups


def assert_parity(ours, theirs):
    p, r, f = theirs
    np.testing.assert_allclose(ours.precision, p, atol=ATOL, rtol=0, equal_nan=True)
    np.testing.assert_allclose(ours.recall, r, atol=ATOL, rtol=0, equal_nan=True)
    np.testing.assert_allclose(ours.f1, f, atol=ATOL, rtol=0, equal_nan=True)


def test_the_sets_are_real_and_varied(single, multi):
    cands, refs = single
    assert len(cands) >= 60
    assert len(set(cands)) == len(cands)
    enc = Scorer(layer=4).encoder
    lengths = [len(t.ids) for t in enc.encode(cands + refs)]
    assert sum(n >= 60 for n in lengths) >= 6  # some long sentences
    long_c, long_r = long_set()
    assert sum(t.truncated for t in enc.encode(long_c + long_r)) == 4


def test_tokenization_matches_sent_encode(reference_scorer, single, multi):
    tokenizer = reference_scorer(4)._tokenizer
    enc = Scorer(layer=4).encoder
    texts = single[0] + single[1] + flatten(multi[1]) + [c for c, _ in EDGE_CASES] + long_set()[0] + long_set()[1]
    for text, tok in zip(texts, enc.encode(texts)):
        assert tok.ids.tolist() == sent_encode(tokenizer, text), text[:80]


def test_idf_dict_matches(reference_scorer, single):
    refs = single[1]
    tokenizer = reference_scorer(4)._tokenizer
    theirs = get_idf_dict(refs, tokenizer, nthreads=0)
    ours = Scorer(layer=4, idf=True).idf_weights(refs)
    assert set(ours.weights) == set(theirs)
    for token, value in theirs.items():
        assert ours.weights[token] == pytest.approx(value, abs=1e-12)
    assert ours.unseen == pytest.approx(theirs[-12345], abs=1e-12)  # the defaultdict's value for unseen ids


@pytest.mark.parametrize("layer", LAYERS)
def test_single_reference_no_idf(reference_score, single, layer):
    cands, refs = single
    assert_parity(Scorer(layer=layer).score(cands, refs), reference_score(cands, refs, layer))


@pytest.mark.parametrize("layer", [4, 6])
def test_single_reference_idf(reference_score, single, layer):
    cands, refs = single
    assert_parity(Scorer(layer=layer, idf=True).score(cands, refs), reference_score(cands, refs, layer, idf=True))


@pytest.mark.parametrize("layer", [4, 6])
@pytest.mark.parametrize("idf", [False, True])
def test_several_references(reference_score, multi, layer, idf):
    cands, groups = multi
    ours = Scorer(layer=layer, idf=idf).score(cands, groups)
    assert_parity(ours, reference_score(cands, groups, layer, idf=idf))
    # the maxima came from different references for different candidates
    assert len(set(ours.best_reference[:, 2].tolist())) >= 2


def test_rescaled_with_baseline_file(reference_score, single, baseline_path):
    cands, refs = single
    ours = Scorer(layer=4, rescale_with_baseline=True, baseline_path=baseline_path).score(cands, refs)
    assert_parity(ours, reference_score(cands, refs, 4, baseline_path=baseline_path))
    assert ours.precision.min() < 0  # rescaled values below the baseline are negative, in both


def test_rescaled_several_references_idf(reference_score, multi, baseline_path):
    cands, groups = multi
    ours = Scorer(layer=6, idf=True, rescale_with_baseline=True, baseline_path=baseline_path).score(cands, groups)
    assert_parity(ours, reference_score(cands, groups, 6, idf=True, baseline_path=baseline_path))


def test_explain_matches_reference(reference_score, single):
    # the pair view gives the reference's numbers too (explain() == score() is pinned in the unit tests)
    cands, refs = single
    p, r, f = reference_score(cands[:6], refs[:6], 4)
    s = Scorer(layer=4)
    for i in range(6):
        e = s.explain(cands[i], refs[i])
        np.testing.assert_allclose([e.precision, e.recall, e.f1], [p[i], r[i], f[i]], atol=ATOL)


def test_batch_sizes_and_shuffled_order(reference_score, single):
    cands, refs = single
    # the shorter pairs (bert-score at batch size 1 is slow), edge cases included
    idx = [i for i in range(len(cands)) if len(cands[i]) + len(refs[i]) < 160][:16]
    cands, refs = [cands[i] for i in idx], [refs[i] for i in idx]
    base = reference_score(cands, refs, 4, batch_size=64)
    for batch in (1, 3, 64):
        CACHE.clear()  # our embeddings recomputed at this batch size too
        ours = Scorer(layer=4, batch_size=batch).score(cands, refs)
        if batch != 64:
            assert_parity(ours, reference_score(cands, refs, 4, batch_size=batch))
        assert_parity(ours, base)
    order = list(range(len(cands)))
    random.Random(13).shuffle(order)
    sc, sr = [cands[i] for i in order], [refs[i] for i in order]
    CACHE.clear()
    ours = Scorer(layer=4, batch_size=5).score(sc, sr)
    theirs = reference_score(sc, sr, 4)
    assert_parity(ours, theirs)
    assert_parity(ours, tuple(x[order] for x in base))


@pytest.mark.parametrize("layer", [4, 6])
def test_truncated_beyond_512_tokens(reference_score, layer):
    cands, refs = long_set()
    stats = Scorer(layer=layer).match(cands, refs)
    assert len(no_negative_best(stats, layer)) == len(cands)
    with pytest.warns(BertScoreWarning, match="truncated"):  # we warn; bert-score truncates silently
        ours = Scorer(layer=layer).score(cands, refs)
    assert sum("truncated" in w for w in ours.warnings) == 2  # candidates 0, 1; references of candidates 0, 2
    assert_parity(ours, reference_score(cands, refs, layer))


@pytest.mark.parametrize("layer", [4, 6])
@pytest.mark.parametrize("idf", [False, True])
def test_window_mode_on_texts_that_fit_gives_bert_scores_numbers(reference_score, single, layer, idf):
    """Window mode changes nothing for texts within the model's maximum: bert-score's numbers (issue 21)."""
    cands, refs = single
    ours = Scorer(layer=layer, idf=idf, long_texts="window").score(cands, refs)
    assert_parity(ours, reference_score(cands, refs, layer, idf=idf))
    assert str(ours.signature).endswith("_window")


def test_window_mode_differs_from_bert_score_only_on_long_texts(reference_score):
    """The long set, where every pair has a side past 512 tokens: truncate mode gives bert-score's numbers (above);
    window mode scores the tails too, so every pair's F1 differs from bert-score's, and nothing is truncated."""
    cands, refs = long_set()
    theirs = reference_score(cands, refs, 4)
    ours = Scorer(layer=4, long_texts="window").score(cands, refs)
    assert not ours.warnings
    assert np.all(np.abs(ours.f1 - theirs[2]) > 1e-4)
