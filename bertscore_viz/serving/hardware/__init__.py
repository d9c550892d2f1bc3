"""What this machine computes fast and how long scoring would take, for the app's settings sidebar and Compare
scoring, ``models list`` and the benchmarks: the measurement (``measure``: :func:`probe`, the model's shape and its
FLOPs), the cost model (``estimate``: :func:`estimate_seconds`, :func:`estimate_texts`) and whether bf16 pays here,
with the sentences shown about it (``advice``: :func:`bf16_status`). Nothing here runs a model."""

from bertscore_viz.serving.hardware.advice import (
    ACCURACY_TEXT,
    FAST_SPEEDUP,
    MEASURED_ACCURACY,
    STATUS_LAYER,
    STATUS_TEXTS,
    Bf16Status,
    bf16_status,
    status_from,
    status_lines,
)
from bertscore_viz.serving.hardware.estimate import (
    HOST_SECONDS_PER_TOKEN,
    REAL_CELLS,
    estimate_seconds,
    estimate_texts,
    seconds_from,
)
from bertscore_viz.serving.hardware.measure import (
    BATCH_FACTOR,
    BUNDLED_SHAPE,
    MAX_PROBE_TOKENS,
    PROBE_LENGTH,
    PROBE_ROUND_FLOPS,
    PROBE_ROUNDS,
    TYPICAL_LENGTH,
    ModelShape,
    PrecisionRates,
    ProbeResult,
    clear_probes,
    cpu_bf16_flags,
    forward_flops,
    model_shape,
    probe,
)

__all__ = [
    "ACCURACY_TEXT", "BATCH_FACTOR", "BUNDLED_SHAPE", "FAST_SPEEDUP", "HOST_SECONDS_PER_TOKEN", "MAX_PROBE_TOKENS",
    "MEASURED_ACCURACY", "PROBE_LENGTH", "PROBE_ROUNDS", "PROBE_ROUND_FLOPS", "REAL_CELLS", "STATUS_LAYER",
    "STATUS_TEXTS", "TYPICAL_LENGTH", "Bf16Status", "ModelShape", "PrecisionRates", "ProbeResult", "bf16_status",
    "clear_probes", "cpu_bf16_flags", "estimate_seconds", "estimate_texts", "forward_flops", "model_shape", "probe",
    "seconds_from", "status_from", "status_lines",
]
