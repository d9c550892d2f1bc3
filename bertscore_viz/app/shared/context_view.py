"""A pair explained with its document context (docs/CONTEXT.md): the context each side was encoded after, greyed
before the segment's own text (context tokens are not matched), and the tokens whose match the context changed
(the same pair explained alone, compared)."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd
import streamlit as st

from bertscore_viz.app.shared.messages import escape_markdown
from bertscore_viz.app.state.widgets import fresh
from bertscore_viz.engine.results import PairExplanation
from bertscore_viz.errors import BertScoreVizError
from bertscore_viz.evaluation.documents import context_changes

__all__ = ["CHANGES_SHOWN", "MAX_PAGE_CONTEXT", "context_choice", "context_view", "readable"]

#: Rows of the "what the context changed" table.
CHANGES_SHOWN = 20
#: Most previous segments a page offers (the paper measured 1 to 3 and more rarely helps; the command line and
#: the API take more).
MAX_PAGE_CONTEXT = 3
_SOURCES = {"ref": "previous references, both sides (the paper's)", "own": "each side its own previous segments"}


def context_choice(doc_ids, settings, key: str, skey: str, unit: str = "segments", where: str = "The file"):
    """The "Document context" number and source, drawn when some of ``doc_ids`` (one per segment or output) names a
    document, with how many documents and how many are scored alone; returns ``settings`` with the chosen context
    (unchanged without documents or at 0)."""
    if doc_ids is None or not any(doc_ids):
        return settings
    docs = len({d for d in doc_ids if d})
    alone = sum(1 for d in doc_ids if not d)
    c1, c2 = st.columns([1, 2])
    k = c1.number_input("Document context: previous segments", 0, MAX_PAGE_CONTEXT, step=1, key=key,
                        **fresh(key, value=0),
                        help="Encode each segment after the previous segments of its document, so that a pronoun "
                             "or a term is read in its context; only the segment's own tokens are matched and "
                             "weighted (Vernikos et al., WMT 2022; docs/CONTEXT.md). 0: each segment alone, "
                             "bert-score's numbers. Another choice is another model pass.")
    source = c2.radio("Context from", list(_SOURCES), format_func=_SOURCES.get, key=skey, horizontal=True,
                      **fresh(skey, index=0), disabled=not k)
    st.caption(f"{where} names {docs:,} documents"
               + (f"; {alone:,} of {len(doc_ids):,} {unit} have no document id and are scored alone."
                  if alone else f"; all {len(doc_ids):,} {unit} have one."))
    return replace(settings, context=int(k), context_source=source) if k else settings


def readable(tokens) -> str:
    """Tokenizer pieces as text: ``##`` pieces joined to the previous one, ``Ġ`` / ``▁`` read as a space."""
    out = ""
    for t in tokens:
        if t.startswith("##"):
            out += t[2:]
        elif t[:1] in ("Ġ", "▁"):
            out += " " + t[1:]
        else:
            out += (" " if out else "") + t
    return out.strip()


def _side(label: str, context, text: str) -> str:
    ctx = escape_markdown(readable(context)) if context else "(none: the first segment of its document)"
    return f"- {label}: :gray[{ctx}] ‖ **{escape_markdown(text) or '(empty)'}**"


def context_view(pair: PairExplanation, explain_alone, key: str) -> None:
    """The pair's context and what it changed; nothing for a pair explained without context.

    ``explain_alone()``: the same pair explained by the page's scorer without context."""
    if not (pair.cand_context or pair.ref_context):
        return
    st.markdown("**Document context** (greyed: encoded before the segment, not matched or weighted):\n"
                + _side("Candidate", pair.cand_context, pair.candidate) + "\n"
                + _side("Reference", pair.ref_context, pair.reference))
    try:
        alone = explain_alone()
    except BertScoreVizError as exc:
        st.caption(f"The pair alone could not be explained: {escape_markdown(str(exc))}")
        return
    changes = context_changes(pair, alone)
    head = (f"With the context: F1 {pair.f1:.4f} (raw); alone: {alone.f1:.4f} "
            f"({pair.f1 - alone.f1:+.4f}).")
    if not changes:
        st.caption(head + " No token's match moved by 0.02 or more.")
        return
    st.caption(head + f" {len(changes)} token(s) whose best match or its similarity changed by 0.02 or more, "
                      "largest first:")
    frame = pd.DataFrame([{"Side": c.side, "Token": c.token, "Match alone": c.before, "Match with context": c.after,
                           "Similarity alone": c.sim_before, "Similarity with context": c.sim_after}
                          for c in changes[:CHANGES_SHOWN]])
    st.dataframe(frame, hide_index=True, width="stretch", key=f"{key}_context_changes",
                 column_config={c: st.column_config.NumberColumn(format="%.3f")
                                for c in ("Similarity alone", "Similarity with context")})
