"""``python -m bertscore_viz.integrations.evaluate_metric`` prints the path to pass to ``evaluate.load``."""

from bertscore_viz.integrations.evaluate_metric import evaluate_metric_path

__all__: list[str] = []

if __name__ == "__main__":
    print(evaluate_metric_path())
