"""A numpy reference for the tests: cosine similarity, greedy matching, P/R/F1, multi-reference maximum, rescaling.

The engine computes all of these with one torch kernel (``bertscore_viz/tensor_ops.py``) on every path; this
independent numpy version, written the way the definition reads (docs/SEMANTICS.md), is what the kernel is
checked against (tests/unit/test_tensor_ops.py, the Hypothesis properties and the device-path tests).

Matches bert-score 0.3.13 (``greedy_cos_idf``): special tokens (CLS/SEP) take part in the matching as rows and
columns of the similarity matrix but carry weight 0. Precision averages, over **candidate** tokens, each token's
best cosine with any reference token; recall averages, over **reference** tokens, each token's best cosine with
any candidate token. One deliberate difference: bert-score's batched code counts padded cells as similarity 0,
so a token whose real similarities are all negative gets 0 when the other side was padded in its batch. Here the
maximum is always over real tokens, independent of batching.

Nothing here modifies its inputs.
"""

from __future__ import annotations

import numpy as np


def normalize(emb: np.ndarray) -> np.ndarray:
    """Unit vectors along the last axis (a new array)."""
    emb = np.asarray(emb, dtype=np.float32)
    return emb / np.linalg.norm(emb, axis=-1, keepdims=True)


def cosine_matrix(cand_emb: np.ndarray, ref_emb: np.ndarray) -> np.ndarray:
    """Cosine similarities ``sim[..., i, j]`` between candidate token i and reference token j.

    Args:
        cand_emb: ``(..., n_cand, dim)`` token vectors (need not be normalised).
        ref_emb: ``(..., n_ref, dim)`` token vectors.

    Returns:
        ``(..., n_cand, n_ref)`` float32.

    >>> cosine_matrix(np.eye(2), np.array([[1.0, 0.0], [1.0, 1.0]])).round(4).tolist()
    [[1.0, 0.7071], [0.0, 0.7071]]
    """
    return np.matmul(normalize(cand_emb), np.swapaxes(normalize(ref_emb), -1, -2))


def greedy_match(sim: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Each token's best match on the other side.

    Args:
        sim: ``(..., n_cand, n_ref)`` similarities.

    Returns:
        ``(cand_best, cand_best_index, ref_best, ref_best_index)``: for every candidate token the maximum over
        reference tokens (``(..., n_cand)``) and its column, for every reference token the maximum over
        candidate tokens (``(..., n_ref)``) and its row.
    """
    sim = np.asarray(sim)
    return sim.max(axis=-1), sim.argmax(axis=-1), sim.max(axis=-2), sim.argmax(axis=-2)


def weighted_mean(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``sum(w * v) / sum(w)`` over the last axis; NaN where the weights sum to 0 (as the reference gives)."""
    values = np.asarray(values, dtype=np.float64)
    weights = np.asarray(weights, dtype=np.float64)
    total = weights.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (values * weights).sum(axis=-1) / total


def f1_score(precision, recall):
    """``2PR / (P + R)``, NaN (0/0) replaced by 0 as in the reference; not clamped."""
    p = np.asarray(precision, dtype=np.float64)
    r = np.asarray(recall, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        f = 2 * p * r / (p + r)
    return np.where(np.isnan(f), 0.0, f)


def precision_recall_f1(cand_best: np.ndarray, ref_best: np.ndarray, cand_weights: np.ndarray,
                        ref_weights: np.ndarray, cand_empty: bool = False, ref_empty: bool = False):
    """BERTScore of one pair from its greedy maxima.

    Args:
        cand_best: ``(..., n_cand)`` best similarity of each candidate token (leading axes: layers).
        ref_best: ``(..., n_ref)`` best similarity of each reference token.
        cand_weights: ``(n_cand,)`` raw weights (idf, or 1), 0 for special tokens.
        ref_weights: ``(n_ref,)`` raw weights.
        cand_empty, ref_empty: a side with no real token scores P = R = F = 0.

    Returns:
        ``(P, R, F)`` as float64 arrays of the leading shape (scalars for one layer).
    """
    p = weighted_mean(cand_best, cand_weights)
    r = weighted_mean(ref_best, ref_weights)
    if cand_empty or ref_empty:
        p = np.zeros_like(p)
        r = np.zeros_like(r)
    return p, r, f1_score(p, r)


def multi_reference_max(scores: np.ndarray, groups: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """Element-wise maximum over each candidate's references, P, R and F separately.

    Args:
        scores: ``(n_pairs, ...)`` one row per (candidate, reference) pair.
        groups: ``(start, end)`` rows of each candidate.

    Returns:
        ``(best, argbest)``: ``(n_candidates, ...)`` maxima (NaN propagates, as torch.max does in the
        reference) and the index, within the candidate's references, of the reference that gave each maximum.
    """
    scores = np.asarray(scores)
    best = np.stack([scores[s:e].max(axis=0) for s, e in groups]) if groups else scores[:0]
    arg = np.stack([scores[s:e].argmax(axis=0) for s, e in groups]) if groups else scores[:0].astype(int)
    return best, arg


def rescale(values, baseline):
    """Baseline rescaling ``(x - b) / (1 - b)``; ``b`` broadcasts (one value, or one per P/R/F).

    >>> float(rescale(0.9, 0.8))
    0.5
    """
    b = np.asarray(baseline, dtype=np.float64)
    return (np.asarray(values, dtype=np.float64) - b) / (1.0 - b)
