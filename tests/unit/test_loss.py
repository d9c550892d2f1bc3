"""BERTScoreLoss: the loss gives the engine's exact numbers, its gradients are right (gradcheck in float64 on a
tiny random BERT) and zero on padding, bad input gets a clear error, and the worked example's F1 rises.

Tests marked with ``device`` run on every device here: the CPU always, CUDA when torch sees a GPU (only the CPU
cases run on a machine without one). A second device is otherwise stood in for by torch's "meta" device, which
holds no data but tells where every tensor went."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest
import torch

from bertscore_viz import InputError, Scorer
from bertscore_viz.engine.baseline import BaselineTable
from bertscore_viz.loss import BERTScoreLoss, gumbel_softmax, straight_through_one_hot
from bertscore_viz.models.spec import bundled_model_path

ROOT = Path(__file__).resolve().parents[2]
WMT16 = ROOT / "data" / "wmt16-da-to-english"
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


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
@pytest.mark.slow
def test_one_hot_probabilities_and_ids_give_the_exact_score(options):
    loss_fn = BERTScoreLoss(**options)
    res = Scorer(**options).score(CANDS, REFS)
    probs, ids, mask = _one_hot(loss_fn, CANDS)
    assert len(set(mask.sum(1).tolist())) > 5  # really a batch of mixed lengths
    _assert_equal_scores(loss_fn.scores(probs, REFS, attention_mask=mask), res)
    _assert_equal_scores(loss_fn.scores(ids, REFS, attention_mask=mask), res)
    # The loss is 1 - F1 per sample; the reductions are the usual ones.
    per_sample = BERTScoreLoss(**options, reduction="none")(probs, REFS, attention_mask=mask)
    np.testing.assert_allclose(per_sample.detach().cpu().numpy(), 1 - res.f1, atol=1e-5, rtol=0)
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
    vocab = ids[0].cpu()  # the distributions live on these 7 ids (checking all 30,522 would take too long)
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

@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location("train_with_bertscore", ROOT / "examples" / "train_with_bertscore.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("device", DEVICES)
def test_the_example_raises_exact_f1(example, device):
    out = example.run(steps=4, log=lambda _: None, device=device)
    assert out["f1_after"] > out["f1_before"] + 0.1, out
    assert out["device"].startswith(device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("mode", ["straight-through", "soft", "gumbel"])
def test_the_example_step_runs_where_the_loss_is(example, device, mode):
    """The example's core step with everything on the loss's device: logits, mask, Gumbel noise, decoding."""
    loss_fn = BERTScoreLoss(device=device)
    refs = example.REFERENCES[:2]
    logits, mask = example.make_logits(loss_fn, refs)
    assert logits.device == loss_fn.device and mask.device == loss_fn.device and logits.is_leaf
    noise = torch.Generator(device=loss_fn.device).manual_seed(0)
    optimizer = torch.optim.Adam([logits], lr=1.0)
    before = logits.detach().clone()
    value = example.training_step(loss_fn, logits, mask, refs, optimizer, mode, noise)
    assert 0 < value < 1
    real = mask.bool()
    assert logits.grad.device == loss_fn.device
    assert torch.all(logits.grad[~real] == 0) and torch.all(logits.grad[real].abs().sum(-1) > 0)
    assert torch.equal(logits.detach()[~real], before[~real])  # padding positions never move
    assert not torch.equal(logits.detach()[real], before[real])
    assert len(example.decode(loss_fn, logits.detach(), mask)) == 2


# --- the same code on every device, and moving the loss ----------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_forward_and_backward_on_every_device(device):
    loss_fn = BERTScoreLoss(device=device, idf_sentences=REFS)
    assert loss_fn.device.type == device
    res = Scorer(device=device, idf_sentences=REFS).score(CANDS[:5], REFS[:5])
    probs, _, mask = _one_hot(loss_fn, CANDS[:5])
    assert probs.device == loss_fn.device and mask.device == loss_fn.device
    probs.requires_grad_(True)
    out = loss_fn.scores(probs, REFS[:5], attention_mask=mask)
    _assert_equal_scores(out, res)
    (1 - out.f1).mean().backward()
    assert probs.grad.device == loss_fn.device
    per_position = probs.grad.abs().sum(-1)
    assert torch.all(per_position[~mask.bool()] == 0) and torch.all(per_position[mask.bool()] > 0)
    # Candidates on the CPU with the loss elsewhere: computed on the loss's device, returned on the CPU.
    cpu_probs = probs.detach().cpu().requires_grad_(True)
    f1 = loss_fn.scores(cpu_probs, REFS[:5], attention_mask=mask.cpu()).f1
    assert f1.device.type == "cpu"
    f1.sum().backward()
    assert cpu_probs.grad.device.type == "cpu" and cpu_probs.grad.abs().sum() > 0


@pytest.mark.parametrize("device", DEVICES)
def test_to_a_device_scores_there_and_returns_on_the_candidates_device(device):
    loss_fn = BERTScoreLoss(device="cpu", rescale_with_baseline=True).to(device)
    assert loss_fn.device.type == device
    assert {b.device.type for b in loss_fn.buffers()} == {device}
    ids, mask = loss_fn.encode_texts(CANDS[:4])
    assert ids.device.type == device
    _assert_equal_scores(loss_fn.scores(ids, REFS[:4], attention_mask=mask),
                         Scorer(rescale_with_baseline=True).score(CANDS[:4], REFS[:4]))


def _devices_of(loss_fn) -> set[str]:
    """Device types of every tensor the loss computes with."""
    tensors = [loss_fn.embedding_matrix, *loss_fn.buffers(), *loss_fn._net.parameters(), *loss_fn._net.buffers()]
    return {t.device.type for t in tensors}


def test_to_moves_every_internal_tensor_of_a_trained_scorer():
    """Before, .to() moved the trained copy but the loss kept sending inputs to the old device."""
    loss_fn = BERTScoreLoss(train_scorer=True, rescale_with_baseline=True, idf_sentences=REFS, device="cpu")
    ids, mask = loss_fn.encode_texts(CANDS[:2])
    loss_fn(ids, REFS[:2], attention_mask=mask)  # fills the idf vector
    assert _devices_of(loss_fn) == {"cpu"}
    assert loss_fn.to("meta") is loss_fn  # "meta": a second device that holds no data
    assert loss_fn.device.type == "meta" and _devices_of(loss_fn) == {"meta"}
    assert {p.device.type for p in loss_fn.parameters()} == {"meta"}
    assert loss_fn.encode_texts(CANDS[:1])[0].device.type == "meta"


def test_to_another_device_with_the_shared_model():
    """A frozen loss takes the process-wide model of the new device (loaded once there); the old device's model
    stays where it was, for the Scorers using it."""
    from bertscore_viz.engine.encoder import loaded_encoders, release_encoder

    loss_fn = BERTScoreLoss(device="cpu")
    ids, mask = loss_fn.encode_texts(CANDS[:3])
    loss_fn(ids, REFS[:3], attention_mask=mask)
    assert loss_fn._ref_cache
    cpu_model = loss_fn.encoder.model
    try:
        loss_fn.to("meta")
        assert loss_fn.device.type == "meta" and _devices_of(loss_fn) == {"meta"}
        assert loss_fn.encoder.device == "meta" and not loss_fn._ref_cache  # re-embedded on the new device
        other = BERTScoreLoss(device="cpu").to(torch.device("meta"))
        assert other.encoder is loss_fn.encoder  # one model per device, as for Scorers
        assert next(cpu_model.parameters()).device.type == "cpu"
        _assert_equal_scores(BERTScoreLoss(device="cpu").scores(ids, REFS[:3], attention_mask=mask),
                             Scorer(device="cpu").score(CANDS[:3], REFS[:3]))
    finally:
        for enc in loaded_encoders():
            if enc.device == "meta":
                release_encoder(enc)


def test_dtype_conversions_are_a_clear_error():
    loss_fn = BERTScoreLoss()
    for convert in (lambda m: m.double(), lambda m: m.half(), lambda m: m.to(torch.bfloat16)):
        with pytest.raises(InputError, match=r"BERTScoreLoss\(dtype=torch.float64\)"):
            convert(loss_fn)
    assert loss_fn.dtype == torch.float32 and loss_fn._uniform.dtype == torch.float32
    parent = torch.nn.Sequential(BERTScoreLoss(dtype=torch.float64))
    assert parent.double() is parent  # already float64: nothing to convert


# --- references as padded ids, vocabularies, options -------------------------------------------------------------

def test_padded_reference_ids_need_their_mask():
    """A padded (B, T) tensor of reference ids used to be scored with its padding as words."""
    loss_fn = BERTScoreLoss()
    ids, mask = loss_fn.encode_texts(CANDS[:4])
    rids, rmask = loss_fn.encode_texts(REFS[:4])
    assert not bool(rmask.all())  # really padded
    with pytest.raises(InputError, match=r"padding id 0 \(\[PAD\]\).*reference_mask"):
        loss_fn.scores(ids, rids, attention_mask=mask)
    res = Scorer().score(CANDS[:4], REFS[:4])
    _assert_equal_scores(loss_fn.scores(ids, rids, attention_mask=mask, reference_mask=rmask), res)
    assert loss_fn(ids, rids, attention_mask=mask, reference_mask=rmask).item() == pytest.approx(
        float(np.mean(1 - res.f1)), abs=1e-5)
    with pytest.raises(InputError, match="reference_mask has shape"):
        loss_fn.scores(ids, rids, attention_mask=mask, reference_mask=rmask[:, :3])
    with pytest.raises(InputError, match="right-padded"):
        loss_fn.scores(ids, rids, attention_mask=mask, reference_mask=rmask.flip(1))
    with pytest.raises(InputError, match="reference_mask goes with"):
        loss_fn.scores(ids, REFS[:4], attention_mask=mask, reference_mask=rmask)
    # The same for padded candidate ids without their attention mask.
    with pytest.raises(InputError, match="Candidate row .* padding id 0 .*attention_mask"):
        loss_fn.scores(ids, REFS[:4])


def test_the_generator_vocabulary_is_checked_id_by_id():
    scorer_tok = BERTScoreLoss().encoder.tokenizer
    BERTScoreLoss(generator_tokenizer=scorer_tok)  # the same vocabulary: accepted
    vocab = scorer_tok.convert_ids_to_tokens(list(range(len(scorer_tok))))
    swapped = list(vocab)
    swapped[2000], swapped[2001] = swapped[2001], swapped[2000]
    with pytest.raises(InputError, match=rf"2 id\(s\) differ, first id 2000 is {swapped[2000]!r} for the "
                                         rf"generator and {vocab[2000]!r} for the scorer; id 2001"):
        BERTScoreLoss(generator_tokenizer=swapped)  # same size: the size check alone let this through
    with pytest.raises(InputError, match="the generator has 30521 ids and the scorer 30522"):
        BERTScoreLoss(generator_tokenizer={t: i for i, t in enumerate(vocab[:-1])})
    from transformers import AutoTokenizer

    from bertscore_viz.models.catalog import get_entry, installed_path

    mpnet = installed_path(get_entry("all-mpnet-base-v2"))  # a catalog model with another BERT-style vocabulary
    if mpnet is None:
        pytest.skip("all-mpnet-base-v2 is not installed (python -m bertscore_viz models install all-mpnet-base-v2)")
    other = AutoTokenizer.from_pretrained(str(mpnet), local_files_only=True)
    with pytest.raises(InputError, match=r"first id 0 is '<s>' for the generator and '\[PAD\]' for the scorer.*"
                                         r"the generator has 30527 ids and the scorer 30522"):
        BERTScoreLoss(generator_tokenizer=other)


def test_gumbel_noise_on_another_device_than_the_logits_is_a_clear_error():
    logits = torch.zeros(2, 3, 5, device="meta")
    with pytest.raises(InputError, match="generator is on cpu but the logits are on meta"):
        gumbel_softmax(logits, generator=torch.Generator().manual_seed(0))
    cpu = gumbel_softmax(torch.zeros(2, 3, 5), generator=torch.Generator(device="cpu").manual_seed(0))
    assert cpu.shape == (2, 3, 5)


def test_scorer_options_baseline_table_batch_size_and_token_budget():
    table = BaselineTable(np.array([[0.5 + i / 100, 0.4 + i / 100, 0.45 + i / 100] for i in range(7)]), "a test")
    res = Scorer(rescale_with_baseline=True, baseline_table=table).score(CANDS[:6], REFS[:6])
    loss_fn = BERTScoreLoss(rescale_with_baseline=True, baseline_table=table, batch_size=2, token_budget=4096)
    sizes = []
    handle = loss_fn._net.register_forward_hook(lambda m, a, kw, out: sizes.append(kw["input_ids"].shape[0])
                                                if kw.get("input_ids") is not None else None, with_kwargs=True)
    try:
        ids, mask = loss_fn.encode_texts(CANDS[:6])
        sizes.clear()
        _assert_equal_scores(loss_fn.scores(ids, REFS[:6], attention_mask=mask), res)
    finally:
        handle.remove()
    # the candidates (one batch: the caller's), then the 6 references in batches of at most 2
    assert sizes[0] == 6 and max(sizes[1:]) <= 2 and sum(sizes[1:]) == 6
    tight = BERTScoreLoss(token_budget=60)  # at most 60 padded cells per reference batch
    tight.scores(ids, REFS[:6], attention_mask=mask)
    assert len(tight._ref_cache) == 6


def test_reduced_precision_forward_is_close_and_trains():
    loss_fn = BERTScoreLoss(precision="bf16")
    probs, _, mask = _one_hot(loss_fn, CANDS[:4])
    probs.requires_grad_(True)
    out = loss_fn.scores(probs, REFS[:4], attention_mask=mask)
    exact = Scorer().score(CANDS[:4], REFS[:4])
    assert out.f1.dtype == torch.float32
    assert 0 < np.abs(out.f1.detach().cpu().numpy() - exact.f1).max() < 0.02  # really reduced, and close
    out.f1.sum().backward()
    assert torch.all(torch.isfinite(probs.grad)) and probs.grad.abs().sum() > 0
    with pytest.raises(InputError, match="fp16' needs a CUDA device"):
        BERTScoreLoss(precision="fp16", device="cpu")
    with pytest.raises(InputError, match="cannot go with dtype=torch.float64"):
        BERTScoreLoss(precision="bf16", dtype=torch.float64)
    with pytest.raises(InputError, match="Unknown precision"):
        BERTScoreLoss(precision="int8")


def test_an_empty_batch_gives_empty_scores():
    loss_fn = BERTScoreLoss(reduction="none")
    out = loss_fn.scores(torch.zeros((0, 4), dtype=torch.long), [])
    assert all(t.shape == (0,) for t in out)
    assert loss_fn(torch.zeros((0, 4), dtype=torch.long), []).shape == (0,)
    probs = torch.zeros((0, 4, loss_fn.vocab_size), requires_grad=True)
    total = BERTScoreLoss(reduction="sum")(probs, [])
    assert total.item() == 0
    total.backward()  # a training loop that meets an empty batch does not crash
    assert probs.grad.shape == probs.shape
    assert torch.isnan(BERTScoreLoss()(probs, []))  # the mean of nothing, as torch's own losses give
    with pytest.raises(InputError, match="0 candidates and 1 references"):
        loss_fn(torch.zeros((0, 4), dtype=torch.long), ["a"])


# --- a RoBERTa-type scorer: positions computed from inputs_embeds -------------------------------------------------

@pytest.fixture(scope="module")
def tiny_roberta(tmp_path_factory) -> Path:
    """A randomly initialised 2-layer RoBERTa (hidden 16), the bundled BERT tokenizer for its ids. RoBERTa numbers
    positions from padding_idx + 1, from the ids (skipping padding) or, for inputs_embeds, sequentially."""
    from transformers import AutoTokenizer, RobertaConfig, RobertaModel

    path = tmp_path_factory.mktemp("tiny-roberta")
    tokenizer = AutoTokenizer.from_pretrained(str(bundled_model_path()))
    torch.manual_seed(0)
    config = RobertaConfig(vocab_size=len(tokenizer), hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                           intermediate_size=32, max_position_embeddings=130, pad_token_id=tokenizer.pad_token_id,
                           type_vocab_size=1)
    RobertaModel(config, add_pooling_layer=False).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def test_roberta_probabilities_and_embeddings_equal_ids_and_the_engine(tiny_roberta):
    cands, refs = [c[:200] for c in CANDS[:6]], [r[:200] for r in REFS[:6]]  # within 128 positions
    res = Scorer(model=str(tiny_roberta), layer=2).score(cands, refs)
    loss_fn = BERTScoreLoss(model=str(tiny_roberta), layer=2)
    assert type(loss_fn._net).__name__ == "RobertaModel"
    probs, ids, mask = _one_hot(loss_fn, cands)
    assert len(set(mask.sum(1).tolist())) > 3  # padded rows: positions of padding differ between the two paths
    by_ids = loss_fn.scores(ids, refs, attention_mask=mask)
    _assert_equal_scores(by_ids, res)
    _assert_equal_scores(loss_fn.scores(probs, refs, attention_mask=mask), res)
    _assert_equal_scores(loss_fn.scores(loss_fn.embedding_matrix[ids], refs, attention_mask=mask), res)
