"""How well the other samples support each part of a sample: per token and per sentence.

**Per token.** For sample ``i`` and each other sample ``j``, a token ``t`` of ``i`` gets its greedy best match in
``j``: ``best_j(t) = max_u sim(t, u)`` over every token ``u`` of ``j`` (special tokens included, as in scoring: row
``t`` of the similarity matrix of the pair ``(i, j)``, whose weighted mean is ``P(i, j)``). Its support is the mean
over the other samples, ``support(t) = (1 / (N - 1)) * sum_{j != i} best_j(t)``: a cosine, not rescaled, not weighted
by idf. Content that only sample ``i`` says has no close token elsewhere and stands out with low support. Special
tokens get a value too (they are rows of the matrix) and are flagged.

**Per sentence**, as SelfCheckGPT's BERTScore variant (Manakul et al. 2023; ``SelfCheckBERTScore.predict`` in
``selfcheckgpt/modeling_selfcheck.py``): each sentence ``s`` of sample ``i`` is scored against each other sample
``j`` by its best BERTScore F1 with ``j``'s sentences, ``g_j(s) = max_{s' in j} F1(s', s)``, and its support is the
mean over the other samples, ``support(s) = mean_{j != i} g_j(s)``; SelfCheckGPT reports ``1 - support(s)`` (its
inconsistency score, :attr:`SentenceSupport.inconsistency`). As there: only sentences of ``j`` with more than 3
tokens serve as evidence (``len(sent) > 3``), while every sentence of ``i`` is scored; F1 is the scorer's
(its layer, rescaled when it rescales: SelfCheckGPT rescales by default; with idf, the group's weights). Each
sentence is embedded on its own (its own special tokens and context), as ``bert_score.score`` embeds it. Where
SelfCheckGPT fails, we say what we do: a sample without any evidence sentence is left out of the mean (its
``per_sample`` column is NaN; SelfCheckGPT raises an error on it), and a sentence with no sample to compare with
gets NaN. Sentences come from :func:`~bertscore_viz.consensus.sentences.split_sentences` (rule-based; SelfCheckGPT
uses spaCy: the differences are listed there).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bertscore_viz.consensus.sentences import Sentence

__all__ = ["TokenSupport", "SentenceSupport", "token_spans", "token_support", "best_per_sample",
           "sentence_support"]


def _floats(a) -> list:
    return [None if not np.isfinite(x) else float(x) for x in np.asarray(a, dtype=np.float64)]


@dataclass(frozen=True)
class TokenSupport:
    """Per-token support of one sample by the others.

    Attributes:
        tokens: the tokenizer's pieces (``##ing``, ``Ġthe``), special tokens included.
        ids: ``(n_tokens,)`` token ids.
        special: ``(n_tokens,)`` True for CLS/SEP (weight 0 in scoring; matched like any token).
        spans: per token, its ``(start, end)`` characters in the sample's text, ``(-1, -1)`` for special tokens;
            ``()`` when the tokenizer gives no offsets.
        support: ``(n_tokens,)`` float64, the mean over the other samples of the token's best cosine in each;
            NaN when the group has one sample.
    """

    tokens: tuple
    ids: np.ndarray
    special: np.ndarray
    spans: tuple
    support: np.ndarray

    def content_mean(self) -> float:
        """Mean support of the tokens that are not special (NaN for an empty sample)."""
        values = self.support[~self.special]
        return float(values.mean()) if len(values) else float("nan")

    def as_dict(self) -> dict:
        return {"tokens": list(self.tokens), "special": self.special.tolist(),
                "spans": [list(s) for s in self.spans], "support": _floats(self.support)}


@dataclass(frozen=True)
class SentenceSupport:
    """Per-sentence support of one sample by the others (SelfCheckGPT's BERTScore variant).

    Attributes:
        sentences: the sample's sentences with their spans and token counts.
        evidence: ``(n_sentences,)`` True where the sentence counts as evidence for the others (> 3 tokens).
        per_sample: ``(n_sentences, N)`` float64: ``[s, j]`` is the best F1 of sentence ``s`` with sample ``j``'s
            evidence sentences; NaN for the sample itself and for a sample without evidence sentences.
        support: ``(n_sentences,)`` the mean of each row over the samples with a value (NaN if none).
    """

    sentences: tuple
    evidence: np.ndarray
    per_sample: np.ndarray
    support: np.ndarray

    @property
    def inconsistency(self) -> np.ndarray:
        """``1 - support``: SelfCheckGPT's sentence score (higher = less supported, likelier hallucinated)."""
        return 1.0 - self.support

    def as_dict(self) -> dict:
        return {"sentences": [{"text": s.text, "start": s.start, "end": s.end, "tokens": s.n_tokens}
                              for s in self.sentences],
                "evidence": self.evidence.tolist(), "support": _floats(self.support),
                "inconsistency": _floats(self.inconsistency)}


def token_spans(tokenizer, text: str, ids: np.ndarray, special: np.ndarray, max_length: int | None) -> tuple:
    """Character spans of each token in ``text``, from the tokenizer's offsets of the stripped text.

    Args:
        tokenizer: the model's :class:`~bertscore_viz.engine.tokenizer.TextTokenizer`.
        text: the sample as given; ids: its token ids as scored; special: ``(n,)`` special-token mask.
        max_length: the cut of truncate mode, None in window mode (the text is tokenized whole).

    Returns:
        ``((start, end), ...)`` per token, ``(-1, -1)`` for special tokens; ``()`` when the tokenizer has no
        offsets or they do not describe these ids.
    """
    stripped = text.strip()
    lead = len(text) - len(text.lstrip())
    try:
        info = tokenizer.with_offsets(stripped, max_length)
    except (NotImplementedError, ValueError, TypeError):  # a slow tokenizer: no offsets
        return ()
    if list(info["input_ids"]) != np.asarray(ids).tolist():
        return ()
    return tuple((-1, -1) if special[k] else (lead + int(a), lead + int(b))
                 for k, (a, b) in enumerate(info["offset_mapping"]))


def token_support(support_sum: np.ndarray, self_best: np.ndarray, n_samples: int) -> np.ndarray:
    """Mean best similarity over the other samples from the sum over all samples (duplicates counted).

    Args:
        support_sum: ``(n_tokens,)`` sum over every sample ``j`` of group (itself included) of the best cosine.
        self_best: ``(n_tokens,)`` the best cosine in the sample itself (removed from the sum).
        n_samples: N.

    Returns:
        ``(n_tokens,)`` float64; NaN when ``n_samples == 1``.
    """
    if n_samples < 2:
        return np.full(len(support_sum), np.nan)
    return (np.asarray(support_sum, dtype=np.float64) - np.asarray(self_best, dtype=np.float64)) / (n_samples - 1)


def best_per_sample(f1: np.ndarray, owners: list[list[int]], evidence: np.ndarray) -> np.ndarray:
    """Each sentence's best F1 with the evidence sentences of each distinct text.

    Args:
        f1: ``(n_sentences, n_sentences)`` F1 between the group's distinct sentences (symmetric).
        owners: per distinct text, the rows of its sentences in ``f1``.
        evidence: ``(n_sentences,)`` the sentence may serve as evidence.

    Returns:
        ``(n_sentences, n_texts)``; NaN where the text has no evidence sentence.
    """
    out = np.full((f1.shape[0], len(owners)), np.nan)
    for b, rows in enumerate(owners):
        cols = [r for r in rows if evidence[r]]
        if cols:
            out[:, b] = f1[:, cols].max(axis=1)
    return out


def sentence_support(sentences: list[Sentence], rows: list[int], best: np.ndarray, inverse: np.ndarray,
                     sample: int) -> SentenceSupport:
    """The :class:`SentenceSupport` of one sample.

    Args:
        sentences: the sample's sentences; rows: their rows in ``best``.
        best: ``(n_sentences, n_texts)`` from :func:`best_per_sample`.
        inverse: ``(N,)`` the distinct text of each sample; sample: this sample's index.
    """
    per_sample = best[np.asarray(rows, dtype=np.int64)][:, inverse] if rows else np.zeros((0, len(inverse)))
    per_sample = per_sample.copy()
    per_sample[:, sample] = np.nan
    counted = np.isfinite(per_sample)
    with np.errstate(invalid="ignore"):
        support = np.where(counted.any(axis=1), np.where(counted, per_sample, 0.0).sum(axis=1)
                           / np.maximum(counted.sum(axis=1), 1), np.nan)
    evidence = np.array([s.evidence for s in sentences], dtype=bool)
    return SentenceSupport(tuple(sentences), evidence, per_sample, support)
