"""The tensor path (padded batches on the device, :mod:`bertscore_viz.engine.tensor_ops`) against the numpy path (pair
by pair, :mod:`bertscore_viz.similarity`, on the same embeddings) and against bert-score 0.3.13, on real WMT16 pairs
mixed with short edge cases and the longest references (so batches mix lengths): idf, several references,
rescaling. ``Scorer.score`` computes each pair's P/R/F on the device; ``Scorer.result(Scorer.match(...))`` from the
per-token maxima on the host: both give the same numbers and warnings."""

from __future__ import annotations

import numpy as np
import pytest

from bertscore_viz import BertScoreWarning, Scorer
from bertscore_viz.engine.cache import CACHE
from bertscore_viz.engine.idf import uniform_weights
from tests import numpy_reference as sim_ops

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
    """Batch composition changes nothing in the matching: each pair alone, on the same (cached) vectors, equals the
    pair inside the mixed call to the bit (cosines summed in float64)."""
    cands, refs = mixed
    s = Scorer(layer=4)
    together = s.score(cands, refs)
    for i in (0, 5, len(cands) - 1, len(cands) - 4):
        alone = s.score([cands[i]], [refs[i]])
        assert alone.f1[0] == together.f1[i] and alone.precision[0] == together.precision[i]


def test_a_pair_embedded_alone_scores_as_in_a_mixed_batch(mixed):
    """The forward pass batched too: with a fresh private cache each pair is embedded alone (a batch of two
    sentences) and once in the mixed call's length-sorted batches. A forward pass rounds a sentence differently in
    another batch by a few 1e-8, so this holds to 1e-6, not to the bit."""
    cands, refs = mixed
    s = Scorer(layer=4)
    enc = s.encoder
    def distinct(texts):  # one cache lookup per token-id sequence
        return len({t.ids.tobytes() for t in enc.encode(texts)})

    with enc.private_cache():
        together = s.score(cands, refs)
        assert enc.cache.hits == 0 and enc.cache.misses == distinct(cands + refs)  # really embedded here
    for i in (0, 5, len(cands) - 1, len(cands) - 4):
        with enc.private_cache():
            alone = s.score([cands[i]], [refs[i]])
            assert enc.cache.hits == 0 and enc.cache.misses == distinct([cands[i], refs[i]])
        np.testing.assert_allclose([alone.precision[0], alone.recall[0], alone.f1[0]],
                                   [together.precision[i], together.recall[i], together.f1[i]], atol=1e-6)


def _with_warnings(fn):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BertScoreWarning)
        return fn()


@pytest.mark.parametrize("options, references", [
    ({"layer": 4}, "one"),
    ({"layer": 6, "idf": True}, "one"),
    ({"layer": 6, "idf": True, "rescale": True}, "several"),
    ({"layer": 4, "idf_sentences": ["the", "The the"]}, "several"),  # idf("the") = 0: degenerate, NaN P or R
], ids=["plain", "idf", "idf-several-rescaled", "degenerate-idf"])
def test_score_on_the_device_equals_the_per_token_maxima_path(mixed, baseline_path, options, references):
    """Scorer.score (P/R/F of each pair on the device, (n_pairs, 3) back to the host) against
    Scorer.result(Scorer.match(...)) (per-token maxima back to the host, P/R/F pair by pair in numpy): the same
    numbers to 1e-9, the same NaNs, the same best references and the same warnings, with empty sentences."""
    cands, refs = mixed
    cands = cands + ["", "the the", "the", "A cat."]
    refs = refs + ["A reference.", "", "the", "the"]
    n = len(cands)
    groups = [[refs[i]] for i in range(n)] if references == "one" else \
        [[refs[i], refs[(i + 1) % n], refs[(i + 7) % n]][: 1 + i % 3] for i in range(n)]
    kwargs = dict(options)
    if kwargs.pop("rescale", False):
        kwargs.update(rescale_with_baseline=True, baseline_path=baseline_path)
    s = Scorer(**kwargs)
    new = _with_warnings(lambda: s.score(cands, groups))
    old = s.result(s.match(cands, groups))
    for name in ("precision", "recall", "f1", "raw_precision", "raw_recall", "raw_f1"):
        a, b = getattr(new, name), getattr(old, name)
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b), err_msg=name)
        np.testing.assert_allclose(a, b, atol=1e-9, rtol=0, err_msg=name)
    np.testing.assert_array_equal(new.best_reference, old.best_reference)
    assert new.warnings == old.warnings and new.signature == old.signature
    assert any("empty candidate" in m for m in new.warnings) and any("empty reference" in m for m in new.warnings)
    if "idf_sentences" in options:
        assert np.isnan(new.raw_precision).any() and any("degenerate" in m for m in new.warnings)
