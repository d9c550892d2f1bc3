"""``--log-to mlflow|wandb`` of ``score`` and ``compare``: the results also logged to an experiment tracker
(:mod:`bertscore_viz.integrations.trackers`, imported only when asked: it loads the framework), configured by the
tracker's own environment (``MLFLOW_TRACKING_URI``, ``WANDB_PROJECT``, ``WANDB_MODE``; docs/TRACKERS.md). What is
said goes to stderr, so ``--json`` stays one JSON object."""

from __future__ import annotations

import importlib
import sys

from bertscore_viz.files.fileio import terminal_safe

__all__ = ["log_results"]


def log_results(target: str, **what) -> None:
    """Log ``what`` (``result=`` with ``candidates=``/``references=``, or ``comparison=`` with ``dataset=``, and
    ``scorer=``, ``significance=``) to ``target`` and say where it went."""
    trackers = importlib.import_module("bertscore_viz.integrations.trackers")
    logged = trackers.log_run(target, **what)
    for note in logged.notes:
        print(f"Note: {terminal_safe(note)}", file=sys.stderr)
    print(f"Logged to {logged.tracker}: run {terminal_safe(logged.run_id)}", file=sys.stderr)
