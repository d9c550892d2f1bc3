"""Versions of installed packages, read from their metadata (no import of the package itself)."""

from __future__ import annotations

from importlib.metadata import version

__all__ = ["package_version", "__version__"]


def package_version(name: str) -> str:
    """The installed version of distribution ``name`` without a local suffix: ``"2.13.0"`` for torch
    ``2.13.0+cpu``, ``"5.23.0"`` for transformers.

    Raises:
        importlib.metadata.PackageNotFoundError: ``name`` is not installed.
    """
    return version(name).split("+")[0]


#: This package's version (as pyproject.toml's); ``bertscore_viz.__version__``.
__version__ = "0.1.0"
