"""The tensor path (padded batches on the device, :mod:`bertscore_viz.tensor_ops`) against the numpy path (pair by
pair, :mod:`bertscore_viz.similarity`, on the same embeddings) and against bert-score 0.3.13, on real WMT16 pairs
mixed with short edge cases and the longest references (so batches mix lengths): idf, several references,
rescaling."""

from __future__ import annotations

import numpy as np
import pytest

from bertscore_viz import Scorer
from bertscore_viz import similarity as sim_ops
from bertscore_viz.encoder import CACHE
from bertscore_viz.idf import uniform_weights

from .conftest import ATOL, EDGE_CASES, flatten, no_negative_best, wmt_pairs


def numpy_path(scorer: Scorer, cands: list[str], groups: list[list[str]]) -> np.ndarray:
    """``(n, 3)`` raw P/R/F the way the engine computed them before issue 10: one pair at a time in numpy."""
    enc = scorer.encoder
    flat = flatten(groups)
    idf = scorer.idf_weights(flat) if scorer.idf else None
    special = list(enc.special_ids)
    emb = dict(zip(cands + flat, enc.embed(cands + flat, scorer.layer)))
    ids = dict(zip(cands + flat, (t.ids for t in enc.encode(cands + flat))))
    out = []
    for c, g in zip(cands, groups):
        rows = []
        for r in g:
            s = np.matmul(emb[c][scorer.layer], emb[r][scorer.layer].T)
            cb, _, rb, _ = sim_ops.greedy_match(s)
            w = [idf(ids[x]) if idf is not None else uniform_weights(ids[x], special) for x in (c, r)]
            empty = [bool(np.isin(ids[x], special).all()) for x in (c, r)]
            rows.append(sim_ops.precision_recall_f1(cb, rb, w[0], w[1], *empty))
        out.append(np.max(np.array(rows, dtype=np.float64), axis=0))
    return np.array(out)


@pytest.fixture(scope="module")
def mixed():
    """Real pairs from every language pair, each file's longest reference, and short edge cases, in one call."""
    cands, refs = wmt_pairs(4, longest=1)
    cands += [c for c, _ in EDGE_CASES]
    refs += [r for _, r in EDGE_CASES]
    return cands, refs


@pytest.mark.parametrize("layer, idf", [(4, False), (6, True), (2, False)])
def test_tensor_path_equals_numpy_path_and_bert_score(mixed, reference_score, layer, idf):
    cands, refs = mixed
    groups = [[r] for r in refs]
    CACHE.clear()
    s = Scorer(layer=layer, idf=idf)
    res = s.score(cands, refs)
    ours = np.stack([res.precision, res.recall, res.f1], axis=1)
    np.testing.assert_allclose(ours, numpy_path(s, cands, groups), atol=1e-6)
    p, r, f = reference_score(cands, refs, layer, idf=idf)
    keep = no_negative_best(s.match(cands, refs), layer)
    assert len(keep) > 0.8 * len(cands)
    np.testing.assert_allclose(ours[keep], np.stack([p, r, f], axis=1)[keep], atol=ATOL)


def test_several_references_and_rescaling(mixed, reference_score, baseline_path):
    cands, refs = mixed
    n = len(cands)
    groups = [[refs[i], refs[(i + 1) % n], refs[(i + 7) % n]] for i in range(n)]
    CACHE.clear()
    s = Scorer(layer=6, idf=True, rescale_with_baseline=True, baseline_path=baseline_path)
    res = s.score(cands, groups)
    raw = np.stack([res.raw_precision, res.raw_recall, res.raw_f1], axis=1)
    np.testing.assert_allclose(raw, numpy_path(s, cands, groups), atol=1e-6)
    p, r, f = reference_score(cands, groups, 6, idf=True, baseline_path=baseline_path)
    keep = no_negative_best(s.match(cands, groups), 6)
    assert len(keep) > 0.5 * n  # unrelated references (the edge cases) have negative best matches
    ours = np.stack([res.precision, res.recall, res.f1], axis=1)
    np.testing.assert_allclose(ours[keep], np.stack([p, r, f], axis=1)[keep], atol=ATOL)


def test_a_pair_scores_the_same_in_any_batch(mixed):
    """Padding and batch composition change nothing: each pair alone equals the pair inside the mixed call."""
    cands, refs = mixed
    s = Scorer(layer=4)
    together = s.score(cands, refs)
    for i in (0, 5, len(cands) - 1, len(cands) - 4):
        alone = s.score([cands[i]], [refs[i]])
        assert alone.f1[0] == together.f1[i] and alone.precision[0] == together.precision[i]
