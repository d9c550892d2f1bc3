"""BERTScore results into experiment trackers: MLflow (:func:`log_to_mlflow`) and Weights & Biases
(:func:`log_to_wandb`); :func:`log_run` picks one by name, for ``--log-to mlflow|wandb``. docs/TRACKERS.md shows both.

Either takes a :class:`~bertscore_viz.engine.results.ScoreResult` (with its texts) or a
:class:`~bertscore_viz.evaluation.compare.Comparison` (with its dataset) and logs the same things under the same
names (:mod:`.content`): the mean P, R and F1 (per system for a comparison, with its interval, rank and cluster), the
signature and its parts, the per-segment table and the comparison's system table (as tables and as
spreadsheet-safe CSVs), and the heatmaps of the worst pairs as PNG images.

mlflow and wandb are optional: each writer imports its framework when called, and a missing one is a
:class:`~bertscore_viz.integrations.MissingIntegrationError` naming the package to install.
"""

from __future__ import annotations

from bertscore_viz.engine.options import ScoringOptions
from bertscore_viz.engine.results import ScoreResult
from bertscore_viz.engine.scorer import Scorer
from bertscore_viz.errors import InputError
from bertscore_viz.evaluation.compare import Comparison
from bertscore_viz.files.dataset import Dataset
from bertscore_viz.integrations.trackers.content import DEFAULT_WORST, LoggedRun
from bertscore_viz.integrations.trackers.mlflow_writer import log_to_mlflow
from bertscore_viz.integrations.trackers.wandb_writer import log_to_wandb
from bertscore_viz.stats.analysis import Significance

__all__ = ["TRACKERS", "LoggedRun", "log_run", "log_to_mlflow", "log_to_wandb"]

#: The names ``--log-to`` takes.
TRACKERS = ("mlflow", "wandb")


def log_run(target: str, *, result: ScoreResult | None = None, comparison: Comparison | None = None,
            candidates=None, references=None, dataset: Dataset | None = None,
            scorer: Scorer | ScoringOptions | None = None, significance: Significance | None = None,
            worst: int = DEFAULT_WORST, run_name: str | None = None) -> LoggedRun:
    """Log ``result`` (a ``score``) or ``comparison`` (a ``compare``) to the tracker named ``target``, a new run
    or the active one, where the tracker's own settings say (``MLFLOW_TRACKING_URI``, ``MLFLOW_EXPERIMENT_NAME``;
    ``WANDB_PROJECT``, ``WANDB_MODE``). The other arguments are :func:`log_to_mlflow`'s.

    Raises:
        InputError: an unknown tracker; neither or both of ``result`` and ``comparison``.
        MissingIntegrationError: the tracker's package is not installed.
    """
    if target not in TRACKERS:
        raise InputError(f"Unknown tracker {target!r}: --log-to takes {' or '.join(TRACKERS)}.")
    what: ScoreResult | Comparison
    if result is not None and comparison is None:
        what = result
    elif comparison is not None and result is None:
        what = comparison
    else:
        raise InputError("log_run() logs one thing: give result= (a ScoreResult) or comparison= (a Comparison).")
    log = log_to_mlflow if target == "mlflow" else log_to_wandb
    return log(what, candidates=candidates, references=references, dataset=dataset, scorer=scorer,
               significance=significance, worst=worst, run_name=run_name)
