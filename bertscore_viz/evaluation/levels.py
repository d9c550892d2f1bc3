"""The summary (document) level of agreement with human scores, and the verdict at every level.

**Summary level** (summarization's meta-evaluation, e.g. SummEval): for each document, the correlation across the
outputs of the systems for that document (metric scores against human scores), then the mean over the documents.
A document is a segment id (within its group, when there are groups: ``cs-en`` segment 7 is not ``de-en`` segment
7). A document counts when it has at least :data:`MIN_DOCUMENT_OUTPUTS` rated outputs (a correlation of two points
is +1 or -1 by construction); a document whose correlation is undefined (one side constant) is left out of the
mean, so the mean is over the documents where the statistic is defined, and said so.

The bootstrap at summary level **resamples the documents** (``numpy.random.default_rng(seed).choice(D, size=(
n_samples, D))``): each resample's statistic is the mean of its documents' correlations (repeats counted), the same
resampled documents for every metric (paired).

**Verdicts**: at each level present, the best metric by that level's statistic and its lead over the runner-up
(:class:`~bertscore_viz.evaluation.correlation.Lead`), and one line saying whether the levels name the same winner.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from scipy import stats
from scipy.stats import rankdata

from bertscore_viz.evaluation.resampled import counts_of, matmul, rowwise_kendall, rowwise_pearson

__all__ = ["LEVELS", "LEVEL_NAMES", "MIN_DOCUMENT_OUTPUTS", "RESAMPLED", "DocumentCorrelations",
           "document_correlations", "document_keys", "headline", "levels_disagree", "resampled_document_means",
           "winners"]

#: Levels, in the order they are reported.
LEVELS = ("segment", "system", "system_gold", "summary")
#: How each level is named in sentences.
LEVEL_NAMES = {"segment": "segment level", "system": "system level",
               "system_gold": "system level against the human system scores", "summary": "summary level"}
#: What the bootstrap of each level resamples.
RESAMPLED = {"segment": "resampling the outputs",
             "system": "resampling the outputs and re-averaging each system",
             "system_gold": "resampling the outputs and re-averaging each system; the human system scores fixed",
             "summary": "resampling the documents"}
#: Fewest rated outputs of a document for its correlation to count at summary level.
MIN_DOCUMENT_OUTPUTS = 3
#: Documents longer than this get their Kendall tau from scipy one at a time (the sign matrices grow as size²).
_DENSE_DOCUMENT = 64
_BLOCK_CELLS = 2_000_000


def document_keys(segment_ids, groups=None) -> list[str]:
    """One document name per output: the segment id, prefixed by the group when there are groups.

    Args:
        segment_ids: ``(n,)`` segment (document) ids.
        groups: ``(n,)`` groups (e.g. language pairs), or None.

    Returns:
        ``n`` names such as ``"cs-en / 7"``.
    """
    if groups is None:
        return [str(s) for s in segment_ids]
    return [f"{g} / {s}" for g, s in zip(groups, segment_ids)]


@dataclass(frozen=True)
class DocumentCorrelations:
    """Each metric's correlation with the human scores inside each document.

    Attributes:
        values: ``{statistic: (k, D) values}``, NaN where undefined (a side constant in the document).
        names: the ``D`` documents with at least :data:`MIN_DOCUMENT_OUTPUTS` outputs; sizes: ``(D,)`` outputs.
    """

    values: dict
    names: tuple
    sizes: np.ndarray

    @property
    def n_documents(self) -> int:
        return len(self.names)

    def means(self) -> dict:
        """``{statistic: (k,)}`` mean over the documents where the statistic is defined (NaN if none is)."""
        out = {}
        for s, v in self.values.items():
            finite = np.isfinite(v)
            with np.errstate(invalid="ignore", divide="ignore"):
                out[s] = np.where(finite.any(axis=1), np.where(finite, v, 0.0).sum(axis=1) / finite.sum(axis=1),
                                  np.nan)
        return out


def _kendall_loop(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    out = np.empty(len(x))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy's ConstantInputWarning: NaN, as intended
        for i, (a, b) in enumerate(zip(x, y)):
            out[i] = np.nan if np.ptp(a) == 0 or np.ptp(b) == 0 else float(stats.kendalltau(a, b)[0])
    return out


def document_correlations(metrics, human, documents, statistics=("pearson", "spearman", "kendall")
                          ) -> DocumentCorrelations:
    """Pearson, Spearman and Kendall tau-b (scipy's definitions) of each metric with ``human`` inside each
    document of at least :data:`MIN_DOCUMENT_OUTPUTS` outputs, computed for all documents of one size at once.

    Args:
        metrics: ``(k, n)`` finite metric scores.
        human: ``(n,)`` finite human scores.
        documents: ``(n,)`` document of each output.
        statistics: which statistics.

    Returns:
        :class:`DocumentCorrelations` (documents in order of first appearance).
    """
    x = np.atleast_2d(np.asarray(metrics, dtype=np.float64))
    h = np.asarray(human, dtype=np.float64)
    labels = np.asarray([str(d) for d in documents], dtype=object)
    names, first, codes = np.unique(labels, return_index=True, return_inverse=True)
    codes = codes.ravel()
    order_of_appearance = np.argsort(first, kind="stable")
    sizes_all = np.bincount(codes, minlength=len(names))
    used = [int(c) for c in order_of_appearance if sizes_all[c] >= MIN_DOCUMENT_OUTPUTS]
    column = {c: j for j, c in enumerate(used)}
    values = {s: np.full((len(x), len(used)), np.nan) for s in statistics}
    by_size: dict[int, list[int]] = {}
    for c in used:
        by_size.setdefault(int(sizes_all[c]), []).append(c)
    members = np.argsort(codes, kind="stable")
    starts = np.r_[0, np.cumsum(sizes_all)[:-1]]
    for size, docs in by_size.items():
        index = np.stack([members[starts[c]:starts[c] + size] for c in docs])  # (d, size)
        cols = [column[c] for c in docs]
        hx = np.broadcast_to(h[index], (len(x),) + index.shape).reshape(-1, size)
        mx = x[:, index].reshape(-1, size)
        for s in statistics:
            if s == "pearson":
                v = rowwise_pearson(mx, hx)
            elif s == "spearman":
                v = rowwise_pearson(rankdata(mx, axis=1), rankdata(hx, axis=1))
            else:
                v = rowwise_kendall(mx, hx) if size <= _DENSE_DOCUMENT else _kendall_loop(mx, hx)
            values[s][:, cols] = v.reshape(len(x), len(docs))
    return DocumentCorrelations(values, tuple(str(names[c]) for c in used), sizes_all[used])


def resampled_document_means(docs: DocumentCorrelations, n_samples: int, seed: int | None) -> dict:
    """The summary-level statistic of each bootstrap resample of the documents.

    Args:
        docs: the per-document correlations.
        n_samples, seed: resamples drawn as ``default_rng(seed).choice(D, size=(n_samples, D))``, in blocks.

    Returns:
        ``{statistic: (k, n_samples)}``: per resample, the mean of its documents' correlations (repeats counted,
        undefined ones left out); NaN when none is defined.
    """
    d = docs.n_documents
    rng = np.random.default_rng(seed)
    parts: dict[str, list] = {s: [] for s in docs.values}
    block = max(1, _BLOCK_CELLS // max(d, 1))
    for start in range(0, n_samples if d else 0, block):
        counts = counts_of(rng.choice(d, size=(min(n_samples, start + block) - start, d), replace=True),
                           d).astype(np.float64)
        for s, v in docs.values.items():
            finite = np.isfinite(v)
            with np.errstate(invalid="ignore", divide="ignore"):
                parts[s].append(matmul(np.where(finite, v, 0.0), counts) / matmul(finite.astype(np.float64), counts))
    return {s: np.concatenate(parts[s], axis=1) if parts[s] else np.zeros((v.shape[0], 0))
            for s, v in docs.values.items()}


# --- verdicts -----------------------------------------------------------------------------------------------------
def _points(agreement, level: str) -> str:
    if level == "segment":
        return f"{agreement.n_pairs:,} outputs"
    if level == "summary":
        return f"mean over {agreement.n_documents:,} documents"
    return f"{agreement.n_systems:,} systems" if level == "system" else f"{agreement.n_gold_systems:,} systems"


def winners(agreement) -> dict[str, str]:
    """``{level: best metric}`` by each level's statistic (levels where some metric's statistic is defined)."""
    out = {}
    for level, results in agreement.levels().items():
        stat = agreement.level_statistic(level)
        ranked = sorted((m for m in results if math.isfinite(results[m].values.get(stat, math.nan))),
                        key=lambda m: -results[m].values[stat])
        if ranked:
            out[level] = ranked[0]
    return out


def levels_disagree(agreement) -> bool:
    """Whether two levels name different best metrics."""
    return len(set(winners(agreement).values())) > 1


def headline(agreement, alpha: float = 0.05) -> list[str]:
    """The verdict as sentences: one per level present (the level, what it rests on, the winner, its lead over the
    runner-up with the paired bootstrap's p and what was resampled), then whether the levels agree, then the
    levels that could not be computed and why.

    Args:
        agreement: an :class:`~bertscore_viz.evaluation.correlation.Agreement`.
        alpha: the significance level of the leads.

    Returns:
        Plain-text sentences (no markup).
    """
    lines = []
    best = winners(agreement)
    for level, results in agreement.levels().items():
        stat = agreement.level_statistic(level)
        head = f"{LEVEL_NAMES[level].capitalize()} ({_points(agreement, level)})"
        lead = agreement.leads.get(level)
        if lead is not None:
            lines.append(f"{head}: {lead.sentence(alpha)}")
        elif level in best:
            value = results[best[level]].values[stat]
            lines.append(f"{head}: {best[level]} has {stat.capitalize()} {value:+.4f} (no other metric to compare).")
        else:
            lines.append(f"{head}: no metric's {stat.capitalize()} is defined here.")
    if len(best) > 1:
        if levels_disagree(agreement):
            parts = [f"{m} at {LEVEL_NAMES[lv]}" for lv, m in best.items()]
            lines.append("The levels disagree: the best metric is " + ", ".join(parts) + ".")
        else:
            lines.append(f"Every level names the same winner: {next(iter(best.values()))}.")
    lines.extend(agreement.missing_levels())
    return lines
