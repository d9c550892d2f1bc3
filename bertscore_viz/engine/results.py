"""Result objects: frozen dataclasses of numpy arrays and floats, each with its signature."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from bertscore_viz.extras import MissingExtraError, missing_extra_message
from bertscore_viz.versions import __version__

__all__ = ["Signature", "ContextReport", "ScoreResult", "TokenSide", "PairExplanation", "MultiReferenceExplanation"]


@dataclass(frozen=True)
class Signature:
    """Everything that determines a score, printed like bert-score's hash.

    ``{model}_L{layer}_{idf|no-idf}_version=bertscore-viz-{version}(hug_trans={transformers})``, then
    ``-rescaled`` or ``-custom-rescaled``, then ``_fp16``/``_bf16`` when reduced precision was used. When idf
    came from other sentences than the scored references (a corpus given with ``idf_sentences``), ``idf`` reads
    ``idf-corpus-{number of sentences}-{first 8 hex digits of their sha256}``: the same settings with idf from
    different sentences give different numbers, so they get different signatures. Window mode for long texts
    (``long_texts="window"``) adds ``_window``: truncate mode, bert-score's, adds nothing. Document context
    (docs/CONTEXT.md) adds ``_ctx:{k}-{source}`` (``_ctx:2-ref``); without context, nothing.
    """

    model: str
    layer: int
    idf: bool
    rescaled: bool = False
    custom_baseline: bool = False
    precision: str = "fp32"
    transformers_version: str = ""
    version: str = __version__
    idf_source: str = ""
    long_texts: str = "truncate"
    context: str = ""

    def __str__(self) -> str:
        idf = ("idf-" + self.idf_source if self.idf_source else "idf") if self.idf else "no-idf"
        text = (f"{self.model}_L{self.layer}_{idf}"
                f"_version=bertscore-viz-{self.version}(hug_trans={self.transformers_version})")
        if self.rescaled:
            text += "-custom-rescaled" if self.custom_baseline else "-rescaled"
        if self.precision != "fp32":
            text += f"_{self.precision}"
        if self.long_texts != "truncate":
            text += f"_{self.long_texts}"
        if self.context:
            text += f"_ctx:{self.context}"
        return text

    def as_dict(self) -> dict:
        return {"model": self.model, "layer": self.layer, "idf": self.idf, "rescaled": self.rescaled,
                "custom_baseline": self.custom_baseline, "precision": self.precision,
                "transformers_version": self.transformers_version, "version": self.version,
                "idf_source": self.idf_source or ("references" if self.idf else None),
                "long_texts": self.long_texts, **({"context": self.context} if self.context else {}),
                "text": str(self)}


@dataclass(frozen=True)
class ContextReport:
    """How document context was used in a call (docs/CONTEXT.md).

    Attributes:
        context: previous segments asked for (k); source: ``"ref"`` or ``"own"``.
        documents: distinct document ids among the candidates.
        alone: candidates without a document id, scored without context (all of them when no ids were given).
        with_context: candidates that had at least one previous segment of their document.
        cut: sequences (candidate or reference side) whose context lost its oldest tokens to fit the model.
    """

    context: int
    source: str
    documents: int
    alone: int
    with_context: int
    cut: int


def _tolist(a):
    return None if a is None else [None if np.isnan(x) else float(x) for x in np.asarray(a, dtype=np.float64)]


#: Longest text a repr shows of a candidate or reference; a longer one is cut with "…".
REPR_CHARS = 40


def _short(text: str, limit: int = REPR_CHARS) -> str:
    """``text`` quoted as Python quotes it, cut to ``limit`` characters with "…"."""
    return repr(text if len(text) <= limit else text[:limit - 1] + "…")


def _prf(values, what: str) -> str:
    """``P=0.9123 R=0.9011 F1=0.9066 (what)``."""
    p, r, f = (float(x) for x in values)
    return f"P={p:.4f} R={r:.4f} F1={f:.4f} ({what})"


@dataclass(frozen=True)
class ScoreResult:
    """Corpus scores, one value per candidate (after the multi-reference maximum).

    Attributes:
        precision, recall, f1: ``(n,)`` the scores to report: rescaled when rescaling is on, else raw.
        raw_precision, raw_recall, raw_f1: ``(n,)`` before rescaling.
        baseline: ``(3,)`` P/R/F baseline used, or None without rescaling.
        best_reference: ``(n, 3)`` index of the reference that gave P, R and F for each candidate.
        warnings: soft problems (empty sentences, truncation, degenerate idf), readable sentences.
        signature: what produced these numbers.
    """

    precision: np.ndarray
    recall: np.ndarray
    f1: np.ndarray
    raw_precision: np.ndarray
    raw_recall: np.ndarray
    raw_f1: np.ndarray
    signature: Signature
    baseline: np.ndarray | None = None
    best_reference: np.ndarray | None = None
    warnings: tuple[str, ...] = ()
    #: How document context was used (None without context): :class:`ContextReport`.
    context: ContextReport | None = None

    def __len__(self) -> int:
        return len(self.f1)

    @property
    def rescaled(self) -> bool:
        return self.baseline is not None

    def mean(self) -> tuple[float, float, float]:
        """Corpus means of the reported P, R and F1."""
        return float(np.mean(self.precision)), float(np.mean(self.recall)), float(np.mean(self.f1))

    def __repr__(self) -> str:
        """One line: the number of candidates, the mean P/R/F1 reported, the warnings' count and the signature
        (the arrays are the attributes)."""
        scale = "rescaled" if self.rescaled else "raw"
        scores = _prf(self.mean(), f"means, {scale}") if len(self) else "no candidates"
        said = f", {len(self.warnings)} warning(s)" if self.warnings else ""
        return f"ScoreResult(n={len(self)}, {scores}{said}, signature={self.signature})"

    def columns(self) -> dict[str, list]:
        """One equal-length list per column, one value per candidate (NaN kept as NaN): ``precision``,
        ``recall``, ``f1`` (reported), ``raw_precision``, ``raw_recall``, ``raw_f1`` and, when known,
        ``best_reference_p``, ``best_reference_r``, ``best_reference_f`` (the index of the reference that gave each
        score). ``pd.DataFrame(res.columns())`` is a table of them; :meth:`to_pandas` adds the signature."""
        out = {name: np.asarray(getattr(self, name), dtype=np.float64).tolist()
               for name in ("precision", "recall", "f1", "raw_precision", "raw_recall", "raw_f1")}
        if self.best_reference is not None:
            best = np.asarray(self.best_reference).reshape(len(self), 3)
            out.update({f"best_reference_{k}": best[:, j].tolist() for j, k in enumerate("prf")})
        return out

    def to_pandas(self):
        """A ``pandas.DataFrame``, one row per candidate, of :meth:`columns`; ``df.attrs`` holds ``signature``
        (its text), ``settings`` (:meth:`Signature.as_dict`), ``baseline`` (the ``(3,)`` P/R/F baseline as a list, or
        None without rescaling) and ``warnings``.

        Raises:
            MissingExtraError: pandas is not installed (it comes with ``bertscore-viz[app]``).
        """
        try:
            import pandas as pd  # optional: the [app] extra
        except ImportError:
            raise MissingExtraError(missing_extra_message("ScoreResult.to_pandas()", "pandas", "app")) from None
        df = pd.DataFrame(self.columns())
        df.attrs.update({"signature": str(self.signature), "settings": self.signature.as_dict(),
                         "baseline": _tolist(self.baseline), "warnings": list(self.warnings)})
        return df

    def as_dict(self) -> dict:
        """JSON-ready: lists (NaN as null), baseline, warnings and signature; the format of ``score --json``.

        Its values are not all one per candidate (the ``(3,)`` baseline, the warnings, the signature), so
        ``pd.DataFrame(res.as_dict())`` fails: a table is :meth:`to_pandas` (pandas) or ``pd.DataFrame(res.columns())``.
        """
        return {"precision": _tolist(self.precision), "recall": _tolist(self.recall), "f1": _tolist(self.f1),
                "raw_precision": _tolist(self.raw_precision), "raw_recall": _tolist(self.raw_recall),
                "raw_f1": _tolist(self.raw_f1), "baseline": _tolist(self.baseline),
                "best_reference": None if self.best_reference is None else self.best_reference.tolist(),
                "warnings": list(self.warnings), "signature": str(self.signature),
                "settings": self.signature.as_dict()}


@dataclass(frozen=True)
class TokenSide:
    """The tokens of one sentence as the model saw them.

    Attributes:
        tokens: tokenizer pieces (``##ing``, ``Ġthe``), specials included.
        display: readable text of each piece: the characters of the input it covers (specials as ``[CLS]``).
        ids: token ids ``(n,)``.
        special: ``(n,)`` True for CLS/SEP (weight 0, still matchable).
        word_index: ``(n,)`` index of the word each piece belongs to, -1 for specials.
        weights: ``(n,)`` raw weights (idf or 1; 0 for specials).
        truncated: the sentence was cut at the model's maximum length.
        unknown_mask: ``(n,)`` True for tokens the model does not know ([UNK]); their display ends in
            ``→[UNK]`` so that the heatmap, the alignment and the table flag them.
        dropped: tokens cut from the tail (0 unless ``truncated``).
        windows: in window mode, for a sentence longer than the model's maximum, the ``(first, last)`` token
            positions whose vectors each window gave (the figures mark where one ends); ``()`` otherwise.
    """

    tokens: tuple[str, ...]
    display: tuple[str, ...]
    ids: np.ndarray
    special: np.ndarray
    word_index: np.ndarray
    weights: np.ndarray
    truncated: bool = False
    unknown_mask: np.ndarray | None = None
    dropped: int = 0
    windows: tuple[tuple[int, int], ...] = ()

    @property
    def window_cuts(self) -> list[int]:
        """Token positions where the window a vector comes from changes (first position of windows 2, 3, ...)."""
        return [first for first, _ in self.windows[1:]]

    def __len__(self) -> int:
        return len(self.tokens)

    @property
    def unknown(self) -> np.ndarray:
        """``(n,)`` bool: tokens unknown to the model ([UNK])."""
        if self.unknown_mask is None:
            return np.zeros(len(self.tokens), dtype=bool)
        return np.asarray(self.unknown_mask, dtype=bool)

    def n_words(self) -> int:
        """Tokens that are not CLS/SEP."""
        return int((~np.asarray(self.special, dtype=bool)).sum())

    def source_text(self, i: int) -> str:
        """The input characters token ``i`` covers (without the ``→[UNK]`` flag)."""
        d = self.display[i]
        return d[:-len("→[UNK]")] if d.endswith("→[UNK]") else d

    @property
    def normalized_weights(self) -> np.ndarray:
        total = self.weights.sum()
        return self.weights / total if total > 0 else np.full_like(self.weights, np.nan)

    def words(self) -> list[tuple[str, list[int]]]:
        """Pieces merged into words: ``(word text, token positions)``, specials left out."""
        out: list[tuple[str, list[int]]] = []
        last = None
        for pos, w in enumerate(self.word_index):
            if w < 0:
                last = None
                continue
            if w != last:
                out.append(("", []))
                last = w
            text, positions = out[-1]
            out[-1] = (text + self.display[pos], positions + [pos])
        return out


@dataclass(frozen=True)
class PairExplanation:
    """Why one candidate/reference pair scored what it did.

    Attributes:
        candidate, reference: the texts.
        cand, ref: their tokens (see :class:`TokenSide`).
        similarity: ``(n_cand, n_ref)`` cosine matrix, special rows/columns included.
        cand_best_index, cand_best: for each candidate token, the reference token it matches and the cosine
            (precision side).
        ref_best_index, ref_best: for each reference token, the candidate token it matches (recall side).
        precision, recall, f1: raw scores.
        rescaled: ``(3,)`` rescaled P/R/F, or None.
        baseline: ``(3,)`` baseline used, or None.
    """

    candidate: str
    reference: str
    cand: TokenSide
    ref: TokenSide
    similarity: np.ndarray
    cand_best_index: np.ndarray
    cand_best: np.ndarray
    ref_best_index: np.ndarray
    ref_best: np.ndarray
    precision: float
    recall: float
    f1: float
    signature: Signature
    rescaled: np.ndarray | None = None
    baseline: np.ndarray | None = None
    warnings: tuple[str, ...] = ()
    #: The document context each side was encoded with (docs/CONTEXT.md), tokens as the tokenizer gives them,
    #: oldest first; () without context. Not matched or weighted: drawn greyed beside the segment's tokens.
    cand_context: tuple[str, ...] = ()
    ref_context: tuple[str, ...] = ()

    @property
    def cand_contribution(self) -> np.ndarray:
        """Normalised weight x best similarity of each candidate token; sums to the raw precision."""
        return self.cand.normalized_weights * self.cand_best

    @property
    def ref_contribution(self) -> np.ndarray:
        """Normalised weight x best similarity of each reference token; sums to the raw recall."""
        return self.ref.normalized_weights * self.ref_best

    @property
    def scores(self) -> np.ndarray:
        """``(3,)`` the reported P/R/F: rescaled when rescaling is on, else raw."""
        return self.rescaled if self.rescaled is not None else np.array([self.precision, self.recall, self.f1])

    def __repr__(self) -> str:
        """One line: the texts (shortened), the token counts, the P/R/F1 reported and the signature."""
        scale = "rescaled" if self.rescaled is not None else "raw"
        return (f"PairExplanation(candidate={_short(self.candidate)}, reference={_short(self.reference)}, "
                f"tokens={len(self.cand)}x{len(self.ref)}, {_prf(self.scores, scale)}, signature={self.signature})")

    def to_pandas(self):
        """A ``pandas.DataFrame`` of both sides' tokens, one row per token, candidate side first: ``side``,
        ``position``, ``token``, ``display``, ``special``, ``word``, ``weight`` (idf or 1; 0 for specials),
        ``normalized_weight``, ``best_match`` (the other side's token), ``best_match_position``, ``similarity`` (of
        that best match) and ``contribution`` (normalised weight x similarity: the candidate side's add up to the raw
        precision, the reference side's to the raw recall; NaN when a side's weights sum to 0). ``df.attrs`` holds
        ``candidate``, ``reference``, ``precision``, ``recall``, ``f1`` (raw), ``rescaled`` and ``baseline`` (lists or
        None), ``signature``, ``settings`` and ``warnings``.

        Raises:
            MissingExtraError: pandas is not installed (it comes with ``bertscore-viz[app]``).
        """
        try:
            import pandas as pd  # optional: the [app] extra
        except ImportError:
            raise MissingExtraError(missing_extra_message("PairExplanation.to_pandas()", "pandas", "app")) from None
        frames = []
        for name, this, other, best_idx, best, contrib in (
                ("candidate", self.cand, self.ref, self.cand_best_index, self.cand_best, self.cand_contribution),
                ("reference", self.ref, self.cand, self.ref_best_index, self.ref_best, self.ref_contribution)):
            labels = [other.tokens[j] if other.special[j] else other.display[j] for j in np.asarray(best_idx, int)]
            frames.append(pd.DataFrame({
                "side": [name] * len(this), "position": np.arange(len(this)), "token": list(this.tokens),
                "display": list(this.display), "special": np.asarray(this.special, dtype=bool),
                "word": np.asarray(this.word_index, dtype=np.int64), "weight": np.asarray(this.weights, np.float64),
                "normalized_weight": np.asarray(this.normalized_weights, np.float64), "best_match": labels,
                "best_match_position": np.asarray(best_idx, dtype=np.int64),
                "similarity": np.asarray(best, dtype=np.float64), "contribution": np.asarray(contrib, np.float64)}))
        df = pd.concat(frames, ignore_index=True)
        df.attrs.update({"candidate": self.candidate, "reference": self.reference, "precision": float(self.precision),
                         "recall": float(self.recall), "f1": float(self.f1), "rescaled": _tolist(self.rescaled),
                         "baseline": _tolist(self.baseline), "signature": str(self.signature),
                         "settings": self.signature.as_dict(), "warnings": list(self.warnings)})
        return df

    def special_best_matches(self) -> list[str]:
        """Sentences naming real tokens whose best match is a special token."""
        notes = []
        for side, other, idx, name in ((self.cand, self.ref, self.cand_best_index, "candidate"),
                                       (self.ref, self.cand, self.ref_best_index, "reference")):
            for pos, j in enumerate(idx):
                if not side.special[pos] and other.special[j]:
                    notes.append(f"The {name} token {side.display[pos]!r} matches best with the special token "
                                 f"{other.tokens[j]} ({'similarity'} {float(self._sim(name, pos, j)):.3f}).")
        return notes

    def _sim(self, name: str, pos: int, j: int) -> float:
        return self.similarity[pos, j] if name == "candidate" else self.similarity[j, pos]

    def as_dict(self) -> dict:
        def side(s: TokenSide, best_idx, best, contrib):
            return [{"token": t, "display": d, "id": int(i), "special": bool(sp), "word": int(w),
                     "weight": float(wt), "best_match": int(b), "similarity": float(bs),
                     "contribution": None if np.isnan(c) else float(c)}
                    for t, d, i, sp, w, wt, b, bs, c in zip(s.tokens, s.display, s.ids, s.special, s.word_index,
                                                            s.weights, best_idx, best, contrib)]
        return {"candidate": self.candidate, "reference": self.reference,
                "precision": _nan(self.precision), "recall": _nan(self.recall), "f1": _nan(self.f1),
                "rescaled": _tolist(self.rescaled), "baseline": _tolist(self.baseline),
                "candidate_tokens": side(self.cand, self.cand_best_index, self.cand_best, self.cand_contribution),
                "reference_tokens": side(self.ref, self.ref_best_index, self.ref_best, self.ref_contribution),
                "similarity": self.similarity.round(6).tolist(), "warnings": list(self.warnings),
                "signature": str(self.signature), "settings": self.signature.as_dict()}


def _nan(x: float):
    return None if np.isnan(x) else float(x)


@dataclass(frozen=True)
class MultiReferenceExplanation:
    """One candidate against several references: each pair explained, and which reference gave P, R, F1.

    Attributes:
        pairs: one :class:`PairExplanation` per reference.
        best_reference: ``(3,)`` index of the reference giving the maximum P, R and F1 (may differ).
        precision, recall, f1: raw maxima; rescaled: rescaled maxima or None.
    """

    pairs: tuple[PairExplanation, ...]
    best_reference: np.ndarray
    precision: float
    recall: float
    f1: float
    signature: Signature
    rescaled: np.ndarray | None = None
    baseline: np.ndarray | None = None
    warnings: tuple[str, ...] = field(default=())

    @property
    def scores(self) -> np.ndarray:
        return self.rescaled if self.rescaled is not None else np.array([self.precision, self.recall, self.f1])

    def __repr__(self) -> str:
        """One line: the candidate (shortened), the number of references, the P/R/F1 reported with the reference
        that gave each, and the signature."""
        scale = "rescaled" if self.rescaled is not None else "raw"
        candidate = _short(self.pairs[0].candidate) if self.pairs else "''"
        best = " ".join(f"{k}:{int(i)}" for k, i in zip(("P", "R", "F1"), np.asarray(self.best_reference)))
        return (f"MultiReferenceExplanation(candidate={candidate}, references={len(self.pairs)}, "
                f"{_prf(self.scores, f'{scale}; best reference {best}')}, signature={self.signature})")

    def to_pandas(self):
        """A ``pandas.DataFrame`` of every pair's tokens (:meth:`PairExplanation.to_pandas`), with a first column
        ``reference_index`` (the reference's position, from 0) and ``reference``. ``df.attrs`` holds ``candidate``,
        ``references``, the raw maxima ``precision``, ``recall``, ``f1``, ``best_reference`` (the index of the
        reference that gave P, R and F1), ``rescaled`` and ``baseline`` (lists or None), ``signature``, ``settings``
        and ``warnings``.

        Raises:
            MissingExtraError: pandas is not installed (it comes with ``bertscore-viz[app]``).
        """
        try:
            import pandas as pd  # optional: the [app] extra
        except ImportError:
            raise MissingExtraError(missing_extra_message("MultiReferenceExplanation.to_pandas()", "pandas",
                                                          "app")) from None
        frames = []
        for k, pair in enumerate(self.pairs):
            frame = pair.to_pandas()
            frame.insert(0, "reference", pair.reference)
            frame.insert(0, "reference_index", k)
            frames.append(frame)
        df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
        df.attrs = {"candidate": self.pairs[0].candidate if self.pairs else "",
                    "references": [p.reference for p in self.pairs], "precision": float(self.precision),
                    "recall": float(self.recall), "f1": float(self.f1),
                    "best_reference": [int(b) for b in np.asarray(self.best_reference)],
                    "rescaled": _tolist(self.rescaled), "baseline": _tolist(self.baseline),
                    "signature": str(self.signature), "settings": self.signature.as_dict(),
                    "warnings": list(self.warnings)}
        return df
