"""``bertscore-viz evaluate-path``: the path to give ``evaluate.load`` for this package's BERTScore metric
(docs/INTEGRATIONS.md)."""

from __future__ import annotations

from bertscore_viz.integrations import evaluate_metric_path

__all__ = ["run"]


def run(args) -> int:
    print(evaluate_metric_path())
    return 0
