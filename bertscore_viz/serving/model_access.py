"""Which models a browser user may choose on this server: the offered list (the operator's, or the bundled model
and the installed catalog models), and the check of a user's choice (:func:`check_model`), whose messages never
name a server path."""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

from huggingface_hub import try_to_load_from_cache

from bertscore_viz.errors import ModelError
from bertscore_viz.models import catalog
from bertscore_viz.models.spec import (
    BUNDLED_ALIASES,
    BUNDLED_MODEL_NAME,
    MODEL_LAYERS,
    ModelSpec,
    resolve_model,
)
from bertscore_viz.serving.config import Policy

__all__ = ["ModelNotAllowed", "offered_models", "check_model"]

log = logging.getLogger("bertscore_viz.app")


class ModelNotAllowed(ModelError):
    """A model that this deployment does not offer. The message names no server path."""


def _installed_catalog() -> list[str]:
    """Names of the offline catalog models installed on this server (``models install NAME``)."""
    try:
        return [e.name for e in catalog.catalog() if e.kind == "offline" and catalog.installed_path(e)]
    except (OSError, ModelError):
        return []


def offered_models(pol: Policy) -> dict[str, str]:
    """``{label shown to users: what resolve_model receives}`` for the models this server offers."""
    out: dict[str, str] = {}
    if not pol.models:
        out[BUNDLED_MODEL_NAME] = BUNDLED_MODEL_NAME
        for name in _installed_catalog():
            out.setdefault(str(name), str(name))
        return out
    for entry in pol.models:
        label, sep, target = entry.partition("=")
        label, target = label.strip(), (target.strip() if sep else label.strip())
        if label in BUNDLED_ALIASES:
            label = BUNDLED_MODEL_NAME
        out.setdefault(label, target)
    return out


def _looks_like_path(text: str) -> bool:
    return text.startswith((".", "/", "~", "\\")) or text.count("/") > 1 or "\\" in text or ":" in text


def _hub_cached(name: str) -> bool:
    """The hub model's config is in this server's Hugging Face cache (then it loads with ``local_files_only``)."""
    try:
        found = try_to_load_from_cache(name, "config.json")
    except Exception:  # noqa: BLE001  an invalid repo id: not something this server holds
        return False
    return isinstance(found, str)


def _shown(text: str) -> str:
    """What the user typed, shortened for a message (the only text of theirs a message echoes)."""
    return text if len(text) <= 60 else text[:57] + "..."


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:  # a name too long for the file system, a permission error: not a usable directory
        return False


def _real_name(spec: ModelSpec) -> ModelSpec:
    """A local model under the name its weights have, not the path or label it was reached by: the catalog entry
    whose name is the directory's (its default layer too), a Hugging Face cache snapshot's hub name, else the
    directory's name. Signatures and baseline files (``baselines/<lang>/<name>.tsv``) use this name."""
    if spec.bundled or not spec.local:
        return spec
    path = Path(spec.source)
    name = path.name
    if path.parent.name == "snapshots" and path.parent.parent.name.startswith("models--"):
        name = path.parent.parent.name[len("models--"):].replace("--", "/")
    entry = catalog.get_entry(name)
    if entry is not None:
        layer = entry.default_layer if entry.default_layer is not None else spec.default_layer
        return replace(spec, name=entry.name, default_layer=layer)
    layer = MODEL_LAYERS.get(name, spec.default_layer)
    return replace(spec, name=name or spec.name, default_layer=layer)


def _hub_spec(spec: ModelSpec, pol: Policy, shown: str, listing: str) -> ModelSpec:
    """A hub name as this server may load it: with downloads off, only from its Hugging Face cache and with
    ``local_files_only`` (``local=True``: the encoder then never opens a connection, whatever HF_HUB_OFFLINE
    says); with downloads on, by name (transformers downloads it on first use)."""
    if pol.allow_downloads:
        return spec
    if not _hub_cached(spec.source):
        raise ModelNotAllowed(f"The hub model {shown!r} is not on this server, and downloads are turned off here. "
                              f"Choose one of: {listing}, or a model already on this server.")
    return replace(spec, local=True)


def _unusable(label: str, what: str, exc: Exception) -> ModelError:
    """A plain message for a model that cannot be used; the engine's (which may name server paths) goes to the
    server log."""
    log.error("model %r (%s) cannot be used: %s", label, what, exc)
    return ModelError(f"The model {_shown(label)!r} cannot be used on this server. Choose another model; whoever "
                      "runs the server finds the reason in its log.")


def check_model(text: str | None, pol: Policy) -> ModelSpec:
    """The :class:`ModelSpec` of what a browser user chose, if this server offers it.

    A name on the list resolves to its operator-given source, under the model's real name (catalog entry or
    directory name: signatures, baselines and the default layer follow it; the operator's label is for display
    only). Anything else is free text (a directory of the server or a hub name), allowed only with
    ``allow_custom_models``; ``~`` is not expanded and a relative path is relative to the server's working
    directory. A hub name (listed or typed) not already in this server's Hugging Face cache needs
    ``allow_downloads``; with downloads off it loads with ``local_files_only``. Nothing is looked up on disk for a
    name that is not allowed.

    Raises:
        ModelNotAllowed: naming what was asked for (shortened) and what is offered, never a server path.
        ModelError: a model that is allowed but cannot be used, naming only what the user chose (the reason goes
            to the server log).
    """
    typed = "" if text is None else str(text).strip()
    if not typed or typed in BUNDLED_ALIASES:
        typed = BUNDLED_MODEL_NAME
    offered = offered_models(pol)
    shown = _shown(typed)
    listing = ", ".join(offered) or "none"
    if typed in offered:
        try:
            spec = resolve_model(offered[typed])  # the operator's own text: their paths, their home directory
        except ModelError as exc:
            raise _unusable(typed, f"offered as {offered[typed]!r}", exc) from None
        return _real_name(spec) if spec.local else _hub_spec(spec, pol, shown, listing)
    if not pol.allow_custom_models:
        raise ModelNotAllowed(f"The model {shown!r} is not offered on this server. Choose one of: {listing}. "
                              "Other models (a directory or a hub name) are turned off here; whoever runs the "
                              "server can allow them (docs/DEPLOY.md).")
    if typed.startswith("~"):
        raise ModelError(f"{shown!r}: give the full path of a model directory on this server; '~' is not "
                         "expanded here.")
    path = Path(typed)
    if _is_dir(path):
        try:
            has_config = (path / "config.json").is_file()
        except OSError:
            has_config = False
        if not has_config:
            raise ModelError(f"The directory {shown!r} holds no config.json, so it is not a Hugging Face model "
                             "directory. Point to the folder that contains config.json and the weights.")
    elif _looks_like_path(typed):
        raise ModelError(f"The model directory {shown!r} does not exist on this server. Check the path, or give "
                         "a hub name.")
    try:
        spec = resolve_model(typed)
    except ModelError as exc:  # e.g. a catalog model that is not installed: the message names its install path
        raise _unusable(typed, "typed by a user", exc) from None
    return _real_name(spec) if spec.local else _hub_spec(spec, pol, shown, listing)
