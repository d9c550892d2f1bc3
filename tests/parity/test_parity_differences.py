"""Where bert-score 0.3.13 is wrong (BERTSCORE.md, "Where the reference is wrong"): each difference, pinned.

Every test shows what the reference does and what we do instead, and why.
"""

from __future__ import annotations

import warnings

import bert_score
import numpy as np
import pytest

from bertscore_viz import BaselineError, InputError, Scorer

from .conftest import ATOL, MODEL

# At layer 6, the reference tokens of an ordinary sentence are all a little *dissimilar* (negative cosine) to every
# token of "}" (found by scanning code-like strings; see BERTSCORE.md on code-like text).
CODE_CAND = "}"
PLAIN_REF = "The quick brown fox jumps over the lazy dog."
LONGER_CAND = "A much longer candidate sentence that forces the short candidate to be padded in its batch."


def test_padding_zero_changes_the_reference_score_with_batching(reference_score):
    """bert-score multiplies padded cells by 0, so when a token's real similarities are all negative and the other
    side was padded in its batch, its "best match" is the padding's 0. Its score then depends on which pairs share
    a batch. Ours is the true maximum over real tokens, independent of batching."""
    s = Scorer(layer=6)
    e = s.explain(CODE_CAND, PLAIN_REF)
    assert e.ref_best.min() < 0  # the premise: some reference token's best real match is negative

    alone = s.score([CODE_CAND], [PLAIN_REF])
    batched = s.score([CODE_CAND, LONGER_CAND], [PLAIN_REF, "Short."])
    assert batched.recall[0] == pytest.approx(alone.recall[0], abs=1e-12)  # ours: batching does not matter
    assert alone.recall[0] == pytest.approx(e.recall, abs=1e-12)

    # the reference alone (no padding) agrees with us ...
    p, r, f = reference_score([CODE_CAND], [PLAIN_REF], 6)
    assert r[0] == pytest.approx(alone.recall[0], abs=ATOL)
    # ... but in a batch where "}" is padded its recall rises: negative maxima became 0
    p2, r2, f2 = reference_score([CODE_CAND, LONGER_CAND], [PLAIN_REF, "Short."], 6)
    assert r2[0] - r[0] > 1e-3
    w = e.ref.normalized_weights
    clipped = float(np.nansum(w * np.maximum(e.ref_best, 0.0)))
    assert r2[0] == pytest.approx(clipped, abs=ATOL)  # exactly the padded-zero effect, nothing else
    assert p2[0] == pytest.approx(p[0], abs=ATOL)  # precision: the reference side was not padded


def test_missing_baseline_is_an_error_not_unrescaled_scores(capfd):
    """bert_score.score prints a warning and returns *unrescaled* scores whose hash says "rescaled". We raise,
    naming the file that was looked for, the model and how to compute a baseline."""
    (p, r, f), hash_code = bert_score.score(["The cat sat."], ["A cat sat."], model_type=MODEL, num_layers=4,
                                            lang="zz", rescale_with_baseline=True, return_hash=True)
    raw = Scorer(layer=4).score(["The cat sat."], ["A cat sat."])
    assert float(f[0]) == pytest.approx(raw.f1[0], abs=ATOL)  # not rescaled ...
    assert hash_code.endswith("-rescaled")  # ... yet labelled rescaled
    assert "Baseline not Found" in capfd.readouterr().err
    with pytest.raises(BaselineError) as info:
        Scorer(layer=4, rescale_with_baseline=True, lang="zz")
    msg = str(info.value)
    assert "baselines/zz/all-MiniLM-L6-v2.tsv" in msg and "python -m bertscore_viz baseline" in msg


def test_empty_strings_crash_the_reference_but_score_zero_here(reference_scorer):
    """Under transformers 5 bert-score's ``sent_encode("")`` calls a tokenizer method that no longer exists.
    We score an empty side 0 with a warning, as bert-score's own code intends."""
    with pytest.raises(AttributeError, match="build_inputs_with_special_tokens"):
        reference_scorer(4).score([""], ["A reference."])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = Scorer(layer=4).score(["", "A candidate."], ["A reference.", ""])
    np.testing.assert_array_equal(res.f1, [0.0, 0.0])
    np.testing.assert_array_equal(res.precision, [0.0, 0.0])
    assert any("empty candidate" in str(w.message) for w in caught)
    assert any("empty reference" in str(w.message) for w in caught)


def test_degenerate_idf_same_numbers_but_a_warning(reference_score):
    """idf from a single reference (or identical references): every reference token has idf 0, so R = 0/0 = NaN
    and F = 0, silently in the reference. Same numbers here, plus a warning."""
    cands = ["the dog sat on a mat", "a cat"]
    refs = ["the cat sat on the mat", "the cat sat on the mat"]
    theirs = reference_score(cands, refs, 4, idf=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ours = Scorer(layer=4, idf=True).score(cands, refs)
    assert np.isnan(theirs[1]).all() and np.isnan(ours.recall).all()
    np.testing.assert_allclose(ours.precision, theirs[0], atol=ATOL, equal_nan=True)
    np.testing.assert_array_equal(ours.f1, theirs[2])
    np.testing.assert_array_equal(ours.f1, [0.0, 0.0])
    assert any("idf is degenerate" in str(w.message) for w in caught)
    assert any("idf is degenerate" in w for w in ours.warnings)


def test_unequal_lengths_are_checked(reference_scorer):
    """BERTScorer.score does not check lengths: it fails inside torch with a message about tensor sizes, or, when
    the extra candidates fall outside the references' batches, silently scores fewer pairs. We raise, giving both
    lengths."""
    ref = reference_scorer(4)
    with pytest.raises(RuntimeError, match="Expected size"):
        ref.score(["one", "two", "three"], ["one", "two"])
    p, r, f = ref.score(["one", "two", "three", "four"], ["one", "two"], batch_size=2)
    assert len(f) == 2  # two candidates dropped without a word
    with pytest.raises(InputError, match="3 candidates and 2 references"):
        Scorer(layer=4).score(["one", "two", "three"], ["one", "two"])


def test_scorer_batch_size_is_honoured(reference_scorer):
    """BERTScorer ignores the batch_size given to its constructor (its score() has its own default, 64). Ours
    uses the constructor's value."""
    ref = bert_score.BERTScorer(model_type=MODEL, num_layers=2, batch_size=1, nthreads=0)
    assert ref.batch_size == 1  # stored ...
    import inspect

    assert inspect.signature(ref.score).parameters["batch_size"].default == 64  # ... but score() uses its own
    assert Scorer(layer=2, batch_size=1).batch_size == 1
