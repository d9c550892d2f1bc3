"""Helpers of the loss: checking and preparing its inputs (padding, vocabularies, devices) and the shared encoder."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import torch

from bertscore_viz.engine.encoder import PRECISIONS, get_encoder, loaded_encoders
from bertscore_viz.errors import InputError, shorten

#: The loss's options: the score it returns, how it reduces a batch, what its candidates are.
METRICS = ("f1", "precision", "recall")
REDUCTIONS = ("mean", "sum", "none")
INPUT_TYPES = ("auto", "ids", "probs", "embeds")


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



def check_options(metric: str, reduction: str, temperature, dtype, precision: str, batch_size: int,
                  token_budget: int) -> None:
    """InputError for options of :class:`~bertscore_viz.loss.BERTScoreLoss` that cannot work, before any model
    loads."""
    if metric not in METRICS:
        raise InputError(f"Unknown metric {metric!r}. Expected one of {', '.join(METRICS)}.")
    if reduction not in REDUCTIONS:
        raise InputError(f"Unknown reduction {reduction!r}. Expected one of {', '.join(REDUCTIONS)}.")
    if temperature is not None and not temperature > 0:
        raise InputError(f"temperature must be positive, or None for the exact maximum; got {temperature}.")
    if dtype not in (torch.float32, torch.float64):
        raise InputError(f"dtype must be torch.float32 or torch.float64, got {dtype}.")
    if precision not in PRECISIONS:
        raise InputError(f"Unknown precision {precision!r}. Expected one of {', '.join(PRECISIONS)}.")
    if precision != "fp32" and dtype != torch.float32:
        raise InputError(f"precision={precision!r} runs the forward in reduced precision; it cannot go with "
                         "dtype=torch.float64 (exact gradient checks). Choose one.")
    if batch_size < 1 or token_budget < 1:
        raise InputError(f"batch_size and token_budget must be at least 1, got {batch_size} and {token_budget}.")


def input_kind(candidates: torch.Tensor, input_type: str, vocab_size: int, hidden_size: int,
               model_name: str) -> str:
    """What the candidates are: ``ids``, ``probs`` or ``embeds`` (``auto``: from their dtype and last axis)."""
    if input_type not in INPUT_TYPES:
        raise InputError(f"Unknown input_type {input_type!r}. Expected one of {', '.join(INPUT_TYPES)}.")
    floating = candidates.is_floating_point()
    if input_type == "auto":
        if not floating and candidates.dim() == 2:
            return "ids"
        if floating and candidates.dim() == 3:
            last = candidates.shape[-1]
            if last == vocab_size:
                return "probs"
            if last == hidden_size:
                return "embeds"
            raise vocabulary_error(last, vocab_size, hidden_size, model_name)
        raise InputError(
            f"Candidates of dtype {candidates.dtype} and shape {tuple(candidates.shape)} are neither token ids "
            f"(batch, tokens) of an integer dtype, probabilities (batch, tokens, {vocab_size}) nor "
            f"embeddings (batch, tokens, {hidden_size}).")
    if input_type == "ids" and (floating or candidates.dim() != 2):
        raise InputError(f"input_type='ids' needs an integer tensor (batch, tokens), got {candidates.dtype} "
                         f"of shape {tuple(candidates.shape)}.")
    if input_type in ("probs", "embeds") and (not floating or candidates.dim() != 3):
        raise InputError(f"input_type={input_type!r} needs a float tensor (batch, tokens, size), got "
                         f"{candidates.dtype} of shape {tuple(candidates.shape)}.")
    if input_type == "probs" and candidates.shape[-1] != vocab_size:
        raise vocabulary_error(candidates.shape[-1], vocab_size, hidden_size, model_name)
    if input_type == "embeds" and candidates.shape[-1] != hidden_size:
        raise InputError(f"inputs_embeds have size {candidates.shape[-1]}, the scorer "
                         f"{model_name!r} has hidden size {hidden_size}.")
    return input_type


def vocabulary_error(size: int, vocab_size: int, hidden_size: int, model_name: str) -> InputError:
    """The generator's vocabulary does not index the scorer's."""
    return InputError(
        f"The generator's vocabulary has {size} entries but the scorer {model_name!r} has "
        f"{vocab_size} (embedding rows; hidden size {hidden_size}). The last axis of the "
        "probabilities must index the scorer's vocabulary: train the generator with the scorer's tokenizer, "
        "map its distribution onto the scorer's vocabulary (probs @ a (generator V, scorer V) matrix), or "
        "build the loss with a scorer model that shares the generator's tokenizer (model=...).")


def wrap_rows(x: torch.Tensor, lengths: torch.Tensor, prefix: torch.Tensor, suffix: torch.Tensor,
              fill: torch.Tensor) -> torch.Tensor:
    """Put ``prefix`` before and ``suffix`` right after the ``lengths[i]`` real positions of each row.

    Args:
        x: ``(b, t, ...)`` content; positions past each length are ignored (replaced by ``fill``).
        prefix: ``(a, ...)``; suffix: ``(z, ...)``; fill: ``(...)`` the padding value.

    Returns:
        ``(b, a + t + z, ...)``, differentiable with respect to ``x`` (zero gradient at its padding).
    """
    b, t = x.shape[:2]
    a, z = prefix.shape[0], suffix.shape[0]
    pos = torch.arange(a + t + z, device=x.device)
    real = (pos[None, :] >= a) & (pos[None, :] < a + lengths[:, None])
    body = torch.cat([prefix.expand(b, *prefix.shape), x, fill.expand(b, z, *fill.shape)], dim=1)
    extra = (None,) * (x.dim() - 2)
    out = torch.where(real[(...,) + extra], body, fill)
    out = torch.where((pos[None, :] < a)[(...,) + extra], body, out)
    if z:
        rel = pos[None, :] - a - lengths[:, None]
        is_suffix = (rel >= 0) & (rel < z)
        out = torch.where(is_suffix[(...,) + extra], suffix[rel.clamp(0, z - 1)], out)
    return out


def flatten_references(references, batch: int, reference_mask: torch.Tensor | None = None
                       ) -> tuple[list, list[tuple[int, int]]]:
    """The references of a batch as one flat list (texts or 1-D id sequences) and each candidate's ``(start, end)``
    in it; a padded ``(b, t)`` id tensor is cut to its real tokens by ``reference_mask``."""
    if isinstance(references, str):
        raise InputError(f"Expected a list of references, got a single string {shorten(references)}. "
                         f"Wrap it in a list: [{shorten(references)}].")
    if isinstance(references, torch.Tensor):
        if references.dim() != 2 or references.dtype in (torch.float16, torch.float32, torch.float64,
                                                          torch.bfloat16):
            raise InputError(f"Reference ids must be an integer tensor (batch, tokens), got "
                             f"{references.dtype} of shape {tuple(references.shape)}.")
        if reference_mask is not None:
            if tuple(reference_mask.shape) != tuple(references.shape):
                raise InputError(f"reference_mask has shape {tuple(reference_mask.shape)}, expected "
                                 f"{tuple(references.shape)} like the reference ids.")
            lengths = right_padded_lengths(reference_mask.bool(), "reference mask").tolist()
            references = [row[:n] for row, n in zip(references, lengths)]
        else:
            references = [row for row in references]
    elif reference_mask is not None:
        raise InputError("reference_mask goes with references given as one padded (batch, tokens) tensor of "
                         "ids; texts and lists of 1-D id sequences need no mask.")
    refs = list(references)
    if len(refs) != batch:
        raise InputError(f"Expected as many references as candidates, got {batch} candidates and {len(refs)} "
                         "references.")
    flat: list = []
    groups: list[tuple[int, int]] = []
    for i, r in enumerate(refs):
        group = [r] if isinstance(r, str) or is_id_sequence(r) else list(r)
        if not group:
            raise InputError(f"Candidate {i} has an empty list of references; give at least one.")
        groups.append((len(flat), len(flat) + len(group)))
        flat.extend(group)
    return flat, groups


class TensorCache:
    """Tensors by key, least recently used first out, bounded by their bytes (one tensor larger than the bound is
    not kept)."""

    def __init__(self, max_bytes: int):
        self.max_bytes = int(max_bytes)
        self._items: OrderedDict[bytes, torch.Tensor] = OrderedDict()
        self._bytes = 0

    def get(self, key: bytes) -> torch.Tensor | None:
        hit = self._items.get(key)
        if hit is not None:
            self._items.move_to_end(key)
        return hit

    def put(self, key: bytes, value: torch.Tensor) -> None:
        size = value.numel() * value.element_size()
        if size > self.max_bytes:
            return
        old = self._items.pop(key, None)
        if old is not None:
            self._bytes -= old.numel() * old.element_size()
        self._items[key] = value
        self._bytes += size
        while self._bytes > self.max_bytes:
            _, dropped = self._items.popitem(last=False)
            self._bytes -= dropped.numel() * dropped.element_size()

    def clear(self) -> None:
        self._items.clear()
        self._bytes = 0

    def __len__(self) -> int:
        return len(self._items)
