"""The engine end to end on the real bundled model (all-MiniLM-L6-v2, CPU, fp32).

Hand-checkable values from BERTSCORE.md; explain() agreeing with score(); the embedding cache (counted model
passes); the truncated model agreeing with the full one; deduplication; batching and order not changing results;
the public API, the signature, and reduced precision.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import random
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
import transformers

import bertscore_viz
from bertscore_viz import (
    BaselineError,
    InputError,
    ModelError,
    MultiReferenceExplanation,
    PairExplanation,
    Scorer,
    ScoreResult,
    score,
)
from bertscore_viz.engine.cache import CACHE, EmbeddingCache
from bertscore_viz.engine.encoder import Encoder
from bertscore_viz.models.spec import BUNDLED_MODEL_NAME, bundled_model_path, resolve_model

DATA = Path(os.environ.get("BERTSCORE_VIZ_DATA") or Path(__file__).resolve().parents[2] / "data") \
    / "wmt16-da-to-english"

CANDS = ["The cat sat on the mat.", "A quick brown fox jumps over the lazy dog.",
         "He went to the store to buy some milk.", "Machine learning models can be evaluated with BERTScore."]
REFS = ["There is a cat sitting on the mat.", "The quick brown fox leaped over a lazy dog.",
        "She walked to the shop to purchase bread.", "BERTScore is used to evaluate text generation models."]

# BERTSCORE.md, "Hand-checkable values": (layer, idf) -> P, R, F of pairs 0..3
HAND = {
    (6, False): [(.915798, .906159, .910953), (.889763, .892181, .890970), (.534062, .550658, .542233),
                 (.724562, .703332, .713789)],
    (4, False): [(.906293, .868974, .887242), (.909505, .911682, .910592), (.764906, .792583, .778498),
                 (.761120, .734931, .747796)],
    (6, True): [(.878515, .899748, .889005), (.883026, .904339, .893555), (.508991, .541682, .524828),
                (.676752, .697051, .686751)],
}
HAND_TOL = 2e-6  # the table is rounded to 6 decimals


def _wmt_pairs(n: int, lp: str = "de-en", start: int = 0) -> tuple[list[str], list[str]]:
    mt = (DATA / f"DAseg-newstest2016.mt-system.{lp}").read_text(encoding="utf-8").splitlines()
    ref = (DATA / f"DAseg-newstest2016.reference.{lp}").read_text(encoding="utf-8").splitlines()
    return mt[start:start + n], ref[start:start + n]


class ForwardCounter:
    """Counts model passes (and the sentences in them) with a forward hook on the embedding module, which the
    full model and every truncated view share."""

    def __init__(self, encoder: Encoder):
        self.calls = 0
        self.rows = 0
        self._handle = encoder.model.embeddings.register_forward_hook(self._hook)

    def _hook(self, module, args, kwargs_or_output):
        self.calls += 1
        self.rows += int(kwargs_or_output.shape[0])

    def reset(self):
        self.calls = self.rows = 0

    def close(self):
        self._handle.remove()


@pytest.fixture(scope="module")
def s4():
    return Scorer(layer=4)


@pytest.fixture()
def counter(s4):
    c = ForwardCounter(s4.encoder)
    yield c
    c.close()


@pytest.fixture()
def baseline_file(tmp_path):
    p = tmp_path / "all-MiniLM-L6-v2.tsv"
    p.write_text("LAYER,P,R,F\n" + "".join(f"{i},{0.55 + i / 50},{0.5 + i / 50},{0.52 + i / 50}\n"
                                           for i in range(7)), encoding="utf-8")
    return str(p)


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


# --- hand values ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("layer, idf", list(HAND))
def test_bertscore_md_worked_examples(layer, idf):
    res = Scorer(layer=layer, idf=idf).score(CANDS, REFS)
    expected = np.array(HAND[(layer, idf)])
    np.testing.assert_allclose(res.precision, expected[:, 0], atol=HAND_TOL)
    np.testing.assert_allclose(res.recall, expected[:, 1], atol=HAND_TOL)
    np.testing.assert_allclose(res.f1, expected[:, 2], atol=HAND_TOL)


def test_default_layer_is_4_and_score_function():
    assert Scorer().layer == 4
    res = score(CANDS[:1], REFS[:1])
    assert res.f1[0] == pytest.approx(HAND[(4, False)][0][2], abs=HAND_TOL)


def test_layers_in_any_order_in_a_fresh_encoder():
    """Regression: under transformers 5, running a truncated view before the full model once hooked the shared
    blocks twice, and the full model's hidden_states then repeated layers (layer 6 F1 0.865 instead of 0.911)."""
    enc = Encoder(resolve_model(None), device="cpu", cache=EmbeddingCache())
    scorer = Scorer(layer=4, encoder=enc)
    for layer in (0, 4, 6, 2, 6, 4):
        enc.cache.clear()
        res = scorer.result(scorer.match(CANDS, REFS, layers=[layer]), layer=layer)
        assert res.f1.shape == (4,) and np.isfinite(res.f1).all()
        if (layer, False) in HAND:
            np.testing.assert_allclose(res.f1, np.array(HAND[(layer, False)])[:, 2], atol=HAND_TOL)
    enc.cache.clear()
    stats = scorer.match(CANDS, REFS, layers="all")
    for layer in (4, 6):
        np.testing.assert_allclose(scorer.result(stats, layer=layer).f1, np.array(HAND[(layer, False)])[:, 2],
                                   atol=HAND_TOL)


# --- truncated model -----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def reference_model():
    """A separate copy of the bundled model, run in full with output_hidden_states (never truncated)."""
    path = str(bundled_model_path())
    transformers.utils.logging.set_verbosity_error()
    model = transformers.AutoModel.from_pretrained(path, local_files_only=True).eval()
    return model


@pytest.mark.parametrize("depth", [0, 2, 4, 6])
def test_truncated_forward_equals_full_hidden_states(s4, reference_model, depth):
    import torch

    enc = s4.encoder
    texts = ["The cat sat on the mat.", "A much longer sentence, with commas, to force padding in the batch!", "Hi"]
    ids = [t.ids for t in enc.encode(texts)]
    got = enc._forward(ids, range(depth + 1))
    width = max(len(x) for x in ids)
    inp = torch.zeros((len(ids), width), dtype=torch.long)
    mask = torch.zeros((len(ids), width), dtype=torch.long)
    for i, x in enumerate(ids):
        inp[i, :len(x)] = torch.from_numpy(x)
        mask[i, :len(x)] = 1
    with torch.inference_mode():
        hidden = reference_model(input_ids=inp, attention_mask=mask, output_hidden_states=True).hidden_states
    for i, x in enumerate(ids):
        assert len(got[i]) == depth + 1
        for layer in range(depth + 1):
            assert tuple(got[i][layer].shape) == (len(x), 384)
            h = hidden[layer][i, :len(x)].numpy()
            h = h / np.linalg.norm(h, axis=-1, keepdims=True)
            np.testing.assert_allclose(got[i][layer].numpy(), h, atol=1e-5)


# --- explain() agrees with score() ------------------------------------------------------------------------------
def _assert_same(a, b):
    np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("layer", [4, 6])
@pytest.mark.parametrize("idf", [False, True])
@pytest.mark.parametrize("rescale", [False, True])
def test_explain_equals_score_single_reference(layer, idf, rescale, baseline_file):
    kwargs = dict(layer=layer, rescale_with_baseline=rescale, baseline_path=baseline_file if rescale else None)
    if idf:
        kwargs["idf_sentences"] = REFS  # the same idf for the corpus call and each explain call
    s = Scorer(**kwargs)
    res = s.score(CANDS, REFS)
    for i, (c, r) in enumerate(zip(CANDS, REFS)):
        e = s.explain(c, r)
        assert isinstance(e, PairExplanation)
        _assert_same([e.precision, e.recall, e.f1], [res.raw_precision[i], res.raw_recall[i], res.raw_f1[i]])
        _assert_same(e.scores, [res.precision[i], res.recall[i], res.f1[i]])
        if rescale:
            _assert_same(e.rescaled, [res.precision[i], res.recall[i], res.f1[i]])
            _assert_same(e.baseline, res.baseline)
        assert str(e.signature) == str(res.signature)


def test_explain_equals_score_with_idf_from_the_call():
    # idf from the references of the call on both paths: one pair = one reference document (degenerate) ...
    s = Scorer(layer=6, idf=True)
    e = s.explain(CANDS[0], REFS[0])
    res = _quiet(s.score, CANDS[:1], REFS[:1])
    _assert_same([e.precision, e.recall, e.f1], [res.raw_precision[0], res.raw_recall[0], res.raw_f1[0]])
    # ... and several references: idf from those references (a scorer with no call yet: after one, explain takes
    # that call's idf, tests/unit/test_explain_idf.py)
    s = Scorer(layer=6, idf=True)
    refs = [REFS[0], REFS[1], "A cat is on a mat."]
    m = s.explain(CANDS[0], refs)
    res = s.score(CANDS[:1], [refs])
    _assert_same([m.precision, m.recall, m.f1], [res.precision[0], res.recall[0], res.f1[0]])
    np.testing.assert_array_equal(m.best_reference, res.best_reference[0])


@pytest.mark.parametrize("idf", [False, True])
@pytest.mark.parametrize("rescale", [False, True])
def test_explain_equals_score_several_references(idf, rescale, baseline_file):
    s = Scorer(layer=4, idf=idf, rescale_with_baseline=rescale, baseline_path=baseline_file if rescale else None)
    groups = [[REFS[0], "A cat is on a mat.", "The mat has a cat on it."], [REFS[1], REFS[2]]]
    res = s.score(CANDS[:2], groups)
    for i, g in enumerate(groups):
        # idf, when on, comes from this call's references: give explain() the same flattened references
        if idf:
            s2 = Scorer(layer=4, idf_sentences=[r for grp in groups for r in grp], rescale_with_baseline=rescale,
                        baseline_path=baseline_file if rescale else None)
        else:
            s2 = s
        m = s2.explain(CANDS[i], g)
        assert isinstance(m, MultiReferenceExplanation)
        assert len(m.pairs) == len(g)
        _assert_same([m.precision, m.recall, m.f1], [res.raw_precision[i], res.raw_recall[i], res.raw_f1[i]])
        _assert_same(m.scores, [res.precision[i], res.recall[i], res.f1[i]])
        np.testing.assert_array_equal(m.best_reference, res.best_reference[i])
        # each pair's own scores, and the maximum taken per metric
        raw = np.array([[p.precision, p.recall, p.f1] for p in m.pairs])
        _assert_same(raw.max(axis=0), [m.precision, m.recall, m.f1])


def test_multi_reference_max_is_per_metric_on_real_pairs(s4):
    # the maximum of each of P, R, F separately over the single-reference scores, as bert-score does
    refs = [REFS[0], "A cat is on a mat.", "cat"]
    single = s4.score([CANDS[0]] * 3, refs)
    multi = s4.score([CANDS[0]], [refs])
    np.testing.assert_allclose(multi.precision[0], single.precision.max(), atol=1e-12)
    np.testing.assert_allclose(multi.recall[0], single.recall.max(), atol=1e-12)
    np.testing.assert_allclose(multi.f1[0], single.f1.max(), atol=1e-12)
    np.testing.assert_array_equal(multi.best_reference[0],
                                  [single.precision.argmax(), single.recall.argmax(), single.f1.argmax()])


# --- the explanation's parts ------------------------------------------------------------------------------------
def test_contributions_sum_to_precision_and_recall(s4):
    for c, r in zip(CANDS, REFS):
        e = s4.explain(c, r)
        assert e.cand_contribution.sum() == pytest.approx(e.precision, abs=1e-9)
        assert e.ref_contribution.sum() == pytest.approx(e.recall, abs=1e-9)
    e = Scorer(layer=4, idf_sentences=REFS).explain(CANDS[2], REFS[2])
    assert e.cand_contribution.sum() == pytest.approx(e.precision, abs=1e-9)
    assert e.ref_contribution.sum() == pytest.approx(e.recall, abs=1e-9)


def test_special_tokens_weigh_zero_but_take_part_in_matching(s4):
    e = s4.explain(CANDS[0], REFS[0])
    assert e.cand.tokens[0] == "[CLS]" and e.cand.tokens[-1] == "[SEP]"
    np.testing.assert_array_equal(e.cand.special, [True] + [False] * (len(e.cand) - 2) + [True])
    assert e.cand.weights[0] == 0 and e.cand.weights[-1] == 0
    assert e.cand_contribution[0] == 0 and e.ref_contribution[-1] == 0
    # the matrix has the special rows and columns, and the maxima run over them
    assert e.similarity.shape == (len(e.cand), len(e.ref))
    np.testing.assert_allclose(e.cand_best, e.similarity.max(axis=1))
    np.testing.assert_allclose(e.ref_best, e.similarity.max(axis=0))
    # at layer 4 the reference word "There" has the candidate's [SEP] as its best match (BERTSCORE.md pair 0)
    there = e.ref.display.index("There")
    assert e.ref_best_index[there] == len(e.cand) - 1
    assert any("'There'" in n and "[SEP]" in n for n in e.special_best_matches())
    # without the special column its best match would be lower: recall would drop
    real = e.similarity[1:-1, :]
    assert real[:, there].max() < e.ref_best[there]


def test_explanation_tokens_and_display(s4):
    e = s4.explain("  Unbelievable results!  ", "unbelievable")
    # the tokenizer's pieces, and readable text of the stripped input for each
    assert e.cand.tokens[:3] == ("[CLS]", "unbelievable", "results")
    assert e.cand.display[1] == "Unbelievable"
    assert [w for w, _ in e.cand.words()] == ["Unbelievable", "results", "!"]
    assert e.as_dict()["candidate_tokens"][1]["display"] == "Unbelievable"


# --- cache: another layer / idf / rescaling costs no model pass -------------------------------------------------
def test_rescoring_with_other_settings_costs_no_model_pass(counter, baseline_file):
    cands, refs = _wmt_pairs(12, "ro-en", 100)
    CACHE.clear()
    first = Scorer(layer=6).score(cands, refs)
    assert counter.calls >= 1
    assert counter.rows == len(set(cands) | set(refs))
    counter.reset()
    for kwargs in (dict(layer=4), dict(layer=0), dict(layer=6, idf=True), dict(layer=5, idf=True),
                   dict(layer=6, rescale_with_baseline=True, baseline_path=baseline_file),
                   dict(layer=2, idf=True, rescale_with_baseline=True, baseline_path=baseline_file)):
        Scorer(**kwargs).score(cands, refs)
        Scorer(**kwargs).explain(cands[0], refs[0])
    Scorer(layer=6).score(cands, refs)
    assert counter.calls == 0
    # the same numbers as the first time
    np.testing.assert_allclose(Scorer(layer=6).score(cands, refs).f1, first.f1, atol=0)


def test_another_system_against_the_same_references_embeds_only_its_candidates(s4, counter):
    cands, refs = _wmt_pairs(10, "cs-en", 200)
    other, _ = _wmt_pairs(10, "fi-en", 200)
    CACHE.clear()
    s4.score(cands, refs)
    counter.reset()
    s4.score(other, refs)
    assert counter.rows == len(set(other) - set(cands) - set(refs))


def test_match_all_layers_in_one_pass_then_result_for_free(s4, counter):
    cands, refs = _wmt_pairs(8, "tr-en", 40)
    CACHE.clear()
    stats = s4.match(cands, refs, layers="all")
    assert counter.rows == len(set(cands) | set(refs))  # every sentence once (batches split by length)
    assert stats.layers == tuple(range(7))
    counter.reset()
    per_layer = {layer: s4.result(stats, layer=layer) for layer in range(7)}
    idf = s4.result(stats, layer=3, idf=True)
    raw = s4.result(stats, layer=3, baseline=None)
    assert counter.calls == 0
    for layer in (2, 4, 6):
        np.testing.assert_allclose(per_layer[layer].f1, Scorer(layer=layer).score(cands, refs).f1, atol=1e-7)
    np.testing.assert_allclose(idf.f1, Scorer(layer=3, idf=True).score(cands, refs).f1, atol=1e-7)
    assert raw.signature.layer == 3 and not raw.rescaled
    with pytest.raises(ModelError, match="not computed"):
        s4.result(s4.match(cands[:1], refs[:1], layers=[2]), layer=4)


def test_deduplication(s4, counter):
    CACHE.clear()
    res = s4.score(["same cand", "same cand", "other one", "same cand"],
                   ["ref a", "same cand", "ref a", "ref a"])
    assert counter.rows == 3  # three distinct texts
    assert res.f1[0] == res.f1[3]
    assert res.f1[1] == pytest.approx(1.0, abs=1e-6)


def test_texts_with_the_same_token_ids_share_one_model_pass(s4, counter):
    """The model sees only token ids: under the uncased bundled model, case variants and outer whitespace give
    the same ids, so they are embedded once, within a call and across calls."""
    CACHE.clear()
    first = s4.score(["The Cat sat.", "  the cat sat.  "], ["A dog barked.", "a DOG barked."])
    assert counter.rows == 2
    counter.reset()
    again = s4.score(["THE CAT SAT."], ["A Dog Barked."])
    assert counter.rows == 0
    assert first.f1[0] == first.f1[1] == again.f1[0]
    counter.reset()
    s4.score(["The cat sat!"], ["A dog barked."])  # other ids: a model pass
    assert counter.rows == 1


def test_tokenization_in_chunks_equals_one_text_at_a_time(monkeypatch):
    """Texts are tokenized ENCODE_CHUNK at a time (a concurrent short call waits one chunk, not a corpus): the ids,
    truncation flags and counts are those of each text alone, duplicates and cache hits included."""
    from bertscore_viz.engine import tokenizer as tokmod

    spec = resolve_model(None)
    loaded = Encoder(spec).text_tokenizer.tokenizer
    monkeypatch.setattr(tokmod, "ENCODE_CHUNK", 3)
    texts = ["a b c", "  d e  ", "", "a b c", "word " * 600, "f", "g h", "i", "a b c"]
    chunked = tokmod.TextTokenizer(spec, loaded).encode(texts)
    monkeypatch.setattr(tokmod, "ENCODE_CHUNK", 10_000)
    alone = [tokmod.TextTokenizer(spec, loaded).encode([t])[0] for t in texts]
    for a, b in zip(chunked, alone):
        assert (a.ids.tolist(), a.truncated, a.dropped, a.length) == (b.ids.tolist(), b.truncated, b.dropped, b.length)
    assert chunked[4].truncated and chunked[4].dropped == chunked[4].length - len(chunked[4].ids) > 0
    assert chunked[0] is chunked[3] is chunked[8]  # one entry per distinct text


def test_progress_counts_distinct_sentences(s4):
    cands, refs = _wmt_pairs(6, "ru-en", 300)
    CACHE.clear()
    seen = []
    s4.score(cands, refs, progress=lambda done, total: seen.append((done, total)))
    total = len(set(cands) | set(refs))
    assert seen[0] == (0, total) and seen[-1] == (total, total)
    assert all(a <= b for (a, _), (b, _) in zip(seen, seen[1:]))


# --- batching and order do not change results -------------------------------------------------------------------
@pytest.mark.slow
def test_batch_size_token_budget_and_order_do_not_change_results():
    cands, refs = _wmt_pairs(8, "de-en", 300)
    cands = cands + ["Short.", "A rather longer candidate sentence, which pads the others in its batch a lot."]
    refs = refs + ["Brief.", "Tiny"]
    results = []
    for kwargs in (dict(batch_size=64), dict(batch_size=1), dict(batch_size=3), dict(token_budget=60),
                   dict(batch_size=7, token_budget=10_000)):
        CACHE.clear()
        results.append(Scorer(layer=4, **kwargs).score(cands, refs))
    for res in results[1:]:
        np.testing.assert_allclose(res.precision, results[0].precision, atol=1e-6)
        np.testing.assert_allclose(res.recall, results[0].recall, atol=1e-6)
        np.testing.assert_allclose(res.f1, results[0].f1, atol=1e-6)
    order = list(range(len(cands)))
    random.Random(7).shuffle(order)
    CACHE.clear()
    shuffled = Scorer(layer=4, batch_size=4).score([cands[i] for i in order], [refs[i] for i in order])
    np.testing.assert_allclose(shuffled.f1, results[0].f1[order], atol=1e-6)
    np.testing.assert_allclose(shuffled.precision, results[0].precision[order], atol=1e-6)


def test_inputs_are_not_modified(s4):
    cands = list(CANDS)
    refs = [[r] for r in REFS]
    s4.score(cands, refs)
    assert cands == CANDS and refs == [[r] for r in REFS]


# --- API ----------------------------------------------------------------------------------------------------------
def test_public_api_signatures():
    params = inspect.signature(score).parameters
    names = list(params)
    assert names[:10] == ["candidates", "references", "model", "layer", "idf", "rescale_with_baseline", "lang",
                          "baseline_path", "batch_size", "device"]
    defaults = {k: params[k].default for k in names[2:10]}
    assert defaults == {"model": None, "layer": None, "idf": False, "rescale_with_baseline": False, "lang": "en",
                        "baseline_path": None, "batch_size": 64, "device": None}
    scorer_params = inspect.signature(Scorer).parameters
    for name in names[2:10]:
        assert name in scorer_params and scorer_params[name].default == params[name].default
    assert scorer_params["precision"].default == "fp32"
    assert list(inspect.signature(Scorer.score).parameters)[1:3] == ["candidates", "references"]
    assert list(inspect.signature(Scorer.explain).parameters)[1:3] == ["candidate", "reference"]
    assert set(bertscore_viz.__all__) >= {"score", "Scorer", "ScoreResult", "InputError", "BaselineError"}


def test_result_fields(s4):
    res = s4.score(CANDS, [[r, CANDS[i]] for i, r in enumerate(REFS)])
    assert isinstance(res, ScoreResult)
    assert len(res) == 4
    for name in ("precision", "recall", "f1", "raw_precision", "raw_recall", "raw_f1"):
        arr = getattr(res, name)
        assert isinstance(arr, np.ndarray) and arr.shape == (4,) and arr.dtype == np.float64
    np.testing.assert_array_equal(res.f1, res.raw_f1)  # not rescaled
    assert res.baseline is None and not res.rescaled
    assert res.best_reference.shape == (4, 3)
    np.testing.assert_array_equal(res.best_reference, np.ones((4, 3)))  # the candidate itself wins
    assert res.mean() == pytest.approx((res.precision.mean(), res.recall.mean(), res.f1.mean()))
    d = res.as_dict()
    assert set(d) >= {"precision", "recall", "f1", "signature", "warnings", "settings", "baseline"}
    assert d["f1"] == pytest.approx(res.f1.tolist())
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.f1 = None  # frozen


def test_signature_contents(baseline_file):
    tv = transformers.__version__
    version = bertscore_viz.__version__
    base = f"{BUNDLED_MODEL_NAME}_L4_no-idf_version=bertscore-viz-{version}(hug_trans={tv})"
    assert str(Scorer(layer=4).score(CANDS[:1], REFS[:1]).signature) == base
    assert str(Scorer(layer=6, idf=True).signature) == (
        f"{BUNDLED_MODEL_NAME}_L6_idf_version=bertscore-viz-{version}(hug_trans={tv})")
    sig = Scorer(layer=4, rescale_with_baseline=True, baseline_path=baseline_file).signature
    assert str(sig) == base + "-custom-rescaled"
    d = sig.as_dict()
    assert d["model"] == BUNDLED_MODEL_NAME and d["layer"] == 4 and d["idf"] is False and d["rescaled"] is True
    assert d["precision"] == "fp32" and d["transformers_version"] == tv and d["version"] == version
    # the signature of a result follows the setting it was computed with, not the scorer's defaults
    s = Scorer(layer=6)
    stats = s.match(CANDS[:1], REFS[:1], layers="all")
    r2 = s.result(stats, layer=2, idf=True)
    assert "_L2_idf_" in str(r2.signature)


# --- reduced precision ------------------------------------------------------------------------------------------
def test_bf16_on_cpu_is_labelled_and_close_to_fp32(s4):
    cands, refs = _wmt_pairs(10, "fi-en", 50)
    exact = s4.score(cands + CANDS, refs + REFS)
    s = Scorer(layer=4, precision="bf16", device="cpu")
    approx = s.score(cands + CANDS, refs + REFS)
    assert np.abs(approx.f1 - exact.f1).max() < 0.02
    assert np.abs(approx.precision - exact.precision).max() < 0.02
    assert approx.signature.precision == "bf16"
    assert str(approx.signature).endswith("_bf16")
    assert str(s.explain(CANDS[0], REFS[0]).signature).endswith("_bf16")
    # the exact result is not labelled
    assert "bf16" not in str(exact.signature)


def test_fp16_on_cpu_is_a_clear_error():
    # documented: fp16 needs CUDA; on the CPU the error points to bf16 or fp32 (no silent fallback)
    with pytest.raises(ModelError) as info:
        Scorer(layer=4, precision="fp16", device="cpu").score(["a"], ["b"])
    msg = str(info.value)
    assert "CUDA" in msg and "bf16" in msg and "fp32" in msg


def test_cuda_device_without_cuda_is_a_clear_error():
    import torch

    if torch.cuda.is_available():  # pragma: no cover - this machine has no GPU
        return
    with pytest.raises(ModelError, match="CUDA is not available"):
        Scorer(layer=4, device="cuda").score(["a"], ["b"])


def test_missing_baseline_is_an_error_not_unrescaled_scores():
    with pytest.raises(BaselineError):
        score(["a"], ["b"], layer=4, rescale_with_baseline=True, lang="zz")


def test_cache_bound_follows_the_environment_or_physical_memory(monkeypatch):
    from bertscore_viz.engine.cache import default_cache_bytes

    monkeypatch.setenv("BERTSCORE_VIZ_CACHE_MB", "256")
    assert default_cache_bytes() == 256 * 2**20
    monkeypatch.delenv("BERTSCORE_VIZ_CACHE_MB")
    assert 2**30 <= default_cache_bytes() <= 4 * 2**30
    cache = EmbeddingCache(max_bytes=3000)
    for i in range(5):
        cache.put(("m", i), np.zeros(250, dtype=np.float32))  # 1000 bytes each
    assert len(cache) == 3 and cache.nbytes == 3000 and cache.get(("m", 0)) is None


def test_explain_with_the_corpus_idf_equals_the_corpus_score():
    """The Compare page's drill-down explains one segment with idf from every reference of the dataset
    (``idf_sentences``): its numbers are the table's numbers for that segment."""
    cands, refs = _wmt_pairs(12)
    table = Scorer(layer=4, idf=True).score(cands, refs)
    sc = Scorer(layer=4, idf_sentences=list(refs))
    for i in (0, 5, 11):
        pair = sc.explain(cands[i], refs[i])
        assert abs(pair.f1 - table.f1[i]) < 1e-6 and abs(pair.precision - table.precision[i]) < 1e-6
    alone = Scorer(layer=4, idf=True).explain(cands[5], refs[5])  # idf from the pair alone: degenerate
    assert abs(alone.f1 - table.f1[5]) > 1e-3


# --- score(): P/R/F on the device (issue 10) ----------------------------------------------------------------------

def test_weight_vector_and_side_flags_give_the_per_sentence_weights():
    """The (V,) weight vector the device path indexes gives, for every sentence, exactly the weights of
    IdfWeights / uniform_weights; the flags say which sentences are empty or carry no weight."""
    from bertscore_viz.engine.idf import compute_idf, uniform_weights
    from bertscore_viz.engine.matching import side_flags, weight_vector

    docs = [np.array([101, 1, 102]), np.array([101, 2, 102]), np.array([101, 1, 2, 102])]
    idf = compute_idf(docs)
    sentences = docs + [np.array([101, 102]), np.array([101, 1, 2, 102, 5000]), np.array([], dtype=np.int64)]
    vec = weight_vector(idf, {101, 102}, 200)
    assert len(vec) == 200 and vec[5000 % 200] == idf.unseen
    big = weight_vector(idf, {101, 102}, 6000)
    for ids in sentences:
        np.testing.assert_array_equal(big[ids], idf(ids))
        np.testing.assert_array_equal(weight_vector(None, {101, 102}, 6000)[ids], uniform_weights(ids, {101, 102}))
    empty, unweighted = side_flags(sentences, big, {101, 102})
    assert empty.tolist() == [False, False, False, True, False, True]
    assert unweighted.tolist() == [False, False, False, True, False, True]
    everywhere = compute_idf([np.array([101, 7, 102]), np.array([101, 7, 102])])  # idf(7) = 0: degenerate
    _, unweighted = side_flags([np.array([101, 7, 7, 102])], weight_vector(everywhere, {101, 102}, 10), {101, 102})
    assert unweighted.tolist() == [True]


def test_guard_is_held_around_every_model_pass_and_score_stays_on_the_fast_path():
    """A guard (the app's job queue) is told the distinct sentences of each pass and held around it; score() is
    the same device path with or without one, and equals the hand-computed values."""
    import contextlib

    calls, held = [], []

    @contextlib.contextmanager
    def guard(n):
        calls.append(n)
        held.append(True)
        try:
            yield
        finally:
            held.pop()

    plain = Scorer(layer=4).score(CANDS, REFS)
    guarded = Scorer(layer=4, guard=guard)
    res = guarded.score(CANDS, REFS)
    assert calls == [len(set(CANDS) | set(REFS))] and not held
    np.testing.assert_array_equal(res.f1, plain.f1)
    np.testing.assert_allclose(plain.f1, [HAND[(4, False)][i][2] for i in range(len(CANDS))], atol=HAND_TOL)
    guarded.match(CANDS, REFS)
    guarded.explain(CANDS[0], REFS[0])
    assert calls[1:] == [len(set(CANDS) | set(REFS)), 2]


def test_match_keeping_scores_equals_keeping_tokens_for_every_layer_and_idf():
    """keep="scores" keeps a few numbers per pair and gives result() the same numbers as the per-token maxima, for
    each computed layer, idf off and on, raw and rescaled; other idf cannot be applied to it."""
    sc = Scorer(layer=4)
    refs = [[r, c] for c, r in zip(CANDS, REFS)]
    full = sc.match(CANDS, refs, layers=[2, 4])
    flat = [r for group in refs for r in group]
    compact = sc.match(CANDS, refs, layers=[2, 4], keep="scores", idf_weights=sc.idf_weights(flat))
    with pytest.raises(ModelError, match="without idf only"):
        sc.result(sc.match(CANDS, refs, keep="scores"), idf=True)
    assert compact.cand_best == () and not compact.keeps_tokens and full.keeps_tokens
    for layer in (2, 4):
        for idf in (False, True):
            a = sc.result(full, layer=layer, idf=idf)
            b = sc.result(compact, layer=layer, idf=idf)
            np.testing.assert_allclose(b.raw_f1, a.raw_f1, atol=1e-12, rtol=0)
            np.testing.assert_allclose(b.raw_precision, a.raw_precision, atol=1e-12, rtol=0)
            np.testing.assert_array_equal(b.best_reference, a.best_reference)
            assert b.warnings == a.warnings
    with pytest.raises(ModelError, match="Layer 6 was not computed"):
        sc.result(compact, layer=6)
    six = compact.with_table(sc.match(CANDS, refs, layers=[6], keep="scores"))
    np.testing.assert_allclose(sc.result(six, layer=6).raw_f1, sc.result(sc.match(CANDS, refs, layers=[6]),
                                                                        layer=6).raw_f1, atol=1e-12, rtol=0)


def test_scorer_doors_encoder_idf_weights_and_replace():
    """The doors a client uses instead of private fields: a given encoder, fixed idf weights, replace()."""
    from bertscore_viz.engine.idf import compute_idf

    enc = Encoder(resolve_model(None), device="cpu", cache=EmbeddingCache())
    sc = Scorer(encoder=enc, layer=4)
    assert sc.encoder is enc and sc.spec.name == enc.spec.name
    weights = compute_idf(t.ids for t in enc.encode(REFS + CANDS))
    fixed = sc.replace(idf_weights=weights)
    assert fixed.encoder is enc and fixed.idf and fixed.idf_weights(["anything"]) is weights
    own = Scorer(layer=4, idf_sentences=REFS + CANDS).score(CANDS, REFS)
    np.testing.assert_allclose(fixed.score(CANDS, REFS).f1, own.f1, atol=1e-6, rtol=0)  # another forward batch
    with pytest.raises(ModelError, match="does not exist"):
        Scorer(encoder=enc, layer=7)
    with pytest.raises(InputError, match="Unknown Scorer option"):
        sc.replace(layers=3)
    assert Scorer(layer=4, baseline_table=None, custom_baseline=True).custom_baseline


def test_the_signature_before_and_after_the_model_loads_is_the_same():
    """Before a model is loaded the signature reads transformers' version from the package metadata (without
    importing it), after from the loaded library: the same string."""
    fresh = Scorer(layer=4)
    before = str(fresh.signature)
    _ = fresh.encoder
    assert str(fresh.signature) == before and f"hug_trans={transformers.__version__}" in before


@pytest.mark.parametrize("kwargs,message", [
    ({"layer": 4.5}, "layer must be a whole number, got float 4.5"),
    ({"layer": True}, "layer must be a whole number, got bool True"),
    ({"layer": "4"}, "layer must be a whole number, got str '4'"),
    ({"batch_size": 8.0}, "batch_size must be a whole number"),
    ({"device": "bogus"}, "Unknown device 'bogus'"),
    ({"device": 3}, "device must be a string"),
])
def test_bad_arguments_are_refused_at_construction_with_the_engines_errors(kwargs, message):
    """A float or bool layer is not silently truncated (4.5 used to become 4, True layer 1), and an unknown device
    fails before any work with the engine's error, not torch's."""
    with pytest.raises((InputError, ModelError), match=re.escape(message)):
        Scorer(**kwargs)
    assert Scorer(layer=np.int64(4)).layer == 4


def test_cli_device_bogus_exits_2_with_a_message(capsys):
    from bertscore_viz.cli.entry import main

    assert main(["score", "-c", "The cat sat.", "-r", "A cat sat.", "--device", "bogus"]) == 2
    err = capsys.readouterr().err
    assert "Unknown device 'bogus'" in err and "Traceback" not in err
