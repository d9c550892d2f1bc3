"""Helpers of the loss: checking and preparing its inputs (padding, vocabularies, devices) and the shared encoder."""

from __future__ import annotations

import numpy as np
import torch

from bertscore_viz.engine.encoder import get_encoder, loaded_encoders
from bertscore_viz.errors import InputError


def same_device(a: torch.device, b: torch.device) -> bool:
    """Same device, an unset CUDA index meaning the current device."""
    if a.type != b.type:
        return False
    if a.type == "cuda":
        current = torch.cuda.current_device() if torch.cuda.is_available() else 0
        return (current if a.index is None else a.index) == (current if b.index is None else b.index)
    return a.index is None or b.index is None or a.index == b.index


def straight_through(soft: torch.Tensor, dim: int) -> torch.Tensor:
    index = soft.argmax(dim=dim, keepdim=True)
    hard = torch.zeros_like(soft).scatter_(dim, index, 1.0)
    return hard - soft.detach() + soft


def right_padded_lengths(mask: torch.Tensor, what: str = "attention mask") -> torch.Tensor:
    """Lengths of a right-padded ``(b, t)`` mask; InputError when real positions follow padding."""
    lengths = mask.sum(dim=1)
    expected = torch.arange(mask.shape[1], device=mask.device)[None, :] < lengths[:, None]
    if not torch.equal(expected, mask):
        rows = torch.nonzero((expected != mask).any(dim=1)).flatten().tolist()
        raise InputError(f"The {what} must be right-padded (1s then 0s in each row), but rows {rows[:10]} "
                         "have real positions after padding. Pad on the right (tokenizer padding_side='right').")
    return lengths


def id_to_token(vocabulary) -> list:
    """``tokens[i]`` = the token of id ``i`` (None for an unused id) of a tokenizer (``get_vocab()``), a mapping
    token -> id, or a sequence of tokens in id order."""
    if hasattr(vocabulary, "get_vocab"):
        vocabulary = vocabulary.get_vocab()
    if isinstance(vocabulary, dict):
        out: list = [None] * (max(vocabulary.values(), default=-1) + 1)
        for token, i in vocabulary.items():
            out[int(i)] = token
        return out
    if isinstance(vocabulary, (list, tuple)):
        return list(vocabulary)
    raise InputError(f"generator_tokenizer must be a tokenizer, a mapping token -> id or a list of tokens, got "
                     f"{type(vocabulary).__name__}.")


def shared_encoder(spec, device: torch.device):
    """The process-wide fp32 encoder of ``spec`` on ``device``: one already loaded there (whether it was asked
    for as ``"cuda"`` or ``"cuda:0"``), else a new one."""

    for enc in loaded_encoders():
        if (enc.key[:2] == (spec.name, spec.source) and enc.precision == "fp32"
                and torch.zeros(0, device=enc.device).device == device):
            return enc
    return get_encoder(spec, str(device), "fp32")


def is_id_sequence(x) -> bool:
    """A 1-D tensor/array or a flat list of ints (one reference as ids)."""
    if isinstance(x, torch.Tensor):
        return x.dim() == 1 and not x.is_floating_point()
    if isinstance(x, np.ndarray):
        return x.ndim == 1 and np.issubdtype(x.dtype, np.integer)
    if isinstance(x, (list, tuple)):
        return len(x) > 0 and all(isinstance(v, (int, np.integer)) for v in x)
    return False
