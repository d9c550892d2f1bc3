"""``bertscore-viz check-deploy [--exec CMD ...]``: the deployment check (:mod:`bertscore_viz.serving.check`)."""

from __future__ import annotations

from bertscore_viz.serving.check import main

__all__ = ["run"]


def run(args) -> int:
    return main(list(args.exec_command))
