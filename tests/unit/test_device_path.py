"""The scoring path on the device (issue 10): one layer kept for a large model, no warm-up pass, padding-aware
batches, the same numbers as the old all-layers path.

The large model is a randomly initialised BERT of roberta-large's shape (24 layers, hidden 1024, 16 heads) saved
with the bundled tokenizer. Its feed-forward layer is narrow (64) so that it loads and runs in seconds: what is
measured here (the work after the forward pass, the bytes cached) depends on the layers, the hidden size and the
tokens, not on the feed-forward width.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from bertscore_viz import Scorer
from bertscore_viz.engine.cache import EmbeddingCache
from bertscore_viz.engine.encoder import Encoder, plan_batches
from bertscore_viz.engine.idf import uniform_weights
from bertscore_viz.engine.matching import similarity_dtype
from bertscore_viz.models.spec import resolve_model
from tests import numpy_reference as sim_ops

BENCH = Path(__file__).resolve().parents[2] / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

from bench_host import compare, random_model, wmt_pairs  # noqa: E402
from legacy_path import LegacyCache, legacy_match  # noqa: E402

LAYER = 17
HIDDEN = 1024
#: (device, precision) pairs this machine can run: the CPU always, CUDA in fp32 and fp16 when torch sees a GPU.
DEVICE_PRECISIONS = [("cpu", "fp32")] + ([("cuda", "fp32"), ("cuda", "fp16")] if torch.cuda.is_available() else [])


@pytest.fixture(scope="module")
def large_dir(tmp_path_factory):
    return random_model("roberta-large", intermediate=64, root=tmp_path_factory.mktemp("models"))


@pytest.fixture(scope="module")
def large(large_dir):
    enc = Encoder(resolve_model(large_dir), device="cpu", cache=EmbeddingCache())
    return Scorer(model=large_dir, layer=LAYER, encoder=enc)


@pytest.fixture()
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


# --- padding-aware batching -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("lengths, kwargs, expected", [
    ([40, 38, 20, 19, 18], dict(min_early=2), [(0, 2), (2, 5)]),
    ([40, 38, 20, 19, 18], dict(min_early=8), [(0, 5)]),  # too few to close early
    ([10] * 10, dict(batch_size=4), [(0, 4), (4, 8), (8, 10)]),
    ([100, 100, 100], dict(token_budget=200), [(0, 2), (2, 3)]),
    ([600], dict(token_budget=200), [(0, 1)]),  # one sentence longer than the budget still runs
    ([], {}, []),
])
def test_plan_batches(lengths, kwargs, expected):
    args = dict(batch_size=64, token_budget=4096) | kwargs
    assert plan_batches(lengths, **args) == expected


def test_padding_aware_batches_have_more_real_cells_on_real_data():
    from bertscore_viz.engine.encoder import get_encoder

    enc = get_encoder(resolve_model(None), "cpu")
    cands, refs = wmt_pairs(250)
    lengths = sorted((len(t.ids) for t in enc.encode(list(dict.fromkeys(cands + refs)))), reverse=True)

    def real_fraction(batches):
        return sum(sum(lengths[a:b]) for a, b in batches) / sum(lengths[a] * (b - a) for a, b in batches)

    old = [(a, min(a + 64, len(lengths))) for a in range(0, len(lengths), 64)]  # 64 per batch, as before
    new = plan_batches(lengths, 64, 4096)
    assert real_fraction(new) > real_fraction(old) + 0.05 and real_fraction(new) > 0.93
    assert enc.close_batches_early  # the bundled model (hidden 384) on a CPU uses it


@pytest.mark.slow
def test_wide_models_fill_their_batches(large):
    """Early closing only for small models on a CPU: a roberta-large-shaped model's batches are filled (its smaller
    batches measured slower than the padding they saved), and its scores do not depend on the batching."""
    enc = large.encoder
    assert enc.hidden_size == HIDDEN and not enc.close_batches_early
    cands, refs = wmt_pairs(12)
    sizes = []
    real_forward = enc._forward
    enc._forward = lambda ids, layers: sizes.append(len(ids)) or real_forward(ids, layers)
    try:
        enc.cache.clear()
        filled = large.score(cands, refs)
    finally:
        del enc._forward
    assert sizes == [len({t.ids.tobytes() for t in enc.encode(cands + refs)})]  # one batch of every sentence
    enc.close_batches_early = True
    try:
        enc.cache.clear()
        closed = large.score(cands, refs)
    finally:
        enc.close_batches_early = False
    np.testing.assert_allclose(closed.f1, filled.f1, atol=1e-6)


# --- a large model: no warm-up pass, one layer kept -----------------------------------------------------------------
def test_loading_runs_no_forward_pass_and_hooks_are_installed(large_dir):
    calls = []
    handle = torch.nn.modules.module.register_module_forward_hook(lambda m, a, o: calls.append(type(m).__name__))
    try:
        enc = Encoder(resolve_model(large_dir), device="cpu", cache=EmbeddingCache())
    finally:
        handle.remove()
    assert calls == []
    assert enc.num_layers == 24 and not enc.keep_computed_layers
    import transformers

    if int(transformers.__version__.split(".")[0]) >= 5:  # hooks installed at load, hidden states selected by index
        assert enc.model._output_capturing_hooks_installed is True
        assert enc._select_hidden_states is True


def test_truncated_view_first_then_every_layer_equals_the_full_model(large, large_dir):
    """The transformers 5 hook problem the warm-up pass used to prevent: a view run first, then the full model."""
    import transformers

    enc = Encoder(resolve_model(large_dir), device="cpu", cache=EmbeddingCache())
    texts = ["The cat sat.", "A longer sentence, with a comma, to pad the first."]
    first = enc.embed_layers(texts, [LAYER])
    every = enc.embed_layers(texts, "all")
    ref_model = transformers.AutoModel.from_pretrained(large_dir, local_files_only=True).eval()
    for text, one, all_ in zip(texts, first, every):
        ids = torch.from_numpy(enc.encode_one(text).ids)[None]
        with torch.no_grad():
            hidden = ref_model(input_ids=ids, output_hidden_states=True).hidden_states
        assert len(hidden) == 25 and len(all_) == 25
        for layer in (0, 1, LAYER, 24):
            h = hidden[layer][0]
            np.testing.assert_allclose(all_[layer].numpy(), (h / h.norm(dim=-1, keepdim=True)).numpy(), atol=2e-5)
        np.testing.assert_allclose(one[0].numpy(), all_[LAYER].numpy(), atol=2e-5)


def test_cached_bytes_are_one_layer_per_sentence(large):
    enc = large.encoder
    enc.cache.clear()
    cands, refs = wmt_pairs(6)
    large.match(cands, refs)
    tokens = sum(len(t.ids) for t in {t.ids.tobytes(): t for t in enc.encode(cands + refs)}.values())
    assert enc.cache.nbytes == tokens * HIDDEN * 4  # layer 17 only, float32
    assert len(enc.cache) == len(set(cands + refs))


def test_same_maxima_as_the_old_all_layers_path(large):
    cands, refs = wmt_pairs(6)
    old_c, old_r = legacy_match(large.encoder, cands, refs, LAYER, LegacyCache())
    stats = large.match(cands, refs)
    for p in range(len(cands)):
        np.testing.assert_allclose(stats.cand_best[p], old_c[p], atol=1e-6)
        np.testing.assert_allclose(stats.ref_best[p], old_r[p], atol=1e-6)


def test_the_device_path_caches_one_layer_where_the_old_path_kept_every_computed_one(large, one_thread):
    """For a large model only the layer asked for is cached (18 layers of vectors before: 0..17). Host time per
    sentence, old path against new, is a benchmark (``python bench/bench_host.py``), not a test: it depends on the
    machine's load."""
    cands, refs = wmt_pairs(16)
    large.match(cands[:1], refs[:1])  # warm up the view at this depth
    res = compare(large, cands, refs, LAYER, rounds=1, stat=min)
    before, after = res["before"], res["after"]
    assert after["cached_bytes"] > 0
    assert after["cached_bytes"] * 18 == pytest.approx(before["cached_bytes"])  # 1 layer against 0..17


#: docs/SEMANTICS.md's values to check by hand: layer 4, no idf, bundled model (P, R, F per pair, 6 decimals).
HAND_PAIRS = [("The cat sat on the mat.", "There is a cat sitting on the mat."),
              ("A quick brown fox jumps over the lazy dog.", "The quick brown fox leaped over a lazy dog."),
              ("He went to the store to buy some milk.", "She walked to the shop to purchase bread."),
              ("Machine learning models can be evaluated with BERTScore.",
               "BERTScore is used to evaluate text generation models.")]
HAND_LAYER4 = [(.906293, .868974, .887242), (.909505, .911682, .910592), (.764906, .792583, .778498),
               (.761120, .734931, .747796)]


def numpy_reference(scorer: Scorer, cands: list[str], refs: list[str]) -> np.ndarray:
    """``(n, 3)`` P/R/F from the device's embeddings copied to the host, pair by pair with the pure numpy functions
    of :mod:`bertscore_viz.similarity` (the definition, independent of the batched torch path)."""
    enc = scorer.encoder
    vecs = enc.embed_layers(cands + refs, [scorer.layer])
    ids = [t.ids for t in enc.encode(cands + refs)]
    n = len(cands)
    out = []
    for i in range(n):
        c, r = vecs[i][0].float().cpu().numpy(), vecs[n + i][0].float().cpu().numpy()
        cb, _, rb, _ = sim_ops.greedy_match(np.matmul(c.astype(np.float64), r.astype(np.float64).T))
        w = [uniform_weights(x, enc.special_ids) for x in (ids[i], ids[n + i])]
        out.append(sim_ops.precision_recall_f1(cb, rb, w[0], w[1]))
    return np.array(out, dtype=np.float64)


@pytest.mark.parametrize("device, precision", DEVICE_PRECISIONS)
def test_the_same_code_on_every_device(device, precision):
    """Scorer on each device against the hand-checked values and the numpy definition (not against another run of
    the same path: on a CPU-only machine that would compare the CPU with itself)."""
    s = Scorer(layer=4, device=device, precision=precision)
    assert s.encoder.device.startswith(device)
    tol = 1e-6 if precision == "fp32" else 2e-2
    hand = s.score([c for c, _ in HAND_PAIRS], [r for _, r in HAND_PAIRS])
    np.testing.assert_allclose(np.stack([hand.precision, hand.recall, hand.f1], axis=1), HAND_LAYER4,
                               atol=tol + 5e-7)
    cands, refs = wmt_pairs(12)
    res = s.score(cands, refs)
    ours = np.stack([res.precision, res.recall, res.f1], axis=1)
    np.testing.assert_allclose(ours, numpy_reference(s, cands, refs), atol=1e-6)  # same embeddings: exact path
    if precision != "fp32":
        exact = Scorer(layer=4, device=device).score(cands, refs)
        assert np.abs(res.f1 - exact.f1).max() < tol


def test_cosines_are_summed_in_float64_on_cpu_and_cuda_only():
    """float64 is unsupported on Apple MPS and slow on other accelerators: float32 there."""
    assert similarity_dtype("cpu") == torch.float64
    assert similarity_dtype("cuda") == similarity_dtype(torch.device("cuda", 1)) == torch.float64
    assert similarity_dtype("mps") == similarity_dtype("xpu") == similarity_dtype("meta") == torch.float32
    from bertscore_viz.engine.matching import similarity_float64

    a = torch.nn.functional.normalize(torch.randn(3, 5, 16), dim=-1)
    b = torch.nn.functional.normalize(torch.randn(3, 7, 16), dim=-1)
    exact = torch.matmul(a.double(), b.double().transpose(-1, -2)).float()
    assert torch.equal(similarity_float64(a, b), exact)
    meta = similarity_float64(a.to("meta"), b.to("meta"))
    assert meta.dtype == torch.float32 and meta.shape == (3, 5, 7)


# --- the embedding cache: device bound, release ---------------------------------------------------------------------
def test_a_device_bound_evicts_only_that_devices_entries_and_at_once():
    """A CUDA encoder bounds its device-resident entries (a quarter of the device's memory) without shrinking the
    bound of CPU entries; "meta" tensors stand in for a device's here."""
    cache = EmbeddingCache(max_bytes=10_000)
    for i in range(4):
        cache.put(("cpu-model", i), np.zeros(250, dtype=np.float32))  # 1,000 bytes each
        cache.put(("gpu-model", i), torch.zeros(250, device="meta"))
    assert len(cache) == 8 and cache.device_nbytes("meta") == 4000
    cache.limit_device("meta", 2500)  # evicted at once, least recently used first, CPU entries untouched
    assert cache.device_nbytes("meta") == 2000 and cache.device_nbytes("cpu") == 4000
    assert cache.get(("gpu-model", 0)) is None and cache.get(("gpu-model", 3)) is not None
    assert cache.max_bytes == 10_000  # the global bound is not lowered for everyone
    cache.get(("gpu-model", 2))
    cache.put(("gpu-model", 9), torch.zeros(250, device="meta"))
    assert cache.get(("gpu-model", 3)) is None and cache.get(("gpu-model", 2)) is not None
    cache.put(("gpu-model", 10), torch.zeros(1000, device="meta"))  # larger than the device bound: not cached
    assert cache.get(("gpu-model", 10)) is None
    cache.max_bytes = 3000  # lowering the global bound evicts at once too
    assert cache.nbytes <= 3000 and len(cache) == 3


def test_releasing_an_encoder_drops_its_cached_vectors():
    from bertscore_viz.engine.encoder import release_encoder

    spec = resolve_model(None)
    cache = EmbeddingCache()
    enc = Encoder(spec, device="cpu", cache=cache)
    other = Encoder(spec, device="cpu", cache=cache)
    other.key = ("another", "model", "cpu", "fp32")
    enc.embed_layers(["The cat sat.", "A dog ran."], [4])
    other.embed_layers(["The cat sat."], [4])
    assert len(cache) > 2
    release_encoder(enc)
    assert all(k[0] == other.key for k in cache._data) and len(cache) > 0


def test_importing_the_package_does_not_load_torch():
    """The app imports the engine at start-up; torch loads with the first model (as before issue 10)."""
    import subprocess

    code = "import sys, bertscore_viz; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
