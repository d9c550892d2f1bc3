"""Differentiable stand-ins for sampling a token, to feed BERTScoreLoss from a generator's logits: the Gumbel-softmax
(soft or straight-through hard) and the straight-through one-hot of the argmax."""

from __future__ import annotations

import torch

from bertscore_viz.errors import InputError
from bertscore_viz.loss.inputs import same_device, straight_through

__all__ = ["gumbel_softmax", "straight_through_one_hot"]


def gumbel_softmax(logits: torch.Tensor, tau: float = 1.0, hard: bool = False, dim: int = -1,
                   generator: torch.Generator | None = None) -> torch.Tensor:
    """A sample from the Gumbel-softmax (concrete) distribution over the last axis: a differentiable stand-in for
    sampling a token.

    Args:
        logits: ``(..., V)`` unnormalised log-probabilities (e.g. a generator's output).
        tau: temperature; lower is closer to one-hot (and noisier gradients).
        hard: return a one-hot sample in the forward pass with the soft sample's gradient (straight-through).
        dim: the vocabulary axis.
        generator: a ``torch.Generator`` for reproducible noise, on the logits' device (a CUDA generator for
            CUDA logits: ``torch.Generator(device=logits.device)``).

    Returns:
        ``(..., V)`` probabilities (one-hot when ``hard``), differentiable with respect to ``logits``.

    Raises:
        InputError: ``tau <= 0``, or a generator on another device than the logits.
    """
    if not tau > 0:
        raise InputError(f"tau must be positive, got {tau}.")
    if generator is not None and not same_device(torch.device(generator.device), logits.device):
        raise InputError(f"The generator is on {generator.device} but the logits are on {logits.device}: torch draws "
                         "the noise on the generator's device. Create it there: "
                         "torch.Generator(device=logits.device).manual_seed(seed).")
    u = torch.rand(logits.shape, dtype=logits.dtype, device=logits.device, generator=generator)
    tiny = torch.finfo(logits.dtype).tiny
    exponential = -torch.log(u.clamp_min(tiny))  # Exp(1) noise, > 0
    gumbel = -torch.log(exponential.clamp_min(tiny))
    soft = torch.softmax((logits + gumbel) / tau, dim=dim)
    return straight_through(soft, dim) if hard else soft


def straight_through_one_hot(logits: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """The one-hot argmax of ``logits`` in the forward pass, the gradient of ``softmax(logits)`` in the backward
    pass (straight-through estimator): the loss then scores the exact greedy output."""
    return straight_through(torch.softmax(logits, dim=dim), dim)
