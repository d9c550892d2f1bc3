"""idf weights: the toy of BERTSCORE.md by hand, then through the bundled model's real tokenizer."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bertscore_viz import Scorer
from bertscore_viz.engine.idf import compute_idf, uniform_weights

CLS, SEP = 101, 102
A, CAT, DOG, THE, UNSEEN = 1037, 4937, 3899, 1996, 7592

# documents "a cat", "a dog", "the cat": M = 3
# df(a) = df(cat) = 2 -> ln(4/3) = 0.287682; df(dog) = df(the) = 1 -> ln(4/2) = 0.693147;
# df(CLS) = df(SEP) = 3 -> ln(4/4) = 0; a token in no document -> ln(M + 1) = ln 4 = 1.386294
TOY_DOCS = [[CLS, A, CAT, SEP], [CLS, A, DOG, SEP], [CLS, THE, CAT, SEP]]
TOY_IDF = {A: 0.287682, CAT: 0.287682, DOG: 0.693147, THE: 0.693147, CLS: 0.0, SEP: 0.0}


def test_toy_idf_by_hand():
    w = compute_idf(TOY_DOCS)
    assert w.num_documents == 3
    for token, value in TOY_IDF.items():
        assert w.weights[token] == pytest.approx(value, abs=1e-6)
    assert w.unseen == pytest.approx(1.386294, abs=1e-6)
    assert w.unseen == pytest.approx(math.log(4 / 1), abs=1e-12)


def test_toy_idf_weights_of_a_sentence():
    w = compute_idf(TOY_DOCS)
    got = w(np.array([CLS, THE, DOG, UNSEEN, SEP]))
    np.testing.assert_allclose(got, [0.0, 0.693147, 0.693147, 1.386294, 0.0], atol=1e-6)
    assert got.dtype == np.float64


def test_repeated_token_in_one_document_counts_once():
    # "cat cat" is one document containing cat: df(cat) = 1 of M = 2 -> ln(3/2)
    w = compute_idf([[CLS, CAT, CAT, SEP], [CLS, DOG, SEP]])
    assert w.weights[CAT] == pytest.approx(math.log(3 / 2))


def test_duplicate_documents_count_separately():
    # as bert-score: two copies of "a cat" are two documents; M = 2, df(cat) = 2 -> ln(3/3) = 0
    w = compute_idf([[CLS, A, CAT, SEP], [CLS, A, CAT, SEP]])
    assert w.num_documents == 2
    assert w.weights[CAT] == 0.0
    assert w.unseen == pytest.approx(math.log(3))


def test_compute_idf_accepts_a_generator_and_does_not_touch_input():
    docs = [np.array(d) for d in TOY_DOCS]
    before = [d.copy() for d in docs]
    w = compute_idf(d for d in docs)
    assert w.num_documents == 3
    for d, b in zip(docs, before):
        np.testing.assert_array_equal(d, b)


def test_uniform_weights():
    np.testing.assert_array_equal(uniform_weights(np.array([CLS, A, CAT, SEP]), [CLS, SEP]), [0, 1, 1, 0])


@pytest.fixture(scope="module")
def scorer():
    return Scorer(layer=4, idf=True)


def test_toy_idf_with_the_real_tokenizer(scorer):
    tok = scorer.encoder.tokenizer
    w = scorer.idf_weights(["a cat", "a dog", "the cat"])
    ids = dict(zip(["a", "cat", "dog", "the"], tok.convert_tokens_to_ids(["a", "cat", "dog", "the"])))
    assert w.weights[ids["cat"]] == pytest.approx(0.287682, abs=1e-6)
    assert w.weights[ids["a"]] == pytest.approx(0.287682, abs=1e-6)
    assert w.weights[ids["dog"]] == pytest.approx(0.693147, abs=1e-6)
    assert w.weights[ids["the"]] == pytest.approx(0.693147, abs=1e-6)
    assert w.weights[tok.cls_token_id] == 0.0
    assert w.weights[tok.sep_token_id] == 0.0
    assert w.unseen == pytest.approx(1.386294, abs=1e-6)
    # a sentence's weights: CLS, "the", "bird" (unseen), SEP
    sent = scorer.encoder.encode_one("the bird").ids
    np.testing.assert_allclose(w(sent), [0.0, 0.693147, 1.386294, 0.0], atol=1e-6)


def test_explain_uses_the_idf_of_its_references(scorer):
    # idf comes from the references of the call: here the single reference "the cat sat" (M = 1), so its tokens
    # all weigh ln(2/2) = 0 and the candidate's unseen "dog" weighs ln 2
    e = scorer.explain("the dog sat", "the cat sat")
    np.testing.assert_allclose(e.cand.weights, [0.0, 0.0, math.log(2), 0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(e.ref.weights, [0.0, 0.0, 0.0, 0.0, 0.0], atol=1e-12)


def test_fixed_idf_sentences():
    s = Scorer(layer=4, idf_sentences=["a cat", "a dog", "the cat"])
    assert s.idf
    tok = s.encoder.tokenizer
    w = s.idf_weights(["completely different references"])
    assert w.weights[tok.convert_tokens_to_ids("dog")] == pytest.approx(0.693147, abs=1e-6)
    assert w.num_documents == 3
