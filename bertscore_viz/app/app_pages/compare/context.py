"""Document context on the Compare page (docs/CONTEXT.md): when the dataset names documents (a ``doc_id`` column,
mt-metrics-eval's ``documents/``), how many previous segments of its document each segment is encoded with; the
page's settings for the model pass then carry it (its own model pass, its signature), and the page says how many
segments had no document and were scored alone."""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from bertscore_viz.app.state.widgets import fresh
from bertscore_viz.files.dataset import Dataset

__all__ = ["MAX_PAGE_CONTEXT", "context_control"]

#: Most previous segments the page offers (the paper measured 1 to 3 and more rarely helps; the command line and
#: the API take more).
MAX_PAGE_CONTEXT = 3
_SOURCES = {"ref": "previous references, both sides (the paper's)", "own": "each side its own previous segments"}


def context_control(ds: Dataset, fkey: str, settings):
    """The settings with the chosen document context (unchanged when the dataset names no documents)."""
    if ds.doc_ids is None or not any(ds.doc_ids):
        return settings
    docs = len({d for d in ds.doc_ids if d})
    alone = sum(1 for d in ds.doc_ids if not d)
    key, skey = f"cmp_context_{fkey}", f"cmp_context_src_{fkey}"
    c1, c2 = st.columns([1, 2])
    k = c1.number_input("Document context: previous segments", 0, MAX_PAGE_CONTEXT, step=1, key=key,
                        **fresh(key, value=0),
                        help="Encode each segment after the previous segments of its document, so that a pronoun "
                             "or a term is read in its context; only the segment's own tokens are matched and "
                             "weighted (Vernikos et al., WMT 2022; docs/CONTEXT.md). 0: each segment alone, "
                             "bert-score's numbers. Another choice is another model pass.")
    source = c2.radio("Context from", list(_SOURCES), format_func=_SOURCES.get, key=skey, horizontal=True,
                      **fresh(skey, index=0), disabled=not k)
    st.caption(f"The file names {docs:,} documents"
               + (f"; {alone:,} of {ds.n_segments:,} segments have no document id and are scored alone."
                  if alone else "; every segment has one."))
    return replace(settings, context=int(k), context_source=source) if k else settings
