"""Whether bf16 pays on this machine, and the sentences the app's sidebar, Compare scoring and ``models list`` show
about it: :func:`bf16_status` on the probe (:func:`~bertscore_viz.serving.hardware.measure.probe`) of the bundled
model's shape, with what bf16 costs in accuracy (:data:`MEASURED_ACCURACY`)."""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

from bertscore_viz.serving.hardware.estimate import seconds_from
from bertscore_viz.serving.hardware.measure import TYPICAL_LENGTH, ProbeResult, cpu_bf16_flags, probe

__all__ = ["ACCURACY_TEXT", "FAST_SPEEDUP", "MEASURED_ACCURACY", "STATUS_LAYER", "STATUS_TEXTS", "Bf16Status",
           "bf16_status", "status_from", "status_lines"]

#: bf16 counts as fast when whole scoring is estimated at least this much faster than fp32.
FAST_SPEEDUP = 1.25
#: What bf16 costs in accuracy, measured on this project's WMT16 data (3,360 pairs of six language pairs with human
#: scores, bundled model, layer 4) by ``python bench/bench_precision.py``: the largest |F1(bf16) - F1(fp32)| and the
#: mean over the six language pairs of the segment-level Pearson correlation with the human scores.
MEASURED_ACCURACY = MappingProxyType({"max_abs_df1": 0.0011, "pearson_fp32": 0.63549, "pearson_bf16": 0.63547,
                                      "pairs": 3360})

#: The scoring :func:`status_from` compares the precisions on: this many texts of :data:`TYPICAL_LENGTH` tokens at
#: layer :data:`STATUS_LAYER` (the bundled model's tuned layer).
STATUS_TEXTS = 1000
STATUS_LAYER = 4


@dataclass(frozen=True)
class Bf16Status:
    """Whether bf16 pays on a device, what the app's sidebar and the CLI say about it.

    Attributes:
        device: the device measured.
        fast: bf16 scoring is estimated at least :data:`FAST_SPEEDUP` times faster than fp32 here: offer it.
        runs: bf16 arithmetic works on the device at all.
        speedup: estimated whole-scoring speedup of bf16 over fp32 (bundled model, layer :data:`STATUS_LAYER`, texts of
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
    probed shape at layer :data:`STATUS_LAYER`, host work included: :func:`seconds_from`) is at least
    :data:`FAST_SPEEDUP` times faster than fp32, and the texts a UI shows.

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
    n = STATUS_TEXTS * TYPICAL_LENGTH
    speedup = (seconds_from(result, n, STATUS_LAYER, "fp32", TYPICAL_LENGTH)
               / seconds_from(result, n, STATUS_LAYER, "bf16", TYPICAL_LENGTH))
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
