"""BERTScore results into a Weights & Biases run: :func:`log_to_wandb`.

What is logged is :mod:`.content`'s (the same as for MLflow); here it becomes W&B's: the metrics in the run's summary,
the signature and its parts in its config, the tables as ``wandb.Table`` (``bertscore/segments``,
``bertscore/systems``) and as spreadsheet-safe CSV files of the run (``bertscore/<name>.csv``), and the heatmaps as
``wandb.Image`` (``bertscore/worst/...``).

The project, entity and mode are W&B's own settings (``WANDB_PROJECT``, ``WANDB_MODE=offline``, ``wandb login``) or
``project=``; nothing here overrides them. W&B tags hold 64 characters, less than a signature: the signature is in
the config (``bertscore.signature``). wandb is imported when a function is called, so this module loads without it.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from bertscore_viz.engine.options import ScoringOptions
from bertscore_viz.engine.results import ScoreResult
from bertscore_viz.engine.scorer import Scorer
from bertscore_viz.errors import InputError
from bertscore_viz.evaluation.compare import Comparison
from bertscore_viz.files.dataset import Dataset
from bertscore_viz.integrations import missing_package
from bertscore_viz.integrations.trackers.content import (
    DEFAULT_WORST,
    FOLDER,
    LoggedRun,
    TrackerContent,
    build_content,
    write_files,
)
from bertscore_viz.stats.analysis import Significance

__all__ = ["log_to_wandb"]



def _wandb():
    try:
        import wandb  # optional: only this module needs it
    except ImportError as exc:
        raise missing_package("log_to_wandb()", "wandb", exc) from exc
    return wandb


def _write(wandb, run, content: TrackerContent) -> None:
    run.config.update(content.params)
    run.summary.update(content.metrics)
    files_dir = Path(run.dir)
    for path in write_files(content, files_dir / FOLDER):
        if path.suffix != ".png":  # the figures go in as images below
            run.save(str(path), base_path=str(files_dir), policy="now")
    media: dict[str, object] = {f"{FOLDER}/{name}": wandb.Table(dataframe=frame)
                                for name, frame in content.tables.items()}
    with tempfile.TemporaryDirectory(prefix="bertscore-wandb-") as tmp:
        for name, png in content.figures.items():
            path = Path(tmp, name.replace("/", "__"))
            path.write_bytes(png)
            media[f"{FOLDER}/{name.removesuffix('.png')}"] = wandb.Image(str(path), caption=name)
        run.log(media)  # wandb.Image copies the file into the run's media folder here


def log_to_wandb(target: ScoreResult | Comparison, *, candidates=None, references=None,
                 dataset: Dataset | None = None, scorer: Scorer | ScoringOptions | None = None,
                 significance: Significance | None = None, worst: int = DEFAULT_WORST,
                 project: str | None = None, run_name: str | None = None) -> LoggedRun:
    """Log a :class:`ScoreResult` or a :class:`Comparison` to W&B: into the active run (``wandb.run``) if there is
    one, else into a new run that is finished here (with exit code 1 if logging fails).

    Args:
        target, candidates, references, dataset, scorer, significance, worst: as for
            :func:`~bertscore_viz.integrations.trackers.mlflow_writer.log_to_mlflow`.
        project: the project of a new run; default W&B's (``WANDB_PROJECT``).
        run_name: the name of a new run.

    Returns:
        :class:`LoggedRun`: the run's id and notes on what was not logged.

    Raises:
        MissingIntegrationError: wandb is not installed.
        InputError: see :func:`~bertscore_viz.integrations.trackers.content.build_content`; ``project`` or
            ``run_name`` while a run is active.
    """
    wandb = _wandb()
    content = build_content(target, candidates=candidates, references=references, dataset=dataset, scorer=scorer,
                            significance=significance, worst=worst)
    run = wandb.run
    if run is not None:
        if project is not None or run_name is not None:
            raise InputError(f"A W&B run is active ({run.id}): results go into it, so project= and run_name= do not "
                             "apply. Finish it first (wandb.finish()) to log into a new run.")
        _write(wandb, run, content)
        return LoggedRun("wandb", run.id, content.notes)
    run = wandb.init(project=project, name=run_name)
    try:
        _write(wandb, run, content)
    except BaseException:
        run.finish(exit_code=1)
        raise
    run.finish()
    return LoggedRun("wandb", run.id, content.notes)
