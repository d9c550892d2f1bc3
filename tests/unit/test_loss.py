"""BERTScoreLoss: the loss gives the engine's exact numbers, its gradients are right (gradcheck in float64 on a
tiny random BERT) and zero on padding, bad input gets a clear error, and the worked example's F1 rises."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest
import torch

from bertscore_viz import InputError, Scorer
from bertscore_viz.loss import BERTScoreLoss, gumbel_softmax, straight_through_one_hot
from bertscore_viz.models import bundled_model_path

ROOT = Path(__file__).resolve().parents[2]
WMT16 = ROOT / "data" / "wmt16-da-to-english"


def _lines(kind: str, lp: str, n: int) -> list[str]:
    return (WMT16 / f"DAseg-newstest2016.{kind}.{lp}").read_text(encoding="utf-8").splitlines()[:n]


# Real MT output of mixed lengths (4 to 60 tokens): one padded batch, every row a different length.
CANDS = _lines("mt-system", "de-en", 10)
REFS = _lines("reference", "de-en", 10)


def _one_hot(loss_fn, texts):
    ids, mask = loss_fn.encode_texts(texts)
    return torch.nn.functional.one_hot(ids, loss_fn.vocab_size).float(), ids, mask


def _assert_equal_scores(out, res, tol=1e-5):
    for got, want in zip(out, (res.precision, res.recall, res.f1)):
        np.testing.assert_allclose(got.detach().cpu().numpy(), want, atol=tol, rtol=0)


# --- the numbers ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("options", [
    {},
    {"idf": True},
    {"idf_sentences": REFS + CANDS},
    {"rescale_with_baseline": True},
    {"idf": True, "rescale_with_baseline": True, "layer": 6},
], ids=["plain", "idf-from-references", "idf-sentences", "rescaled", "idf-rescaled-layer6"])
def test_one_hot_probabilities_and_ids_give_the_exact_score(options):
    loss_fn = BERTScoreLoss(**options)
    res = Scorer(**options).score(CANDS, REFS)
    probs, ids, mask = _one_hot(loss_fn, CANDS)
    assert len(set(mask.sum(1).tolist())) > 5  # really a batch of mixed lengths
    _assert_equal_scores(loss_fn.scores(probs, REFS, attention_mask=mask), res)
    _assert_equal_scores(loss_fn.scores(ids, REFS, attention_mask=mask), res)
    # The loss is 1 - F1 per sample; the reductions are the usual ones.
    per_sample = BERTScoreLoss(**options, reduction="none")(probs, REFS, attention_mask=mask)
    np.testing.assert_allclose(per_sample.detach().numpy(), 1 - res.f1, atol=1e-5, rtol=0)
    assert loss_fn(probs, REFS, attention_mask=mask).item() == pytest.approx(float(np.mean(1 - res.f1)), abs=1e-5)


@pytest.mark.parametrize("metric", ["precision", "recall"])
def test_metric_selects_precision_or_recall(metric):
    loss_fn = BERTScoreLoss(metric=metric, reduction="sum")
    res = Scorer().score(CANDS[:4], REFS[:4])
    ids, mask = loss_fn.encode_texts(CANDS[:4])
    want = float(np.sum(1 - getattr(res, metric)))
    assert loss_fn(ids, REFS[:4], attention_mask=mask).item() == pytest.approx(want, abs=1e-5)


def test_inputs_with_special_tokens_and_reference_ids_and_embeddings_give_the_exact_score():
    res = Scorer().score(CANDS, REFS)
    with_specials = BERTScoreLoss(add_special_tokens=False)
    ids, mask = with_specials.encode_texts(CANDS)
    assert ids[0, 0].item() == with_specials.encoder.tokenizer.cls_token_id
    ref_ids = [t.ids for t in with_specials.encoder.encode(REFS)]  # as the tokenizer gives them
    _assert_equal_scores(with_specials.scores(ids, ref_ids, attention_mask=mask), res)
    probs = torch.nn.functional.one_hot(ids, with_specials.vocab_size).float()
    _assert_equal_scores(with_specials.scores(probs, REFS, attention_mask=mask), res)
    embeds = with_specials.embedding_matrix[ids]  # first and last real positions are CLS and SEP
    _assert_equal_scores(with_specials.scores(embeds, REFS, attention_mask=mask), res)
    # Content-only ids on both sides with the default wrapping.
    loss_fn = BERTScoreLoss()
    cids, cmask = loss_fn.encode_texts(CANDS)
    rids, rmask = loss_fn.encode_texts(REFS)
    refs = [r[m.bool()] for r, m in zip(rids, rmask)]
    _assert_equal_scores(loss_fn.scores(cids, refs, attention_mask=cmask), res)
    _assert_equal_scores(loss_fn.scores(loss_fn.embedding_matrix[cids], refs, attention_mask=cmask), res)


def test_a_float64_copy_of_the_scorer_gives_the_same_numbers():
    loss_fn = BERTScoreLoss(dtype=torch.float64)
    ids, mask = loss_fn.encode_texts(CANDS[:4])
    out = loss_fn.scores(ids, REFS[:4], attention_mask=mask)
    assert out.f1.dtype == torch.float64
    _assert_equal_scores(out, Scorer().score(CANDS[:4], REFS[:4]))


def test_several_references_take_the_maximum_as_scoring_does():
    groups = [[REFS[i], REFS[i + 1], CANDS[i]] if i % 2 else [REFS[i]] for i in range(6)]
    res = Scorer(idf=True).score(CANDS[:6], groups)
    loss_fn = BERTScoreLoss(idf=True)
    probs, _, mask = _one_hot(loss_fn, CANDS[:6])
    _assert_equal_scores(loss_fn.scores(probs, groups, attention_mask=mask), res)


def test_empty_candidate_scores_zero_as_in_scoring():
    res = Scorer().score(["", CANDS[1]], REFS[:2])
    loss_fn = BERTScoreLoss(reduction="none")
    ids, mask = loss_fn.encode_texts(["", CANDS[1]])
    assert mask[0].sum() == 0
    _assert_equal_scores(loss_fn.scores(ids, REFS[:2], attention_mask=mask), res)


def test_smooth_maximum_is_above_the_exact_one_and_tends_to_it():
    probs, _, mask = _one_hot(BERTScoreLoss(), CANDS[:4])
    exact = BERTScoreLoss().scores(probs, REFS[:4], attention_mask=mask).f1
    smooth = [BERTScoreLoss(temperature=t).scores(probs, REFS[:4], attention_mask=mask).f1 for t in (0.1, 0.001)]
    assert torch.all(smooth[0] > exact + 1e-3)
    assert torch.allclose(smooth[1], exact, atol=5e-3)


# --- gradients --------------------------------------------------------------------------------------------------

def test_gradients_reach_every_real_position_and_none_of_the_padding():
    loss_fn = BERTScoreLoss(idf=True)
    probs, ids, mask = _one_hot(loss_fn, CANDS[:5])
    # Something arbitrary in the padding: it must neither change the loss nor receive gradient.
    noisy = torch.where(mask.bool()[..., None], probs, torch.rand_like(probs)).requires_grad_(True)
    loss = loss_fn(noisy, REFS[:5], attention_mask=mask)
    assert loss.item() == pytest.approx(loss_fn(probs, REFS[:5], attention_mask=mask).item(), abs=1e-6)
    loss.backward()
    per_position = noisy.grad.abs().sum(-1)
    assert torch.all(per_position[~mask.bool()] == 0)
    assert torch.all(per_position[mask.bool()] > 0)
    embeds = loss_fn.embedding_matrix[ids].clone()
    embeds = torch.where(mask.bool()[..., None], embeds, torch.randn_like(embeds)).requires_grad_(True)
    BERTScoreLoss()(embeds, REFS[:5], attention_mask=mask).backward()
    assert torch.all(embeds.grad.abs().sum(-1)[~mask.bool()] == 0)
    assert torch.all(embeds.grad.abs().sum(-1)[mask.bool()] > 0)


def test_the_frozen_scorer_gets_no_gradient_and_a_trained_one_leaves_scoring_unchanged():
    before = Scorer().score(CANDS[:3], REFS[:3])
    frozen = BERTScoreLoss()
    assert not list(frozen.parameters())  # the shared model is not exposed for training
    assert all(not p.requires_grad for p in frozen.encoder.model.parameters())
    trained = BERTScoreLoss(train_scorer=True)
    params = [p for p in trained.parameters() if p.requires_grad]
    assert params
    opt = torch.optim.SGD(params, lr=0.5)
    ids, mask = trained.encode_texts(CANDS[:3])
    first = trained(ids, REFS[:3], attention_mask=mask)
    first.backward()
    opt.step()
    assert trained(ids, REFS[:3], attention_mask=mask).item() != pytest.approx(first.item(), abs=1e-6)
    trained.train()
    assert not trained.scorer_model.training  # no dropout in the metric, even in train mode
    after = Scorer().score(CANDS[:3], REFS[:3])
    np.testing.assert_array_equal(after.f1, before.f1)


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory) -> Path:
    """A randomly initialised 2-layer BERT (hidden 8) with the bundled tokenizer's vocabulary."""
    from transformers import AutoTokenizer, BertConfig, BertModel

    path = tmp_path_factory.mktemp("tiny-bert")
    tokenizer = AutoTokenizer.from_pretrained(str(bundled_model_path()))
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=8, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=16, max_position_embeddings=32)
    BertModel(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.mark.parametrize("temperature", [0.1, None], ids=["smooth-max", "exact-max"])
def test_gradcheck_inputs_embeds_float64(tiny_bert, temperature):
    loss_fn = BERTScoreLoss(model=str(tiny_bert), layer=2, dtype=torch.float64, temperature=temperature,
                            reduction="sum")
    gen = torch.Generator().manual_seed(1)
    embeds = torch.randn(2, 3, loss_fn.hidden_size, dtype=torch.float64, generator=gen, requires_grad=True)
    mask = torch.tensor([[1, 1, 1], [1, 1, 0]])
    refs = ["a cat sat", "the dog ran away"]
    assert torch.autograd.gradcheck(lambda e: loss_fn(e, refs, attention_mask=mask), (embeds,), eps=1e-6,
                                    atol=1e-5)


def test_gradcheck_probabilities_with_idf_float64(tiny_bert):
    loss_fn = BERTScoreLoss(model=str(tiny_bert), layer=1, dtype=torch.float64, temperature=0.05,
                            idf_sentences=["a cat sat", "the dog", "a dog ran"], reduction="none")
    ids, _ = loss_fn.encode_texts(["a cat sat the dog ran away"])
    vocab = ids[0]  # the distributions live on these 7 ids (checking all 30,522 would take too long)
    gen = torch.Generator().manual_seed(2)
    logits = torch.randn(2, 3, len(vocab), dtype=torch.float64, generator=gen, requires_grad=True)
    mask = torch.tensor([[1, 1, 1], [1, 0, 0]])

    def f(lg):
        probs = torch.zeros(2, 3, loss_fn.vocab_size, dtype=torch.float64)
        probs = probs.index_copy(2, vocab, torch.softmax(lg, dim=-1))
        return loss_fn(probs, ["a dog sat", "the cat"], attention_mask=mask)

    assert torch.autograd.gradcheck(f, (logits,), eps=1e-6, atol=1e-5)


def test_gumbel_softmax_and_straight_through_one_hot():
    logits = torch.randn(3, 5, 11, requires_grad=True)
    st = straight_through_one_hot(logits)
    assert torch.equal(st.detach(), torch.nn.functional.one_hot(logits.argmax(-1), 11).float())
    weights = torch.randn(3, 5, 11)
    (st * weights).sum().backward()
    expected = torch.autograd.grad((torch.softmax(logits, -1) * weights).sum(), logits)[0]
    assert torch.allclose(logits.grad, expected, atol=1e-6)
    soft = gumbel_softmax(logits, tau=0.5, generator=torch.Generator().manual_seed(0))
    assert torch.allclose(soft.sum(-1), torch.ones(3, 5), atol=1e-5) and bool((soft < 1).all())
    hard = gumbel_softmax(logits, hard=True, generator=torch.Generator().manual_seed(0))
    assert set(hard.detach().unique().tolist()) == {0.0, 1.0} and torch.all(hard.detach().sum(-1) == 1)
    assert hard.requires_grad


# --- errors -----------------------------------------------------------------------------------------------------

def test_a_generator_vocabulary_that_is_not_the_scorers_is_a_clear_error():
    loss_fn = BERTScoreLoss()
    wrong = torch.softmax(torch.randn(2, 4, 32000), dim=-1)
    for kwargs in ({}, {"input_type": "probs"}):
        with pytest.raises(InputError, match=r"32000 entries.*has 30522.*scorer's tokenizer"):
            loss_fn(wrong, ["a", "b"], **kwargs)
    with pytest.raises(InputError, match="outside the scorer's vocabulary|0..30521"):
        loss_fn(torch.tensor([[5, 40000]]), ["a"])


@pytest.mark.parametrize("call, message", [
    (lambda f: f(torch.ones(2, 3, dtype=torch.long), ["a"]), "2 candidates and 1 references"),
    (lambda f: f(torch.ones(1, 3, dtype=torch.long), "a"), "single string"),
    (lambda f: f(torch.ones(1, 3, dtype=torch.long), ["a"], attention_mask=torch.tensor([[0, 1, 1]])),
     "right-padded"),
    (lambda f: f(["a text"], ["a"]), "encode_texts"),
    (lambda f: f(torch.ones(1, 3, dtype=torch.long), [[]]), "empty list of references"),
])
def test_bad_input_is_a_clear_error(call, message):
    with pytest.raises(InputError, match=message):
        call(BERTScoreLoss())


def test_bad_options_are_clear_errors():
    with pytest.raises(InputError, match="metric"):
        BERTScoreLoss(metric="bleu")
    with pytest.raises(InputError, match="reduction"):
        BERTScoreLoss(reduction="max")
    with pytest.raises(InputError, match="temperature"):
        BERTScoreLoss(temperature=0)
    loss_fn = BERTScoreLoss(idf=True)
    with pytest.raises(InputError, match="idf needs"):
        loss_fn(torch.randn(1, 3, loss_fn.hidden_size), ["a"])


# --- the worked example -----------------------------------------------------------------------------------------

def test_the_example_raises_exact_f1():
    spec = importlib.util.spec_from_file_location("train_with_bertscore", ROOT / "examples" / "train_with_bertscore.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    out = example.run(steps=4, log=lambda _: None)
    assert out["f1_after"] > out["f1_before"] + 0.1, out
