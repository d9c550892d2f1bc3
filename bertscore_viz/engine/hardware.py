"""What this machine computes fast, measured: bf16 against fp32 on a device, and how long scoring would take.

Exact fp32 gives bert-score's numbers; bf16 (``Scorer(precision="bf16")``) runs the model in 16-bit brain floating
point, which is several times faster where the hardware multiplies bf16 natively (x86 CPUs with ``avx512_bf16`` or
AMX, ARM CPUs with the bf16 extension, CUDA GPUs from Ampere on) and slower where it is emulated. Whether it pays is
measured, not guessed: :func:`probe` times the pieces of one transformer block of a model's shape on the device,
in both precisions, at the process's current torch thread count, and keeps the answer for the process.

The probe times, for a :class:`ModelShape`, a block's six matrix products with their biases (query, key, value,
attention output, feed-forward up and down) on ``T`` token rows (256 for the bundled model, fewer for wide ones:
:data:`PROBE_ROUND_FLOPS`), and on :data:`BATCH_FACTOR` times more rows (a forward batch's size) the attention over
texts of :data:`PROBE_LENGTH` tokens with a padding mask, laid out as the model holds it, and the element-wise work
(GELU, layer norms, residual additions). The precisions alternate for :data:`PROBE_ROUNDS` rounds; each piece keeps
its fastest. At one torch thread on a CPU a piece is timed by the calling thread's CPU time, which other processes
do not inflate; otherwise by wall time (a piece of a few milliseconds is rarely interrupted, and an interrupted
round is discarded). About 0.3 s of CPU for the bundled model.

The estimate (:func:`estimate_seconds`, :func:`estimate_texts`). A forward over texts of ``t_k`` tokens through
``L`` blocks costs ``L * sum_k(2 * t_k * M + 4 * t_k^2 * A)`` floating-point operations (:func:`forward_flops`),
``M`` the weights of a block's matrix products (``4 * H * A + F * H * I``: query, key, value and output, and ``F``
feed-forward matrices of ``H x I``; 1,769,472 for the bundled model) and ``A`` the attention width (``H`` for
BERT-like models). The seconds are the probe's, per token and block: the matrix products at the measured rate,
attention scaled from the probe's length to the texts', the element-wise work as measured, all over
:data:`REAL_CELLS` (the engine's batches carry some padding); plus host work per token (tokenization, batching,
normalising, matching: :data:`HOST_SECONDS_PER_TOKEN`, from ``bench/profile_scoring.py``). For choosing, not
for promising: on WMT16 at one thread it is 5-20% under the measured time (docs/SPEED.md).

No model is loaded here: the shape comes from a loaded encoder, a model directory's ``config.json``, or
:data:`BUNDLED_SHAPE`.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

import torch
import torch.nn.functional as F

from bertscore_viz.errors import InputError, ModelError, shorten
from bertscore_viz.models.spec import resolve_model

__all__ = [
    "ACCURACY_TEXT", "BATCH_FACTOR", "BUNDLED_SHAPE", "FAST_SPEEDUP", "HOST_SECONDS_PER_TOKEN", "MEASURED_ACCURACY",
    "PROBE_LENGTH", "REAL_CELLS", "PROBE_ROUNDS", "PROBE_ROUND_FLOPS", "TYPICAL_LENGTH", "Bf16Status", "ModelShape",
    "PrecisionRates", "ProbeResult", "bf16_status", "clear_probes", "cpu_bf16_flags", "estimate_seconds",
    "estimate_texts", "forward_flops", "model_shape", "probe", "seconds_from", "status_from", "status_lines",
]


@dataclass(frozen=True)
class ModelShape:
    """The sizes that set a transformer encoder's cost per token.

    Attributes:
        hidden: hidden size ``H``.
        intermediate: feed-forward width ``I``.
        heads: attention heads.
        num_layers: transformer blocks of the whole model.
        attention: width of the attention's query/key/value projections (``H`` except T5: heads x d_kv).
        ffn_matrices: ``H x I`` matrices in the feed-forward (2; 3 for gated feed-forwards such as T5 v1.1's).
    """

    hidden: int
    intermediate: int
    heads: int
    num_layers: int
    attention: int = 0
    ffn_matrices: int = 2

    def __post_init__(self):
        if self.attention == 0:
            object.__setattr__(self, "attention", self.hidden)
        for name in ("hidden", "intermediate", "heads", "num_layers", "attention", "ffn_matrices"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ModelError(f"A model shape needs whole numbers of at least 1; {name} = {shorten(value)}.")

    @property
    def matmul_weights(self) -> int:
        """``M``: weights of one block's matrix products (query, key, value, output, feed-forward)."""
        return 4 * self.hidden * self.attention + self.ffn_matrices * self.hidden * self.intermediate

    @property
    def flops_per_token_layer(self) -> int:
        """Operations of one block's matrix products per token, ``2 * M`` (a multiply and an add per weight)."""
        return 2 * self.matmul_weights

    def attention_flops(self, length: int) -> int:
        """One block's attention products for one text: ``4 * length^2 * A`` (``Q K^T``, then the values)."""
        return 4 * int(length) ** 2 * self.attention


#: all-MiniLM-L6-v2, the bundled model (its config.json: hidden 384, intermediate 1536, 12 heads, 6 layers).
BUNDLED_SHAPE = ModelShape(hidden=384, intermediate=1536, heads=12, num_layers=6)
#: Sequence length of the probe's attention (tokens per text, with special tokens).
PROBE_LENGTH = 32
#: Typical text length in tokens when only a token count is known: WMT16 segments average 25 with CLS and SEP.
TYPICAL_LENGTH = 25
#: The probe's attention and element-wise work run on this many times the products' rows (2,048 for the bundled
#: model, as a forward batch of the engine holds up to 4,096 cells).
BATCH_FACTOR = 8
#: Rounds of the probe: each piece keeps its fastest.
PROBE_ROUNDS = 9
#: Matrix-product operations of one probe round in one precision (sets the probe's token rows for wide models).
PROBE_ROUND_FLOPS = 1.0e9
#: Share of the forward batches' cells that are real tokens, not padding: the engine's length-sorted batches on
#: WMT16 (``bench/profile_scoring.py``: 26,948 real tokens in 28,275 cells). The forward's cost is divided by it.
REAL_CELLS = 0.95
#: bf16 counts as fast when whole scoring is estimated at least this much faster than fp32.
FAST_SPEEDUP = 1.25
#: Host work per token of the texts scored: tokenization, batching, normalising, caching and matching; what exact
#: fp32 scoring spends outside the model's forward, measured with ``python bench/profile_scoring.py`` (one thread,
#: 560 WMT16 pairs, bundled model): 0.19 s of CPU for 26,948 tokens. The same in bf16 (the vectors are float32).
HOST_SECONDS_PER_TOKEN = 7e-6
#: What bf16 costs in accuracy, measured on this project's WMT16 data (3,360 pairs of six language pairs with human
#: scores, bundled model, layer 4) by ``python bench/bench_precision.py``: the largest |F1(bf16) - F1(fp32)| and the
#: mean over the six language pairs of the segment-level Pearson correlation with the human scores.
MEASURED_ACCURACY = MappingProxyType({"max_abs_df1": 0.0011, "pearson_fp32": 0.63549, "pearson_bf16": 0.63547,
                                      "pairs": 3360})

_DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
#: CPU feature flags of native bf16 arithmetic (x86: AVX-512 BF16, AMX; ARM: the BF16 extension).
_BF16_FLAGS = ("avx512_bf16", "amx_bf16", "bf16", "svebf16", "sve_bf16")


def cpu_bf16_flags(cpuinfo: str | os.PathLike = "/proc/cpuinfo") -> tuple[str, ...]:
    """The CPU's native bf16 flags among ``avx512_bf16``, ``amx_bf16``, ``bf16``, ``svebf16``, ``sve_bf16``, from
    ``cpuinfo`` (Linux's ``/proc/cpuinfo``): a hint, :func:`probe` measures. Empty when none is found or the file
    cannot be read (another operating system): that does not mean bf16 is slow."""
    try:
        text = Path(cpuinfo).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ()
    found: set[str] = set()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip().lower() in ("flags", "features"):
            found.update(value.split())
    return tuple(f for f in _BF16_FLAGS if f in found)


def _field(config, *names: str):
    for name in names:
        value = config.get(name) if isinstance(config, Mapping) else getattr(config, name, None)
        if value is not None:
            return value
    return None


def _shape_from_config(config, where: str) -> ModelShape:
    hidden = _field(config, "hidden_size", "d_model", "dim", "emb_dim", "n_embd")
    heads = _field(config, "num_attention_heads", "num_heads", "n_heads", "n_head")
    layers = _field(config, "num_hidden_layers", "num_layers", "n_layers", "n_layer")
    if hidden is None or heads is None or layers is None:
        raise ModelError(f"Cannot tell the size of the model in {where}: its config has no hidden size, heads or "
                         "number of layers (hidden_size / d_model / dim, num_attention_heads, num_hidden_layers). "
                         "Give a ModelShape instead.")
    intermediate = _field(config, "intermediate_size", "d_ff", "hidden_dim", "n_inner") or 4 * int(hidden)
    d_kv = _field(config, "d_kv")
    gated = str(_field(config, "feed_forward_proj") or "").startswith("gated")
    return ModelShape(int(hidden), int(intermediate), int(heads), int(layers),
                      int(d_kv) * int(heads) if d_kv else int(hidden), 3 if gated else 2)


def model_shape(model=None) -> ModelShape:
    """The shape of a model, without loading it.

    Args:
        model: None (the bundled model), a :class:`ModelShape`, a loaded encoder (anything with ``.model.config``),
            a transformers config or a ``config.json`` dict, a model directory, or a model name or
            :class:`~bertscore_viz.models.spec.ModelSpec` that resolves to a directory (the catalog's installed
            models, the bundled one).

    Returns:
        The :class:`ModelShape`.

    Raises:
        ModelError: a hub name with no local copy (give the loaded encoder), or a config without the sizes.
    """
    if model is None:
        return BUNDLED_SHAPE
    if isinstance(model, ModelShape):
        return model
    inner_config = getattr(getattr(model, "model", None), "config", None)
    if inner_config is not None:
        return _shape_from_config(inner_config, f"the encoder of {getattr(getattr(model, 'spec', None), 'name', '?')}")
    if isinstance(model, Mapping) or hasattr(model, "to_dict"):
        return _shape_from_config(model, "the config given")
    source = getattr(model, "source", None)
    if source is None:
        source = resolve_model(model).source
    config = Path(source) / "config.json"
    if not config.is_file():
        raise ModelError(f"No config.json at {shorten(str(source), 120)}: the model is not a local directory. Give "
                         "its loaded encoder (Scorer(...).encoder) or a ModelShape to estimate its cost.")
    return _shape_from_config(json.loads(config.read_text(encoding="utf-8")), str(config))


def forward_flops(lengths, layers: int, model=None) -> int:
    """Operations of the matrix products of forward passes over texts of ``lengths`` tokens (special tokens
    included) through ``layers`` blocks (the layer scored, at least 1): ``layers * sum(2 * t * M + 4 * t^2 * A)``
    (:class:`ModelShape`; ``model`` as :func:`model_shape` takes it). Real tokens only: padded batches do more."""
    shape = model_shape(model)
    return int(layers) * sum(2 * int(t) * shape.matmul_weights + shape.attention_flops(int(t)) for t in lengths)


@dataclass(frozen=True)
class PrecisionRates:
    """One precision's measured costs on a device, per token and transformer block.

    Attributes:
        gflops: rate of the block's matrix products, in 1e9 operations per second.
        matmul_seconds: the matrix products, per token (``flops_per_token_layer / (gflops * 1e9)``).
        attention_seconds: attention over texts of :attr:`ProbeResult.length` tokens, per token.
        other_seconds: GELU, layer norms and residual additions, per token.
    """

    gflops: float
    matmul_seconds: float
    attention_seconds: float
    other_seconds: float

    def layer_seconds(self, length: float, probe_length: int) -> float:
        """Seconds per token and block for texts of mean ``length`` tokens (attention grows linearly with it)."""
        return self.matmul_seconds + self.attention_seconds * float(length) / probe_length + self.other_seconds


@dataclass(frozen=True)
class ProbeResult:
    """What :func:`probe` measured for one device, thread count and model shape.

    Attributes:
        device: ``"cpu"`` or ``"cuda:N"``. threads: torch's intra-op threads during the probe (CPU).
        shape: the model shape probed. tokens: token rows per timed piece. length: tokens per text in attention.
        rates: ``{precision: PrecisionRates}``: fp32 and bf16 (and fp16 on CUDA).
        bf16_runs: bf16 arithmetic works on the device (False on a GPU without it; rates then lack bf16).
        seconds: how long the probe took.
    """

    device: str
    threads: int
    shape: ModelShape
    tokens: int
    length: int
    rates: Mapping[str, PrecisionRates]
    bf16_runs: bool
    seconds: float

    def layer_seconds(self, precision: str, length: float = TYPICAL_LENGTH) -> float:
        """Seconds per token and block in ``precision`` for texts of mean ``length`` tokens.

        Raises:
            ModelError: a precision not measured here (fp16 on a CPU, bf16 where it does not run).
        """
        rates = self.rates.get(precision)
        if rates is None:
            raise ModelError(f"No {precision} rates for {self.device}: measured {', '.join(self.rates)}. fp16 "
                             "needs a CUDA device; bf16 needs a CPU or a GPU that supports it.")
        return rates.layer_seconds(length, self.length)


_PROBES: dict[tuple, ProbeResult] = {}
_PROBES_LOCK = threading.Lock()


def _device(device) -> str:
    if device is None or device == "auto":
        return "cuda:0" if torch.cuda.is_available() else "cpu"
    try:
        dev = torch.device(device)
    except (RuntimeError, ValueError, TypeError):
        raise ModelError(f"Unknown device {shorten(device)}: use 'cpu', 'cuda' or 'cuda:N' (or None).") from None
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise ModelError(f"Device {str(device)!r} was asked for, but CUDA is not available here. Use 'cpu'.")
        return f"cuda:{torch.cuda.current_device() if dev.index is None else dev.index}"
    if dev.type != "cpu":
        raise ModelError(f"The probe measures 'cpu' and 'cuda' devices, got {str(device)!r}.")
    return "cpu"


def _pieces(shape: ModelShape, dtype: torch.dtype, device: str, tokens: int, length: int) -> dict[str, Callable]:
    """The pieces of one transformer block as closures over fixed random inputs: the products on ``tokens`` rows, the
    attention and element-wise work on :data:`BATCH_FACTOR` times as many (a forward batch's size: they are bound by
    memory, and cost more per token in a batch that does not fit in the caches)."""
    gen = torch.Generator().manual_seed(0)

    def rand(*size):
        return (torch.randn(*size, generator=gen) * 0.05).to(device=device, dtype=dtype)

    h, a, i, heads = shape.hidden, shape.attention, shape.intermediate, shape.heads
    x, ctx, act = rand(tokens, h), rand(tokens, a), rand(tokens, i)
    batch = BATCH_FACTOR * tokens
    x_big, act_big = rand(batch, h), rand(batch, i)
    w_q, w_k, w_v, w_out = rand(a, h), rand(a, h), rand(a, h), rand(h, a)
    w_up, w_down = rand((shape.ffn_matrices - 1) * i, h), rand(h, i)
    b_a, b_h, b_i = rand(a), rand(h), rand((shape.ffn_matrices - 1) * i)
    n_texts = batch // length
    # query, key and value as the model holds them: views of (texts, length, heads, d) products, heads moved forward
    q, k, v = (rand(n_texts, length, heads, a // heads).transpose(1, 2) for _ in range(3))
    mask = torch.ones(n_texts, 1, length, length, dtype=torch.bool, device=device)
    mask[::2, ..., length - length // 8:] = False  # padding in every other text, as in a real batch
    norm_w, norm_b = torch.ones(h, device=device, dtype=dtype), torch.zeros(h, device=device, dtype=dtype)

    def attention():
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        out.transpose(1, 2).reshape(batch, a)  # the copy back to (tokens, width)

    def other():
        F.gelu(act_big)
        F.layer_norm(x_big + x_big, (h,), norm_w, norm_b)
        F.layer_norm(x_big + x_big, (h,), norm_w, norm_b)

    # each product timed alone (with its bias, as nn.Linear runs it): a piece of a millisecond or two is rarely
    # interrupted by another process
    return {"q": lambda: F.linear(x, w_q, b_a), "k": lambda: F.linear(x, w_k, b_a),
            "v": lambda: F.linear(x, w_v, b_a), "out": lambda: F.linear(ctx, w_out, b_h),
            "up": lambda: F.linear(x, w_up, b_i), "down": lambda: F.linear(act, w_down, b_h),
            "attention": attention, "other": other}


def _timed_rounds(pieces: Mapping[str, Mapping[str, Callable]], rounds: int, cuda: str | None):
    """``{precision: {piece: fastest seconds}}``, the precisions alternating within each round.

    On a CPU at one torch thread every operation runs in the calling thread, so its CPU time (``thread_time``) is the
    time the piece takes, whatever else the machine runs; otherwise (several threads, a GPU) wall time."""
    if cuda is not None:
        def clock():
            torch.cuda.synchronize(cuda)
            return time.perf_counter()
    else:
        clock = time.thread_time if torch.get_num_threads() == 1 else time.perf_counter
    best = {p: {name: float("inf") for name in fns} for p, fns in pieces.items()}
    with torch.no_grad():
        for fns in pieces.values():  # warm-up: first-call allocations and kernel selection
            for fn in fns.values():
                fn()
        for _ in range(rounds):
            for p, fns in pieces.items():
                for name, fn in fns.items():
                    start = clock()
                    fn()
                    best[p][name] = min(best[p][name], clock() - start)
    return best


def _probe_tokens(shape: ModelShape, length: int) -> int:
    rows = int(PROBE_ROUND_FLOPS // shape.flops_per_token_layer)
    return max(2 * length, min(256, rows // length * length))


def probe(device=None, model=None, *, refresh: bool = False) -> ProbeResult:
    """Measure fp32 and bf16 (and fp16 on CUDA) on a device for a model's shape (what is timed: the module's
    docstring). Cached per process by device, torch's thread count and shape: the same ones return the same
    :class:`ProbeResult` at no cost.

    Args:
        device: ``"cpu"``, ``"cuda"``, ``"cuda:N"``; None: CUDA when available, as the engine chooses.
        model: what :func:`model_shape` takes (None: the bundled model).
        refresh: measure again and replace the cached result.

    Returns:
        The :class:`ProbeResult`.

    Raises:
        ModelError: an unknown or unavailable device, or a model whose shape cannot be told.
    """
    dev = _device(device)
    shape = model_shape(model)
    threads = torch.get_num_threads()
    key = (dev, threads, shape)
    with _PROBES_LOCK:
        hit = _PROBES.get(key)
        if hit is not None and not refresh:
            return hit
        start = time.perf_counter()
        cuda = dev.startswith("cuda")
        bf16_runs = (not cuda) or torch.cuda.is_bf16_supported()
        precisions = ["fp32"] + (["bf16"] if bf16_runs else []) + (["fp16"] if cuda else [])
        tokens = _probe_tokens(shape, PROBE_LENGTH)
        pieces = {p: _pieces(shape, _DTYPES[p], dev, tokens, PROBE_LENGTH) for p in precisions}
        best = _timed_rounds(pieces, PROBE_ROUNDS, dev if cuda else None)
        flops = tokens * shape.flops_per_token_layer
        rates = {}
        for p, b in best.items():
            mm = sum(b[name] for name in ("q", "k", "v", "out", "up", "down"))
            batch = BATCH_FACTOR * tokens
            rates[p] = PrecisionRates(flops / mm / 1e9, mm / tokens, b["attention"] / batch, b["other"] / batch)
        result = ProbeResult(dev, threads, shape, tokens, PROBE_LENGTH, MappingProxyType(rates), bf16_runs,
                             time.perf_counter() - start)
        _PROBES[key] = result
        return result


def clear_probes() -> None:
    """Forget every cached probe (the next :func:`probe` measures again)."""
    with _PROBES_LOCK:
        _PROBES.clear()


def _checked(precision: str, counts: Mapping[str, object]) -> None:
    if precision not in _DTYPES:
        raise ModelError(f"Unknown precision {shorten(precision)}. Expected one of fp32, fp16, bf16.")
    for name, value in counts.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise InputError(f"{name} must be a whole number of at least 0, got {shorten(value)}.")


def seconds_from(result: ProbeResult, n_tokens: int, layers: int, precision: str, attention_length: float) -> float:
    """The estimate's arithmetic on a probe's result: ``n_tokens * (max(layers, 1) * layer_seconds(precision,
    attention_length) / REAL_CELLS + HOST_SECONDS_PER_TOKEN)`` (:func:`estimate_seconds`)."""
    forward = max(int(layers), 1) * result.layer_seconds(precision, attention_length) / REAL_CELLS
    return n_tokens * (forward + HOST_SECONDS_PER_TOKEN)


def _estimate(n_tokens: int, layers: int, precision: str, model, device, attention_length: float) -> float:
    if n_tokens == 0:
        return 0.0
    if device is None:
        device = getattr(model, "device", None)
    result = probe(device, model)
    if precision == "fp16" and not result.device.startswith("cuda"):
        raise ModelError("fp16 needs a CUDA device; on the CPU estimate precision='bf16' (or the exact 'fp32').")
    return seconds_from(result, n_tokens, layers, precision, attention_length)


def estimate_seconds(n_tokens: int, layers: int, precision: str = "fp32", model=None, *, n_texts: int | None = None,
                     device=None) -> float:
    """Estimated seconds to score texts holding ``n_tokens`` tokens in all, from this machine's probe.

    ``n_tokens * (layers * (2 M / rate + attention(t) + element-wise) + HOST_SECONDS_PER_TOKEN)`` with the probe's
    per-token costs for ``precision`` (:meth:`PrecisionRates.layer_seconds`), attention at ``t = n_tokens /
    n_texts`` tokens per text (default :data:`TYPICAL_LENGTH`). Count each distinct text once (the engine embeds it
    once), with its special tokens. The first call for a device, thread count and shape runs :func:`probe` (a
    fraction of a second); later calls are arithmetic. With the texts' lengths at hand, :func:`estimate_texts` is
    closer (attention grows with each text's own length).

    Args:
        n_tokens: tokens of the distinct texts to embed.
        layers: transformer blocks run: the layer scored (at least 1).
        precision: ``"fp32"``, ``"bf16"`` or ``"fp16"`` (CUDA).
        model: what :func:`model_shape` takes; a loaded encoder also gives the device.
        n_texts: how many texts hold those tokens (sets the attention's length).
        device: default the encoder's, else as the engine chooses.

    Returns:
        Seconds, a float (0.0 for no tokens).

    Raises:
        ModelError: an unknown precision, one the device does not run, or an unknown device or model shape.
        InputError: a count that is not a whole number of at least 0.
    """
    _checked(precision, {"n_tokens": n_tokens, "layers": layers, "n_texts": 0 if n_texts is None else n_texts})
    length = n_tokens / n_texts if n_texts else TYPICAL_LENGTH
    return _estimate(n_tokens, layers, precision, model, device, length)


def estimate_texts(lengths, layers: int, precision: str = "fp32", model=None, *, device=None) -> float:
    """:func:`estimate_seconds` for texts of known lengths (each distinct text's tokens with its special tokens, e.g.
    from ``Scorer.encode``): attention at the length a token sees on average, ``sum(t^2) / sum(t)``, as a long
    text's tokens each attend over more tokens. Other arguments, result and errors as :func:`estimate_seconds`."""
    lengths = [int(t) if hasattr(t, "__index__") else t for t in lengths]  # numpy integers too
    bad = next((k for k, t in enumerate(lengths) if isinstance(t, bool) or not isinstance(t, int) or t < 0), None)
    _checked(precision, {"layers": layers, **({} if bad is None else {f"lengths[{bad}]": lengths[bad]})})
    n_tokens = sum(lengths)
    seen = sum(int(t) ** 2 for t in lengths) / n_tokens if n_tokens else 0.0
    return _estimate(n_tokens, layers, precision, model, device, seen)


@dataclass(frozen=True)
class Bf16Status:
    """Whether bf16 pays on a device, what the app's sidebar and the CLI say about it.

    Attributes:
        device: the device measured.
        fast: bf16 scoring is estimated at least :data:`FAST_SPEEDUP` times faster than fp32 here: offer it.
        runs: bf16 arithmetic works on the device at all.
        speedup: estimated whole-scoring speedup of bf16 over fp32 (bundled model, layer 4, texts of
            :data:`TYPICAL_LENGTH` tokens, host work included); below 1 when bf16 is slower.
        matmul_speedup: the matrix products' rate in bf16 over fp32.
        fp32_gflops, bf16_gflops: the measured matrix-product rates (1e9 operations per second).
        cpu_flags: the CPU's native bf16 flags (:func:`cpu_bf16_flags`; empty on a GPU).
        threads: torch threads during the measurement.
        reason: one or two sentences: what was measured and why bf16 is or is not fast here.
        label: a one-line choice label for a UI.
        help: what bf16 costs in accuracy and what it is labelled, for a tooltip or ``--help``.
    """

    device: str
    fast: bool
    runs: bool
    speedup: float
    matmul_speedup: float
    fp32_gflops: float
    bf16_gflops: float
    cpu_flags: tuple[str, ...]
    threads: int
    reason: str
    label: str
    help: str


#: The accuracy sentence of every help text (numbers from :data:`MEASURED_ACCURACY`).
ACCURACY_TEXT = (f"bf16 moves F1 by about 0.001 (at most {MEASURED_ACCURACY['max_abs_df1']:.4f} on "
                 f"{MEASURED_ACCURACY['pairs']:,} WMT16 pairs) and agrees with human scores as well (mean Pearson "
                 f"{MEASURED_ACCURACY['pearson_bf16']:.5f} against {MEASURED_ACCURACY['pearson_fp32']:.5f} in fp32), "
                 "but its numbers are not bert-score's: every result says _bf16 in its signature. Keep exact fp32 "
                 "for numbers to publish next to bert-score's.")


def bf16_status(device=None) -> Bf16Status:
    """Whether bf16 is fast on a device: :func:`status_from` on the probe of the bundled model's shape (cached per
    process) and the CPU's flags.

    Args:
        device: as :func:`probe` takes it.

    Returns:
        The :class:`Bf16Status`.

    Raises:
        ModelError: an unknown or unavailable device.
    """
    result = probe(device)
    return status_from(result, () if result.device.startswith("cuda") else cpu_bf16_flags())


def status_from(result: ProbeResult, flags: tuple[str, ...] = ()) -> Bf16Status:
    """What a probe's result says about bf16: fast when whole scoring (texts of :data:`TYPICAL_LENGTH` tokens, the
    probed shape at layer 4, host work included: :func:`seconds_from`) is at least :data:`FAST_SPEEDUP` times
    faster than fp32, and the texts a UI shows.

    Args:
        result: from :func:`probe`.
        flags: the CPU's native bf16 flags (:func:`cpu_bf16_flags`), named in the reason.

    Returns:
        The :class:`Bf16Status`.
    """
    dev = result.device
    fp32 = result.rates["fp32"]
    kind = "GPU" if dev.startswith("cuda") else "CPU"
    if not result.bf16_runs:
        return Bf16Status(dev, False, False, 0.0, 0.0, fp32.gflops, 0.0, tuple(flags), result.threads,
                          "This GPU does not support bf16 (torch.cuda.is_bf16_supported() is False).",
                          "bf16: not supported on this GPU", "Use fp16 on this GPU for speed, or exact fp32.")
    bf16 = result.rates["bf16"]
    n = 1000 * TYPICAL_LENGTH
    speedup = (seconds_from(result, n, 4, "fp32", TYPICAL_LENGTH)
               / seconds_from(result, n, 4, "bf16", TYPICAL_LENGTH))
    matmul = bf16.gflops / fp32.gflops
    fast = speedup >= FAST_SPEEDUP
    threads = f"{result.threads} torch thread{'s' if result.threads != 1 else ''}"
    where = f"this {kind}" + (f" ({', '.join(flags)})" if flags else " (no native bf16 flag)" if kind == "CPU" else "")
    measured = (f"Measured on {where} with {threads}: bf16 matrix products at {bf16.gflops:,.0f} GFLOP/s against "
                f"{fp32.gflops:,.0f} in fp32 ({matmul:.1f}x); scoring estimated {speedup:.1f}x as fast.")
    if fast:
        label = f"fast (bf16): about {speedup:.1f}x faster here"
        reason = measured
        advice = f"bf16 runs the model in 16-bit brain floating point: about {speedup:.1f}x faster here. "
    else:
        slower = "slower" if speedup < 1 else "hardly faster"
        label = f"bf16: {slower} on this {kind} ({speedup:.1f}x)"
        emulated = "" if flags or kind == "GPU" else " (without native bf16 instructions it is emulated)"
        reason = f"{measured} bf16 is not worth it here{emulated}."
        advice = f"bf16 would be {slower} here ({speedup:.1f}x fp32's speed): keep exact fp32. "
    return Bf16Status(dev, fast, True, speedup, matmul, fp32.gflops, bf16.gflops, tuple(flags), result.threads,
                      reason, label, advice + ACCURACY_TEXT)


def status_lines(status: Bf16Status) -> list[str]:
    """What ``models list`` prints about bf16 on this machine, one string per line."""
    head = (f"bf16 (--precision bf16) on {status.device}: "
            + ("fast here, " if status.fast else "not faster here, " if status.runs else "not supported. ")
            + (f"about {status.speedup:.1f}x fp32's scoring speed." if status.runs else ""))
    return [head, status.reason, ACCURACY_TEXT]
