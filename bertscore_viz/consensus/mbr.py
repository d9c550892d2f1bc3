"""Minimum-Bayes-risk selection among a group's samples, the reference oracle, and the result objects.

With ``U[i, j]`` the utility of sample ``i`` as candidate against sample ``j`` as pseudo-reference (F1 by default,
precision or recall on request; rescaled values when rescaling is on), the **expected utility** of sample ``i`` is
its mean against the other samples, ``EU(i) = (1 / (N - 1)) * sum_{j != i} U[i, j]`` (every sample an equally likely
pseudo-reference, as in MBR decoding with samples as the evidence; Freitag et al. 2022). The **MBR choice** is the
sample of highest expected utility; ties go to the lowest index. Duplicated samples count as separate samples (as
MBR does): a sample drawn twice has its copy among its pseudo-references. ``mbrs``' ``DecoderMBR`` averages over all
N pseudo-references, itself included; that adds the same ``U[i, i] / N`` (about ``1 / N``: a text against itself) to
every sample and so chooses the same sample, with expected utilities ``((N - 1) EU(i) + U[i, i]) / N``.

A NaN utility (degenerate idf: a sample whose tokens all have idf 0, so that its precision or recall is 0/0) makes
that sample's expected utility NaN; such samples are ranked last and chosen only when every sample is NaN (then the
first, with a note). A group of one sample has nothing to compare with: that sample is chosen, with NaN utility.

With **references** for a group, each sample is scored against them as :meth:`Scorer.score` scores a candidate
against several references (P, R and F1 each the maximum over the references, rescaled after), with the group's
token weights. The **oracle** is the sample whose score (the same utility) is highest (ties: lowest index), and
``gap = score(oracle) - score(chosen)`` (0 when MBR found the oracle); ``reference_rank`` is 1 plus the number of
samples that score strictly higher than the chosen one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bertscore_viz.consensus.pairwise import COLUMNS, PairwiseResult
from bertscore_viz.engine.results import Signature

__all__ = ["expected_utility", "select", "best_index", "GroupConsensus", "ConsensusResult"]


def expected_utility(matrix: np.ndarray) -> np.ndarray:
    """Each sample's mean utility against the other samples.

    Args:
        matrix: ``(N, N)`` utilities, ``[i, j]`` = sample ``i`` against sample ``j``.

    Returns:
        ``(N,)`` float64: ``mean_{j != i} matrix[i, j]`` (NaN if any of them is NaN); all NaN when ``N == 1``.

    Each row's values are summed in sorted order, not in column order: two identical samples have the same
    values in another order (each has the other's copy where the other has itself), and float addition in
    column order made their utilities differ in the last bits, so "ties to the lowest index" failed for them.
    Sorted, the same values give the same sum exactly; any other sample's sum moves by rounding only (< 1e-15).
    """
    u = np.asarray(matrix, dtype=np.float64)
    n = u.shape[0]
    if u.shape != (n, n):
        raise ValueError(f"expected a square matrix, got shape {u.shape}")
    if n < 2:
        return np.full(n, np.nan)
    off = ~np.eye(n, dtype=bool)
    return np.sort(np.where(off, u, 0.0), axis=1).sum(axis=1) / (n - 1)  # canonical order: duplicates tie


def best_index(values: np.ndarray) -> int | None:
    """Index of the highest finite value, the lowest index among ties; None if no value is finite."""
    v = np.asarray(values, dtype=np.float64)
    finite = np.isfinite(v)
    if not finite.any():
        return None
    top = v[finite].max()
    return int(np.flatnonzero(finite & (v == top))[0])


def select(utilities: np.ndarray) -> tuple[int, np.ndarray, np.ndarray, tuple[str, ...]]:
    """The MBR choice and the order by consensus.

    Args:
        utilities: ``(N,)`` expected utilities (N >= 1).

    Returns:
        ``(chosen, order, rank, notes)``: the chosen index; ``(N,)`` indices from most to least agreed with
        (ties by index, NaN last); ``(N,)`` rank of each sample (1 = chosen); notes on ties and NaN.
    """
    u = np.asarray(utilities, dtype=np.float64)
    n = len(u)
    notes: list[str] = []
    key = np.where(np.isfinite(u), -u, np.inf)
    order = np.lexsort((np.arange(n), key)).astype(np.int64)
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(1, n + 1)
    chosen = best_index(u)
    if n == 1:
        notes.append("One sample: there is nothing to compare it with, so it is chosen and its expected utility is "
                     "NaN.")
        chosen = 0
    elif chosen is None:
        notes.append("Every expected utility is NaN (degenerate idf: every token of these samples has idf 0); the "
                     "first sample is chosen. Compute idf from more text (idf_weights) or turn idf off.")
        chosen = 0
    else:
        nan = np.flatnonzero(~np.isfinite(u))
        if len(nan):
            notes.append(f"{len(nan)} sample(s) have NaN expected utility (degenerate idf) and are ranked last: "
                         f"{', '.join(map(str, nan[:10]))}.")
        ties = np.flatnonzero(u == u[chosen])
        if len(ties) > 1:
            notes.append(f"{len(ties)} samples tie for the highest expected utility ({', '.join(map(str, ties[:10]))});"
                         f" the first, {chosen}, is chosen.")
    return int(chosen), order, rank, tuple(notes)


def _num(x) -> float | None:
    x = float(x)
    return x if np.isfinite(x) else None


@dataclass(frozen=True)
class GroupConsensus:
    """One input's samples: their matrices, the MBR choice, the order by consensus, support, and the oracle.

    Attributes:
        id: the group's id (given, else its index).
        samples: the N samples.
        matrices: the ``(N, N)`` P/R/F1 matrices.
        utility: ``"f1"``, ``"precision"`` or ``"recall"``.
        expected_utility: ``(N,)`` mean utility against the other samples.
        order: ``(N,)`` sample indices from most to least agreed with; rank: ``(N,)`` 1 = chosen.
        chosen: the MBR choice.
        token_support: per sample, its :class:`~bertscore_viz.consensus.support.TokenSupport` (``()`` if not asked).
        sentence_support: per sample, its :class:`~bertscore_viz.consensus.support.SentenceSupport` (``()`` if not
            asked).
        references: the group's references (``()``: none).
        reference_scores: ``(N, 3)`` P, R, F1 of each sample against the references (rescaled when rescaling is on;
            multi-reference maximum), None without references; raw_reference_scores: before rescaling;
            best_reference: ``(N, 3)`` which reference gave each maximum.
        oracle: the sample scoring highest against the references (None without references).
        notes: what the caller should know about this group (ties, NaN, one sample, empty or truncated texts).
    """

    id: object
    samples: tuple
    matrices: PairwiseResult
    utility: str
    expected_utility: np.ndarray
    order: np.ndarray
    rank: np.ndarray
    chosen: int
    token_support: tuple = ()
    sentence_support: tuple = ()
    references: tuple = ()
    reference_scores: np.ndarray | None = None
    raw_reference_scores: np.ndarray | None = None
    best_reference: np.ndarray | None = None
    oracle: int | None = None
    notes: tuple = ()

    def __len__(self) -> int:
        return len(self.samples)

    @property
    def chosen_text(self) -> str:
        return self.samples[self.chosen]

    @property
    def chosen_utility(self) -> float:
        return float(self.expected_utility[self.chosen])

    @property
    def reference_utility(self) -> np.ndarray | None:
        """``(N,)`` each sample's score against the references in the group's utility (None without references)."""
        if self.reference_scores is None:
            return None
        return self.reference_scores[:, COLUMNS.index(self.utility)].copy()

    @property
    def chosen_score(self) -> float | None:
        """The chosen sample's score against the references (None without references)."""
        scores = self.reference_utility
        return None if scores is None else float(scores[self.chosen])

    @property
    def oracle_score(self) -> float | None:
        scores = self.reference_utility
        return None if scores is None or self.oracle is None else float(scores[self.oracle])

    @property
    def gap(self) -> float | None:
        """``oracle score - chosen score`` (0 when MBR chose the oracle; None without references)."""
        if self.oracle_score is None or self.chosen_score is None:
            return None
        return self.oracle_score - self.chosen_score

    @property
    def reference_rank(self) -> int | None:
        """1 + the number of samples scoring strictly higher against the references than the chosen one."""
        scores = self.reference_utility
        if scores is None:
            return None
        return 1 + int(np.sum(np.isfinite(scores) & (scores > scores[self.chosen])))

    def as_dict(self, matrices: bool = False, support: bool = False) -> dict:
        """JSON-ready summary: the choice, every sample's expected utility, the order, and with references the
        oracle; the matrices and the support when asked."""
        out = {"id": self.id, "n_samples": len(self.samples), "utility": self.utility, "chosen": self.chosen,
               "text": self.chosen_text, "expected_utility": _num(self.chosen_utility),
               "rank": int(self.rank[self.chosen]), "ranking": self.order.tolist(),
               "expected_utilities": [_num(x) for x in self.expected_utility], "notes": list(self.notes)}
        if self.reference_scores is not None:
            oracle = self.oracle
            out.update({"references": list(self.references), "chosen_score": _num(self.chosen_score),
                        "oracle": oracle, "oracle_text": None if oracle is None else self.samples[oracle],
                        "oracle_score": None if self.oracle_score is None else _num(self.oracle_score),
                        "gap": None if self.gap is None else _num(self.gap), "reference_rank": self.reference_rank,
                        "reference_scores": [_num(x) for x in self.reference_utility]})
        if matrices:
            out["matrices"] = self.matrices.as_dict()
        if support:
            out["token_support"] = [t.as_dict() for t in self.token_support]
            out["sentence_support"] = [s.as_dict() for s in self.sentence_support]
        return out


@dataclass(frozen=True)
class ConsensusResult:
    """The consensus of many inputs, each with its samples.

    Attributes:
        groups: one :class:`GroupConsensus` per input, in order.
        utility: the utility MBR maximised.
        signature: the settings (idf part: where idf came from).
        warnings: every group's notes, prefixed with its id.
    """

    groups: tuple
    utility: str
    signature: Signature
    warnings: tuple = ()

    def __len__(self) -> int:
        return len(self.groups)

    def __getitem__(self, k: int) -> GroupConsensus:
        return self.groups[k]

    def __iter__(self):
        return iter(self.groups)

    @property
    def chosen(self) -> np.ndarray:
        """``(n_groups,)`` the chosen index of each group."""
        return np.array([g.chosen for g in self.groups], dtype=np.int64)

    @property
    def chosen_texts(self) -> list[str]:
        return [g.chosen_text for g in self.groups]

    def summary(self) -> dict:
        """Means over the groups: the chosen samples' expected utility, and over the groups with references the
        chosen and oracle scores, the gap, and the share of groups where the chosen sample scores as high as the
        oracle (``oracle_reached``: gap 0)."""
        eu = np.array([g.chosen_utility for g in self.groups], dtype=np.float64)
        out = {"groups": len(self.groups), "samples": int(sum(len(g) for g in self.groups)), "utility": self.utility,
               "mean_expected_utility": _num(np.nanmean(eu)) if np.isfinite(eu).any() else None,
               "signature": str(self.signature)}
        with_refs = [g for g in self.groups if g.reference_scores is not None and g.oracle is not None]
        if with_refs:
            chosen = np.array([g.chosen_score for g in with_refs], dtype=np.float64)
            oracle = np.array([g.oracle_score for g in with_refs], dtype=np.float64)
            out.update({"groups_with_references": len(with_refs), "mean_chosen_score": _num(np.mean(chosen)),
                        "mean_oracle_score": _num(np.mean(oracle)), "mean_gap": _num(np.mean(oracle - chosen)),
                        "oracle_reached": float(np.mean(oracle - chosen == 0))})
        return out

    def to_pandas(self):
        """A ``pandas.DataFrame``, one row per sample of every input: ``group`` (the input's id), ``sample`` (its
        index in the input), ``text``, ``expected_utility``, ``rank`` (1 = chosen), ``chosen``, and when any input has
        references ``reference_score`` (the sample's score against them in the utility; NaN for an input without)
        and ``oracle``. ``df.attrs`` holds ``utility``, ``signature``, ``warnings`` and ``summary`` (:meth:`summary`).

        Raises:
            MissingExtraError: pandas is not installed (it comes with ``bertscore-viz[app]``).
        """
        try:
            import pandas as pd  # optional: the [app] extra
        except ImportError:
            from bertscore_viz.extras import MissingExtraError, missing_extra_message
            raise MissingExtraError(missing_extra_message("ConsensusResult.to_pandas()", "pandas", "app")) from None
        with_refs = any(g.reference_scores is not None for g in self.groups)
        rows = []
        for g in self.groups:
            ref = g.reference_utility
            for i, text in enumerate(g.samples):
                row = {"group": g.id, "sample": i, "text": text, "expected_utility": float(g.expected_utility[i]),
                       "rank": int(g.rank[i]), "chosen": i == g.chosen}
                if with_refs:
                    row.update(reference_score=float("nan") if ref is None else float(ref[i]), oracle=i == g.oracle)
                rows.append(row)
        columns = ["group", "sample", "text", "expected_utility", "rank", "chosen"]
        df = pd.DataFrame(rows, columns=columns + (["reference_score", "oracle"] if with_refs else []))
        df.attrs.update({"utility": self.utility, "signature": str(self.signature), "warnings": list(self.warnings),
                         "summary": self.summary()})
        return df
