"""The optional parts of the package and the extra that installs each (``pip install 'bertscore-viz[app]'``).

The core (``pip install bertscore-viz``) scores: the engine, the loss, the Python API and the CLI's scoring
commands. The app, its figures, tables and statistics need ``[app]``; scoring on a cluster needs ``[ray]``.
"""

from __future__ import annotations

import importlib.util

from bertscore_viz.errors import BertScoreVizError

__all__ = ["EXTRAS", "MissingExtraError", "extra_for", "require", "missing_extra_message"]

#: Extra -> the top-level modules it brings (what an ImportError names).
EXTRAS: dict[str, tuple[str, ...]] = {
    "app": ("streamlit", "plotly", "matplotlib", "pandas", "pyarrow", "sacrebleu", "scipy"),
    "ray": ("ray",),
    "evaluate": ("evaluate",),
    "torchmetrics": ("torchmetrics",),
}


class MissingExtraError(BertScoreVizError):
    """A feature whose optional dependencies are not installed; the message names the extra to install."""


def extra_for(module: str | None) -> str | None:
    """The extra that brings ``module`` (a dotted name counts by its top level), or None if none does."""
    top = (module or "").split(".")[0]
    return next((extra for extra, modules in EXTRAS.items() if top in modules), None)


def missing_extra_message(what: str, module: str, extra: str) -> str:
    return (f"{what} needs the optional dependencies of bertscore-viz[{extra}] ({module} is not installed): "
            f"pip install 'bertscore-viz[{extra}]'")


def require(what: str, extra: str) -> None:
    """Raise :class:`MissingExtraError` naming ``extra`` when any of its modules is missing (before any work)."""
    for module in EXTRAS[extra]:
        if importlib.util.find_spec(module) is None:
            raise MissingExtraError(missing_extra_message(what, module, extra))
