"""Document context (docs/CONTEXT.md): each segment encoded together with the previous ``k`` segments of its
document, only the segment's own tokens matched, weighted and averaged.

After "Embarrassingly Easy Document-Level MT Metrics" (Vernikos, Thompson, Mathur and Federico, WMT 2022), whose
released code encodes the hypothesis and the reference each with the previous *reference* sentences of the document
(``context_source="ref"``, the default here); ``"own"`` gives each side its own previous segments (the candidate its
previous candidates), what that code does only without a reference.

Pure functions of token ids and document ids: the scorer (:mod:`bertscore_viz.engine.scorer`) gives each side's
sequences to the encoder's batched path (:meth:`~bertscore_viz.engine.encoder.Encoder.embed_ids`) and keeps, of each
sequence's vectors, those at :attr:`ContextWindow.own`. A window's ids are
``prefix + ctx_1 + sep + ... + ctx_k + sep + segment + suffix`` (``[CLS] c1 [SEP] c2 [SEP] s [SEP]`` for BERT: the
paper's joining with the tokenizer's separator); the segment's own positions are the prefix, its content and the
suffix, so its ids are exactly its ids without context and idf, the special-token rule and the empty-sentence rule
are unchanged. What does not fit the model's length loses its oldest context tokens first; a segment that alone
fills the model's length gets no context (in window mode a longer one is embedded in windows, as without context).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from bertscore_viz.errors import InputError

__all__ = ["CONTEXT_SOURCES", "DEFAULT_CONTEXT_SOURCE", "ContextWindow", "check_context", "check_context_source",
           "check_doc_ids", "previous_in_document", "context_window", "context_tag", "document_windows",
           "separator_id"]

#: Where a segment's context comes from: ``"ref"`` the previous reference segments on both sides (the paper's),
#: ``"own"`` each side's own previous segments.
CONTEXT_SOURCES = ("ref", "own")
#: The paper's choice whenever there is a reference.
DEFAULT_CONTEXT_SOURCE = "ref"


@dataclass(frozen=True)
class ContextWindow:
    """What the model sees for one segment, and where the segment's own tokens are in it.

    Attributes:
        ids: the sequence's token ids (the segment's own ids when it has no context).
        own: positions in ``ids`` of the segment's own ids, in order (``ids[own]`` is the segment's plain ids).
        n_context: context token ids kept (separators included); 0 = the segment alone.
        cut: context tokens were dropped to fit the model's length.
    """

    ids: np.ndarray
    own: np.ndarray
    n_context: int
    cut: bool

    @property
    def key(self) -> tuple[bytes, int]:
        """What determines the segment's vectors: the sequence and where the segment starts in it."""
        return self.ids.tobytes(), self.n_context

    @property
    def context_ids(self) -> np.ndarray:
        """The context ids kept, in order (what an explanation draws greyed)."""
        return self.ids[np.setdiff1d(np.arange(len(self.ids)), self.own)]


def check_context(value) -> int:
    """``context``: a whole number of previous segments, 0 (no context) or more."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise InputError(f"context must be a whole number of previous segments (0 = none), got "
                         f"{type(value).__name__} {value!r}.")
    if value < 0:
        raise InputError(f"context must be 0 (no context) or a positive number of previous segments, got {value}.")
    return int(value)


def check_context_source(value) -> str:
    """``context_source``: one of :data:`CONTEXT_SOURCES`."""
    if value not in CONTEXT_SOURCES:
        raise InputError(f"context_source must be one of {', '.join(CONTEXT_SOURCES)} ('ref': the previous "
                         f"reference segments on both sides, the paper's; 'own': each side's own), got {value!r}.")
    return str(value)


def check_doc_ids(doc_ids, n: int) -> list[str | None] | None:
    """Document ids, one per segment: strings (or numbers, read as text); None or ``""`` = no document.

    Raises:
        InputError: not a sequence, a length other than ``n``, or an id of another kind."""
    if doc_ids is None:
        return None
    if isinstance(doc_ids, (str, bytes)) or not isinstance(doc_ids, Sequence | np.ndarray):
        raise InputError(f"doc_ids must be a list with one document id per segment, got {type(doc_ids).__name__}.")
    if len(doc_ids) != n:
        raise InputError(f"doc_ids has {len(doc_ids)} ids for {n} segments: give one document id per segment "
                         "(None or an empty string for a segment without a document).")
    out: list[str | None] = []
    for i, d in enumerate(doc_ids):
        if d is None or (isinstance(d, float) and np.isnan(d)):
            out.append(None)
        elif isinstance(d, (str, np.str_, int, np.integer)) and not isinstance(d, bool):
            text = str(d).strip()
            out.append(text or None)
        else:
            raise InputError(f"doc_ids[{i}] is {type(d).__name__} {d!r}; expected a string, a whole number or None.")
    return out


def previous_in_document(doc_ids: Sequence[str | None], k: int) -> list[list[int]]:
    """For each segment, the indices of the (at most ``k``) segments before it in the input with the same document
    id, oldest first; ``[]`` for a segment without a document id.

    >>> previous_in_document(["a", "a", "b", "a", None, "b"], 2)
    [[], [0], [], [0, 1], [], [2]]
    """
    seen: dict[str, deque] = {}
    out: list[list[int]] = []
    for i, d in enumerate(doc_ids):
        if d is None or k <= 0:
            out.append([])
            continue
        q = seen.setdefault(d, deque(maxlen=k))
        out.append(list(q))
        q.append(i)
    return out


def context_window(own_ids: np.ndarray, context: Sequence[np.ndarray], n_prefix: int, n_suffix: int,
                   sep_id: int | None, max_length: int) -> ContextWindow:
    """The sequence of one segment (its ids ``own_ids``: prefix, content, suffix) with the content of each context
    segment (their ids, oldest first) before its content, each followed by ``sep_id``; cut from the oldest end to
    ``max_length``.

    >>> w = context_window(np.array([101, 7, 102]), [np.array([101, 5, 6, 102])], 1, 1, 102, 512)
    >>> w.ids.tolist(), w.own.tolist(), w.n_context
    ([101, 5, 6, 102, 7, 102], [0, 4, 5], 3)
    """
    own_ids = np.asarray(own_ids, dtype=np.int64)
    sep = [] if sep_id is None else [int(sep_id)]
    parts = []
    for c in context:
        c = np.asarray(c, dtype=np.int64)
        parts.append(c[n_prefix:len(c) - n_suffix])
        parts.append(np.asarray(sep, dtype=np.int64))
    block = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    room = max(0, int(max_length) - len(own_ids))
    cut = len(block) > room
    if cut:
        block = block[len(block) - room:] if room else block[:0]
    a = int(n_prefix)
    ids = np.concatenate([own_ids[:a], block, own_ids[a:]])
    own = np.concatenate([np.arange(a), a + len(block) + np.arange(len(own_ids) - a)]).astype(np.int64)
    return ContextWindow(ids, own, len(block), bool(cut))


def context_tag(context: int, source: str) -> str:
    """How a signature names the context: ``"2-ref"``; ``""`` without context (signatures as before)."""
    return f"{int(context)}-{source}" if context else ""


def document_windows(cand_ids: Sequence[np.ndarray], ref_ids: Sequence[np.ndarray],
                     groups: Sequence[tuple[int, int]], doc_ids: Sequence[str | None] | None, k: int, source: str,
                     layout: tuple[int, int], sep_id: int | None,
                     max_length: int) -> tuple[list[ContextWindow], list[ContextWindow], dict]:
    """The :class:`ContextWindow` of every candidate and every flattened reference of a call.

    ``groups``: the ``(start, end)`` of each candidate's references in ``ref_ids``. A reference at position ``j`` of
    its group takes its context from the previous segments' ``j``-th references (their first when they have fewer);
    with ``source="ref"`` the candidate takes the previous segments' first references, with ``"own"`` the previous
    candidates. Returns both sides' windows and the counts of a
    :class:`~bertscore_viz.engine.results.ContextReport` (``documents``, ``alone``, ``with_context``, ``cut``)."""
    n = len(cand_ids)
    docs = list(doc_ids) if doc_ids is not None else [None] * n
    previous = previous_in_document(docs, k)
    n_prefix, n_suffix = layout

    def window(ids: np.ndarray, ctx: list[np.ndarray]) -> ContextWindow:
        return context_window(ids, ctx, n_prefix, n_suffix, sep_id, max_length)

    def ref_of(q: int, j: int) -> np.ndarray:
        start, end = groups[q]
        return ref_ids[start + j] if start + j < end else ref_ids[start]

    cands = [window(cand_ids[i], [cand_ids[q] if source == "own" else ref_of(q, 0) for q in previous[i]])
             for i in range(n)]
    refs = [window(ref_ids[p], [ref_of(q, p - groups[i][0]) for q in previous[i]])
            for i in range(n) for p in range(*groups[i])]
    counts = {"documents": len({d for d in docs if d is not None}), "alone": sum(d is None for d in docs),
              "with_context": sum(bool(p) for p in previous), "cut": sum(w.cut for w in cands + refs)}
    return cands, refs, counts


def separator_id(sep_token_id: int | None, suffix: Sequence[int]) -> int | None:
    """The id put after each context segment: the tokenizer's separator (the paper's ``sep_token``), else the first
    id it puts after a sentence, else none."""
    return sep_token_id if sep_token_id is not None else (int(suffix[0]) if len(suffix) else None)
