"""Streamlit caching in one place: the model as a resource, scorers built from settings.

The engine keeps its own thread-safe embedding cache (shared by every browser session of the process), so a
changed layer, idf or rescaling setting costs no model pass.
"""

from __future__ import annotations

import streamlit as st

from ..baseline import BaselineTable
from ..encoder import get_encoder
from ..models import resolve_model
from ..results import Signature
from ..scorer import Scorer


@st.cache_resource(max_entries=3, show_spinner="Loading the model…")
def _encoder(name: str, source: str):
    return get_encoder(resolve_model(source if name != source else name))


def model_info(name: str, source: str) -> dict:
    """Load (once) and describe a model: number of layers, maximum length."""
    enc = _encoder(name, source)
    return {"num_layers": enc.num_layers, "max_length": enc.max_length, "name": enc.spec.name}


def custom_baseline(settings) -> BaselineTable | None:
    """A baseline computed or uploaded in this browser session for the current model and language."""
    table = st.session_state.get("custom_baselines", {}).get((settings.lang, resolve_model(settings.model).name))
    return table


def set_custom_baseline(lang: str, model: str, table: BaselineTable) -> None:
    """Use ``table`` for (lang, model) on every page of this browser session."""
    st.session_state.setdefault("custom_baselines", {})[(lang, model)] = table


def scorer(settings, rescale: bool | None = None) -> Scorer:
    """A Scorer for the settings (cheap: the model is shared). Raises the engine's errors (e.g. no baseline)."""
    spec = resolve_model(settings.model)
    _encoder(spec.name, spec.source)
    return Scorer(model=spec, layer=settings.resolved_layer(), idf=settings.idf,
                  rescale_with_baseline=settings.rescale if rescale is None else rescale, lang=settings.lang,
                  baseline_table=custom_baseline(settings))


def signature_text(settings) -> str:
    spec = resolve_model(settings.model)
    import transformers

    custom = custom_baseline(settings) is not None
    return str(Signature(spec.name, settings.resolved_layer(), settings.idf, settings.rescale, custom, "fp32",
                         transformers.__version__))
