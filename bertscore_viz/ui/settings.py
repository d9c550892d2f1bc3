"""The sidebar shared by every page, and the settings it produces.

``app.py`` calls :func:`sidebar` once per run; pages call :func:`current_settings`, which also works when a page
runs on its own (tests), falling back to the defaults.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import streamlit as st

from ..errors import BertScoreVizError
from ..models import BUNDLED_MODEL_NAME, resolve_model
from . import cache

OTHER = "Other: local directory or hub name"
LANGS = ["en", "cs", "de", "en-sci", "es", "et", "fi", "fr", "it", "lv", "pt", "zh"]


@dataclass(frozen=True)
class Settings:
    """What the sidebar selects. ``model`` is what the engine's ``resolve_model`` takes."""

    model: str = BUNDLED_MODEL_NAME
    layer: int | None = None
    idf: bool = False
    rescale: bool = False
    lang: str = "en"
    show_special: bool = False

    def resolved_layer(self) -> int:
        if self.layer is not None:
            return self.layer
        return resolve_model(self.model).default_layer or 0


def _default_settings() -> Settings:
    return Settings()


def current_settings() -> Settings:
    """The settings chosen in the sidebar (defaults when the sidebar has not run)."""
    return st.session_state.get("settings") or _default_settings()


def sidebar() -> Settings:
    """Render the settings sidebar and return (and store) the settings."""
    with st.sidebar:
        st.header("Settings")
        choice = st.selectbox("Model", [BUNDLED_MODEL_NAME + " (bundled)", OTHER], key="model_choice",
                              help="The bundled model runs offline. Others: a local Hugging Face model directory, "
                                   "or a hub name (needs internet or the Hugging Face cache).")
        model = BUNDLED_MODEL_NAME
        if choice == OTHER:
            typed = st.text_input("Model path or hub name", key="model_other",
                                  placeholder="/path/to/model or roberta-large").strip()
            if typed:
                model = typed
        settings = Settings(model=model)
        try:
            spec = resolve_model(model)
            info = cache.model_info(spec.name, spec.source)
        except BertScoreVizError as exc:
            st.error(str(exc))
            st.caption("Using the bundled model until this is fixed.")
            spec = resolve_model(None)
            info = cache.model_info(spec.name, spec.source)
            settings = Settings()
        n_layers = info["num_layers"]
        default = spec.default_layer if spec.default_layer is not None else n_layers
        default = min(default, n_layers)
        layer_key = f"layer::{spec.name}"
        layer = st.slider("Layer", 0, n_layers, value=default, key=layer_key,
                          help=f"hidden_states index, 0 = embeddings. Default for this model: {default}.")
        idf = st.toggle("idf weighting", key="idf", help="Weight tokens by inverse document frequency computed "
                        "from the references (of the uploaded set, or of the pair).")
        rescale = st.toggle("Rescale with baseline", key="rescale",
                            help="(x - b) / (1 - b) with the baseline of this model, language and layer.")
        lang = st.selectbox("Language (for baselines)", LANGS, key="lang")
        settings = replace(settings, layer=int(layer), idf=bool(idf), rescale=bool(rescale), lang=lang)
        sig = cache.signature_text(settings)
        st.caption("Signature")
        st.code(sig, language=None, wrap_lines=True)
    st.session_state["settings"] = settings
    return settings
