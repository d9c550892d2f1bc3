"""Bad and awkward input: clear errors for what cannot be scored, scores plus warnings for what can."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from bertscore_viz import BertScoreWarning, InputError, ModelError, Scorer, score
from bertscore_viz.engine.scorer import normalize_inputs

LONG = " ".join(["evaluation"] * 300 + ["metric"] * 300)  # 600 words, > 512 tokens


@pytest.fixture(scope="module")
def scorer():
    return Scorer(layer=4)


# --- errors -----------------------------------------------------------------------------------------------------
def test_mismatched_lengths_name_both(scorer):
    with pytest.raises(InputError) as info:
        scorer.score(["a", "b", "c"], ["a", "b", "c", "d"])
    assert "3 candidates and 4 references" in str(info.value)


def test_mismatched_lengths_with_several_references(scorer):
    with pytest.raises(InputError, match="2 candidates and 1 references"):
        scorer.score(["a", "b"], [["a", "b"]])


@pytest.mark.parametrize(
    "cands, refs, words",
    [
        (["ok", None], ["a", "b"], ["candidate", "index 1", "NoneType"]),
        ([1.5], ["a"], ["candidate", "index 0", "float"]),
        (["a"], [3], ["Reference 0", "int"]),
        (["a"], [["x", None]], ["reference of candidate 0", "index 1", "NoneType"]),
        ("one string", ["a"], ["single string", "Wrap it in a list"]),
        (["a"], "one string", ["single string"]),
        (["a"], [[]], ["Candidate 0", "empty list of references"]),
    ],
)
def test_non_string_input_is_a_clear_error(scorer, cands, refs, words):
    with pytest.raises(InputError) as info:
        scorer.score(cands, refs)
    for w in words:
        assert w in str(info.value)


def test_explain_rejects_non_strings(scorer):
    with pytest.raises(InputError, match="candidate to be a string"):
        scorer.explain(None, "a")
    with pytest.raises(InputError, match="index 1"):
        scorer.explain("a", ["b", 2])
    with pytest.raises(InputError, match="at least one reference"):
        scorer.explain("a", [])


def test_errors_are_value_errors_of_the_engine(scorer):
    # one base class to catch in the app, and ValueError for callers that catch that
    with pytest.raises(ValueError):
        scorer.score(["a"], [])


def test_bad_options():
    with pytest.raises(InputError, match="batch_size"):
        Scorer(layer=4, batch_size=0)
    with pytest.raises(ModelError, match="0 to 6"):
        Scorer(layer=7).score(["a"], ["b"])
    with pytest.raises(ModelError, match="0 or more"):
        Scorer(layer=-1)
    with pytest.raises(ModelError, match="fp32"):
        Scorer(layer=4, precision="fp8").score(["a"], ["b"])


def test_normalize_inputs_shapes():
    cands, groups = normalize_inputs(("x", "y"), ["r", ["r1", "r2"]])
    assert cands == ["x", "y"]
    assert groups == [["r"], ["r1", "r2"]]


def test_no_candidates(scorer):
    res = scorer.score([], [])
    assert len(res) == 0 and res.f1.shape == (0,)


# --- soft problems: a score and a warning -----------------------------------------------------------------------
def _score_with_warnings(s: Scorer, cands, refs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = s.score(cands, refs)
    return res, [str(w.message) for w in caught if issubclass(w.category, BertScoreWarning)]


def test_empty_sides_score_zero_with_warnings(scorer):
    # our documented behaviour for empty strings (bert-score crashes on them under transformers 5): an empty or
    # whitespace-only side has only CLS/SEP, so P = R = F1 = 0, and the result says which ones
    res, caught = _score_with_warnings(scorer, ["", "The cat sat.", "   ", "fine"], ["A dog.", "", "x", "fine"])
    np.testing.assert_array_equal(res.f1[:3], [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(res.precision[:3], [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(res.recall[:3], [0.0, 0.0, 0.0])
    assert res.f1[3] > 0.99
    assert any("2 empty candidate(s)" in w and "index 0, 2" in w for w in res.warnings)
    assert any("1 empty reference(s)" in w and "index 1" in w for w in res.warnings)
    assert caught == list(res.warnings)


def test_empty_pair_explained(scorer):
    e = scorer.explain("", "There is a cat.")
    assert (e.precision, e.recall, e.f1) == (0.0, 0.0, 0.0)
    assert any("candidate is empty" in w for w in e.warnings)
    assert e.cand.tokens == ("[CLS]", "[SEP]")


def test_empty_side_rescaled(tmp_path):
    p = tmp_path / "b.tsv"
    p.write_text("LAYER,P,R,F\n" + "".join(f"{i},0.5,0.5,0.5\n" for i in range(7)), encoding="utf-8")
    res, _ = _score_with_warnings(Scorer(layer=4, rescale_with_baseline=True, baseline_path=str(p)), [""], ["x"])
    # raw 0, rescaled (0 - 0.5) / 0.5 = -1, as bert-score rescales its zeros
    assert res.raw_f1[0] == 0.0 and res.f1[0] == -1.0


def test_degenerate_idf_warns_and_says_so(scorer):
    # idf from a single reference: every reference token is in all (one) documents -> weights 0 -> R = NaN, F = 0
    s = Scorer(layer=4, idf=True)
    res, caught = _score_with_warnings(s, ["the dog sat"], ["the cat sat"])
    assert np.isnan(res.raw_recall[0])
    assert res.raw_f1[0] == 0.0
    assert res.raw_precision[0] > 0  # "dog" is unseen: weight ln 2
    assert len(caught) == 1 and "idf is degenerate" in caught[0] and "candidate index 0" in caught[0]
    assert "NaN" in caught[0] and "turn idf off" in caught[0]
    e = s.explain("the dog sat", "the cat sat")
    assert any("idf is degenerate" in w for w in e.warnings)


def test_identical_references_make_idf_degenerate():
    res, caught = _score_with_warnings(Scorer(layer=4, idf=True), ["a b", "c d"], ["same words", "same words"])
    assert np.isnan(res.raw_recall).all()
    assert "2 pair(s)" in caught[0]


def test_truncation_warns_naming_the_segments(scorer):
    res, caught = _score_with_warnings(scorer, ["short one", LONG, "x"], ["short two", "y", LONG])
    msgs = " | ".join(res.warnings)
    assert "1 candidate(s) longer than the model's maximum length were truncated" in msgs
    assert "index 1" in msgs
    assert "1 reference(s) longer" in msgs and "candidate index 2" in msgs
    assert caught == list(res.warnings)
    e = scorer.explain(LONG, "y")
    assert e.cand.truncated and len(e.cand) == 512
    assert any("truncated to the model's maximum of 512 tokens" in w for w in e.warnings)


def test_truncation_keeps_the_head(scorer):
    # everything after token 512 is dropped: two texts that agree on their first 600 words score the same
    tail_a = LONG + " apples and oranges"
    tail_b = LONG + " completely different ending here"
    res, _ = _score_with_warnings(scorer, [tail_a, tail_b], ["evaluation metric", "evaluation metric"])
    assert res.f1[0] == pytest.approx(res.f1[1], abs=1e-7)


def test_whitespace_is_stripped_like_the_reference(scorer):
    a = scorer.score(["  The cat sat.\t"], ["\nA cat.  "])
    b = scorer.score(["The cat sat."], ["A cat."])
    np.testing.assert_allclose(a.f1, b.f1, atol=1e-7)


def test_score_function_accepts_tuples_and_generators_of_strings():
    res = score(tuple(["The cat sat."]), (r for r in ["A cat sat."]), layer=4)
    assert len(res) == 1 and 0 < res.f1[0] < 1
