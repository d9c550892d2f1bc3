"""The N x N BERTScore matrices of a group of texts from one embedding per distinct text.

Entry ``[i, j]`` is the BERTScore of text ``i`` as candidate against text ``j`` as reference: precision over ``i``'s
tokens, recall over ``j``'s, exactly as ``Scorer.score([texts[i]], [texts[j]])`` computes it at the same settings
(layer, special tokens, empty texts, long texts, rescaling: docs/SEMANTICS.md), with one difference that matters
only with idf: the token weights are the group's (below), not those of the single reference ``j``. The diagonal
is each text against itself (P = R = 1 up to rounding).

**idf.** With idf on, one set of weights serves the whole group: the ``idf_weights`` given, else the scorer's fixed
idf (``idf_sentences`` or ``idf_weights`` given to the :class:`~bertscore_viz.engine.scorer.Scorer`), else idf from
the group's **distinct** samples as the reference corpus, each one document:
``idf(t) = ln((M + 1) / (df(t) + 1))`` over the M distinct samples. bert-score given the N^2 flattened pairs would
count each sample N times as a document (``ln((N M + 1) / (N df + 1))``) and so gives other numbers; to reproduce
ours with it or with ``Scorer.score``, pass the same weights (``Scorer(idf_weights=...)``). The weights used are in
:attr:`PairwiseResult.idf`.

**Cost.** Each distinct text is embedded once (the scorer's encoder and cache) and the pairs are matched in
bounded blocks on the device (:mod:`bertscore_viz.consensus.blocks`); duplicated texts share their row and column.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from bertscore_viz.engine.idf import IdfWeights
from bertscore_viz.engine.matching import rescaled, side_flags, weight_vector
from bertscore_viz.engine.results import Signature
from bertscore_viz.engine.scorer import Scorer
from bertscore_viz.errors import InputError

__all__ = ["UTILITIES", "COLUMNS", "PairwiseResult", "check_utility", "group_idf", "signature_for", "Weighting",
           "embedded_texts", "expand"]

#: The utilities a matrix can be read as: precision, recall or F1 of the row sample against the column sample.
UTILITIES = ("f1", "precision", "recall")
#: The columns of ``(..., 3)`` score arrays, as everywhere in the engine.
COLUMNS = ("precision", "recall", "f1")
_ALIASES = {"f": "f1", "f1": "f1", "p": "precision", "precision": "precision", "r": "recall", "recall": "recall"}

ProgressFn = Callable[[int, int], None]


def check_utility(utility) -> str:
    """The utility's canonical name (``"f1"``, ``"precision"``, ``"recall"``; also ``"F"``, ``"P"``, ``"R"``).

    Raises:
        InputError: any other value.
    """
    name = _ALIASES.get(utility.lower()) if isinstance(utility, str) else None
    if name is None:
        raise InputError(f"Unknown utility {utility!r}: expected one of 'f1' (default), 'precision' or 'recall'.")
    return name


def _floats(a) -> list:
    return [[None if not np.isfinite(x) else float(x) for x in row] for row in np.asarray(a, dtype=np.float64)]


@dataclass(frozen=True)
class PairwiseResult:
    """BERTScore of every ordered pair of a group's texts.

    Attributes:
        texts: the N texts (duplicates kept, in order).
        precision, recall, f1: ``(N, N)`` the numbers to report (rescaled when rescaling is on, else raw):
            ``[i, j]`` is text ``i`` as candidate against text ``j`` as reference.
        raw_precision, raw_recall, raw_f1: ``(N, N)`` before rescaling.
        signature: the settings; its idf part names where idf came from (``idf-samples`` for the group's samples).
        baseline: ``(3,)`` P/R/F baseline used, or None.
        idf: the idf weights used (None without idf).
        warnings: soft problems (empty texts, degenerate idf, truncation), naming the texts by index.
    """

    texts: tuple
    precision: np.ndarray
    recall: np.ndarray
    f1: np.ndarray
    raw_precision: np.ndarray
    raw_recall: np.ndarray
    raw_f1: np.ndarray
    signature: Signature
    baseline: np.ndarray | None = None
    idf: IdfWeights | None = None
    warnings: tuple = ()

    def __len__(self) -> int:
        return len(self.texts)

    def matrix(self, utility: str = "f1", raw: bool = False) -> np.ndarray:
        """The ``(N, N)`` matrix of one utility (``"f1"``, ``"precision"`` or ``"recall"``), a copy."""
        name = check_utility(utility)
        return np.array(getattr(self, f"raw_{name}" if raw else name))

    def as_dict(self) -> dict:
        """JSON-ready: the matrices as nested lists (NaN as null), the signature and the warnings."""
        out = {"texts": list(self.texts), "signature": str(self.signature), "settings": self.signature.as_dict(),
               "baseline": None if self.baseline is None else [float(x) for x in self.baseline],
               "warnings": list(self.warnings)}
        for name in UTILITIES:
            out[name] = _floats(getattr(self, name))
            out[f"raw_{name}"] = _floats(getattr(self, f"raw_{name}"))
        return out




def group_idf(scorer: Scorer, samples: Sequence[str], idf_weights: IdfWeights | None) -> IdfWeights | None:
    """The idf of a group: the weights given, the scorer's fixed idf, or the group's distinct samples."""
    if idf_weights is not None:
        return idf_weights
    if not scorer.idf:
        return None
    return scorer.idf_weights(list(dict.fromkeys(samples)))


def signature_for(scorer: Scorer, idf_weights: IdfWeights | None) -> Signature:
    """The scorer's signature, with the idf source named: the scorer's corpus tag, ``weights-M`` for weights given
    (M documents), or ``samples`` for the group's samples."""
    sig = scorer.signature
    if idf_weights is not None:
        return replace(sig, idf=True, idf_source=f"weights-{idf_weights.num_documents}")
    if not scorer.idf:
        return sig
    # A scorer with fixed idf returns those weights for any references, also for none; otherwise idf of no
    # references has no documents: the public way to tell the two apart.
    fixed = scorer.idf_weights([]).num_documents > 0
    if fixed:
        return sig if sig.idf_source else replace(sig, idf_source="fixed")
    return replace(sig, idf_source="samples")


@dataclass(frozen=True)
class Weighting:
    """Token weights of a group: the float64 weight of every token id, and the special ids."""

    vector: np.ndarray
    special_ids: frozenset

    @classmethod
    def build(cls, scorer: Scorer, idf: IdfWeights | None, ids: Sequence[np.ndarray]) -> Weighting:
        enc = scorer.encoder
        max_id = max((int(a.max()) for a in ids if len(a)), default=-1)
        size = max(len(enc.tokenizer), max_id + 1)
        return cls(weight_vector(idf, enc.special_ids, size), enc.special_ids)

    def of(self, ids: np.ndarray) -> np.ndarray:
        return self.vector[np.asarray(ids, dtype=np.int64)]

    def flags(self, ids: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """``(empty, unweighted)`` of each id array (:func:`bertscore_viz.engine.matching.side_flags`)."""
        if not len(ids):
            return np.zeros(0, dtype=bool), np.zeros(0, dtype=bool)
        return side_flags(list(ids), self.vector, self.special_ids)


def embedded_texts(scorer: Scorer, texts: list[str], progress: ProgressFn | None = None) -> tuple[dict, dict]:
    """Embed distinct texts at the scorer's layer in one pass (forward batches shared by all of them).

    Returns:
        ``(vectors, tokens)``: text -> ``(n_tokens, dim)`` unit-vector tensor on the encoder's device, and text ->
        :class:`~bertscore_viz.engine.tokenizer.Tokenized` (ids, truncation).
    """
    enc = scorer.encoder
    with scorer.guarded(len(texts)):
        vecs = enc.embed_layers(texts, [scorer.layer], batch_size=scorer.batch_size,
                                token_budget=scorer.token_budget, long_texts=scorer.long_texts, progress=progress)
    toks = scorer.encode(texts)
    return {t: v[0] for t, v in zip(texts, vecs)}, dict(zip(texts, toks))


def expand(block: np.ndarray, inverse: np.ndarray) -> np.ndarray:
    """``(d, d)`` scores of distinct texts to ``(N, N)`` scores of samples (``inverse``: text of each sample)."""
    return block[np.ix_(inverse, inverse)]


def reported(raw: np.ndarray, baseline: np.ndarray | None, column: int) -> np.ndarray:
    """Raw scores rescaled with the P (0), R (1) or F (2) baseline, or unchanged without rescaling (a copy)."""
    if baseline is None:
        return np.array(raw, dtype=np.float64)
    return rescaled(raw, baseline[column])


def pairwise_result(texts: Sequence[str], raw: tuple[np.ndarray, np.ndarray, np.ndarray], signature: Signature,
                    baseline: np.ndarray | None, idf: IdfWeights | None, warnings: Sequence[str]) -> PairwiseResult:
    """A :class:`PairwiseResult` from the ``(N, N)`` raw P, R, F matrices."""
    scaled = [reported(m, baseline, k) for k, m in enumerate(raw)]
    return PairwiseResult(tuple(texts), scaled[0], scaled[1], scaled[2], raw[0], raw[1], raw[2], signature,
                          None if baseline is None else np.array(baseline, dtype=np.float64), idf, tuple(warnings))
