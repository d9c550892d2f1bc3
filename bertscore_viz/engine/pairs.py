"""A scoring call's input as pairs (one per candidate and reference), with both sides' token ids and, with document
context, each side's sequence; and the raw P/R/F of its pairs. What :class:`~bertscore_viz.engine.scorer.Scorer`
passes between its steps."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from bertscore_viz.engine.results import ContextReport
from bertscore_viz.engine.tokenizer import Tokenized

__all__ = ["flatten_groups", "distinct_texts", "CallPairs", "PairScores"]


def flatten_groups(groups_in: Sequence[Sequence[str]]) -> tuple[list[str], list[int], list[tuple[int, int]]]:
    """``(flat references, candidate index of each pair, (start, end) pairs of each candidate)``."""
    flat_refs: list[str] = []
    pair_cand: list[int] = []
    groups: list[tuple[int, int]] = []
    for i, g in enumerate(groups_in):
        groups.append((len(flat_refs), len(flat_refs) + len(g)))
        flat_refs.extend(g)
        pair_cand.extend([i] * len(g))
    return flat_refs, pair_cand, groups


def distinct_texts(cands: Sequence[str], flat_refs: Sequence[str]) -> int:
    """Distinct texts of a call: the sentences its model pass embeds at most (what a guard is told)."""
    return len(set(cands) | set(flat_refs))


@dataclass(frozen=True)
class CallPairs:
    """A call's input as pairs: the candidates, the flattened references (one pair each), the candidate index of
    each pair, the ``(start, end)`` pairs of each candidate, and both sides' token ids as the scorer encodes them."""

    cands: list[str]
    flat_refs: list[str]
    pair_cand: list[int]
    groups: list[tuple[int, int]]
    cand_tok: list[Tokenized]
    ref_tok: list[Tokenized]
    #: With document context: the key of each candidate's and each reference's sequence (what its vectors are
    #: looked up by), the :class:`~bertscore_viz.engine.context.ContextWindow` of each key, and the report.
    cand_keys: list | None = None
    ref_keys: list | None = None
    units: dict | None = None
    report: ContextReport | None = None

    @property
    def distinct(self) -> int:
        """:func:`distinct_texts` of the call (with context: its distinct sequences)."""
        return distinct_texts(self.cands, self.flat_refs) if self.units is None else len(self.units)

    def cand_of(self, pair: int):
        """The key of a pair's candidate vectors: its text (with context: its sequence's key)."""
        return self.cands[self.pair_cand[pair]] if self.cand_keys is None else self.cand_keys[self.pair_cand[pair]]

    def ref_of(self, pair: int):
        """The key of a pair's reference vectors: its text (with context: its sequence's key)."""
        return self.flat_refs[pair] if self.ref_keys is None else self.ref_keys[pair]


@dataclass(frozen=True)
class PairScores:
    """Raw ``(n_pairs, 3)`` float64 P/R/F of every pair at one layer, with or without idf, and the soft problems
    found (pair indices of empty candidates, empty references and degenerate idf)."""

    scores: np.ndarray
    notes: dict
    layer: int
    idf: bool
