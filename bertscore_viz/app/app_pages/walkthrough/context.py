"""The walkthrough's last step: one document-context window (docs/CONTEXT.md). The chosen pair is encoded after the
previous pair's reference, as if the batch were one document in order: the sequence the model reads, position by
position, the context greyed and the pair's own tokens marked; only the own tokens are matched, so P, R and F1
come from them, with vectors that have read the context."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from bertscore_viz.app.shared.context_view import readable
from bertscore_viz.app.shared.explain_view import explain_pair
from bertscore_viz.app.shared.messages import escape_markdown, show_error
from bertscore_viz.errors import BertScoreVizError

__all__ = ["context_step", "window_table"]


def window_table(pair) -> pd.DataFrame:
    """The reference side's window, position by position: its special prefix, the context (each previous segment's
    content and a separator), then its own content and suffix."""
    side = pair.ref
    n_prefix = 1 if len(side.tokens) and bool(side.special[0]) else 0
    rows = [(t, "own (matched)") for t in side.tokens[:n_prefix]]
    rows += [(t, "context (not matched)") for t in pair.ref_context]
    rows += [(t, "own (matched)") for t in side.tokens[n_prefix:]]
    return pd.DataFrame([{"Position": p, "Token": t, "Part": part} for p, (t, part) in enumerate(rows)])


def context_step(settings, candidates: list[str], references: list[str], i: int) -> None:
    """Step 11: pair ``i`` encoded after the previous pair's reference (pair 0 after the last one's)."""
    st.header("11. Document context: one window")
    if len(references) < 2:
        st.caption("With two or more pairs, this step encodes the chosen pair after the previous pair's reference, "
                   "as a document's previous segment (docs/CONTEXT.md).")
        return
    prev = references[i - 1] if i > 0 else references[-1]
    try:
        pair = explain_pair(settings, candidates[i], references[i], cand_context=[prev], ref_context=[prev])
        alone = explain_pair(settings, candidates[i], references[i])
    except BertScoreVizError as exc:
        show_error(exc)
        return
    st.markdown("With `context=1`, the reference (and, as the paper does, the candidate) is encoded after the "
                f"previous segment's reference, :gray[{escape_markdown(readable(pair.ref_context))}]. The model "
                "reads one sequence; the vectors of the pair's own positions are kept and matched as before, the "
                "context's are dropped: so idf, the special tokens' weight 0 and the matching are unchanged, and "
                f"only the vectors moved. F1 {pair.f1:.4f} with the context, {alone.f1:.4f} alone "
                f"({pair.f1 - alone.f1:+.4f}).")
    st.dataframe(window_table(pair), hide_index=True, width="stretch", key="walk_context_window",
                 height=min(420, 38 + 35 * (len(pair.ref.tokens) + len(pair.ref_context))))
