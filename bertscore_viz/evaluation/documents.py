"""Document context of one segment of a comparison (docs/CONTEXT.md): the previous segments its two sides were
encoded after, as the engine chose them, so that a drill-down explains the pair with the same context its score had;
and what the context changed in the pair's matches (pure, no Streamlit)."""

from __future__ import annotations

from dataclasses import dataclass

from bertscore_viz.engine.context import previous_in_document
from bertscore_viz.files.dataset import Dataset

__all__ = ["MatchChange", "context_changes", "pair_context", "system_documents"]


def system_documents(doc_ids, systems=None) -> list[str] | None:
    """Each output's document made its system's own (``"<system>\x1f<document>"``), for scoring outputs of several
    systems in one list with document context: a segment's previous segments are then those of the same system and
    document, in list order, never another system's. "" (no document) stays "" (scored alone); None without
    documents or when no output has one."""
    if doc_ids is None or not any(doc_ids):
        return None
    if systems is None:
        return [str(d) if d else "" for d in doc_ids]
    return [f"{s}\x1f{d}" if d else "" for s, d in zip(systems, doc_ids)]


def pair_context(dataset: Dataset, system: str, i: int, k: int, source: str = "ref") -> tuple[list[str], list[str]]:
    """``(candidate context, reference context)`` of segment ``i`` of ``system``: the previous ``k`` segments of its
    document, oldest first, as the engine encodes them (``"ref"``: both sides after the previous references, of the
    first reference column; ``"own"``: the candidate after its system's previous outputs). Empty without context,
    without documents, or for a segment without a document id."""
    if not k or dataset.doc_ids is None:
        return [], []
    previous = previous_in_document([d or None for d in dataset.doc_ids], k)[i]
    refs = [dataset.references[j][0] for j in previous]
    cands = refs if source == "ref" else [dataset.systems[system][j] for j in previous]
    return list(cands), refs


@dataclass(frozen=True)
class MatchChange:
    """A token whose best match changed with the context: its side (``"candidate"`` / ``"reference"``), the token,
    its match and similarity without context, and with it."""

    side: str
    token: str
    before: str
    after: str
    sim_before: float
    sim_after: float


def context_changes(with_context, alone, min_shift: float = 0.02) -> list[MatchChange]:
    """The tokens whose greedy match changed (another token) or whose best similarity moved by at least
    ``min_shift`` when the pair was encoded with its context (``with_context``) instead of alone (``alone``): two
    :class:`~bertscore_viz.engine.results.PairExplanation` of the same pair. Largest shift first."""
    out = []
    for side, best, sims, mine, other in (("candidate", "cand_best_index", "cand_best", "cand", "ref"),
                                          ("reference", "ref_best_index", "ref_best", "ref", "cand")):
        b0, b1 = getattr(alone, best), getattr(with_context, best)
        s0, s1 = getattr(alone, sims), getattr(with_context, sims)
        tokens, targets = getattr(with_context, mine).display, getattr(with_context, other).display
        for t in range(len(tokens)):
            if getattr(with_context, mine).special[t]:
                continue  # [CLS], [SEP]: weight 0, not part of the score
            if int(b0[t]) != int(b1[t]) or abs(float(s1[t]) - float(s0[t])) >= min_shift:
                out.append(MatchChange(side, tokens[t], targets[int(b0[t])], targets[int(b1[t])], float(s0[t]),
                                       float(s1[t])))
    return sorted(out, key=lambda c: -abs(c.sim_after - c.sim_before))
