"""All pairs of many texts from one embedding each: P/R/F1 matrices in blocks of pairs, on the vectors' device.

A group of N texts has N x N (candidate, reference) pairs. Each text is embedded once; the pairs are matched in
blocks: the texts, sorted longest first, are cut into chunks of at most :data:`CHUNK_TOKENS` padded token vectors,
and each block (a chunk of row texts against a chunk of column texts) is one matrix product of the two chunks'
stacked vectors, ``(a * La, h) x (h, b * Lb)``, read as the ``a * b`` similarity matrices of its pairs. A block thus
holds at most ``CHUNK_TOKENS ** 2`` similarity cells whatever N is, which bounds the memory of a large group.

From there on the numbers are the engine's: the product is accumulated in the dtype the engine's matching uses on
that device (:func:`bertscore_viz.engine.matching.similarity_dtype`: float64 on CPU and CUDA, then rounded to
float32), and the greedy maxima, weighted means, empty-text rule and F1 are
:func:`bertscore_viz.engine.tensor_ops.greedy_maxima` and :func:`~bertscore_viz.engine.tensor_ops.precision_recall_f1`
(float64, ``safe=False``, as :meth:`Scorer.score` computes them). So entry ``[i, j]`` is what ``Scorer.score([t_i],
[t_j])`` gives with the same token weights, to float rounding (about 1e-7).

When rows and columns are the same texts (:func:`square_scores`), only blocks on and above the diagonal are
computed: with fixed token weights, ``P[j, i] = R[i, j]`` and ``F[j, i] = F[i, j]`` exactly (the same maxima averaged
with the same weights), so the other half is a transpose.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from bertscore_viz.engine import tensor_ops
from bertscore_viz.engine.matching import similarity_dtype

__all__ = ["CHUNK_TOKENS", "TextSet", "BlockScores", "chunk_plan", "square_scores", "cross_scores"]

#: Most padded token vectors in one chunk of texts: a block (chunk x chunk) holds at most this squared similarity
#: cells (4.2 million: about 80 MB of float64/float32 intermediates on the CPU).
CHUNK_TOKENS = 2048


@dataclass(frozen=True)
class TextSet:
    """Texts ready for matching at one layer.

    Attributes:
        vectors: per text, its ``(n_tokens, dim)`` float32 unit vectors (torch, on the device; not modified).
        weights: per text, ``(n_tokens,)`` float64 token weights (1 or idf; 0 for special tokens).
        empty: ``(n_texts,)`` bool, the text holds only special tokens (P = R = F = 0 against anything).
    """

    vectors: tuple
    weights: tuple
    empty: np.ndarray

    def __len__(self) -> int:
        return len(self.vectors)


@dataclass(frozen=True)
class BlockScores:
    """Raw scores of every (row, column) pair, and what per-token support needs.

    Attributes:
        precision, recall, f1: ``(n_rows, n_cols)`` float64; row = candidate, column = reference.
        support_sum: per row text, ``(n_tokens,)`` float64: the sum over columns ``b`` of ``counts[b]`` times each
            token's best similarity to column ``b``'s tokens (``()`` when not asked for).
        self_best: per row text (square scores only), ``(n_tokens,)`` float32: each token's best similarity to the
            tokens of its own text (its contribution to ``support_sum`` when the text itself is a column).
    """

    precision: np.ndarray
    recall: np.ndarray
    f1: np.ndarray
    support_sum: tuple = ()
    self_best: tuple = ()


def chunk_plan(lengths: Sequence[int], chunk_tokens: int = CHUNK_TOKENS) -> list[np.ndarray]:
    """Texts sorted by decreasing length, cut into chunks of at most ``chunk_tokens`` padded vectors.

    A chunk is padded to its first (longest) text, so it holds ``count x longest`` cells; a text longer than
    ``chunk_tokens`` (window mode) is a chunk of its own.

    Returns:
        Index arrays into ``lengths``, covering every text once.
    """
    order = sorted(range(len(lengths)), key=lambda k: (-int(lengths[k]), k))
    chunks: list[list[int]] = []
    for k in order:
        if chunks and (len(chunks[-1]) + 1) * max(int(lengths[chunks[-1][0]]), 1) <= chunk_tokens:
            chunks[-1].append(k)
        else:
            chunks.append([k])
    return [np.asarray(c, dtype=np.int64) for c in chunks]


@dataclass(frozen=True)
class _Stack:
    """One chunk of texts padded to its longest: vectors ``(k, L, h)``, mask ``(k, L)``, weights ``(k, L)`` float64,
    empty ``(k,)``, lengths."""

    vectors: torch.Tensor
    mask: torch.Tensor
    weights: torch.Tensor
    empty: torch.Tensor
    lengths: list


def _stack(texts: TextSet, idx: np.ndarray, device) -> _Stack:
    vecs, mask = tensor_ops.pad_sequences([texts.vectors[k] for k in idx])
    weights, _ = tensor_ops.pad_sequences([torch.from_numpy(np.asarray(texts.weights[k], dtype=np.float64))
                                           for k in idx])
    empty = torch.from_numpy(np.asarray(texts.empty, dtype=bool)[idx]).to(device)
    return _Stack(vecs, mask, weights.to(device), empty, [int(texts.vectors[k].shape[0]) for k in idx])


def _block_similarity(rows: torch.Tensor, cols: torch.Tensor) -> torch.Tensor:
    """Cosines of every row text's tokens with every column text's tokens: ``(a * b, La, Lb)`` float32.

    One matrix product of the flattened stacks (each text's vectors enter once, not once per pair), accumulated
    in :func:`similarity_dtype` and rounded to float32 as the engine's per-pair matching does.
    """
    a, la, h = rows.shape
    b, lb, _ = cols.shape
    dtype = similarity_dtype(rows.device)
    flat = torch.matmul(rows.reshape(a * la, h).to(dtype), cols.reshape(b * lb, h).to(dtype).T).to(torch.float32)
    return flat.view(a, la, b, lb).permute(0, 2, 1, 3).reshape(a * b, la, lb)


def _match_block(rows: _Stack, cols: _Stack):
    """Greedy maxima and raw P/R/F of every pair of a block: ``(cand_best (a, b, La), ref_best (a, b, Lb),
    prf (a, b, 3))``."""
    a, b = rows.vectors.shape[0], cols.vectors.shape[0]
    la, lb = rows.vectors.shape[1], cols.vectors.shape[1]
    c_mask = rows.mask[:, None, :].expand(a, b, la).reshape(a * b, la)
    r_mask = cols.mask[None, :, :].expand(a, b, lb).reshape(a * b, lb)
    cb, rb = tensor_ops.greedy_maxima(_block_similarity(rows.vectors, cols.vectors), c_mask, r_mask)
    wc = rows.weights[:, None, :].expand(a, b, la).reshape(a * b, la)
    wr = cols.weights[None, :, :].expand(a, b, lb).reshape(a * b, lb)
    c_empty = rows.empty[:, None].expand(a, b).reshape(-1)
    r_empty = cols.empty[None, :].expand(a, b).reshape(-1)
    p, r, f = tensor_ops.precision_recall_f1(cb, rb, wc, wr, c_empty, r_empty, safe=False)
    return cb.view(a, b, la), rb.view(a, b, lb), torch.stack([p, r, f], dim=-1).view(a, b, 3)


def _device_of(texts: TextSet):
    return texts.vectors[0].device if len(texts) else torch.device("cpu")


def square_scores(texts: TextSet, counts: np.ndarray | None = None, support: bool = False,
                  chunk_tokens: int = CHUNK_TOKENS) -> BlockScores:
    """P/R/F1 of every ordered pair of ``texts`` (each as candidate against each as reference, itself included).

    Args:
        texts: the texts, each embedded once.
        counts: ``(n,)`` how many samples each text stands for (duplicates), weighting the support sums; default 1.
        support: also return each token's summed best similarity over the columns, and its best against itself.
        chunk_tokens: padded token vectors per chunk (see :func:`chunk_plan`).

    Returns:
        :class:`BlockScores` with ``(n, n)`` matrices.
    """
    n = len(texts)
    out = np.zeros((n, n, 3), dtype=np.float64)
    if not n:
        return BlockScores(out[..., 0], out[..., 1], out[..., 2])
    device = _device_of(texts)
    counts_t = torch.as_tensor(np.ones(n) if counts is None else np.asarray(counts, dtype=np.float64),
                               dtype=torch.float64, device=device)
    sums = [torch.zeros(int(v.shape[0]), dtype=torch.float64, device=device) for v in texts.vectors]
    self_best: list = [None] * n
    chunks = chunk_plan([int(v.shape[0]) for v in texts.vectors], chunk_tokens)
    with torch.no_grad():
        stacks = [_stack(texts, c, device) for c in chunks]
        for ia, (ca, sa) in enumerate(zip(chunks, stacks)):
            for ib in range(ia, len(chunks)):
                cb_idx, sb = chunks[ib], stacks[ib]
                cb, rb, prf = _match_block(sa, sb)
                host = prf.cpu().numpy()
                out[np.ix_(ca, cb_idx)] = host
                if ib != ia:  # the transposed pairs: P and R swap, F is symmetric
                    out[np.ix_(cb_idx, ca)] = host.transpose(1, 0, 2)[..., [1, 0, 2]]
                if not support:
                    continue
                ca_t = torch.as_tensor(ca, device=device)
                cb_t = torch.as_tensor(cb_idx, device=device)
                row_sum = (cb.to(torch.float64) * counts_t[cb_t][None, :, None]).sum(dim=1)
                for k, t in enumerate(ca):
                    sums[t] += row_sum[k, : sa.lengths[k]]
                if ib == ia:
                    for k, t in enumerate(ca):
                        self_best[t] = cb[k, k, : sa.lengths[k]].cpu().numpy()
                else:
                    col_sum = (rb.to(torch.float64) * counts_t[ca_t][:, None, None]).sum(dim=0)
                    for k, t in enumerate(cb_idx):
                        sums[t] += col_sum[k, : sb.lengths[k]]
    support_sum = tuple(s.cpu().numpy() for s in sums) if support else ()
    return BlockScores(out[..., 0].copy(), out[..., 1].copy(), out[..., 2].copy(), support_sum,
                       tuple(self_best) if support else ())


def cross_scores(rows: TextSet, cols: TextSet, chunk_tokens: int = CHUNK_TOKENS) -> BlockScores:
    """P/R/F1 of every row text (candidate) against every column text (reference).

    Returns:
        :class:`BlockScores` with ``(n_rows, n_cols)`` matrices (no support sums).
    """
    out = np.zeros((len(rows), len(cols), 3), dtype=np.float64)
    if len(rows) and len(cols):
        device = _device_of(rows)
        row_chunks = chunk_plan([int(v.shape[0]) for v in rows.vectors], chunk_tokens)
        col_chunks = chunk_plan([int(v.shape[0]) for v in cols.vectors], chunk_tokens)
        with torch.no_grad():
            col_stacks = [_stack(cols, c, device) for c in col_chunks]
            for ca in row_chunks:
                sa = _stack(rows, ca, device)
                for cb_idx, sb in zip(col_chunks, col_stacks):
                    out[np.ix_(ca, cb_idx)] = _match_block(sa, sb)[2].cpu().numpy()
    return BlockScores(out[..., 0].copy(), out[..., 1].copy(), out[..., 2].copy())

