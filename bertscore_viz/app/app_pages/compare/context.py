"""Document context on the Compare page (docs/CONTEXT.md): when the dataset names documents (a ``doc_id`` column,
mt-metrics-eval's ``documents/``), how many previous segments of its document each segment is encoded with; the
page's settings for the model pass then carry it (its own model pass, its signature), and the page says how many
segments had no document and were scored alone."""

from __future__ import annotations

from bertscore_viz.app.shared.context_view import MAX_PAGE_CONTEXT, context_choice
from bertscore_viz.files.dataset import Dataset

__all__ = ["MAX_PAGE_CONTEXT", "context_control"]


def context_control(ds: Dataset, fkey: str, settings):
    """The settings with the chosen document context (unchanged when the dataset names no documents)."""
    return context_choice(ds.doc_ids, settings, f"cmp_context_{fkey}", f"cmp_context_src_{fkey}")
