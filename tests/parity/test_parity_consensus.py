"""Consensus matrices, MBR choices and sentence support against the reference tools, on the bundled model.

- bert-score 0.3.13 (``BERTScorer(model_type=<bundled model dir>, num_layers=4)``) scoring the same N x N pairs:
  P, R and F1 to 1e-5 (raw, rescaled, and with the group's idf given to bert-score as its idf), and the MBR choice
  made from its F1 matrix.
- SelfCheckGPT 0.1.7's ``SelfCheckBERTScore.predict`` (its own code), run on the bundled model: its ``bert_score.score``
  call goes to the bert-score scorer above, and its spaCy pipeline is spaCy's rule-based sentencizer
  (``en_core_web_sm`` cannot be downloaded here); our splitter must split the test passages as spaCy does, which is
  checked first. Skipped when selfcheckgpt or spaCy is not installed.
- mbrs 0.1.8's ``DecoderMBR`` with its ``MetricBERTScore`` on the bundled model (loaded by ``bench/bench_mbr.py``'s
  ``load_mbrs``, which says what it shims): the same choices. mbrs and SelfCheckGPT come from requirements-parity.txt.

The inputs are the benchmark's (``bench_mbr.make_inputs``): WMT16 system outputs and edited neighbours of them.
"""

from __future__ import annotations

import importlib
import sys
import warnings

import numpy as np
import pytest
import spacy

from bertscore_viz import Scorer
from bertscore_viz.consensus import consensus, split_sentences

from .conftest import ATOL, MODEL, ROOT, no_negative_best, read_lines

sys.path.insert(0, str(ROOT / "bench"))
import bench_mbr  # noqa: E402 (the benchmark's inputs and its mbrs loader)

LAYER = 4


@pytest.fixture(scope="module")
def groups():
    """Inputs of 2 to 9 samples (a duplicate in one), with no negative best match (bert-score's padded zeros would
    then change its numbers: test_parity_differences.py)."""
    out = []
    for k, n in enumerate((2, 5, 9, 6)):
        out += bench_mbr.make_inputs(1, n, sentences=1 + k % 2, seed=100 + k)[0]
    out[1] = out[1] + [out[1][0]]
    cands = [a for g in out for a in g for _ in g]
    refs = [b for g in out for _ in g for b in g]
    stats = Scorer(layer=LAYER).match(cands, refs)
    assert len(no_negative_best(stats, LAYER)) == len(cands)
    return out


def flat_pairs(groups):
    return [a for g in groups for a in g for _ in g], [b for g in groups for _ in g for b in g]


def split_by_group(values, groups):
    out, k = [], 0
    for g in groups:
        out.append(np.asarray(values[k:k + len(g) ** 2]).reshape(len(g), len(g)))
        k += len(g) ** 2
    return out


def assert_matrices(res, theirs, groups):
    p, r, f = (split_by_group(x, groups) for x in theirs)
    for g, pg, rg, fg in zip(res, p, r, f):
        np.testing.assert_allclose(g.matrices.precision, pg, atol=ATOL, rtol=0)
        np.testing.assert_allclose(g.matrices.recall, rg, atol=ATOL, rtol=0)
        np.testing.assert_allclose(g.matrices.f1, fg, atol=ATOL, rtol=0)


def test_matrices_and_choices_equal_bert_score(groups, reference_score):
    res = consensus(groups, scorer=Scorer(layer=LAYER), token_support=False)
    theirs = reference_score(*flat_pairs(groups), LAYER)
    assert_matrices(res, theirs, groups)
    for g, f in zip(res, split_by_group(theirs[2], groups)):
        n = len(f)
        eu = [sum(f[i][j] for j in range(n) if j != i) / (n - 1) for i in range(n)]
        np.testing.assert_allclose(g.expected_utility, eu, atol=ATOL)
        assert g.chosen == max(range(n), key=lambda i: (eu[i], -i))


def test_rescaled_matrices_equal_bert_score(groups, reference_score, baseline_path):
    scorer = Scorer(layer=LAYER, rescale_with_baseline=True, baseline_path=baseline_path)
    res = consensus(groups, scorer=scorer, utility="recall", token_support=False)
    theirs = reference_score(*flat_pairs(groups), LAYER, baseline_path=baseline_path)
    assert_matrices(res, theirs, groups)


def test_group_idf_equals_bert_score_with_the_same_idf_sentences(groups, reference_scorer):
    res = consensus(groups, scorer=Scorer(layer=LAYER, idf=True), token_support=False)
    theirs = reference_scorer(LAYER, idf=True)
    for g, samples in zip(res, groups):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "Overwriting the previous importance weights."
            theirs.compute_idf(list(dict.fromkeys(samples)))  # each distinct sample one document
            p, r, f = theirs.score(*flat_pairs([samples]))
        n = len(samples)
        np.testing.assert_allclose(g.matrices.precision, p.numpy().reshape(n, n), atol=ATOL)
        np.testing.assert_allclose(g.matrices.f1, f.numpy().reshape(n, n), atol=ATOL)


def test_mbrs_makes_the_same_choices(groups):
    decoder = bench_mbr.load_mbrs()(MODEL, LAYER)  # requirements-parity.txt installs mbrs
    res = consensus(groups, scorer=Scorer(layer=LAYER), token_support=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for g, samples in zip(res, groups):
            out = decoder.decode(samples, samples, nbest=1)
            assert out.idx[0] == g.chosen
            n = len(samples)  # mbrs averages over all N pseudo-references, the sample itself included
            mean_all = ((n - 1) * g.expected_utility[g.chosen] + g.matrices.f1[g.chosen, g.chosen]) / n
            assert out.score[0] == pytest.approx(mean_all, abs=ATOL)


def passages() -> list[str]:
    """A response and five sampled passages: consecutive newstest sentences, each passage leaving some out and
    one adding a sentence of its own; a short sentence (3 tokens: no evidence) in two. Sentences opening with a
    quote are left out: spaCy's sentencizer gives the quote to the sentence before."""
    lines = [line for line in read_lines("reference", "de-en")[200:240] if not line.startswith('"')][:12]
    picks = [[0, 1, 2], [0, 2], [1, 2, 3], [0, 1, 9], [2, 1], [0, 11]]
    out = []
    for k, pick in enumerate(picks):
        sents = [lines[i] for i in pick]
        if k in (1, 4):
            sents.insert(1, "It rained.")
        out.append(" ".join(sents))
    return out


@pytest.mark.parametrize("rescale", [False, True])
def test_sentence_support_equals_selfcheckgpt(reference_scorer, baseline_path, monkeypatch, rescale):
    modeling = importlib.import_module("selfcheckgpt.modeling_selfcheck")  # requirements-parity.txt
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    texts = passages()
    for text in texts:  # the same sentences and evidence as spaCy, so that only the scoring is compared
        ours = split_sentences(text)
        theirs = [s for s in nlp(text).sents]
        assert [s.text for s in ours] == [s.text.strip() for s in theirs]
        assert [s.evidence for s in ours] == [len(s) > 3 for s in theirs]
    base = baseline_path if rescale else None

    def bert_score_on_the_bundled_model(cands, refs, lang=None, verbose=False, rescale_with_baseline=False):
        assert rescale_with_baseline == rescale
        return reference_scorer(LAYER, False, base).score(cands, refs)

    monkeypatch.setattr(modeling.bert_score, "score", bert_score_on_the_bundled_model)
    checker = modeling.SelfCheckBERTScore.__new__(modeling.SelfCheckBERTScore)  # its __init__ loads en_core_web_sm
    checker.nlp, checker.default_model, checker.rescale_with_baseline = nlp, "en", rescale
    scorer = Scorer(layer=LAYER, rescale_with_baseline=rescale, baseline_path=base)
    g = consensus([texts], scorer=scorer, sentence_support=True)[0]
    for i, text in enumerate(texts):
        sentences = [s.text.strip() for s in nlp(text).sents]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = checker.predict(sentences, [t for j, t in enumerate(texts) if j != i])
        np.testing.assert_allclose(g.sentence_support[i].inconsistency, want, atol=ATOL, rtol=0)
