"""How long scoring would take on this machine, from the probe (:func:`~bertscore_viz.serving.hardware.measure.probe`).

The estimate (:func:`estimate_seconds`, :func:`estimate_texts`): the seconds are the probe's, per token and block: the
matrix products at the measured rate, attention scaled from the probe's length to the texts', the element-wise work
as measured, all over :data:`REAL_CELLS` (the engine's batches carry some padding); plus host work per token
(tokenization, batching, normalising, matching: :data:`HOST_SECONDS_PER_TOKEN`, from ``bench/profile_scoring.py``).
For choosing, not for promising: on WMT16 at one thread it is 5-20% under the measured time (docs/SPEED.md).
"""

from __future__ import annotations

from collections.abc import Mapping

from bertscore_viz.engine.devices import precision_dtype
from bertscore_viz.errors import InputError, ModelError, shorten
from bertscore_viz.serving.hardware.measure import TYPICAL_LENGTH, ProbeResult, probe

__all__ = ["HOST_SECONDS_PER_TOKEN", "REAL_CELLS", "estimate_seconds", "estimate_texts", "seconds_from"]

#: Share of the forward batches' cells that are real tokens, not padding: the engine's length-sorted batches on
#: WMT16 (``bench/profile_scoring.py``: 26,948 real tokens in 28,275 cells). The forward's cost is divided by it.
REAL_CELLS = 0.95
#: Host work per token of the texts scored: tokenization, batching, normalising, caching and matching; what exact
#: fp32 scoring spends outside the model's forward, measured with ``python bench/profile_scoring.py`` (one thread,
#: 560 WMT16 pairs, bundled model): 0.19 s of CPU for 26,948 tokens. The same in bf16 (the vectors are float32).
HOST_SECONDS_PER_TOKEN = 7e-6


def _checked(precision: str, counts: Mapping[str, object]) -> None:
    precision_dtype(precision)  # an unknown precision is a ModelError
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


