"""The deployment's bounds on the work one request of a page may ask for, as the pages read them, and how a message
names each: every size a page accepts is a setting of ``serving/config.py`` with a default (docs/DEPLOY.md,
docs/BOUNDARIES.md), so an operator can lower or raise it and a user who meets it is told which one it is."""

from __future__ import annotations

from bertscore_viz.serving.config import policy, setting_name

__all__ = ["bound", "named"]


def bound(name: str):
    """This server's value of the setting ``name`` (``"figure_tokens"``)."""
    return getattr(policy(), name)


def named(name: str) -> str:
    """How a message names the setting: ``"(server setting BERTSCORE_VIZ_FIGURE_TOKENS)"``."""
    return f"(server setting {setting_name(name)})"
