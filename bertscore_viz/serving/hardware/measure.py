"""What this machine computes fast, measured: the pieces of a transformer block in fp32, bf16 (and fp16 on CUDA) on a
device, for a model's shape.

Exact fp32 gives bert-score's numbers; bf16 (``Scorer(precision="bf16")``) runs the model in 16-bit brain floating
point, which is several times faster where the hardware multiplies bf16 natively (x86 CPUs with ``avx512_bf16`` or
AMX, ARM CPUs with the bf16 extension, CUDA GPUs from Ampere on) and slower where it is emulated. Whether it pays is
measured, not guessed: :func:`probe` times the pieces of one transformer block of a model's shape on the device,
in both precisions, at the process's current torch thread count, and keeps the answer for the process.

The probe times, for a :class:`ModelShape`, a block's six matrix products with their biases (query, key, value,
attention output, feed-forward up and down) on ``T`` token rows (:data:`MAX_PROBE_TOKENS` for the bundled model,
fewer for wide ones: :data:`PROBE_ROUND_FLOPS`), and on :data:`BATCH_FACTOR` times more rows (a forward batch's
size) the attention over texts of :data:`PROBE_LENGTH` tokens with a padding mask, laid out as the model holds it,
and the element-wise work (GELU, layer norms, residual additions). The precisions alternate for
:data:`PROBE_ROUNDS` rounds; each piece keeps its fastest. At one torch thread on a CPU a piece is timed by the
calling thread's CPU time, which other processes do not inflate; otherwise by wall time (a piece of a few
milliseconds is rarely interrupted, and an interrupted round is discarded). About 0.3 s of CPU for the bundled model.

A forward over texts of ``t_k`` tokens through ``L`` blocks costs ``L * sum_k(2 * t_k * M + 4 * t_k^2 * A)``
floating-point operations (:func:`forward_flops`), ``M`` the weights of a block's matrix products
(``4 * H * A + F * H * I``: query, key, value and output, and ``F`` feed-forward matrices of ``H x I``; 1,769,472 for
the bundled model) and ``A`` the attention width (``H`` for BERT-like models). What the seconds of scoring are made
of: :mod:`bertscore_viz.serving.hardware.estimate`.

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

from bertscore_viz.engine.devices import precision_dtype, resolve_device
from bertscore_viz.errors import ModelError, shorten
from bertscore_viz.models.spec import resolve_model

__all__ = [
    "BATCH_FACTOR", "BUNDLED_SHAPE", "MAX_PROBE_TOKENS", "PROBE_LENGTH", "PROBE_ROUNDS", "PROBE_ROUND_FLOPS",
    "TYPICAL_LENGTH", "ModelShape", "PrecisionRates", "ProbeResult", "clear_probes", "cpu_bf16_flags",
    "forward_flops", "model_shape", "probe",
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
#: Most token rows of the probe's matrix products (the bundled model's; wide models get fewer).
MAX_PROBE_TOKENS = 256
#: Scale of the probe's random inputs and weights (their values do not change what is timed).
PROBE_VALUE_SCALE = 0.05
#: Every other text of the probe's attention has its last 1 / this of positions masked as padding.
PROBE_PADDING_SHARE = 8
#: The matrix products the probe times, by name.
MATMUL_PIECES = ("q", "k", "v", "out", "up", "down")
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


def _probe_device(device) -> str:
    """The engine's device rule (:func:`~bertscore_viz.engine.devices.resolve_device`), CUDA named with its index:
    the probe measures a physical device."""
    dev = resolve_device(device, indexed=True)
    if torch.device(dev).type not in ("cpu", "cuda"):
        raise ModelError(f"The probe measures 'cpu' and 'cuda' devices, got {str(device)!r}.")
    return dev


def _pieces(shape: ModelShape, dtype: torch.dtype, device: str, tokens: int, length: int) -> dict[str, Callable]:
    """The pieces of one transformer block as closures over fixed random inputs: the products on ``tokens`` rows, the
    attention and element-wise work on :data:`BATCH_FACTOR` times as many (a forward batch's size: they are bound by
    memory, and cost more per token in a batch that does not fit in the caches)."""
    gen = torch.Generator().manual_seed(0)

    def rand(*size):
        return (torch.randn(*size, generator=gen) * PROBE_VALUE_SCALE).to(device=device, dtype=dtype)

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
    mask[::2, ..., length - length // PROBE_PADDING_SHARE:] = False  # padding in every other text, as in a real batch
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
    return max(2 * length, min(MAX_PROBE_TOKENS, rows // length * length))


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
    dev = _probe_device(device)
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
        pieces = {p: _pieces(shape, precision_dtype(p), dev, tokens, PROBE_LENGTH) for p in precisions}
        best = _timed_rounds(pieces, PROBE_ROUNDS, dev if cuda else None)
        flops = tokens * shape.flops_per_token_layer
        rates = {}
        for p, b in best.items():
            mm = sum(b[name] for name in MATMUL_PIECES)
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


