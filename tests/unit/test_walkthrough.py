"""Issue 20: the walkthrough's steps equal the engine's numbers (Scorer.score, to 1e-6) for every setting, with the
shapes it states; the identical pair scores 1; the worked example's recall is the larger of its two similarities;
the downloadable plain-torch script reproduces the numbers."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest

from bertscore_viz import InputError, Scorer
from bertscore_viz.engine import walkthrough as wt

CANDS = [c for c, _ in wt.DEFAULT_BATCH]
REFS = [r for _, r in wt.DEFAULT_BATCH]


@pytest.fixture(scope="module", params=[{}, {"idf": True}, {"rescale_with_baseline": True}, {"layer": 2},
                                        {"idf": True, "rescale_with_baseline": True, "layer": 6}],
                ids=["plain", "idf", "rescaled", "layer2", "all"])
def case(request):
    scorer = Scorer(**request.param)
    return scorer, wt.compute(scorer, CANDS, REFS)


def test_every_number_is_the_engines(case):
    scorer, w = case
    res = scorer.score(CANDS, REFS)
    np.testing.assert_allclose(w.precision, res.raw_precision, atol=1e-6)
    np.testing.assert_allclose(w.recall, res.raw_recall, atol=1e-6)
    np.testing.assert_allclose(w.f1, res.raw_f1, atol=1e-6)
    if scorer.rescale_with_baseline:
        np.testing.assert_allclose(w.rescaled, np.stack([res.precision, res.recall, res.f1], axis=1), atol=1e-6)
        np.testing.assert_array_equal(w.baseline, res.baseline)
    else:
        assert w.rescaled is None
    assert w.signature == str(res.signature) and w.layer == scorer.layer


def test_shapes_masks_and_the_sanity_pair(case):
    scorer, w = case
    b, tc, tr, h = 4, w.cand.ids.shape[1], w.ref.ids.shape[1], scorer.encoder.hidden_size
    assert w.cand.ids.shape == w.cand.mask.shape == w.cand.weights.shape == w.cand.best.shape == (b, tc)
    assert w.cand.vectors.shape == (b, tc, h) and w.ref.vectors.shape == (b, tr, h)
    assert w.similarity.shape == (b, tc, tr)
    assert np.isnan(w.similarity[~(w.cand.mask[:, :, None] & w.ref.mask[:, None, :])]).all()  # padding masked
    lengths = np.linalg.norm(w.cand.vectors, axis=-1)
    np.testing.assert_allclose(lengths[w.cand.mask], 1.0, atol=1e-5)
    assert (w.cand.norms[w.cand.mask] > 1).all() and (w.cand.weights[w.cand.special] == 0).all()
    np.testing.assert_allclose(w.cand.best, np.where(w.cand.mask, np.nanmax(w.similarity, axis=2), 0), atol=1e-6)
    np.testing.assert_allclose(w.ref.best, np.where(w.ref.mask, np.nanmax(w.similarity, axis=1), 0), atol=1e-6)
    assert abs(w.f1[3] - 1.0) < 1e-6  # "Rain is expected tomorrow." against itself


def test_the_formula_terms_add_up_to_p_and_r(case):
    _, w = case
    for i in range(w.batch):
        terms = wt.pair_terms(w, i)
        for side, letter in (("precision", "P"), ("recall", "R")):
            num = sum(wgt * s for _, _, s, wgt in terms[side])
            den = sum(wgt for *_, wgt in terms[side])
            assert num / den == pytest.approx(terms[letter], abs=1e-9)


def test_idf_is_counted_from_the_batchs_references():
    w = wt.compute(Scorer(idf=True), CANDS, REFS)
    assert w.idf["M"] == 4 and w.idf["df"]["[CLS]"] == 4 and w.idf["weight"]["[CLS]"] == 0
    assert w.idf["df"]["rain"] == 1 and w.idf["weight"]["rain"] == pytest.approx(np.log(5 / 2))
    assert w.idf["unseen"] == pytest.approx(np.log(5))


def test_idf_from_a_corpus_counts_the_corpus():
    corpus = ["The cat sat on the mat.", "Rain, rain and rain.", "It is cold."]
    scorer = Scorer(idf_sentences=corpus)
    w = wt.compute(scorer, CANDS, REFS)
    np.testing.assert_allclose(w.f1, scorer.score(CANDS, REFS).raw_f1, atol=1e-6)
    assert w.idf["M"] == 3 and w.idf["source"] == "a corpus of 3 sentences"
    assert w.idf["df"]["rain"] == 1 and w.idf["df"]["the"] == 1 and w.idf["df"]["weather"] == 0


def test_the_worked_example_recall_is_the_larger_similarity():
    w = wt.compute(Scorer(), [wt.WORKED_EXAMPLE[0]], [wt.WORKED_EXAMPLE[1]])
    toks = w.cand.tokens[0]
    alphabet = w.ref.tokens[0].index("alphabet")
    writing, system = toks.index("writing"), toks.index("system")
    best = max(w.similarity[0, writing, alphabet], w.similarity[0, system, alphabet])
    assert w.recall[0] == pytest.approx(best, abs=1e-6)  # one real reference token: R is its best match


@pytest.mark.slow
def test_the_script_reproduces_the_numbers(case, tmp_path):
    scorer, w = case
    path = tmp_path / "walk.py"
    path.write_text(wt.reproduction_script(w, scorer.spec.source), encoding="utf-8")
    out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.strip().splitlines()
    assert len(lines) == 4
    for i, line in enumerate(lines):
        numbers = [float(x) for x in re.findall(r"-?\d+\.\d{6}", line)]
        assert numbers[:3] == pytest.approx([w.precision[i], w.recall[i], w.f1[i]], abs=1e-6)
        if w.rescaled is not None:
            assert numbers[3:] == pytest.approx(list(w.rescaled[i]), abs=1e-6)


def test_the_gradient_has_one_value_per_candidate_token():
    scorer = Scorer()
    w = wt.compute(scorer, CANDS, REFS)
    grad = wt.candidate_gradient(scorer, w, 0)
    assert grad.shape == (int(w.cand.lengths[0]),) and np.isfinite(grad).all() and grad.max() > 0


def test_too_many_pairs_or_several_references_are_refused():
    with pytest.raises(InputError, match="at most 16 pairs"):
        wt.compute(Scorer(), ["a"] * 17, ["b"] * 17)
    with pytest.raises(InputError, match="one reference per candidate"):
        wt.compute(Scorer(), ["a"], [["b", "c"]])
