"""Drop-ins for code written against other BERTScore interfaces, computed by this package's engine (bert-score
0.3.13's numbers, our model cache and device handling); docs/INTEGRATIONS.md shows the one-line switch.

* 🤗 evaluate: ``evaluate.load(evaluate_metric_path())`` instead of ``evaluate.load("bertscore")``: the hub
  metric's ``compute()`` arguments and return keys, loaded offline from the script shipped in this package
  (``python -m bertscore_viz.integrations.evaluate_metric`` prints its path).
* torchmetrics: ``from bertscore_viz.integrations.torchmetrics_metric import BERTScore`` instead of
  ``from torchmetrics.text.bert import BERTScore``: ``update(preds, target)`` / ``compute()``, states that gather
  correctly across processes.

Where evaluation happens (issue 42; each module imports its framework only when used, so none is imported here):

* notebooks: :mod:`bertscore_viz.integrations.notebook` (``to_html``, ``show``, ``register``): every result shows
  itself as an HTML view in a Jupyter kernel, plotly.js embedded once (docs/NOTEBOOK.md);
* 🤗 datasets: ``bertscore_viz.integrations.hf_datasets.score_dataset`` adds P/R/F1 columns (docs/HARNESSES.md);
* lm-evaluation-harness: ``bertscore_viz.integrations.harness.lm_eval_metric`` (``bertscore``,
  ``bertscore_aggregate``, ``bertscore_results``, ``register``); lighteval:
  ``bertscore_viz.integrations.harness.lighteval_metric.bertscore_metrics`` (docs/HARNESSES.md);
* MLflow and Weights & Biases: :mod:`bertscore_viz.integrations.trackers` (docs/TRACKERS.md).

``evaluate`` and ``torchmetrics`` are optional: only the modules that need them import them, and a missing one is a
:class:`MissingIntegrationError` naming the package to install.
"""

from __future__ import annotations

from bertscore_viz.extras import MissingExtraError
from bertscore_viz.integrations.evaluate_metric import evaluate_metric_path

__all__ = ["MissingIntegrationError", "missing_package", "evaluate_metric_path"]


class MissingIntegrationError(MissingExtraError, ImportError):
    """An integration whose framework (``evaluate``, ``torchmetrics``) is not installed; an ImportError too, so
    ``except ImportError`` catches it."""


def missing_package(what: str, package: str, exc: ImportError) -> MissingIntegrationError:
    """The error to raise when ``package`` cannot be imported for ``what``, naming the pip command."""
    return MissingIntegrationError(f"{what} needs the {package} package, which is not installed ({exc}). Install it "
                                   f"with `pip install {package}`.")
