"""explain() uses the idf the Scorer already has (issue 40): a pair explained after score() equals that call's row
(the README's first example gave R = NaN, F1 = 0: idf from the one reference of the explained pair), fixed idf still
wins, idf from one reference alone is said with a warning, not only in ``pair.warnings``."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from bertscore_viz import Scorer
from bertscore_viz.engine.scorer import BertScoreWarning

CANDS = ["people like foreign cars", "the weather is cold today", "he plays the piano well",
         "the cat sat on the mat", "a dog barked at the mailman"]
REFS = ["consumers prefer imported cars", "it is cold today", "he is a good pianist", "there is a cat on the mat",
        "the postman was barked at by a dog"]


@pytest.mark.parametrize("rescale", [False, True])
def test_explain_after_score_equals_that_calls_row(rescale):
    sc = Scorer(idf=True, rescale_with_baseline=rescale)
    res = sc.score(CANDS, REFS)
    for i in range(len(CANDS)):
        with warnings.catch_warnings():
            warnings.simplefilter("error", BertScoreWarning)
            pair = sc.explain(CANDS[i], REFS[i])
        got = pair.rescaled if rescale else np.array([pair.precision, pair.recall, pair.f1])
        want = np.array([res.precision[i], res.recall[i], res.f1[i]])
        # 1e-6: the pair's vectors may come from another batch than the call's (the embedding cache is shared by
        # every test of this process, in whatever order they run); the idf of one reference alone moves R by far more
        np.testing.assert_allclose(got, want, atol=1e-6)
        assert np.all(np.isfinite(got))


def test_match_sets_the_idf_too_and_fixed_idf_wins():
    sc = Scorer(idf=True)
    stats = sc.match(CANDS, REFS)
    row = sc.result(stats)
    pair = sc.explain(CANDS[0], REFS[0])
    # 1e-6: the pair's vectors may come from another batch than the call's (the cache is shared by every test of
    # this process, in whatever order they run); a wrong idf moves F1 by far more
    assert pair.f1 == pytest.approx(row.f1[0], abs=1e-6)
    fixed = Scorer(idf=True, idf_sentences=REFS[:2])
    fixed.score(CANDS, REFS)
    want = Scorer(idf=True, idf_sentences=REFS[:2]).explain(CANDS[3], REFS[3])
    assert fixed.explain(CANDS[3], REFS[3]).f1 == pytest.approx(want.f1, abs=1e-6)


def test_idf_from_one_reference_alone_is_warned():
    sc = Scorer(idf=True)
    with pytest.warns(BertScoreWarning, match="idf is degenerate"):
        pair = sc.explain("people like foreign cars", "consumers prefer imported cars")
    assert np.isnan(pair.recall) and pair.f1 == 0.0  # bert-score's numbers for that case
    with warnings.catch_warnings():
        warnings.simplefilter("error", BertScoreWarning)
        Scorer().explain("people like foreign cars", "consumers prefer imported cars")  # no idf: nothing to say
