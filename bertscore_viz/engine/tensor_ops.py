"""Batched BERTScore kernels in torch: the one place P/R/F1, the multi-reference maximum and rescaling are computed.

The same functions serve scoring on any device (CPU, CUDA), the engine's host-side results (CPU tensors), the
explanations and training: everything is differentiable with respect to the embeddings, nothing modifies its
inputs, and nothing here does I/O or knows about models. An independent numpy version of the same math lives with
the tests (``tests/numpy_reference.py``) and checks this one.

Shapes (letters as in the einsum below):
    b: pairs in the batch; c: candidate tokens (padded); r: reference tokens (padded); h: hidden size.
    ``cand`` ``(b, c, h)``, ``ref`` ``(b, r, h)``; masks ``(b, c)`` / ``(b, r)`` bool, True on real tokens
    (special tokens included: they are real rows and columns of the similarity, with weight 0); weights
    ``(b, c)`` / ``(b, r)``, 0 on padding and on special tokens.

Semantics (see docs/SEMANTICS.md): the greedy maximum is over **real** tokens only, so padding never wins a
maximum, whatever else shares the batch (bert-score 0.3.13 lets padded cells count as similarity 0). P and R are
weight-normalised means of the maxima, NaN where a side's weights sum to 0 (degenerate idf); F1 = 2PR / (P + R)
with NaN replaced by 0; a side with no real token but specials ("empty") gives P = R = F = 0.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch.nn.utils.rnn import pad_sequence

__all__ = ["normalize", "similarity", "greedy_maxima", "weighted_mean", "f1_score", "precision_recall_f1", "bertscore",
           "multi_reference_max", "rescale", "pad_sequences", "NORM_EPS"]

#: Smallest norm :func:`bertscore` divides by when it normalises: zero vectors (padding) stay zero, not NaN.
NORM_EPS = 1e-12


def normalize(emb: torch.Tensor, eps: float = 0.0) -> torch.Tensor:
    """Unit vectors along the last axis (a new tensor). ``eps`` guards zero vectors (e.g. padding) when > 0."""
    norm = torch.linalg.vector_norm(emb, dim=-1, keepdim=True)
    if eps > 0:
        norm = norm.clamp_min(eps)
    return emb / norm


def similarity(cand: torch.Tensor, ref: torch.Tensor) -> torch.Tensor:
    """Dot products ``sim[b, i, j] = <cand[b, i], ref[b, j]>``: cosines when both are unit vectors.

    Args:
        cand: ``(b, c, h)``; ref: ``(b, r, h)``.

    Returns:
        ``(b, c, r)`` in the inputs' dtype.
    """
    return torch.einsum("bch,brh->bcr", cand, ref)


def greedy_maxima(sim: torch.Tensor, cand_mask: torch.Tensor, ref_mask: torch.Tensor,
                  temperature: float | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Each real token's best similarity on the other side, over real tokens only.

    Args:
        sim: ``(b, c, r)`` similarities.
        cand_mask: ``(b, c)`` bool, True on real candidate tokens; ref_mask: ``(b, r)``.
        temperature: None for the exact maximum (bert-score's greedy matching). A positive value gives the
            smooth maximum ``t * logsumexp(sim / t)`` over real cells, which is at least the maximum, tends to it as
            ``t -> 0`` and spreads gradients over near-best matches (for training only; it changes the numbers).

    Returns:
        ``(cand_best, ref_best)``: ``(b, c)`` maxima over reference tokens (precision side) and ``(b, r)`` maxima
        over candidate tokens (recall side); 0 at padded positions.
    """
    cand_mask = cand_mask.bool()
    ref_mask = ref_mask.bool()
    valid = cand_mask[:, :, None] & ref_mask[:, None, :]
    masked = sim.masked_fill(~valid, float("-inf"))
    if temperature is None:
        cand_best = masked.amax(dim=2)
        ref_best = masked.amax(dim=1)
    else:
        if not temperature > 0:
            raise ValueError(f"temperature must be positive (or None for the exact maximum), got {temperature}.")
        cand_best = temperature * torch.logsumexp(masked / temperature, dim=2)
        ref_best = temperature * torch.logsumexp(masked / temperature, dim=1)
    zero = sim.new_zeros(())
    # A padded row has no valid cell (-inf): put 0 there so that weight 0 x value stays 0 and gradients stay finite.
    return torch.where(cand_mask, cand_best, zero), torch.where(ref_mask, ref_best, zero)


def _safe_ratio(num: torch.Tensor, den: torch.Tensor) -> torch.Tensor:
    """``num / den``, NaN where ``den == 0``, with finite gradients everywhere (no 0/0 in the backward pass)."""
    zero = den == 0
    out = num / torch.where(zero, torch.ones_like(den), den)
    return torch.where(zero, torch.full_like(out, float("nan")), out)


def weighted_mean(values: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """``sum(w * v) / sum(w)`` over the last axis; NaN where the weights sum to 0 (as the reference gives)."""
    return _safe_ratio((values * weights).sum(dim=-1), weights.sum(dim=-1))


def f1_score(precision: torch.Tensor, recall: torch.Tensor, safe: bool = True) -> torch.Tensor:
    """``2PR / (P + R)``, with NaN (0/0 or a NaN input) replaced by 0 as in the reference; not clamped.

    ``safe`` (for training) keeps gradients finite: any ``P + R == 0`` gives 0. Without it the division is plain
    IEEE, as numpy's (``x / 0`` with ``x != 0`` is infinite, as in bert-score), so that
    scoring on the device gives the host path's numbers in every case.
    """
    if safe:
        f = _safe_ratio(2 * precision * recall, precision + recall)
    else:
        f = 2 * precision * recall / (precision + recall)
    return torch.where(torch.isnan(f), torch.zeros_like(f), f)


def precision_recall_f1(cand_best: torch.Tensor, ref_best: torch.Tensor, cand_weights: torch.Tensor,
                        ref_weights: torch.Tensor, cand_empty: torch.Tensor | None = None,
                        ref_empty: torch.Tensor | None = None, safe: bool = True
                        ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """P, R, F1 of each pair from its greedy maxima.

    Args:
        cand_best: ``(b, c)``; ref_best: ``(b, r)`` (0 at padding).
        cand_weights: ``(b, c)`` raw weights (idf or 1; 0 for special tokens and padding); ref_weights ``(b, r)``.
            Their dtype is the dtype of the result (float64 for exact scoring, float32 for training).
        cand_empty, ref_empty: ``(b,)`` bool, the side holds no token but specials: P = R = F = 0.
        safe: gradient-safe F1 (see :func:`f1_score`); False for scoring, where it must equal numpy's.

    Returns:
        ``(P, R, F)``, each ``(b,)``.
    """
    dtype = cand_weights.dtype
    p = weighted_mean(cand_best.to(dtype), cand_weights)
    r = weighted_mean(ref_best.to(dtype), ref_weights.to(dtype))
    empty = None
    if cand_empty is not None:
        empty = cand_empty.bool()
    if ref_empty is not None:
        empty = ref_empty.bool() if empty is None else empty | ref_empty.bool()
    if empty is not None:
        zero = torch.zeros((), dtype=dtype, device=p.device)
        p = torch.where(empty, zero, p)
        r = torch.where(empty, zero, r)
    return p, r, f1_score(p, r, safe)


def bertscore(cand: torch.Tensor, cand_mask: torch.Tensor, cand_weights: torch.Tensor, ref: torch.Tensor,
              ref_mask: torch.Tensor, ref_weights: torch.Tensor, *, normalized: bool = True,
              temperature: float | None = None, cand_empty: torch.Tensor | None = None,
              ref_empty: torch.Tensor | None = None, return_maxima: bool = False, safe: bool = True):
    """BERTScore of a batch of (candidate, reference) pairs from padded token vectors.

    Args:
        cand: ``(b, c, h)`` candidate token vectors; ref: ``(b, r, h)``.
        cand_mask, ref_mask: ``(b, c)`` / ``(b, r)``, True on real tokens (specials included).
        cand_weights, ref_weights: ``(b, c)`` / ``(b, r)`` raw weights, 0 on specials and padding.
        normalized: the vectors are already unit length; otherwise they are normalised here (padding guarded).
        temperature: None = exact greedy maximum; see :func:`greedy_maxima`.
        cand_empty, ref_empty: ``(b,)`` bool; default: a side whose mask holds only zero-weight tokens is *not*
            treated as empty, pass these to follow the reference's empty-sentence rule.
        return_maxima: also return ``(cand_best, ref_best)``.

    Returns:
        ``(P, R, F)`` each ``(b,)`` in the weights' dtype, and the maxima when asked.
    """
    if not normalized:
        cand = normalize(cand, eps=NORM_EPS)
        ref = normalize(ref, eps=NORM_EPS)
    sim = similarity(cand, ref)
    cand_best, ref_best = greedy_maxima(sim, cand_mask, ref_mask, temperature)
    p, r, f = precision_recall_f1(cand_best, ref_best, cand_weights, ref_weights, cand_empty, ref_empty, safe)
    if return_maxima:
        return (p, r, f), (cand_best, ref_best)
    return p, r, f


def multi_reference_max(scores: torch.Tensor, groups: Sequence[tuple[int, int]]
                        ) -> tuple[torch.Tensor, torch.Tensor]:
    """Element-wise maximum over each candidate's references, P, R and F separately.

    Args:
        scores: ``(n_pairs, 3)`` one row per (candidate, reference) pair, in candidate order.
        groups: ``(start, end)`` rows of each candidate (contiguous, non-empty).

    Returns:
        ``(best, argbest)``: ``(n_candidates, 3)`` maxima (NaN propagates) and the index, within the candidate's
        references, of the reference that gave each maximum.
    """
    if not groups:
        return scores[:0], torch.zeros((0,) + tuple(scores.shape[1:]), dtype=torch.long, device=scores.device)
    sizes = [e - s for s, e in groups]
    width = max(sizes)
    n = len(groups)
    # Pad every group to the widest with -inf rows, then reduce along the group axis in one call.
    padded = scores.new_full((n, width) + tuple(scores.shape[1:]), float("-inf"))
    rows = torch.cat([torch.arange(s, e, device=scores.device) for s, e in groups])
    cand_idx = torch.repeat_interleave(torch.arange(n, device=scores.device),
                                       torch.tensor(sizes, device=scores.device))
    slot = rows - torch.repeat_interleave(torch.tensor([s for s, _ in groups], device=scores.device),
                                          torch.tensor(sizes, device=scores.device))
    padded = padded.index_put((cand_idx, slot), scores[rows])
    # NaN must win, as torch.max over a group with a NaN gives NaN in the reference.
    has_nan = torch.isnan(padded).any(dim=1)
    best, arg = padded.max(dim=1)
    nan_arg = torch.isnan(padded).to(torch.uint8).argmax(dim=1)
    best = torch.where(has_nan, torch.full_like(best, float("nan")), best)
    arg = torch.where(has_nan, nan_arg, arg)
    return best, arg


def rescale(values: torch.Tensor, baseline) -> torch.Tensor:
    """Baseline rescaling ``(x - b) / (1 - b)``; ``b`` broadcasts (one value, or ``(3,)`` for P/R/F)."""
    b = torch.as_tensor(baseline, dtype=values.dtype, device=values.device)
    return (values - b) / (1 - b)


def pad_sequences(arrays: Sequence, value: float = 0.0, *, dtype: torch.dtype | None = None,
                  device: torch.device | str | None = None, width: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Stack ``(n_i, ...)`` rows into ``(b, max n_i, ...)`` padded with ``value``, and the ``(b, max n_i)`` bool mask
    (True on each row's first ``n_i`` positions): the package's one padding helper (vectors, weights, token ids).

    Args:
        arrays: tensors, numpy arrays or lists of numbers (all of one dtype and trailing shape, on one device).
        value: what padding positions hold (a token id for ids).
        dtype: the rows converted to it (default: as they are; float32 for an empty batch).
        device: where an empty batch's tensors are (default the CPU); rows stay where they are.
        width: the narrowest result (1 keeps a batch of empty rows a valid model input).

    An empty list gives ``(0, width)`` tensors (an empty batch is not an error). Differentiable with respect to
    the rows.
    """
    rows = [torch.as_tensor(a, dtype=dtype) for a in arrays]
    lengths = [int(r.shape[0]) for r in rows]
    longest = max([int(width)] + lengths)
    if not rows:
        return (torch.zeros((0, longest), dtype=dtype or torch.float32, device=device),
                torch.zeros((0, longest), dtype=torch.bool, device=device))
    out = pad_sequence(rows, batch_first=True, padding_value=value)
    if out.shape[1] < longest:
        first = rows[0]
        extra = first.new_full((len(rows), longest - out.shape[1]) + tuple(first.shape[1:]), value)
        out = torch.cat([out, extra], dim=1)
    lens = torch.tensor(lengths, device=out.device)
    mask = torch.arange(longest, device=out.device)[None, :] < lens[:, None]
    return out, mask
