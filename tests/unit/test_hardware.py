"""The hardware probe (bertscore_viz.serving.hardware): the FLOP formula against a hand count and against torch's own
FLOP counter on the bundled model's real forward, the probe's contract and its cache, the estimate's arithmetic
(by hand from the probe's numbers), its monotonicity and its distance from a real measured scoring run, and the texts
the app and the CLI show (both branches: bf16 fast here, and slower on a probe result that says so)."""

import copy
import os
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from bertscore_viz import Scorer
from bertscore_viz.engine.cache import CACHE
from bertscore_viz.engine.encoder import model_through_layer
from bertscore_viz.errors import InputError, ModelError
from bertscore_viz.models.spec import resolve_model
from bertscore_viz.serving import hardware as hw

DATA = Path(os.environ.get("BERTSCORE_VIZ_DATA") or Path(__file__).resolve().parents[2] / "data") \
    / "wmt16-da-to-english"
#: A tiny shape: its probe takes milliseconds (the cache tests measure it several times).
TINY = hw.ModelShape(hidden=64, intermediate=128, heads=2, num_layers=2)


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """One torch thread, as the figures of issue 35 (and the probe's CPU-time clock); restored afterwards."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def enc():
    return Scorer(layer=4, device="cpu").encoder


# --- shapes and FLOPs -----------------------------------------------------------------------------------------------
def test_bundled_shape_is_the_bundled_models_config(enc):
    assert hw.model_shape() == hw.BUNDLED_SHAPE
    assert hw.model_shape(enc) == hw.BUNDLED_SHAPE  # from the loaded model's config
    assert hw.model_shape(resolve_model(None)) == hw.BUNDLED_SHAPE  # from config.json on disk, no model loaded
    assert hw.model_shape("all-MiniLM-L6-v2") == hw.BUNDLED_SHAPE
    assert hw.model_shape(resolve_model(None).source) == hw.BUNDLED_SHAPE


def test_flops_by_hand_for_the_bundled_model():
    # q, k, v, output: 4 x 384 x 384 = 589,824; feed-forward 2 x 384 x 1536 = 1,179,648
    assert hw.BUNDLED_SHAPE.matmul_weights == 1_769_472
    assert hw.BUNDLED_SHAPE.flops_per_token_layer == 3_538_944
    assert hw.BUNDLED_SHAPE.attention_flops(10) == 153_600  # 4 x 10^2 x 384
    # texts of 10 and 37 tokens through 4 blocks: 4 x (2*10*M + 4*100*384 + 2*37*M + 4*1369*384)
    assert hw.forward_flops([10, 37], 4) == 674_347_008
    assert hw.forward_flops([], 4) == 0
    assert hw.forward_flops(np.array([10, 37]), 4) == 674_347_008


def test_flops_equal_torchs_flop_counter_on_the_real_forward(enc):
    """torch's FlopCounterMode counts every matrix product of the bundled model's forward through 4 blocks (eager
    attention, whose products are bmm; a copy of the model, so the shared one keeps its attention)."""
    model = copy.deepcopy(enc.model)
    model.set_attn_implementation("eager")
    net = model_through_layer(model, 4)
    for text in ("The quick brown fox jumps over the lazy dog near the river bank.", "Short one."):
        ids = torch.as_tensor(enc.encode([text])[0].ids)[None]
        with torch.no_grad(), FlopCounterMode(display=False) as counter:
            net(input_ids=ids, attention_mask=torch.ones_like(ids))
        counts = {str(k): v for k, v in counter.get_flop_counts()["Global"].items()}
        t = ids.shape[1]
        assert counts["aten.addmm"] == 4 * 2 * t * hw.BUNDLED_SHAPE.matmul_weights
        assert counts["aten.bmm"] == 4 * hw.BUNDLED_SHAPE.attention_flops(t)
        assert counter.get_total_flops() == hw.forward_flops([t], 4, enc)


def test_shapes_of_other_config_layouts():
    distil = hw.model_shape({"dim": 768, "hidden_dim": 3072, "n_heads": 12, "n_layers": 6})
    assert distil == hw.ModelShape(768, 3072, 12, 6)
    t5 = hw.model_shape({"d_model": 512, "d_ff": 1024, "num_heads": 6, "d_kv": 64, "num_layers": 8,
                         "feed_forward_proj": "gated-gelu"})
    assert (t5.attention, t5.ffn_matrices) == (384, 3)
    assert t5.matmul_weights == 4 * 512 * 384 + 3 * 512 * 1024
    xlm = hw.model_shape({"emb_dim": 1280, "n_heads": 16, "n_layers": 16})  # no FFN width given: 4 x hidden
    assert xlm.intermediate == 5120 and xlm.attention == 1280
    with pytest.raises(ModelError, match="hidden size"):
        hw.model_shape({"vocab_size": 30522})
    with pytest.raises(ModelError, match="not a local directory"):
        hw.model_shape("some-org/model-not-on-this-machine")
    with pytest.raises(ModelError, match="whole numbers"):
        hw.ModelShape(0, 10, 1, 1)


def test_cpu_flags_from_cpuinfo(tmp_path):
    x86 = tmp_path / "x86"
    x86.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx512f avx512_bf16 amx_tile amx_bf16\n\n"
                   "processor\t: 1\nflags\t\t: fpu sse2 avx512f avx512_bf16 amx_tile amx_bf16\n")
    assert hw.cpu_bf16_flags(x86) == ("avx512_bf16", "amx_bf16")
    arm = tmp_path / "arm"
    arm.write_text("processor\t: 0\nFeatures\t: fp asimd sve bf16 svebf16 i8mm\n")
    assert hw.cpu_bf16_flags(arm) == ("bf16", "svebf16")
    old = tmp_path / "old"
    old.write_text("flags\t\t: fpu sse2 avx2 avx512f avx512bw\n")  # AVX-512 without BF16: emulated
    assert hw.cpu_bf16_flags(old) == ()
    assert hw.cpu_bf16_flags(tmp_path / "missing") == ()


# --- the probe --------------------------------------------------------------------------------------------------------
def test_probe_contract():
    start = time.process_time()
    result = hw.probe("cpu", refresh=True)
    assert time.process_time() - start < 0.8  # well under a second of work (wall time: more on a loaded machine)
    assert result.device == "cpu" and result.threads == 1 and result.shape == hw.BUNDLED_SHAPE
    assert result.bf16_runs and set(result.rates) == {"fp32", "bf16"}  # fp16 is CUDA only
    assert 0 < result.seconds < 10
    for rates in result.rates.values():
        assert 1.0 < rates.gflops < 1e5
        assert rates.matmul_seconds * rates.gflops * 1e9 == pytest.approx(hw.BUNDLED_SHAPE.flops_per_token_layer)
        assert rates.attention_seconds > 0 and rates.other_seconds > 0
    with pytest.raises(TypeError):
        result.rates["fp16"] = result.rates["fp32"]  # read-only
    with pytest.raises(ModelError, match="fp16"):
        result.layer_seconds("fp16")
    with pytest.raises(ModelError, match="Unknown device"):
        hw.probe("gpu0")


def test_probe_is_cached_per_device_threads_and_shape():
    hw.clear_probes()
    first = hw.probe("cpu", TINY)
    assert hw.probe("cpu", TINY) is first  # the same object: not measured again
    assert hw.probe(None, TINY) is first  # None: the engine's choice, the CPU here
    assert hw.probe("cpu") is not first  # another shape, another measurement
    fresh = hw.probe("cpu", TINY, refresh=True)
    assert fresh is not first and hw.probe("cpu", TINY) is fresh
    torch.set_num_threads(2)
    try:
        two = hw.probe("cpu", TINY)
    finally:
        torch.set_num_threads(1)
    assert two is not fresh and two.threads == 2
    assert hw.probe("cpu", TINY) is fresh
    hw.clear_probes()
    assert hw.probe("cpu", TINY) is not fresh


def test_concurrent_first_calls_measure_once():
    hw.clear_probes()
    got, barrier = [], threading.Barrier(4)

    def call():
        barrier.wait()
        got.append(hw.probe("cpu", TINY))

    threads = [threading.Thread(target=call) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 4 and all(r is got[0] for r in got)


# --- the estimate -----------------------------------------------------------------------------------------------------
def test_estimate_is_the_documented_formula():
    result = hw.probe("cpu")
    for precision in ("fp32", "bf16"):
        r = result.rates[precision]
        n, layers, texts = 26_972, 4, 1_070
        t = n / texts
        by_hand = n * (layers * (hw.BUNDLED_SHAPE.flops_per_token_layer / (r.gflops * 1e9)
                                 + r.attention_seconds * t / hw.PROBE_LENGTH + r.other_seconds) / hw.REAL_CELLS
                       + hw.HOST_SECONDS_PER_TOKEN)
        assert hw.estimate_seconds(n, layers, precision, n_texts=texts) == pytest.approx(by_hand, rel=1e-12)
        default_length = n * (layers * result.layer_seconds(precision, hw.TYPICAL_LENGTH) / hw.REAL_CELLS
                              + hw.HOST_SECONDS_PER_TOKEN)
        assert hw.estimate_seconds(n, layers, precision) == pytest.approx(default_length, rel=1e-12)
        assert hw.seconds_from(result, n, layers, precision, t) == pytest.approx(by_hand, rel=1e-12)


def test_estimate_is_monotone():
    for precision in ("fp32", "bf16"):
        by_tokens = [hw.estimate_seconds(n, 4, precision, n_texts=max(n // 25, 1)) for n in (25, 250, 2500, 25_000)]
        assert by_tokens == sorted(by_tokens) and len(set(by_tokens)) == 4
        by_layers = [hw.estimate_seconds(10_000, k, precision, n_texts=400) for k in (1, 2, 4, 6)]
        assert by_layers == sorted(by_layers) and len(set(by_layers)) == 4
        by_length = [hw.estimate_seconds(10_000, 4, precision, n_texts=k) for k in (1_000, 400, 100)]  # longer texts
        assert by_length == sorted(by_length) and len(set(by_length)) == 3
        assert hw.estimate_seconds(0, 4, precision) == 0.0
        assert hw.estimate_seconds(1000, 0, precision) == hw.estimate_seconds(1000, 1, precision)  # one block runs


def test_estimate_texts_weights_attention_by_each_texts_length():
    equal = hw.estimate_texts([25] * 40, 4, "fp32")
    assert equal == pytest.approx(hw.estimate_seconds(1000, 4, "fp32", n_texts=40), rel=1e-12)
    spread = hw.estimate_texts([5, 45] * 20, 4, "fp32")  # same tokens and texts, attention over longer texts
    assert spread > equal
    result = hw.probe("cpu")
    seen = (20 * 25 + 20 * 2025) / 1000  # sum(t^2) / sum(t)
    assert spread == pytest.approx(hw.seconds_from(result, 1000, 4, "fp32", seen), rel=1e-12)
    assert hw.estimate_texts(np.array([10, 20]), 4, "bf16") == hw.estimate_texts([10, 20], 4, "bf16")
    assert hw.estimate_texts([], 4) == 0.0


def test_estimate_errors():
    with pytest.raises(ModelError, match="Unknown precision"):
        hw.estimate_seconds(100, 4, "fp8")
    with pytest.raises(ModelError, match="CUDA"):
        hw.estimate_seconds(100, 4, "fp16", device="cpu")
    for bad in (-1, 2.5, True, "100"):
        with pytest.raises(InputError, match="n_tokens"):
            hw.estimate_seconds(bad, 4)
    with pytest.raises(InputError, match="layers"):
        hw.estimate_seconds(100, -1)
    with pytest.raises(InputError, match=r"lengths\[1\]"):
        hw.estimate_texts([3, -4], 4)


@pytest.mark.slow
def test_estimate_is_near_a_real_scoring_run(enc):
    """The estimate against the CPU time of real scoring (one thread: the work done, nearly independent of other
    processes) on 120 WMT16 pairs: within a factor of 1.6 either way (measured: 5-10% under on a quiet machine)."""
    cands, refs = ((DATA / f"DAseg-newstest2016.{kind}.ro-en").read_text(encoding="utf-8").splitlines()[300:420]
                   for kind in ("mt-system", "reference"))
    for precision in ("fp32", "bf16"):
        sc = Scorer(layer=4, precision=precision, device="cpu")
        sc.score(cands[:4], refs[:4])
        CACHE.clear()
        lengths = [len(t.ids) for t in sc.encode(list(dict.fromkeys(cands + refs)))]
        start = time.process_time()
        sc.score(cands, refs)
        measured = time.process_time() - start
        estimate = hw.estimate_texts(lengths, 4, precision, sc.encoder)
        assert measured / 1.6 < estimate < measured * 1.6, (precision, estimate, measured)


# --- what the app and the CLI show ----------------------------------------------------------------------------------
def test_status_on_this_machine():
    status = hw.bf16_status("cpu")
    result = hw.probe("cpu")
    n = 1000 * hw.TYPICAL_LENGTH
    expected = (hw.seconds_from(result, n, 4, "fp32", hw.TYPICAL_LENGTH)
                / hw.seconds_from(result, n, 4, "bf16", hw.TYPICAL_LENGTH))
    assert status.speedup == pytest.approx(expected, rel=1e-12)
    assert status.fast == (status.speedup >= hw.FAST_SPEEDUP) and status.runs
    assert status.matmul_speedup == pytest.approx(status.bf16_gflops / status.fp32_gflops)
    assert status.cpu_flags == hw.cpu_bf16_flags() and status.threads == 1
    assert "_bf16" in status.help and f"{hw.MEASURED_ACCURACY['max_abs_df1']:.4f}" in status.help
    assert f"{status.speedup:.1f}x" in status.label and "\n" not in status.label
    if {"avx512_bf16", "amx_bf16"} & set(status.cpu_flags):  # native bf16 here: it must measure fast
        assert status.fast and status.label.startswith("fast (bf16)")
        assert status.matmul_speedup > 1.5  # measured 2.0-2.4x on this project's EPYC, 3.8-4.5x on an earlier one
    lines = hw.status_lines(status)
    assert len(lines) == 3 and "--precision bf16" in lines[0] and lines[1] == status.reason


def _result(fp32_gflops: float, bf16_gflops: float) -> hw.ProbeResult:
    shape = hw.BUNDLED_SHAPE
    rates = {p: hw.PrecisionRates(g, shape.flops_per_token_layer / (g * 1e9), 1.5e-6, 1e-6)
             for p, g in (("fp32", fp32_gflops), ("bf16", bf16_gflops))}
    return hw.ProbeResult("cpu", 1, shape, 256, hw.PROBE_LENGTH, rates, True, 0.1)


def test_status_where_bf16_is_emulated():
    """A CPU without native bf16 (its matrix products at half fp32's rate): not offered, and said to be slower."""
    status = hw.status_from(_result(100.0, 50.0))
    assert not status.fast and status.runs and status.speedup < 1
    assert status.label == f"bf16: slower on this CPU ({status.speedup:.1f}x)"
    assert "emulated" in status.reason and "keep exact fp32" in status.help
    flagged = hw.status_from(_result(100.0, 105.0), ("avx512_bf16",))
    assert not flagged.fast and 1 <= flagged.speedup < hw.FAST_SPEEDUP
    assert "hardly faster" in flagged.label and "avx512_bf16" in flagged.reason
    fast = hw.status_from(_result(100.0, 450.0), ("avx512_bf16",))
    assert fast.fast and fast.label.startswith("fast (bf16): about ")
    assert "not supported" in hw.status_lines(hw.status_from(
        hw.ProbeResult("cuda:0", 1, hw.BUNDLED_SHAPE, 256, 32, {"fp32": _result(1, 1).rates["fp32"]}, False, 0.1)))[0]


def test_the_clis_precision_help_quotes_the_measured_accuracy_and_ends_its_sentence():
    """--precision's help is static text (so that --help loads no torch): it must say what MEASURED_ACCURACY says."""
    from bertscore_viz.cli.parser import PRECISION_HELP

    acc = hw.MEASURED_ACCURACY
    for figure in (f"{acc['max_abs_df1']:.4f}", f"{acc['pairs']:,}", f"{acc['pearson_bf16']:.5f}",
                   f"{acc['pearson_fp32']:.5f}"):
        assert figure in PRECISION_HELP, figure
    assert PRECISION_HELP.endswith(".") and "_bf16" in PRECISION_HELP and "_fp16" in PRECISION_HELP
