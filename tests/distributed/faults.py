"""Fault injection for the Ray tests; nothing of it is in the package.

:func:`inject` replaces the actor classes the jobs module starts with subclasses that fail on a chosen block, as
written in a marker file: ``N`` = the first worker to reach block N dies (``os._exit``), ``raise:N`` = its first
call raises (both once: the file is removed first), ``always:N`` = every call raises (a block that cannot be
scored). The subclasses are sent to the workers by value (this module is not importable there).
"""

from __future__ import annotations

import os
import sys

import pytest
import ray.cloudpickle

from bertscore_viz.distributed import jobs, workers


def fail_once(path: str, index: int) -> None:
    if not os.path.exists(path):
        return
    try:
        with open(path) as fh:
            text = fh.read().strip()
        mode, _, target = text.rpartition(":")
        if index != int(target or 0):
            return
        if mode == "always":
            raise RuntimeError(f"injected failure in block {index}, on every attempt")
        os.remove(path)
    except (OSError, ValueError):
        return
    if mode == "raise":
        raise RuntimeError(f"injected failure in block {index}")
    os._exit(1)


def faulty(base: type, marker: str) -> type:
    """``base`` whose ``score(block, ...)`` first applies the marker file's fault."""

    class Faulty(base):
        def score(self, block, *args, **kwargs):
            fail_once(marker, int(block))
            return super().score(block, *args, **kwargs)

    Faulty.__name__ = Faulty.__qualname__ = f"Faulty{base.__name__}"
    return Faulty


def inject(monkeypatch: pytest.MonkeyPatch, marker) -> None:
    """Until ``monkeypatch`` is undone, jobs start actors that apply the fault in the file ``marker``."""
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    monkeypatch.setattr(jobs, "BlockScorer", faulty(workers.BlockScorer, str(marker)))
    monkeypatch.setattr(jobs, "BaselineBlock", faulty(workers.BaselineBlock, str(marker)))
