"""Small typed values the pages keep in the session, read by name (``kept.key``, ``kept.value``), never by
position: a value kept with the key it was computed for, and the walkthrough's kept computation."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

__all__ = ["Keyed", "KeptWalk"]

T = TypeVar("T")


@dataclass(frozen=True)
class Keyed(Generic[T]):
    """A value kept with the key it was computed for (a later run reuses it while the key is the same)."""

    key: Any
    value: T


@dataclass(frozen=True)
class KeptWalk:
    """The walkthrough of a batch: what it depends on (pairs, signature, model source, baseline), the
    :class:`~bertscore_viz.engine.walkthrough.Walkthrough`, and the candidate gradients computed so far (by
    pair)."""

    key: Any
    walk: Any
    gradients: dict
