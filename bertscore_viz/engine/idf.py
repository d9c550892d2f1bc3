"""Inverse document frequency weights, computed from reference token ids (pure).

As bert-score 0.3.13's ``get_idf_dict``: each reference sentence is one document (duplicates count separately),
``idf(t) = ln((M + 1) / (df(t) + 1))`` for M documents, and a token never seen gets ``ln(M + 1)``. CLS and SEP
occur in every document, so their idf is 0.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

__all__ = ["IdfWeights", "compute_idf", "idf_from_counts", "uniform_weights"]


@dataclass(frozen=True)
class IdfWeights:
    """idf per token id, with the value for unseen tokens.

    Attributes:
        weights: token id -> idf.
        unseen: idf of a token that occurs in no document, ``ln(M + 1)``.
        num_documents: M.
    """

    weights: dict = field(repr=False)
    unseen: float
    num_documents: int

    def __call__(self, ids: np.ndarray) -> np.ndarray:
        """Weights of a sentence's token ids, float64 ``(n_tokens,)``."""
        get = self.weights.get
        return np.fromiter((get(int(i), self.unseen) for i in ids), dtype=np.float64, count=len(ids))


def compute_idf(documents: Iterable[Iterable[int]]) -> IdfWeights:
    """idf from documents given as token-id sequences.

    >>> w = compute_idf([[101, 1, 102], [101, 2, 102], [101, 1, 2, 102]])
    >>> round(w.weights[1], 6), round(w.weights[101], 6), round(w.unseen, 6)
    (0.287682, 0.0, 1.386294)
    """
    counts: Counter = Counter()
    m = 0
    for doc in documents:
        counts.update({int(t) for t in doc})
        m += 1
    return idf_from_counts(counts, m)


def idf_from_counts(document_frequencies, num_documents: int) -> IdfWeights:
    """idf from document frequencies already counted (e.g. summed over the blocks of a distributed pass).

    Args:
        document_frequencies: token id -> number of documents containing it.
        num_documents: M, the number of documents counted.

    >>> w = idf_from_counts({1: 2, 101: 3}, 3)
    >>> round(w.weights[1], 6), w.weights[101], round(w.unseen, 6)
    (0.287682, 0.0, 1.386294)
    """
    m = int(num_documents)
    return IdfWeights({int(t): math.log((m + 1) / (int(c) + 1)) for t, c in document_frequencies.items()},
                      math.log(m + 1), m)


def uniform_weights(ids: np.ndarray, special_ids: Iterable[int]) -> np.ndarray:
    """Weight 1 for every token, 0 for the special (CLS/SEP) ones."""
    ids = np.asarray(ids)
    return np.where(np.isin(ids, list(special_ids)), 0.0, 1.0)
