"""BERTScore results into an MLflow run: :func:`log_to_mlflow`.

What is logged is :mod:`.content`'s (the same as for W&B); here it becomes MLflow's: ``log_metrics``, ``log_params``,
``set_tags``, the tables with ``log_table`` (``bertscore/<name>.json``, shown as tables in the run's artifacts) and
as spreadsheet-safe CSVs, and the heatmaps as PNG artifacts, all under the run's ``bertscore/`` folder.

The tracking server or store is MLflow's own choice: ``MLFLOW_TRACKING_URI`` (or ``mlflow.set_tracking_uri``),
else MLflow's default (``sqlite:///mlflow.db`` in the working directory since MLflow 3.7); the experiment likewise
(``MLFLOW_EXPERIMENT_NAME``, ``mlflow.set_experiment``, or ``experiment=``). mlflow is imported when a function is
called, so this module loads without it.
"""

from __future__ import annotations

import tempfile
from contextlib import nullcontext
from pathlib import Path

from bertscore_viz.engine.options import ScoringOptions
from bertscore_viz.engine.results import ScoreResult
from bertscore_viz.engine.scorer import Scorer
from bertscore_viz.errors import InputError
from bertscore_viz.evaluation.compare import Comparison
from bertscore_viz.files.dataset import Dataset
from bertscore_viz.integrations import missing_package
from bertscore_viz.integrations.trackers.content import DEFAULT_WORST, FOLDER, LoggedRun, build_content, write_files
from bertscore_viz.stats.analysis import Significance

__all__ = ["log_to_mlflow"]



def _mlflow():
    try:
        import mlflow  # optional: only this module needs it
    except ImportError as exc:
        raise missing_package("log_to_mlflow()", "mlflow", exc) from exc
    return mlflow


def _experiment_id(mlflow, name: str) -> str:
    client = mlflow.MlflowClient()
    found = client.get_experiment_by_name(name)
    return found.experiment_id if found is not None else client.create_experiment(name)


def log_to_mlflow(target: ScoreResult | Comparison, *, candidates=None, references=None,
                  dataset: Dataset | None = None, scorer: Scorer | ScoringOptions | None = None,
                  significance: Significance | None = None, worst: int = DEFAULT_WORST,
                  experiment: str | None = None, run_name: str | None = None) -> LoggedRun:
    """Log a :class:`ScoreResult` or a :class:`Comparison` to MLflow: into the active run if there is one, else into
    a new run that is ended here (marked failed if logging fails).

    Args:
        target: the scores.
        candidates, references: a ScoreResult's texts, as given to ``score`` (the segment table's texts).
        dataset: a Comparison's texts (the :class:`Dataset` it was scored from).
        scorer: the Scorer or ScoringOptions that produced the scores: it explains the worst pairs for the heatmaps.
        significance: a Comparison's analysis (default: the Compare page's, with the top system as baseline).
        worst: how many lowest-F1 pairs (of each system) to draw; 0 for none.
        experiment: the experiment of a new run (created if missing); default MLflow's (``MLFLOW_EXPERIMENT_NAME``).
        run_name: the name of a new run.

    Returns:
        :class:`LoggedRun`: the run's id and notes on what was not logged.

    Raises:
        MissingIntegrationError: mlflow is not installed.
        InputError: see :func:`~bertscore_viz.integrations.trackers.content.build_content`; ``experiment`` or
            ``run_name`` while a run is active (the run is the active one).
    """
    mlflow = _mlflow()
    content = build_content(target, candidates=candidates, references=references, dataset=dataset, scorer=scorer,
                            significance=significance, worst=worst)
    active = mlflow.active_run()
    if active is not None and (experiment is not None or run_name is not None):
        raise InputError(f"An MLflow run is active ({active.info.run_id}): results go into it, so experiment= and "
                         "run_name= do not apply. End it first (mlflow.end_run()) to log into a new run.")
    start = nullcontext(active) if active is not None else mlflow.start_run(
        run_name=run_name, experiment_id=_experiment_id(mlflow, experiment) if experiment is not None else None)
    with start as run:
        mlflow.log_metrics(content.metrics)
        mlflow.log_params(content.params)
        mlflow.set_tags(content.tags)
        for name, frame in content.tables.items():
            mlflow.log_table(frame, artifact_file=f"{FOLDER}/{name}.json")
        with tempfile.TemporaryDirectory(prefix="bertscore-mlflow-") as tmp:
            write_files(content, Path(tmp))
            mlflow.log_artifacts(tmp, artifact_path=FOLDER)
        return LoggedRun("mlflow", run.info.run_id, content.notes)
