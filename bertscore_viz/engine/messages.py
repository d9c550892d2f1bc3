"""The warnings of a result, in words: empty sides, degenerate idf, unknown tokens, truncation. Candidates are named
by their index (from 0, as in the input list) or by a label (``"row 6"``: the app names a file's rows)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from bertscore_viz.engine.languages import multilingual_hint

__all__ = ["WINDOW_HINT", "count_tokens", "list_indices", "score_messages", "context_messages"]

#: How to score a truncated text whole (the truncation warnings end with it).
WINDOW_HINT = "To score long texts whole, use long_texts='window' (CLI: --long_texts window)."


def count_tokens(n) -> str:
    """``"1 token"``, ``"1,024 tokens"``."""
    return f"{int(n):,} token" + ("" if int(n) == 1 else "s")


def list_indices(idx: Sequence, limit: int = 10) -> str:
    """The first ``limit`` items, then how many more."""
    shown = ", ".join(str(i) for i in idx[:limit])
    return shown + (f" and {len(idx) - limit} more" if len(idx) > limit else "")


def score_messages(stats, notes: dict, idf: bool, labels: Sequence[str] | None = None) -> list[str]:
    """The warnings of a result. Candidates are named by their index (from 0, as in the input list), or by
    ``labels[index]`` when given (e.g. ``"row 6"``: the app names a file's rows as its problems table does)."""
    msgs = []
    multi = any(e - s > 1 for s, e in stats.groups)
    index, cand_index = ("", "") if labels is not None else ("index ", "candidate index ")

    def tag(i: int) -> str:
        return labels[i] if labels is not None else str(i)

    def where(pairs: list[int]) -> list[str]:
        """The candidate and, with several references, which one (from 1, as the app counts them)."""
        if not multi:
            return [tag(int(stats.pair_candidate[p])) for p in pairs]
        return [f"{tag(int(stats.pair_candidate[p]))} (reference "
                f"{p - stats.groups[stats.pair_candidate[p]][0] + 1})" for p in pairs]

    empty_c = sorted({int(stats.pair_candidate[p]) for p in notes["empty_candidate"]})
    if empty_c:
        msgs.append(f"{len(empty_c)} empty candidate(s), scored 0: {index}{list_indices([tag(i) for i in empty_c])}.")
    if notes["empty_reference"]:
        empty = set(notes["empty_reference"])
        only = [p for p in notes["empty_reference"]  # every reference of the candidate is empty: 0
                if all(q in empty for q in range(*stats.groups[stats.pair_candidate[p]]))]
        among = [p for p in notes["empty_reference"] if p not in set(only)]
        if only:
            w = where(only)
            msgs.append(f"{len(w)} empty reference(s), scored 0: {cand_index}{list_indices(w)}.")
        if among:
            w = where(among)
            msgs.append(f"{len(w)} empty reference(s) among several: P, R and F1 against them are 0; the scores "
                        f"shown are the maxima over the other references: {cand_index}{list_indices(w)}.")
    if notes["degenerate_idf"]:
        w = where(notes["degenerate_idf"])
        msgs.append(
            f"idf is degenerate for {len(w)} pair(s) ({cand_index}{list_indices(w)}): every token of a side "
            "occurs in all reference sentences, so its weights sum to 0 and precision or recall is undefined "
            "(NaN; F1 is then 0, as in bert-score). Compute idf from more references, or turn idf off."
        )
    if stats.unk_id is not None:
        unk_c = [i for i, ids in enumerate(stats.cand_ids) if np.any(ids == stats.unk_id)]
        unk_r = [p for p, ids in enumerate(stats.ref_ids) if np.any(ids == stats.unk_id)]
        if unk_c or unk_r:
            parts = []
            if unk_c:
                parts.append(f"{len(unk_c)} candidate(s) ({index}{list_indices([tag(i) for i in unk_c])})")
            if unk_r:
                parts.append(f"{len(unk_r)} reference(s) ({cand_index}{list_indices(where(unk_r))})")

            msgs.append(" and ".join(parts) + " contain tokens unknown to the model ([UNK]): text outside its "
                        "languages (a script or symbols its vocabulary cannot represent), or a word too long for its "
                        "tokenizer (WordPiece reads a word of over 100 characters as [UNK]). [UNK] matches [UNK] "
                        f"closely, so these scores are not meaningful; for another language, {multilingual_hint()}")
    tc = np.flatnonzero(stats.cand_truncated).tolist()
    if tc:
        msgs.append(f"{len(tc)} candidate(s) longer than the model's maximum length were truncated, "
                    f"{count_tokens(stats.cand_truncated[tc].sum())} dropped from their tails: "
                    f"{index}{list_indices([tag(i) for i in tc])}. {WINDOW_HINT}")
    tr = np.flatnonzero(stats.ref_truncated).tolist()
    if tr:
        msgs.append(f"{len(tr)} reference(s) longer than the model's maximum length were truncated, "
                    f"{count_tokens(stats.ref_truncated[tr].sum())} dropped from their tails: "
                    f"{cand_index}{list_indices(where(tr))}. {WINDOW_HINT}")
    return msgs


def context_messages(report) -> list[str]:
    """What document context could not do (a :class:`~bertscore_viz.engine.results.ContextReport`, or None): the
    segments scored without a document id, and the sequences whose oldest context tokens were dropped."""
    if report is None:
        return []
    out = []
    if report.alone:
        out.append(f"context={report.context}: {report.alone:,} segment(s) have no document id and were scored "
                   "without context (give doc_ids, one per segment).")
    if report.cut:
        out.append(f"context={report.context}: the context of {report.cut:,} sequence(s) lost its oldest tokens to "
                   "fit the model's maximum length.")
    return out
