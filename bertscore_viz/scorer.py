"""Orchestration: inputs -> token ids -> embeddings (cached) -> greedy maxima -> P/R/F1 -> results.

Gives the numbers of bert-score 0.3.13 (``bert_score.score`` / ``BERTScorer``) for the same model, layer and
options, to within 1e-5 in fp32; the differences where the reference is wrong are listed in the README.
The model pass is the only expensive step: :class:`MatchStats` keeps each pair's greedy maxima for the layers
computed, so idf, rescaling and (when all layers were computed) the layer can change without another pass.
Matching runs where the embeddings are (CPU or CUDA), in length-sorted padded batches
(:func:`match_batched`, on :mod:`bertscore_viz.tensor_ops`); only the per-token maxima come back to the host.
:meth:`Scorer.score` (one layer, no explanation) goes further: each pair's P/R/F is computed on the device in the
same batches (:func:`score_batched`) and only ``(n_pairs, 3)`` numbers come back.
"""

from __future__ import annotations

import contextlib
import warnings as _warnings
from dataclasses import dataclass, field, replace
from typing import Callable, ContextManager, Sequence

import numpy as np

from .baseline import BaselineTable, find_baseline
from .encoder import DEFAULT_TOKEN_BUDGET, Encoder, get_encoder, release_free_memory
from .errors import BaselineError, InputError, ModelError, shorten
from .idf import IdfWeights, compute_idf, uniform_weights
from .models import ModelSpec, resolve_model
from .results import MultiReferenceExplanation, PairExplanation, ScoreResult, Signature, TokenSide

ProgressFn = Callable[[int, int], None]
#: Called with the number of distinct sentences a model pass embeds; the context manager it returns is held around
#: the pass (the app's job queue: a slot for large passes, nothing for an Inspect pair).
GuardFn = Callable[[int], ContextManager]
#: Pairs handled per streaming chunk: bounds memory for large inputs while keeping length-sorted batches full.
CHUNK_PAIRS = 1024


class BertScoreWarning(UserWarning):
    """Soft problems with the input (empty sentences, truncation, degenerate idf)."""


def _check_texts(values, what: str) -> list[str]:
    if isinstance(values, str):
        raise InputError(f"Expected a list of {what} strings, got a single string {shorten(values)}. "
                         f"Wrap it in a list: [{shorten(values)}].")
    out = list(values)
    for i, v in enumerate(out):
        if not isinstance(v, str):
            raise InputError(f"Expected every {what} to be a string, but the one at index {i} is "
                             f"{type(v).__name__} {shorten(v)}. Convert missing values to '' first.")
    return out


def normalize_inputs(candidates, references) -> tuple[list[str], list[list[str]]]:
    """Validate and bring references to one list per candidate.

    Raises:
        InputError: unequal lengths, non-strings, or a candidate with an empty list of references.
    """
    cands = _check_texts(candidates, "candidate")
    if isinstance(references, str):
        raise InputError(f"Expected a list of references, got a single string {shorten(references)}.")
    refs_in = list(references)
    if len(cands) != len(refs_in):
        raise InputError(
            f"Expected as many candidates as references, got {len(cands)} candidates and {len(refs_in)} "
            "references. Check that both files have one sentence per line."
        )
    groups: list[list[str]] = []
    for i, r in enumerate(refs_in):
        if isinstance(r, str):
            groups.append([r])
        else:
            try:
                group = _check_texts(r, f"reference of candidate {i}")
            except TypeError:
                raise InputError(f"Reference {i} is {type(r).__name__} {shorten(r)}; expected a string or a "
                                 "list of strings.") from None
            if not group:
                raise InputError(f"Candidate {i} has an empty list of references; give at least one.")
            groups.append(group)
    return cands, groups


def _flatten_groups(groups_in: Sequence[Sequence[str]]) -> tuple[list[str], list[int], list[tuple[int, int]]]:
    """``(flat references, candidate index of each pair, (start, end) pairs of each candidate)``."""
    flat_refs: list[str] = []
    pair_cand: list[int] = []
    groups: list[tuple[int, int]] = []
    for i, g in enumerate(groups_in):
        groups.append((len(flat_refs), len(flat_refs) + len(g)))
        flat_refs.extend(g)
        pair_cand.extend([i] * len(g))
    return flat_refs, pair_cand, groups


#: Between the typed text and the piece the model read, in the display of a token the tokenizer changed (が→か).
READ_AS = "→"


def _unk_id(enc) -> int | None:
    uid = getattr(enc.tokenizer, "unk_token_id", None)
    return None if uid is None else int(uid)


def _script(ch: str) -> str:
    """A readable name for the script (or kind of symbol) of a character: ``CJK``, ``HIRAGANA``, ``emoji``."""
    import unicodedata

    if unicodedata.category(ch) in ("So", "Sk", "Cs", "Co"):
        return "emoji or symbols"
    name = unicodedata.name(ch, "")
    word = name.split(" ")[0]
    return (word if len(word) <= 3 else word.capitalize()) if name else "unnamed characters"


_CHARACTER_SCRIPTS = {"CJK", "Hiragana", "Katakana"}


def _is_latin_or_common(ch: str) -> bool:
    import unicodedata

    if not ch.isalpha():
        return True
    return unicodedata.name(ch, "").startswith("LATIN")


def _piece(token: str) -> str:
    return token.removeprefix("##").removeprefix("Ġ").removeprefix("▁")


def changed_by_tokenizer(src: str, piece: str) -> bool:
    """Non-Latin letters the tokenizer read as other letters: accent stripping turns が into か (the model then
    reads a different character). Latin accents (``café`` read as ``cafe``) are the English models' own design."""
    import unicodedata

    if not any(not _is_latin_or_common(c) for c in src):
        return False
    if piece == src or piece.casefold() == src.casefold():
        return False
    stripped = "".join(c for c in unicodedata.normalize("NFD", src) if not unicodedata.combining(c))
    return stripped.casefold() == piece.casefold()


def _typed(side: TokenSide, i: int) -> str:
    """The input characters of token ``i`` without the display's flags (``→[UNK]``, ``→か``)."""
    src = side.source_text(i)
    mark = READ_AS + _piece(side.tokens[i])
    return src[:-len(mark)] if src.endswith(mark) and len(src) > len(mark) else src


def unknown_message(what: str, side: TokenSide, model: str) -> str | None:
    """A warning when the text of ``side`` is outside the model's languages, or None.

    Three signs, counted on the tokens the model saw: tokens unknown to the vocabulary ([UNK], e.g. kanji or
    emoji in an English vocabulary); non-Latin letters the tokenizer changed (accent stripping turns が into か);
    non-Latin words read one character at a time (a vocabulary with that script's letters but no words of it:
    the warning then needs at least half of those letters read singly, and three of them).

    Args:
        what: ``"candidate"``, ``"reference"`` or ``"reference 2"``; side: its tokens; model: the model's name.
    """
    from .languages import multilingual_hint

    unknown = side.unknown
    parts: list[str] = []
    scripts: set[str] = set()
    unk_texts = list(dict.fromkeys(_typed(side, i) for i in np.flatnonzero(unknown)))
    for t in unk_texts:
        scripts.update(_script(c) for c in t if not c.isspace())
    if unk_texts:
        shown = ", ".join(unk_texts[:8]) + (" …" if len(unk_texts) > 8 else "")
        parts.append(f"{int(unknown.sum())} of {side.n_words()} token(s) unknown to the model ([UNK]: {shown})")
    changed: list[str] = []
    foreign = single = 0
    for i, (tok, special) in enumerate(zip(side.tokens, side.special)):
        if special or unknown[i]:
            continue
        src = _typed(side, i)
        piece = _piece(tok)
        letters = [c for c in src if not _is_latin_or_common(c)]
        if not letters:
            continue
        scripts.update(_script(c) for c in letters)
        if not any(_script(c) in _CHARACTER_SCRIPTS for c in letters):  # Han and kana are read per character
            foreign += 1                                                  # by multilingual vocabularies too
            single += len(piece) == 1
        if changed_by_tokenizer(src, piece):
            changed.append(f"{src} read as {piece}")
    if changed:
        shown = ", ".join(list(dict.fromkeys(changed))[:5])
        parts.append(f"{len(changed)} token(s) changed by the tokenizer ({shown})")
    if foreign >= 3 and single * 2 >= foreign:
        parts.append(f"{single} of {foreign} non-Latin token(s) read one character at a time")
    if not parts:
        return None
    return (f"The {what} is outside the languages of {model} ({', '.join(sorted(scripts)) or 'unknown'}): "
            f"{'; '.join(parts)}. Such tokens match each other closely whatever they mean, so the score "
            "is not meaningful. To score this text, " + multilingual_hint(model))


def _distinct(cands: Sequence[str], flat_refs: Sequence[str]) -> int:
    """Distinct texts of a call: the sentences its model pass embeds at most (what a guard is told)."""
    return len(set(cands) | set(flat_refs))


def _indices(idx: Sequence[int], limit: int = 10) -> str:
    shown = ", ".join(str(i) for i in idx[:limit])
    return shown + (f" and {len(idx) - limit} more" if len(idx) > limit else "")


#: Pairs per call of the kernel when P/R/F are computed from kept per-token maxima (bounds the padded copies).
KERNEL_PAIRS = 2048


def _padded(arrays: Sequence[np.ndarray], dtype) -> np.ndarray:
    out = np.zeros((len(arrays), max((len(a) for a in arrays), default=0)), dtype=dtype)
    for row, a in enumerate(arrays):
        out[row, : len(a)] = a
    return out


def prf_from_maxima(cand_best: Sequence[np.ndarray], ref_best: Sequence[np.ndarray],
                    cand_weights: Sequence[np.ndarray], ref_weights: Sequence[np.ndarray], cand_empty: np.ndarray,
                    ref_empty: np.ndarray) -> np.ndarray:
    """Raw P, R, F of pairs from their per-token maxima and weights, on the CPU with the kernel every path uses
    (:func:`bertscore_viz.tensor_ops.precision_recall_f1`, float64, bert-score's IEEE F1): ``(n_pairs, 3)``."""
    import torch

    from . import tensor_ops

    n = len(cand_best)
    out = np.empty((n, 3), dtype=np.float64)
    for start in range(0, n, KERNEL_PAIRS):
        sl = slice(start, min(n, start + KERNEL_PAIRS))
        p, r, f = tensor_ops.precision_recall_f1(
            torch.from_numpy(_padded(cand_best[sl], np.float32)), torch.from_numpy(_padded(ref_best[sl], np.float32)),
            torch.from_numpy(_padded(cand_weights[sl], np.float64)),
            torch.from_numpy(_padded(ref_weights[sl], np.float64)),
            torch.from_numpy(np.asarray(cand_empty[sl], dtype=bool)),
            torch.from_numpy(np.asarray(ref_empty[sl], dtype=bool)), safe=False)
        out[sl] = torch.stack([p, r, f], dim=1).numpy()
    return out


def best_of_references(pair: np.ndarray, groups: Sequence[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """Each candidate's maximum over its references, P, R and F separately, and which reference gave it:
    :func:`bertscore_viz.tensor_ops.multi_reference_max` on ``(n_pairs, 3)`` float64 (NaN wins, as in bert-score)."""
    if not len(groups):
        return np.zeros((0, 3)), np.zeros((0, 3), dtype=np.int64)
    if len(groups) == len(pair):  # one reference each: the maximum is the pair itself
        return np.array(pair, dtype=np.float64), np.zeros((len(pair), 3), dtype=np.int64)
    import torch

    from . import tensor_ops

    best, arg = tensor_ops.multi_reference_max(torch.from_numpy(np.asarray(pair, dtype=np.float64)), list(groups))
    return best.numpy(), arg.numpy().astype(np.int64)


def rescaled(values, baseline) -> np.ndarray:
    """``(x - b) / (1 - b)`` in float64 (:func:`bertscore_viz.tensor_ops.rescale`); ``b`` broadcasts."""
    import torch

    from . import tensor_ops

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
        cand_truncated, ref_truncated: ``(n,)`` bool, cut at the model's maximum length.
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

    @property
    def keeps_tokens(self) -> bool:
        """Per-token maxima are kept (``match(keep="tokens")``): any idf can be applied, and explanations built."""
        return len(self.cand_best) == len(self.pair_candidate) and (len(self.pair_candidate) > 0
                                                                     or not self.pair_table)

    def with_table(self, other: "MatchStats") -> "MatchStats":
        """These statistics with ``other``'s pair scores added (the same pairs, e.g. another layer computed later)."""
        if other.cand_ids != self.cand_ids and len(other.pair_candidate) != len(self.pair_candidate):
            raise ModelError("Cannot merge pair scores of different inputs.")
        layers = tuple(sorted(set(self.layers) | set(other.layers)))
        return replace(self, layers=layers, pair_table={**self.pair_table, **other.pair_table},
                       table_idf=self.table_idf if self.table_idf is not None else other.table_idf)

    def select(self, first: int, last: int) -> "MatchStats":
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
                raise ModelError("These statistics hold each pair's P/R/F without idf only (match(..., keep=\"scores\") "
                                 "adds idf scores when the scorer's idf is on or idf_weights are given); use "
                                 "match(..., keep=\"tokens\") to apply any idf later.")
            scores, notes = entry
            return scores.copy(), {k: list(v) for k, v in notes.items()}
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
#: Most token vectors per side (pairs x padded length) in one matching batch: bounds the padded copies. 2,048
#: (6 MB per side in float64 at dim 384) matched 1,000 WMT16 pairs in 110-140 ms on this CPU against 205 ms with
#: 8,192: the float64 copies then stay in the processor's caches (docs/DEVICE.md).
MATCH_TOKENS = 1 << 11


#: Device types whose matrix products accumulate in float64 (:func:`similarity_dtype`): Apple's MPS has no
#: float64 at all, and other accelerators run it far slower than float32.
FLOAT64_DEVICE_TYPES = ("cpu", "cuda")


def similarity_dtype(device):
    """The torch dtype cosines are summed in on ``device``: float64 on CPU and CUDA, float32 on any other device
    (torch is imported here, not at the top: importing the package does not load it)."""
    import torch

    return torch.float64 if torch.device(device).type in FLOAT64_DEVICE_TYPES else torch.float32


def _similarity_float64(cand, ref):
    """Cosines of unit float32 vectors, summed in float64 and then rounded to float32: ``(..., n_cand, n_ref)``.

    A float32 matrix product rounds differently depending on the shapes it is given, so a pair padded into a
    batch would score a few 1e-8 apart from the same pair alone. Products of float32 values are exact in
    float64 and the float64 sum is accurate far below float32's precision, so after rounding, every pair's
    maxima are the same in any batch (and in :meth:`Scorer.explain`). On CPU and CUDA only
    (:func:`similarity_dtype`): on other devices (Apple MPS has no float64) the product is float32, and a pair's
    maxima depend on its batch at about 1e-8 (docs/DEVICE.md).
    """
    import torch  # here, not at the top: importing the package does not load torch

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


def _length_mask(lengths: Sequence[int], device):
    """``(b, max length)`` bool, True on each row's first ``lengths[i]`` positions."""
    import torch

    lens = torch.tensor(list(lengths), device=device)
    return torch.arange(max(lengths), device=device)[None, :] < lens[:, None]


def _padded_ids(arrays: Sequence[np.ndarray], width: int) -> np.ndarray:
    """``(b, width)`` int64 token ids, right-padded with 0 (padded cells get weight 0 from the mask)."""
    out = np.zeros((len(arrays), width), dtype=np.int64)
    for row, a in enumerate(arrays):
        out[row, : len(a)] = a
    return out


def weight_vector(idf: IdfWeights | None, special_ids, size: int) -> np.ndarray:
    """The weight of every token id ``0 .. size - 1`` (more when idf knows higher ids), float64.

    Without idf: 1, and 0 for the special tokens (:func:`bertscore_viz.idf.uniform_weights`); with idf: its value,
    ``idf.unseen`` for ids it never saw (:meth:`IdfWeights.__call__`). Indexing it with a sentence's ids gives the
    same weights, to the bit, as those functions.
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
                  ref_ids: Sequence[np.ndarray], weights: np.ndarray | Sequence[np.ndarray], cand_empty: np.ndarray,
                  ref_empty: np.ndarray) -> np.ndarray:
    """Raw P, R and F of many pairs at one layer, computed where the vectors are, in :func:`match_batched`'s batches.

    The similarity and greedy maxima are :func:`match_batched`'s; the idf-weighted means, the empty-sentence rule
    and F1 are :func:`bertscore_viz.tensor_ops.precision_recall_f1` in float64 on the device, so nothing but
    three numbers per pair (and weighting) comes back to the host. Equal to :meth:`MatchStats.pair_scores` on the
    same pairs (to float64 rounding, about 1e-16).

    Args:
        cand_vecs: per pair, the candidate's ``(n_cand, dim)`` unit vectors at the layer; ref_vecs: the reference's.
        cand_ids, ref_ids: per pair, the token ids of each side (they index ``weights``).
        weights: ``(vocabulary,)`` float64 weight of every id (:func:`weight_vector`), or a list of such vectors
            (e.g. without and with idf): each is applied to the same greedy maxima.
        cand_empty, ref_empty: ``(n_pairs,)`` bool, the side holds only special tokens: P = R = F = 0.

    Returns:
        ``(n_pairs, 3)`` float64 P, R, F for one weight vector, ``(n_pairs, n_weights, 3)`` for a list; NaN P or R
        where a side's weights sum to 0 (F is then 0).
    """
    import torch
    from torch.nn.utils.rnn import pad_sequence

    from . import tensor_ops

    several = not isinstance(weights, np.ndarray)
    weight_list = list(weights) if several else [weights]
    n = len(cand_vecs)
    if not n:
        return np.zeros((0, len(weight_list), 3) if several else (0, 3), dtype=np.float64)
    device = cand_vecs[0].device
    c_len = [int(v.shape[0]) for v in cand_vecs]
    r_len = [int(v.shape[0]) for v in ref_vecs]
    ws = [torch.from_numpy(np.ascontiguousarray(w, dtype=np.float64)).to(device) for w in weight_list]
    c_empty = torch.from_numpy(np.asarray(cand_empty, dtype=bool)).to(device)
    r_empty = torch.from_numpy(np.asarray(ref_empty, dtype=bool)).to(device)
    out = torch.empty((n, len(ws), 3), dtype=torch.float64, device=device)
    with torch.no_grad():
        for batch in _match_plan(c_len, r_len):
            rows = torch.tensor(batch, device=device)
            cl, rl = [c_len[p] for p in batch], [r_len[p] for p in batch]
            c_mask, r_mask = _length_mask(cl, device), _length_mask(rl, device)
            cand = pad_sequence([cand_vecs[p] for p in batch], batch_first=True)
            ref = pad_sequence([ref_vecs[p] for p in batch], batch_first=True)
            cb, rb = tensor_ops.greedy_maxima(_similarity_float64(cand, ref), c_mask, r_mask)
            c_ids = torch.from_numpy(_padded_ids([cand_ids[p] for p in batch], max(cl))).to(device)
            r_ids = torch.from_numpy(_padded_ids([ref_ids[p] for p in batch], max(rl))).to(device)
            for k, w in enumerate(ws):
                wc = w[c_ids].masked_fill(~c_mask, 0.0)
                wr = w[r_ids].masked_fill(~r_mask, 0.0)
                p_, r_, f_ = tensor_ops.precision_recall_f1(cb, rb, wc, wr, c_empty[rows], r_empty[rows],
                                                            safe=False)
                out[rows, k] = torch.stack([p_, r_, f_], dim=1)
    host = out.cpu().numpy()
    return host if several else host[:, 0]


def match_batched(cand_vecs: Sequence[Sequence], ref_vecs: Sequence[Sequence]
                  ) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Greedy maxima of many pairs at several layers, in length-sorted padded batches on the vectors' device.

    Args:
        cand_vecs: per pair, one ``(n_cand, dim)`` unit-vector tensor per layer; ref_vecs: ``(n_ref, dim)`` ones.

    Returns:
        ``(cand_best, ref_best)``: per pair, float32 numpy arrays ``(n_layers, n_cand)`` and ``(n_layers, n_ref)``,
        the maxima over **real** tokens (:func:`bertscore_viz.tensor_ops.greedy_maxima`): the only numbers copied
        back to the host.
    """
    import torch
    from torch.nn.utils.rnn import pad_sequence

    from . import tensor_ops

    n = len(cand_vecs)
    cand_best: list[np.ndarray] = [None] * n  # type: ignore[list-item]
    ref_best: list[np.ndarray] = [None] * n  # type: ignore[list-item]
    if not n:
        return cand_best, ref_best
    n_layers = len(cand_vecs[0])
    c_len = [int(v[0].shape[0]) for v in cand_vecs]
    r_len = [int(v[0].shape[0]) for v in ref_vecs]
    device = cand_vecs[0][0].device
    with torch.no_grad():
        for batch in _match_plan(c_len, r_len):
            c_mask = _length_mask([c_len[p] for p in batch], device)
            r_mask = _length_mask([r_len[p] for p in batch], device)
            cb_layers, rb_layers = [], []
            for k in range(n_layers):
                cand = pad_sequence([cand_vecs[p][k] for p in batch], batch_first=True)
                ref = pad_sequence([ref_vecs[p][k] for p in batch], batch_first=True)
                cb, rb = tensor_ops.greedy_maxima(_similarity_float64(cand, ref), c_mask, r_mask)
                cb_layers.append(cb)
                rb_layers.append(rb)
            cb_host = torch.stack(cb_layers, dim=1).cpu().numpy()  # (batch, layers, c_max)
            rb_host = torch.stack(rb_layers, dim=1).cpu().numpy()
            for row, p in enumerate(batch):
                cand_best[p] = cb_host[row, :, : c_len[p]]
                ref_best[p] = rb_host[row, :, : r_len[p]]
    return cand_best, ref_best


class Scorer:
    """BERTScore with token-level explanations.

    Precision is over candidate tokens (each matched to its most similar reference token), recall over
    reference tokens (each matched to its most similar candidate token), F1 their harmonic mean.

    Args:
        model: None (the bundled all-MiniLM-L6-v2), a local model directory, or a Hugging Face hub name.
        layer: ``hidden_states`` index (0 = embeddings); default: the model's tuned layer.
        idf: weight tokens by idf computed from the references of each call (or from ``idf_sentences``).
        idf_sentences: fixed sentences to compute idf from instead (as bert-score's ``idf_sents``).
        rescale_with_baseline: report ``(x - b) / (1 - b)`` with the baseline of model, language and layer.
        lang: language of the baseline (``baselines/<lang>/<model>.tsv``).
        baseline_path: a custom baseline file (bert-score format) instead of the shipped one.
        batch_size: most sentences in one forward batch.
        device: ``"cpu"``, ``"cuda"``, ``"cuda:1"``; default CUDA when available.
        precision: ``"fp32"`` (exact, default), ``"fp16"`` (CUDA) or ``"bf16"``; shown in the signature.
        token_budget: most padded token cells in one forward batch.
        baseline_table: a baseline already read or computed (e.g. in the app), used instead of any file;
            the signature then says ``-custom-rescaled``.
        encoder: a loaded :class:`~bertscore_viz.encoder.Encoder` to use (e.g. one of a pool shared by several
            scorers) instead of the process-wide one for ``model``/``device``/``precision``; ``model`` may then be
            omitted, and ``device`` and ``precision`` are the encoder's.
        idf_weights: fixed :class:`~bertscore_viz.idf.IdfWeights` (e.g. computed over a whole corpus and broadcast
            to workers); implies idf on and takes precedence over ``idf_sentences``.
        guard: ``guard(n_sentences)`` returns a context manager held around every model pass (e.g. a job queue).
        custom_baseline: whether the signature calls the baseline custom; default: a ``baseline_path`` or a
            ``baseline_table`` was given.

    Raises:
        ModelError, BaselineError: at construction for an unknown layer or a missing baseline, before any work.
    """

    def __init__(self, model: str | None = None, layer: int | None = None, idf: bool = False,
                 idf_sentences: Sequence[str] | None = None, rescale_with_baseline: bool = False,
                 lang: str = "en", baseline_path: str | None = None, batch_size: int = 64,
                 device: str | None = None, precision: str = "fp32", token_budget: int = DEFAULT_TOKEN_BUDGET,
                 baseline_table: BaselineTable | None = None, *, encoder: Encoder | None = None,
                 idf_weights: IdfWeights | None = None, guard: GuardFn | None = None,
                 custom_baseline: bool | None = None):
        self._options = dict(model=model, layer=layer, idf=idf, idf_sentences=idf_sentences,
                             rescale_with_baseline=rescale_with_baseline, lang=lang, baseline_path=baseline_path,
                             batch_size=batch_size, device=device, precision=precision, token_budget=token_budget,
                             baseline_table=baseline_table, encoder=encoder, idf_weights=idf_weights, guard=guard,
                             custom_baseline=custom_baseline)
        if encoder is not None:
            if model is None:
                model = encoder.spec
            spec = model if isinstance(model, ModelSpec) else resolve_model(model)
            if (spec.name, spec.source) != (encoder.spec.name, encoder.spec.source):
                raise ModelError(f"The encoder given is for {encoder.spec.name!r}, not for {spec.name!r}.")
            device, precision = encoder.device, encoder.precision
        self.spec: ModelSpec = model if isinstance(model, ModelSpec) else resolve_model(model)
        if layer is None:
            layer = self.spec.default_layer
            if layer is None:
                raise ModelError(
                    f"No default layer is known for {self.spec.name!r}. Pass layer=N (0 = embeddings), or find "
                    f"the best one with `python -m bertscore_viz tune-layers --data DIR -m {self.spec.name}`."
                )
        self.layer = int(layer)
        self.idf = bool(idf or idf_sentences is not None or idf_weights is not None)
        self.idf_sentences = None if idf_sentences is None else _check_texts(idf_sentences, "idf sentence")
        self.rescale_with_baseline = bool(rescale_with_baseline)
        self.lang = lang
        self.baseline_path = baseline_path
        self.baseline_table = baseline_table
        if batch_size < 1:
            raise InputError(f"batch_size must be at least 1, got {batch_size}.")
        self.batch_size = int(batch_size)
        self.device = device
        self.precision = precision
        self.token_budget = int(token_budget)
        self._encoder: Encoder | None = None
        self._given_encoder = encoder
        self._fixed_idf: IdfWeights | None = idf_weights
        self._guard = guard
        self._custom_baseline = custom_baseline
        self.baseline = None
        if self.rescale_with_baseline:
            self.baseline = self.baseline_for(self.layer)
        if self.layer < 0:
            raise ModelError(f"Layer must be 0 or more (0 = embeddings), got {self.layer}.")
        if encoder is not None:
            _ = self.encoder  # checks the layer against the given model now

    def replace(self, **changes) -> "Scorer":
        """A new scorer with these options changed and the others as here (the encoder stays shared), e.g.
        ``scorer.replace(idf_weights=w)`` or ``scorer.replace(encoder=other_device_encoder)``."""
        options = dict(self._options)
        unknown = set(changes) - set(options)
        if unknown:
            raise InputError(f"Unknown Scorer option(s): {', '.join(sorted(unknown))}.")
        if "encoder" not in changes and self._encoder is not None and not {"model", "device", "precision"} & set(
                changes):
            options["encoder"] = self._encoder
        if "encoder" in changes and changes["encoder"] is not None and "model" not in changes:
            options["model"] = None
        options.update(changes)
        return type(self)(**options)

    @property
    def custom_baseline(self) -> bool:
        if self._custom_baseline is not None:
            return bool(self._custom_baseline)
        return self.baseline_path is not None or self.baseline_table is not None

    def baseline_for(self, layer: int) -> np.ndarray:
        """``(3,)`` P/R/F baseline of a layer, from the given table, the given file, or the shipped files."""
        try:
            table = self.baseline_table or find_baseline(self.spec.name, self.lang, self.baseline_path)
        except BaselineError as exc:  # BERTSCORE.md: name the file, the model and the layer
            raise BaselineError(f"{exc} (Rescaling was asked for layer {layer}.)") from None
        return table.for_layer(layer, self.spec.name)

    def guarded(self, n_sentences: int) -> ContextManager:
        """The context held around a model pass over ``n_sentences`` (the ``guard`` given, else nothing)."""
        return self._guard(n_sentences) if self._guard is not None else contextlib.nullcontext()

    # --- shared pieces ----------------------------------------------------------------------------------------
    @property
    def encoder(self) -> Encoder:
        if self._encoder is None:
            enc = self._given_encoder or get_encoder(self.spec, self.device, self.precision)
            if self.layer > enc.num_layers:
                raise ModelError(f"Layer {self.layer} does not exist in {self.spec.name}: it has layers 0 to "
                                 f"{enc.num_layers} (0 = embeddings).")
            self._encoder = enc
        return self._encoder

    @property
    def signature(self) -> Signature:
        enc = self._encoder
        if enc is None:
            import transformers

            tv = transformers.__version__
        else:
            tv = enc.transformers_version
        return Signature(self.spec.name, self.layer, self.idf, self.rescale_with_baseline,
                         self.custom_baseline, self.precision, tv)

    def idf_weights(self, references: Sequence[str]) -> IdfWeights:
        """The idf used for a call whose (flattened) references are given: the fixed ``idf_weights``, else those of
        ``idf_sentences``, else those of the references."""
        if self._fixed_idf is not None:
            return self._fixed_idf
        if self.idf_sentences is not None:
            if self._fixed_idf is None:
                self._fixed_idf = compute_idf(t.ids for t in self.encoder.encode(self.idf_sentences))
            return self._fixed_idf
        return compute_idf(t.ids for t in self.encoder.encode(list(references)))

    # --- corpus path ------------------------------------------------------------------------------------------
    def match(self, candidates, references, layers: Sequence[int] | str | None = None,
              progress: ProgressFn | None = None, keep: str = "tokens",
              idf_weights: IdfWeights | None = None) -> MatchStats:
        """Embed and greedily match every pair, keeping what later scoring needs.

        Args:
            candidates: list of strings.
            references: list of strings, or list of lists of strings (several references per candidate).
            layers: layers to keep; None = this scorer's layer; ``"all"`` = every layer from one pass.
            progress: ``progress(done, total)`` in sentences embedded.
            keep: ``"tokens"``: each pair's per-token maxima (any idf later; what explanations and the layer
                tables use). ``"scores"``: only each pair's raw P/R/F at each layer, without idf and (when this
                scorer has idf on, or ``idf_weights`` are given) with idf, computed on the device
                (:func:`score_batched`): a few numbers per pair, whatever the lengths.
            idf_weights: with ``keep="scores"``, the idf of the idf-on scores; default this scorer's
                (:meth:`idf_weights` of these references) when its idf is on. :meth:`result` then uses these for
                ``idf=True``.
        """
        if keep not in ("tokens", "scores"):
            raise InputError(f"keep must be 'tokens' or 'scores', got {keep!r}.")
        cands, groups_in = normalize_inputs(candidates, references)
        enc = self.encoder
        if layers is None:
            layers = (self.layer,)
        elif isinstance(layers, str) and layers == "all":
            layers = tuple(range(enc.num_layers + 1))
        layers = tuple(int(x) for x in layers)
        if not layers or min(layers) < 0 or max(layers) > enc.num_layers:
            raise ModelError(f"Layers {list(layers)} are not all in 0..{enc.num_layers} for {self.spec.name}.")
        flat_refs, pair_cand, groups = _flatten_groups(groups_in)
        cand_tok = enc.encode(cands)
        ref_tok = enc.encode(flat_refs)
        if keep == "scores":
            idf = idf_weights if idf_weights is not None else self.idf_weights(flat_refs) if self.idf else None
            table = self._pair_table(cands, flat_refs, pair_cand, cand_tok, ref_tok, layers, idf, True, progress)
            stats = self._stats(layers, cands, flat_refs, pair_cand, groups, cand_tok, ref_tok, (), ())
            return replace(stats, pair_table=table, table_idf=idf)
        cand_best: list[np.ndarray] = [None] * len(flat_refs)  # type: ignore[list-item]
        ref_best: list[np.ndarray] = [None] * len(flat_refs)  # type: ignore[list-item]
        with self.guarded(_distinct(cands, flat_refs)):
            for pairs, vecs in self._embedded_chunks(cands, flat_refs, pair_cand, layers, progress):
                cb, rb = match_batched([vecs[cands[pair_cand[p]]] for p in pairs],
                                       [vecs[flat_refs[p]] for p in pairs])
                for j, p in enumerate(pairs):
                    cand_best[p], ref_best[p] = cb[j], rb[j]
        return self._stats(layers, cands, flat_refs, pair_cand, groups, cand_tok, ref_tok, cand_best, ref_best)

    def _pair_table(self, cands: list[str], flat_refs: list[str], pair_cand: list[int], cand_tok, ref_tok,
                    layers: Sequence[int], idf: IdfWeights | None, plain: bool,
                    progress: ProgressFn | None) -> dict:
        """Raw P/R/F of every pair at ``layers``, without idf (when ``plain``) and with ``idf`` (when given), computed
        on the device in one model pass: ``{(layer, idf on): ((n_pairs, 3) float64, notes)}``."""
        enc = self.encoder
        cand_ids = [t.ids for t in cand_tok]
        ref_ids = [t.ids for t in ref_tok]
        max_id = max((int(a.max()) for a in cand_ids + ref_ids if len(a)), default=-1)
        size = max(len(enc.tokenizer), max_id + 1)
        variants = ([False] if plain else []) + ([True] if idf is not None else [])
        weights = [weight_vector(idf if on else None, enc.special_ids, size) for on in variants]
        pc = np.asarray(pair_cand, dtype=np.int64)
        flags = []
        for w in weights:
            c_empty, c_unweighted = side_flags(cand_ids, w, enc.special_ids)
            r_empty, r_unweighted = side_flags(ref_ids, w, enc.special_ids)
            flags.append((c_empty[pc], r_empty, c_unweighted[pc] | r_unweighted))
        pair_c_empty, r_empty = flags[0][0], flags[0][1]
        out = np.empty((len(layers), len(flat_refs), len(weights), 3), dtype=np.float64)
        with self.guarded(_distinct(cands, flat_refs)):
            for pairs, vecs in self._embedded_chunks(cands, flat_refs, pair_cand, layers, progress):
                for k in range(len(layers)):
                    out[k, pairs] = score_batched(
                        [vecs[cands[pair_cand[p]]][k] for p in pairs], [vecs[flat_refs[p]][k] for p in pairs],
                        [cand_ids[pair_cand[p]] for p in pairs], [ref_ids[p] for p in pairs], weights,
                        pair_c_empty[pairs], r_empty[pairs])
        either_empty = pair_c_empty | r_empty
        table = {}
        for j, on in enumerate(variants):
            notes = {"empty_candidate": np.flatnonzero(pair_c_empty).tolist(),
                     "empty_reference": np.flatnonzero(r_empty).tolist(),
                     "degenerate_idf": np.flatnonzero(~either_empty & flags[j][2]).tolist()}
            for k, layer in enumerate(layers):
                table[(layer, on)] = (np.ascontiguousarray(out[k, :, j]), notes)
        return table

    def _stats(self, layers, cands, flat_refs, pair_cand, groups, cand_tok, ref_tok, cand_best, ref_best
               ) -> MatchStats:
        enc = self.encoder
        return MatchStats(tuple(layers), tuple(cands), tuple(flat_refs), np.asarray(pair_cand, dtype=np.int64),
                          tuple(groups), tuple(t.ids for t in cand_tok), tuple(t.ids for t in ref_tok),
                          np.array([t.truncated for t in cand_tok], dtype=bool),
                          np.array([t.truncated for t in ref_tok], dtype=bool),
                          tuple(cand_best), tuple(ref_best), enc.special_ids, _unk_id(enc))

    def _embedded_chunks(self, cands: list[str], flat_refs: list[str], pair_cand: list[int],
                         layers: Sequence[int], progress: ProgressFn | None):
        """Embed the pairs chunk by chunk (:data:`CHUNK_PAIRS` pairs): yields ``(pairs, vectors)`` where ``pairs``
        is an int64 array of pair indices and ``vectors`` maps each text of those pairs to its unit-vector tensors
        at ``layers`` (on the encoder's device). Progress counts distinct texts embedded, over the whole call, and
        never goes down.

        Pairs that share a reference are embedded in the same chunk (several systems' outputs against one test
        set arrive system after system): each reference is embedded once, whatever the cache's bound, instead of
        once per system when the cache cannot hold a whole system's texts."""
        enc = self.encoder
        total = len(set(cands) | set(flat_refs))
        shown = [0]

        def report(value: int) -> None:
            if progress:
                shown[0] = max(shown[0], min(total, value))
                progress(shown[0], total)

        report(0)
        first: dict[str, int] = {}
        order = np.argsort(np.fromiter((first.setdefault(r, p) for p, r in enumerate(flat_refs)), dtype=np.int64,
                                       count=len(flat_refs)), kind="stable")
        seen: set[str] = set()
        for start in range(0, len(order), CHUNK_PAIRS):
            pairs = order[start:start + CHUNK_PAIRS]
            texts = list(dict.fromkeys([cands[pair_cand[p]] for p in pairs] + [flat_refs[p] for p in pairs]))
            offset = len(seen)
            vecs = dict(zip(texts, enc.embed_layers(texts, layers, batch_size=self.batch_size,
                                                    token_budget=self.token_budget,
                                                    progress=lambda d, _t, offset=offset: report(offset + d))))
            seen.update(texts)
            report(len(seen))
            yield pairs, vecs
            del vecs
            release_free_memory()  # this chunk's vectors, once matched

    def _score_on_device(self, cands: list[str], groups_in: list[list[str]],
                         progress: ProgressFn | None) -> ScoreResult:
        """:meth:`score`'s path: P/R/F of each pair computed on the device (:meth:`_pair_table`) in the matching
        batches, with idf known before matching (the references are tokenized first); only ``(n_pairs, 3)``
        float64 comes back to the host, and the result equals ``result(match(...))`` (to about 1e-16)."""
        enc = self.encoder
        layer = self.layer
        flat_refs, pair_cand, groups = _flatten_groups(groups_in)
        cand_tok = enc.encode(cands)
        ref_tok = enc.encode(flat_refs)
        idf = self.idf_weights(flat_refs) if self.idf else None
        table = self._pair_table(cands, flat_refs, pair_cand, cand_tok, ref_tok, (layer,), idf, not self.idf,
                                 progress)
        pair, notes = table[(layer, self.idf)]
        stats = self._stats((layer,), cands, flat_refs, pair_cand, groups, cand_tok, ref_tok, (), ())
        return self._result_from_pairs(stats, pair, notes, layer, self.idf, "auto")

    def result(self, stats: MatchStats, layer: int | None = None, idf: bool | None = None,
               baseline: np.ndarray | None | str = "auto") -> ScoreResult:
        """Scores from :class:`MatchStats` without a model pass (any computed layer, idf on or off).

        Args:
            stats: from :meth:`match`.
            layer: default this scorer's layer.
            idf: default this scorer's setting.
            baseline: ``"auto"`` = this scorer's rescaling setting (looked up for ``layer``); None = raw;
                or a ``(3,)`` P/R/F baseline.
        """
        layer = self.layer if layer is None else int(layer)
        idf = self.idf if idf is None else bool(idf)
        if isinstance(baseline, str):
            baseline = self.baseline_for(layer) if self.rescale_with_baseline else None
        if not idf:
            weights = None
        elif not stats.keeps_tokens and stats.table_idf is not None:
            weights = stats.table_idf  # the idf these pair scores were computed with (match(keep="scores"))
        else:
            weights = self.idf_weights(stats.references)
        pair, notes = stats.pair_scores(layer, weights)
        return self._result_from_pairs(stats, pair, notes, layer, idf, baseline)

    def _result_from_pairs(self, stats: MatchStats, pair: np.ndarray, notes: dict, layer: int, idf: bool,
                           baseline: np.ndarray | None | str) -> ScoreResult:
        """Each candidate's maximum over its references, rescaling, warnings and signature, from the raw
        ``(n_pairs, 3)`` P/R/F of every pair (:meth:`result` and :meth:`score` share it)."""
        if isinstance(baseline, str):
            baseline = self.baseline_for(layer) if self.rescale_with_baseline else None
        best, arg = best_of_references(pair, stats.groups)
        raw_p, raw_r, raw_f = best[:, 0], best[:, 1], best[:, 2]
        if baseline is not None:
            baseline = np.asarray(baseline, dtype=np.float64)
            scaled = rescaled(best, baseline)
            p, r, f = scaled[:, 0], scaled[:, 1], scaled[:, 2]
        else:
            p, r, f = raw_p, raw_r, raw_f
        msgs = self._messages(stats, notes, idf)
        sig = Signature(self.spec.name, layer, idf, baseline is not None, self.custom_baseline,
                        self.precision, self.encoder.transformers_version)
        return ScoreResult(p, r, f, raw_p, raw_r, raw_f, sig, baseline, arg, tuple(msgs))

    @staticmethod
    def _messages(stats: MatchStats, notes: dict, idf: bool) -> list[str]:
        msgs = []
        multi = any(e - s > 1 for s, e in stats.groups)

        def where(pairs: list[int]) -> list[str]:
            """Candidate index (from 0, as in the input list) and, with several references, which one (from 1,
            as the app counts them)."""
            if not multi:
                return [str(int(stats.pair_candidate[p])) for p in pairs]
            return [f"{int(stats.pair_candidate[p])} (reference {p - stats.groups[stats.pair_candidate[p]][0] + 1})"
                    for p in pairs]

        empty_c = sorted({int(stats.pair_candidate[p]) for p in notes["empty_candidate"]})
        if empty_c:
            msgs.append(f"{len(empty_c)} empty candidate(s), scored 0: index {_indices([str(i) for i in empty_c])}.")
        if notes["empty_reference"]:
            empty = set(notes["empty_reference"])
            only = [p for p in notes["empty_reference"]  # every reference of the candidate is empty: 0
                    if all(q in empty for q in range(*stats.groups[stats.pair_candidate[p]]))]
            among = [p for p in notes["empty_reference"] if p not in set(only)]
            if only:
                w = where(only)
                msgs.append(f"{len(w)} empty reference(s), scored 0: candidate index {_indices(w)}.")
            if among:
                w = where(among)
                msgs.append(f"{len(w)} empty reference(s) among several: P, R and F1 against them are 0; the scores "
                            f"shown are the maxima over the other references: candidate index {_indices(w)}.")
        if notes["degenerate_idf"]:
            w = where(notes["degenerate_idf"])
            msgs.append(
                f"idf is degenerate for {len(w)} pair(s) (candidate index {_indices(w)}): every token of a side "
                "occurs in all reference sentences, so its weights sum to 0 and precision or recall is undefined "
                "(NaN; F1 is then 0, as in bert-score). Compute idf from more references, or turn idf off."
            )
        if stats.unk_id is not None:
            unk_c = [i for i, ids in enumerate(stats.cand_ids) if np.any(ids == stats.unk_id)]
            unk_r = [p for p, ids in enumerate(stats.ref_ids) if np.any(ids == stats.unk_id)]
            if unk_c or unk_r:
                parts = []
                if unk_c:
                    parts.append(f"{len(unk_c)} candidate(s) (index {_indices(unk_c)})")
                if unk_r:
                    parts.append(f"{len(unk_r)} reference(s) (candidate index {_indices(where(unk_r))})")
                from .languages import multilingual_hint

                msgs.append(" and ".join(parts) + " contain tokens unknown to the model ([UNK]): text outside its "
                            "languages (a script or symbols its vocabulary cannot represent). [UNK] matches [UNK] "
                            f"closely, so these scores are not meaningful; {multilingual_hint()}")
        tc = np.flatnonzero(stats.cand_truncated).tolist()
        if tc:
            msgs.append(f"{len(tc)} candidate(s) longer than the model's maximum length were truncated (tail "
                        f"dropped): index {_indices(tc)}.")
        tr = np.flatnonzero(stats.ref_truncated).tolist()
        if tr:
            msgs.append(f"{len(tr)} reference(s) longer than the model's maximum length were truncated: candidate "
                        f"index {_indices(where(tr))}.")
        return msgs

    def score(self, candidates, references, progress: ProgressFn | None = None) -> ScoreResult:
        """BERTScore of each candidate against its reference(s).

        Args:
            candidates: list of strings.
            references: list of strings, or a list of lists for several references per candidate (the maximum
                of P, R and F1 is taken separately, as bert-score does).
            progress: ``progress(done, total)`` in sentences embedded.

        Returns:
            :class:`ScoreResult` with warnings for empty sentences, truncation and degenerate idf.

        Raises:
            InputError: unequal lengths or non-string input, with both lengths or the bad index.

        Each pair's P/R/F is computed on the device, in the matching batches, and only those three numbers per pair
        come back to the host (no per-token maxima are kept; :meth:`match` keeps them for the app, other layers and
        explanations). The ``guard`` is held around the model pass.
        """
        cands, groups = normalize_inputs(candidates, references)
        if not cands:
            empty = np.zeros(0)
            return ScoreResult(empty, empty, empty, empty, empty, empty, self.signature, self.baseline,
                               np.zeros((0, 3), dtype=np.int64))
        res = self._score_on_device(cands, groups, progress)
        for m in res.warnings:
            _warnings.warn(m, BertScoreWarning, stacklevel=2)
        return res

    # --- one pair ---------------------------------------------------------------------------------------------
    def _token_side(self, text: str, weights_fn) -> TokenSide:
        enc = self.encoder
        tok = enc.encode_one(text)
        stripped = text.strip()
        special = enc.is_special(tok.ids)
        tokens = tuple(enc.tokenizer.convert_ids_to_tokens(tok.ids.tolist()))
        display = list(tokens)
        word_index = np.where(special, -1, 0).astype(np.int64)
        if stripped:
            info = enc.tokenizer(stripped, add_special_tokens=True, return_offsets_mapping=True,
                                 truncation=True, max_length=enc.max_length)
            if list(info["input_ids"]) == tok.ids.tolist():
                last_word, word_counter = None, -1
                for pos, ((a, b), w) in enumerate(zip(info["offset_mapping"], info.word_ids())):
                    if special[pos] or w is None:
                        word_index[pos] = -1
                        continue
                    if w != last_word:
                        word_counter, last_word = word_counter + 1, w
                    display[pos] = stripped[a:b] or tokens[pos]
                    word_index[pos] = word_counter
        uid = _unk_id(enc)
        unknown = np.zeros(len(tokens), dtype=bool) if uid is None else (tok.ids == uid) & ~special
        for pos in np.flatnonzero(unknown):
            display[pos] = f"{display[pos]}→[UNK]" if display[pos] != tokens[pos] else tokens[pos]
        for pos in np.flatnonzero(~unknown & ~special):  # が read as か: the figures and the table show が→か
            if changed_by_tokenizer(display[pos], _piece(tokens[pos])):
                display[pos] = f"{display[pos]}{READ_AS}{_piece(tokens[pos])}"
        return TokenSide(tokens, tuple(display), tok.ids, special, word_index, weights_fn(tok.ids), tok.truncated,
                         unknown)

    def explain(self, candidate: str, reference: str | Sequence[str]):
        """Token-level explanation of one candidate against one reference (or several).

        idf, when on, comes from ``idf_sentences`` if given, else from the reference(s) of this call, as in
        :meth:`score`; P/R/F1 equal :meth:`score` on the same pair.

        Returns:
            :class:`PairExplanation` for one reference; :class:`MultiReferenceExplanation` for a list.
        """
        if not isinstance(candidate, str):
            raise InputError(f"Expected the candidate to be a string, got {type(candidate).__name__}.")
        refs = [reference] if isinstance(reference, str) else _check_texts(reference, "reference")
        if not refs:
            raise InputError("Give at least one reference to explain the candidate against.")
        enc = self.encoder
        idf = self.idf_weights(refs) if self.idf else None
        special = list(enc.special_ids)

        def weights(ids):
            return idf(ids) if idf is not None else uniform_weights(ids, special)

        # Every layer, so that the app's layer slider re-explains the pair without a model pass (one pair: cheap even
        # for a large model); only this layer's vectors come to the host.
        with self.guarded(_distinct([candidate], refs)):
            vecs = enc.embed_layers([candidate] + refs, "all", batch_size=self.batch_size,
                                    token_budget=self.token_budget)
        cand_side = self._token_side(candidate, weights)
        pairs = []
        several = not isinstance(reference, str) and len(refs) > 1
        cand_unknown = unknown_message("candidate", cand_side, self.spec.name)
        from .languages import pair_message

        for k, (ref, r_vecs) in enumerate(zip(refs, vecs[1:])):
            which = f"Reference {k + 1}" if several else "The reference"
            ref_side = self._token_side(ref, weights)
            # computed as the corpus path computes it, so that the maxima agree with score() to the bit
            s = _similarity_float64(vecs[0][self.layer], r_vecs[self.layer]).cpu().numpy()
            cb, ci, rb, ri = s.max(axis=1), s.argmax(axis=1), s.max(axis=0), s.argmax(axis=0)  # the greedy matches
            c_empty, r_empty = not np.any(~cand_side.special), not np.any(~ref_side.special)
            p, r, f = prf_from_maxima([cb], [rb], [cand_side.weights], [ref_side.weights], np.array([c_empty]),
                                      np.array([r_empty]))[0]
            msgs = []
            if c_empty:
                msgs.append("The candidate is empty: P, R and F1 are 0.")
            if r_empty and several:
                msgs.append(f"{which} is empty: P, R and F1 against it are 0; the scores shown are the maxima "
                            "over the other references.")
            elif r_empty:
                msgs.append("The reference is empty: P, R and F1 are 0.")
            if not (c_empty or r_empty) and (cand_side.weights.sum() == 0 or ref_side.weights.sum() == 0):
                msgs.append("idf is degenerate: every token of a side occurs in all reference sentences, so its "
                            "weights sum to 0 and precision or recall is undefined (NaN; F1 is 0, as in "
                            "bert-score). Add more references (idf needs several) or turn idf off.")
            if cand_side.truncated:
                msgs.append(f"The candidate was truncated to the model's maximum of {enc.max_length} tokens.")
            if ref_side.truncated:
                msgs.append(f"{which} was truncated to the model's maximum of {enc.max_length} tokens.")
            if cand_unknown:
                msgs.append(cand_unknown)
            ref_unknown = unknown_message(which[0].lower() + which[1:] if several else "reference", ref_side,
                                          self.spec.name)
            if ref_unknown:
                msgs.append(ref_unknown)
            # The text itself (script; language of Latin-script text) against the catalog's languages of the
            # model, for the sides whose tokens showed nothing: German reads cleanly as English word pieces.
            language = pair_message([(what, text) for what, text, token_msg in (
                ("the candidate", candidate, cand_unknown),
                (which[0].lower() + which[1:] if several else "the reference", ref, ref_unknown)) if not token_msg],
                self.spec.name)
            if language:
                msgs.append(language)
            raw = np.array([p, r, f], dtype=np.float64)
            pairs.append(PairExplanation(
                candidate, ref, cand_side, ref_side, s, ci, cb, ri, rb, float(p), float(r), float(f),
                self.signature, None if self.baseline is None else rescaled(raw, self.baseline),
                self.baseline, tuple(msgs)))
        if isinstance(reference, str):
            return pairs[0]
        raw = np.array([[x.precision, x.recall, x.f1] for x in pairs])
        best, arg = best_of_references(raw, [(0, len(pairs))])
        best, arg = best[0], arg[0]
        msgs = tuple(dict.fromkeys(m for x in pairs for m in x.warnings))
        return MultiReferenceExplanation(
            tuple(pairs), arg, float(best[0]), float(best[1]), float(best[2]), self.signature,
            None if self.baseline is None else rescaled(best, self.baseline), self.baseline, msgs)


def score(candidates, references, model: str | None = None, layer: int | None = None, idf: bool = False,
          rescale_with_baseline: bool = False, lang: str = "en", baseline_path: str | None = None,
          batch_size: int = 64, device: str | None = None, precision: str = "fp32",
          progress: ProgressFn | None = None) -> ScoreResult:
    """BERTScore in one call; see :class:`Scorer` for the options.

    >>> res = score(["The cat sat on the mat."], ["There is a cat sitting on the mat."], layer=6)
    >>> round(float(res.f1[0]), 6)
    0.910953
    """
    scorer = Scorer(model=model, layer=layer, idf=idf, rescale_with_baseline=rescale_with_baseline, lang=lang,
                    baseline_path=baseline_path, batch_size=batch_size, device=device, precision=precision)
    return scorer.score(candidates, references, progress=progress)
