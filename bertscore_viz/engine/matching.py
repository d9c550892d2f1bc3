"""Matching on the device: pairs in length-sorted padded batches, their greedy maxima, and P/R/F from them with the
one kernel (:mod:`bertscore_viz.engine.tensor_ops`); :class:`MatchStats`, what a model pass keeps of each pair.

Only per-token maxima (:func:`match_batched`) or each pair's P/R/F (:func:`score_batched`) come back to the host.
Cosines are summed in float64 where the device has it, so a pair's numbers do not depend on its batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import torch

from bertscore_viz.engine import tensor_ops
from bertscore_viz.engine.idf import IdfWeights, compute_idf
from bertscore_viz.errors import ModelError

__all__ = ["KERNEL_PAIRS", "prf_from_maxima", "best_of_references", "rescaled", "MatchStats", "MATCH_CELLS",
           "MATCH_TOKENS", "FLOAT64_DEVICE_TYPES", "similarity_dtype", "similarity_float64", "weight_vector",
           "side_flags", "score_batched", "match_batched"]

#: Pairs per call of the kernel when P/R/F are computed from kept per-token maxima (bounds the padded copies).
KERNEL_PAIRS = 2048


def prf_from_maxima(cand_best: Sequence[np.ndarray], ref_best: Sequence[np.ndarray],
                    cand_weights: Sequence[np.ndarray], ref_weights: Sequence[np.ndarray], cand_empty: np.ndarray,
                    ref_empty: np.ndarray) -> np.ndarray:
    """Raw P, R, F of pairs from their per-token maxima and weights, on the CPU with the kernel every path uses
    (:func:`bertscore_viz.engine.tensor_ops.precision_recall_f1`, float64, bert-score's IEEE F1): ``(n_pairs, 3)``."""

    n = len(cand_best)
    out = np.empty((n, 3), dtype=np.float64)
    for start in range(0, n, KERNEL_PAIRS):
        sl = slice(start, min(n, start + KERNEL_PAIRS))
        cb = tensor_ops.pad_sequences(cand_best[sl], dtype=torch.float32)[0]  # padding: 0, with weight 0
        rb = tensor_ops.pad_sequences(ref_best[sl], dtype=torch.float32)[0]
        p, r, f = tensor_ops.precision_recall_f1(
            cb, rb, tensor_ops.pad_sequences(cand_weights[sl], dtype=torch.float64)[0],
            tensor_ops.pad_sequences(ref_weights[sl], dtype=torch.float64)[0],
            torch.from_numpy(np.asarray(cand_empty[sl], dtype=bool)),
            torch.from_numpy(np.asarray(ref_empty[sl], dtype=bool)), safe=False)
        out[sl] = torch.stack([p, r, f], dim=1).numpy()
    return out


def best_of_references(pair: np.ndarray, groups: Sequence[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """Each candidate's maximum over its references, P, R and F separately, and which reference gave it:
    :func:`bertscore_viz.engine.tensor_ops.multi_reference_max` on ``(n_pairs, 3)`` float64 (NaN wins, as in
    bert-score)."""
    if not len(groups):
        return np.zeros((0, 3)), np.zeros((0, 3), dtype=np.int64)
    if len(groups) == len(pair):  # one reference each: the maximum is the pair itself
        return np.array(pair, dtype=np.float64), np.zeros((len(pair), 3), dtype=np.int64)

    best, arg = tensor_ops.multi_reference_max(torch.from_numpy(np.asarray(pair, dtype=np.float64)), list(groups))
    return best.numpy(), arg.numpy().astype(np.int64)


def rescaled(values, baseline) -> np.ndarray:
    """``(x - b) / (1 - b)`` in float64 (:func:`bertscore_viz.engine.tensor_ops.rescale`); ``b`` broadcasts."""

    return tensor_ops.rescale(torch.as_tensor(np.asarray(values, dtype=np.float64)), np.asarray(
        baseline, dtype=np.float64)).numpy()


@dataclass(frozen=True)
class MatchStats:
    """Greedy maxima of every (candidate, reference) pair at the layers computed.

    Attributes:
        layers: the layers available, in order; ``cand_best[p][k]`` is for layer ``layers[k]``.
        candidates: the candidate texts; references: the flattened reference texts.
        pair_candidate: ``(n_pairs,)`` candidate index of each pair (pairs follow the flattened references).
        groups: ``(start, end)`` pairs of each candidate.
        cand_ids, ref_ids: token ids of each candidate and each flattened reference.
        cand_truncated, ref_truncated: ``(n,)`` int, tokens dropped at the model's maximum length (0: whole; always
            0 in window mode).
        cand_best, ref_best: per pair, ``(n_layers, n_cand_tokens)`` and ``(n_layers, n_ref_tokens)``; empty
            when only each pair's P/R/F were computed (:meth:`Scorer.score`, which keeps no per-token maxima).
        special_ids: the ids weighted 0 (CLS/SEP).
        unk_id: the tokenizer's unknown-token id ([UNK]), None if it has none.
    """

    layers: tuple[int, ...]
    candidates: tuple[str, ...]
    references: tuple[str, ...]
    pair_candidate: np.ndarray
    groups: tuple[tuple[int, int], ...]
    cand_ids: tuple[np.ndarray, ...]
    ref_ids: tuple[np.ndarray, ...]
    cand_truncated: np.ndarray
    ref_truncated: np.ndarray
    cand_best: tuple[np.ndarray, ...]
    ref_best: tuple[np.ndarray, ...]
    special_ids: frozenset
    unk_id: int | None = None
    #: Per (layer, idf on): ``(scores, notes)`` of every pair, computed on the device by ``match(keep="scores")``
    #: (which keeps no per-token maxima): what :meth:`pair_scores` returns for that setting.
    pair_table: dict = field(default_factory=dict, compare=False, repr=False)
    #: The idf the ``pair_table``'s idf-on entries were computed with (None: no idf entries).
    table_idf: IdfWeights | None = field(default=None, compare=False, repr=False)
    #: How document context was used (:class:`~bertscore_viz.engine.results.ContextReport`), None without context.
    context: Any = field(default=None, compare=False, repr=False)

    @property
    def keeps_tokens(self) -> bool:
        """Per-token maxima are kept (``match(keep="tokens")``): any idf can be applied, and explanations built."""
        return len(self.cand_best) == len(self.pair_candidate) and (len(self.pair_candidate) > 0
                                                                     or not self.pair_table)

    def with_table(self, other: MatchStats) -> MatchStats:
        """These statistics with ``other``'s pair scores added (the same pairs, e.g. another layer computed later)."""
        if other.candidates != self.candidates or other.references != self.references:
            raise ModelError("Cannot merge pair scores of different inputs.")
        layers = tuple(sorted(set(self.layers) | set(other.layers)))
        return replace(self, layers=layers, pair_table={**self.pair_table, **other.pair_table},
                       table_idf=self.table_idf if self.table_idf is not None else other.table_idf)

    def select(self, first: int, last: int) -> MatchStats:
        """Candidates ``first:last`` with their pairs, as statistics of their own (views, no copies of per-token
        maxima; the pair scores are sliced and their notes renumbered)."""
        p0, p1 = (self.groups[first][0], self.groups[last - 1][1]) if last > first else (0, 0)
        table = {}
        for key, (scores, notes) in self.pair_table.items():
            table[key] = (scores[p0:p1], {k: [p - p0 for p in v if p0 <= p < p1] for k, v in notes.items()})
        return replace(self,
                       candidates=self.candidates[first:last],
                       references=self.references[p0:p1],
                       pair_candidate=self.pair_candidate[p0:p1] - first,
                       groups=tuple((a - p0, b - p0) for a, b in self.groups[first:last]),
                       cand_ids=self.cand_ids[first:last],
                       ref_ids=self.ref_ids[p0:p1],
                       cand_truncated=self.cand_truncated[first:last],
                       ref_truncated=self.ref_truncated[p0:p1],
                       cand_best=self.cand_best[p0:p1],
                       ref_best=self.ref_best[p0:p1],
                       pair_table=table)

    def reference_idf(self) -> IdfWeights:
        """idf from the references of this input (flattened; duplicates count as separate documents)."""
        return compute_idf(self.ref_ids)

    def pair_scores(self, layer: int, idf: IdfWeights | None = None):
        """Raw P, R, F of every pair at one layer, and the soft problems found.

        Returns:
            ``(scores, notes)``: ``(n_pairs, 3)`` float64 and a dict with the pair indices of empty
            candidates, empty references and degenerate idf.
        """
        if layer not in self.layers:
            raise ModelError(f"Layer {layer} was not computed for these pairs (have {list(self.layers)}).")
        if not self.keeps_tokens:
            entry = self.pair_table.get((layer, idf is not None))
            if entry is None:
                raise ModelError("These statistics hold each pair's P/R/F without idf only "
                                 "(match(..., keep=\"scores\") adds idf scores when the scorer's idf is on or "
                                 "idf_weights are given); use match(..., keep=\"tokens\") to apply any idf later.")
            scores, pair_notes = entry
            return scores.copy(), {k: list(v) for k, v in pair_notes.items()}
        k = self.layers.index(layer)
        special = list(self.special_ids)
        side_cache: dict[int, tuple[np.ndarray, bool]] = {}

        def side(ids: np.ndarray) -> tuple[np.ndarray, bool]:
            """(weights, empty) of a token array, computed once per array (candidates recur in every pair)."""
            key = id(ids)
            if key not in side_cache:
                is_special = np.isin(ids, special)
                w = np.where(is_special, 0.0, 1.0) if idf is None else idf(ids)
                side_cache[key] = (w, bool(is_special.all()))
            return side_cache[key]

        n = len(self.pair_candidate)
        notes: dict[str, list[int]] = {"empty_candidate": [], "empty_reference": [], "degenerate_idf": []}
        wcs, wrs = [], []
        c_flags = np.zeros(n, dtype=bool)
        r_flags = np.zeros(n, dtype=bool)
        for p in range(n):
            wc, c_empty = side(self.cand_ids[self.pair_candidate[p]])
            wr, r_empty = side(self.ref_ids[p])
            wcs.append(wc)
            wrs.append(wr)
            c_flags[p], r_flags[p] = c_empty, r_empty
            if c_empty:
                notes["empty_candidate"].append(p)
            if r_empty:
                notes["empty_reference"].append(p)
            if not (c_empty or r_empty) and (wc.sum() == 0 or wr.sum() == 0):
                notes["degenerate_idf"].append(p)
        out = prf_from_maxima([self.cand_best[p][k] for p in range(n)], [self.ref_best[p][k] for p in range(n)],
                              wcs, wrs, c_flags, r_flags)
        return out, notes


#: Most similarity cells (pairs x candidate tokens x reference tokens, padded) in one matching batch.
MATCH_CELLS = 1 << 19


#: Most token vectors per side (pairs x padded length) in one matching batch: bounds the padded copies, so that
#: their float64 copies (6 MB per side at dim 384) stay in the processor's caches (docs/DEVICE.md).
MATCH_TOKENS = 1 << 11


#: Device types whose matrix products accumulate in float64 (:func:`similarity_dtype`): Apple's MPS has no
#: float64 at all, and other accelerators run it far slower than float32.
FLOAT64_DEVICE_TYPES = ("cpu", "cuda")


def similarity_dtype(device):
    """The torch dtype cosines are summed in on ``device``: float64 on CPU and CUDA, float32 on any other device."""

    return torch.float64 if torch.device(device).type in FLOAT64_DEVICE_TYPES else torch.float32


def similarity_float64(cand, ref):
    """Cosines of unit float32 vectors, summed in float64 and then rounded to float32: ``(..., n_cand, n_ref)``.

    A float32 matrix product rounds differently depending on the shapes it is given, so a pair padded into a
    batch would score a few 1e-8 apart from the same pair alone. Products of float32 values are exact in
    float64 and the float64 sum is accurate far below float32's precision, so after rounding, every pair's
    maxima are the same in any batch (and in :meth:`Scorer.explain`). On CPU and CUDA only
    (:func:`similarity_dtype`): on other devices (Apple MPS has no float64) the product is float32, and a pair's
    maxima depend on its batch at about 1e-8 (docs/DEVICE.md).
    """

    dtype = similarity_dtype(cand.device)
    if dtype == torch.float32:
        return torch.matmul(cand, ref.transpose(-1, -2))
    return torch.matmul(cand.to(dtype), ref.to(dtype).transpose(-1, -2)).to(torch.float32)


def _match_plan(c_len: Sequence[int], r_len: Sequence[int]) -> list[list[int]]:
    """Pairs sorted by length (longest first), cut into matching batches of at most :data:`MATCH_CELLS` padded
    similarity cells and :data:`MATCH_TOKENS` padded token vectors per side: lists of pair indices."""
    n = len(c_len)
    order = sorted(range(n), key=lambda p: (max(c_len[p], r_len[p]), c_len[p]), reverse=True)
    batches = []
    start = 0
    while start < n:
        c_max, r_max = c_len[order[start]], r_len[order[start]]
        stop = start + 1
        while stop < n:
            c2, r2 = max(c_max, c_len[order[stop]]), max(r_max, r_len[order[stop]])
            b = stop - start + 1
            if b * c2 * r2 > MATCH_CELLS or b * max(c2, r2) > MATCH_TOKENS:
                break
            c_max, r_max, stop = c2, r2, stop + 1
        batches.append(order[start:stop])
        start = stop
    return batches


def weight_vector(idf: IdfWeights | None, special_ids, size: int) -> np.ndarray:
    """The weight of every token id ``0 .. size - 1`` (more when idf knows higher ids), float64.

    Without idf: 1, and 0 for the special tokens (:func:`bertscore_viz.engine.idf.uniform_weights`); with idf: its
    value, ``idf.unseen`` for ids it never saw (:meth:`IdfWeights.__call__`). Indexing it with a sentence's ids gives
    the same weights, to the bit, as those functions.
    """
    if idf is None:
        vec = np.ones(size, dtype=np.float64)
        vec[[i for i in special_ids if 0 <= i < size]] = 0.0
        return vec
    keys = np.fromiter(idf.weights.keys(), dtype=np.int64, count=len(idf.weights))
    values = np.fromiter(idf.weights.values(), dtype=np.float64, count=len(idf.weights))
    vec = np.full(max(size, int(keys.max()) + 1 if len(keys) else 0), idf.unseen, dtype=np.float64)
    vec[keys] = values
    return vec


def side_flags(ids: Sequence[np.ndarray], weights: np.ndarray, special_ids) -> tuple[np.ndarray, np.ndarray]:
    """For each token-id array: ``(empty, unweighted)``, ``(n,)`` bool each.

    ``empty``: it holds nothing but special tokens (an empty sentence, scored 0); ``unweighted``: its weights (from
    :func:`weight_vector`) sum to 0 (degenerate idf). Weights are never negative (idf is ``ln((M + 1) / (df + 1))``
    with ``df <= M``), so a sum of 0 is the same as no non-zero weight, which is what is counted here.
    """
    lengths = np.fromiter((len(a) for a in ids), dtype=np.int64, count=len(ids))
    flat = np.concatenate(list(ids)) if len(ids) else np.zeros(0, dtype=np.int64)
    ends = np.cumsum(lengths)
    starts = ends - lengths

    def per_array(mask: np.ndarray) -> np.ndarray:
        counts = np.concatenate([[0], np.cumsum(mask, dtype=np.int64)])
        return counts[ends] - counts[starts]

    content = per_array(~np.isin(flat, list(special_ids)))
    weighted = per_array(weights[flat] != 0)
    return content == 0, weighted == 0


def score_batched(cand_vecs: Sequence, ref_vecs: Sequence, cand_ids: Sequence[np.ndarray],
                  ref_ids: Sequence[np.ndarray], weights: Sequence[np.ndarray], cand_empty: np.ndarray,
                  ref_empty: np.ndarray) -> np.ndarray:
    """Raw P, R and F of many pairs at one layer, computed where the vectors are, in :func:`match_batched`'s batches.

    The similarity and greedy maxima are :func:`match_batched`'s; the idf-weighted means, the empty-sentence rule
    and F1 are :func:`bertscore_viz.engine.tensor_ops.precision_recall_f1` in float64 on the device, so nothing but
    three numbers per pair (and weighting) comes back to the host. Equal to :meth:`MatchStats.pair_scores` on the
    same pairs (to float64 rounding, about 1e-16).

    Args:
        cand_vecs: per pair, the candidate's ``(n_cand, dim)`` unit vectors at the layer; ref_vecs: the reference's.
        cand_ids, ref_ids: per pair, the token ids of each side (they index ``weights``).
        weights: ``(vocabulary,)`` float64 weight vectors (:func:`weight_vector`), e.g. without and with idf: each is
            applied to the same greedy maxima.
        cand_empty, ref_empty: ``(n_pairs,)`` bool, the side holds only special tokens: P = R = F = 0.

    Returns:
        ``(n_pairs, n_weights, 3)`` float64 P, R, F; NaN P or R where a side's weights sum to 0 (F is then 0).
    """

    n = len(cand_vecs)
    if not n:
        return np.zeros((0, len(weights), 3), dtype=np.float64)
    device = cand_vecs[0].device
    c_len = [int(v.shape[0]) for v in cand_vecs]
    r_len = [int(v.shape[0]) for v in ref_vecs]
    ws = [torch.from_numpy(np.ascontiguousarray(w, dtype=np.float64)).to(device) for w in weights]
    c_empty = torch.from_numpy(np.asarray(cand_empty, dtype=bool)).to(device)
    r_empty = torch.from_numpy(np.asarray(ref_empty, dtype=bool)).to(device)
    out = torch.empty((n, len(ws), 3), dtype=torch.float64, device=device)
    with torch.no_grad():
        for batch in _match_plan(c_len, r_len):
            rows = torch.tensor(batch, device=device)
            cand, c_mask = tensor_ops.pad_sequences([cand_vecs[p] for p in batch])
            ref, r_mask = tensor_ops.pad_sequences([ref_vecs[p] for p in batch])
            cb, rb = tensor_ops.greedy_maxima(similarity_float64(cand, ref), c_mask, r_mask)
            c_ids = tensor_ops.pad_sequences([cand_ids[p] for p in batch], dtype=torch.long)[0].to(device)
            r_ids = tensor_ops.pad_sequences([ref_ids[p] for p in batch], dtype=torch.long)[0].to(device)
            for k, w in enumerate(ws):
                wc = w[c_ids].masked_fill(~c_mask, 0.0)
                wr = w[r_ids].masked_fill(~r_mask, 0.0)
                p_, r_, f_ = tensor_ops.precision_recall_f1(cb, rb, wc, wr, c_empty[rows], r_empty[rows],
                                                            safe=False)
                out[rows, k] = torch.stack([p_, r_, f_], dim=1)
    return out.cpu().numpy()


def match_batched(cand_vecs: Sequence[Sequence], ref_vecs: Sequence[Sequence]
                  ) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Greedy maxima of many pairs at several layers, in length-sorted padded batches on the vectors' device.

    Args:
        cand_vecs: per pair, one ``(n_cand, dim)`` unit-vector tensor per layer; ref_vecs: ``(n_ref, dim)`` ones.

    Returns:
        ``(cand_best, ref_best)``: per pair, float32 numpy arrays ``(n_layers, n_cand)`` and ``(n_layers, n_ref)``,
        the maxima over **real** tokens (:func:`bertscore_viz.engine.tensor_ops.greedy_maxima`): the only numbers copied
        back to the host.
    """

    n = len(cand_vecs)
    cand_best: list[np.ndarray] = [None] * n  # type: ignore[list-item]
    ref_best: list[np.ndarray] = [None] * n  # type: ignore[list-item]
    if not n:
        return cand_best, ref_best
    n_layers = len(cand_vecs[0])
    c_len = [int(v[0].shape[0]) for v in cand_vecs]
    r_len = [int(v[0].shape[0]) for v in ref_vecs]
    with torch.no_grad():
        for batch in _match_plan(c_len, r_len):
            cb_layers, rb_layers = [], []
            for k in range(n_layers):
                cand, c_mask = tensor_ops.pad_sequences([cand_vecs[p][k] for p in batch])
                ref, r_mask = tensor_ops.pad_sequences([ref_vecs[p][k] for p in batch])
                cb, rb = tensor_ops.greedy_maxima(similarity_float64(cand, ref), c_mask, r_mask)
                cb_layers.append(cb)
                rb_layers.append(rb)
            cb_host = torch.stack(cb_layers, dim=1).cpu().numpy()  # (batch, layers, c_max)
            rb_host = torch.stack(rb_layers, dim=1).cpu().numpy()
            for row, p in enumerate(batch):
                cand_best[p] = cb_host[row, :, : c_len[p]]
                ref_best[p] = rb_host[row, :, : r_len[p]]
    return cand_best, ref_best
