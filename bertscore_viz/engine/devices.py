"""Where a model runs and in what floating-point type: the one device rule and the one precision-to-dtype map of
the package (the encoder, the scorer, the training loss and the hardware probe all use these).

The device rule: None or ``"auto"`` is CUDA when available, else the CPU; a device given is kept as given (``"cuda"``
stays ``"cuda"``: the encoder's key and what users see), after checking that torch knows it and, for CUDA, that CUDA
is available. ``indexed=True`` names a CUDA device with its index (``"cuda"`` is the current device,
``"cuda:N"``), for what is kept per physical device (the cache's limits, the probe's measurements).
"""

from __future__ import annotations

from types import MappingProxyType

import torch

from bertscore_viz.engine.arguments import check_precision
from bertscore_viz.errors import ModelError

__all__ = ["PRECISION_DTYPES", "precision_dtype", "resolve_device"]

#: The torch dtype a model runs in for each precision: ``fp32`` is exact (bert-score's numbers).
PRECISION_DTYPES = MappingProxyType({"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16})


def precision_dtype(precision: str) -> torch.dtype:
    """The torch dtype of a precision (:data:`PRECISION_DTYPES`).

    Raises:
        ModelError: a precision that is not ``"fp32"``, ``"fp16"`` or ``"bf16"``.
    """
    return PRECISION_DTYPES[check_precision(precision)]


def resolve_device(device: str | torch.device | None, *, indexed: bool = False) -> str:
    """The device a model runs on, as a string (the rule: the module's docstring).

    Args:
        device: ``"cpu"``, ``"cuda"``, ``"cuda:N"``, any other device torch knows, a ``torch.device``; None or
            ``"auto"``: CUDA when available, else the CPU.
        indexed: name a CUDA device with its index (``"cuda:N"``; ``"cuda"`` is the current device).

    Raises:
        ModelError: not a string, a device torch does not know, or CUDA asked for where it is not available.
    """
    if device is None or device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if not isinstance(device, (str, torch.device)):
        raise ModelError(f"device must be a string such as 'cpu', 'cuda' or 'cuda:1', got {type(device).__name__}.")
    try:
        dev = torch.device(device)
    except (RuntimeError, ValueError):
        raise ModelError(f"Unknown device {str(device)!r}: use 'cpu', 'cuda' or 'cuda:N' (or 'auto').") from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ModelError(f"Device {str(device)!r} was asked for, but CUDA is not available here. Use device='cpu'.")
    if indexed and dev.type == "cuda":
        return f"cuda:{torch.cuda.current_device() if dev.index is None else dev.index}"
    return str(device)
