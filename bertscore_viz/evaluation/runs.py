"""Earlier runs beside new scores: a kept run's systems added to a :class:`~bertscore_viz.evaluation.compare.Comparison`
as ``<system> @ <run name>``, with the run's stored per-segment numbers (no model pass), so that the system table,
the significance tests, the clusters and the intervals treat them as systems scored now; and a comparison saved as
a run. The run's file: :mod:`bertscore_viz.files.runs`; docs/RUNS.md."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from bertscore_viz.engine.results import ScoreResult
from bertscore_viz.errors import InputError
from bertscore_viz.evaluation.compare import Comparison, counted_mean
from bertscore_viz.files.dataset import Dataset
from bertscore_viz.files.runs import Run, compatibility, references_hash, save_run
from bertscore_viz.stats.ranking import rank_order

__all__ = ["run_system_name", "with_runs", "save_comparison", "run_problems"]


def run_system_name(system: str, run: Run) -> str:
    """How an earlier run's system is named beside the new ones: ``<system> @ <run name>``."""
    return f"{system} @ {run.name}"


def run_problems(run: Run, dataset: Dataset, comparison: Comparison) -> list[str]:
    """:func:`~bertscore_viz.files.runs.compatibility` of ``run`` with the comparison's signature and the dataset's
    references and segments: empty when the run can be added."""
    return compatibility(run, comparison.signature, references_hash(dataset.references), dataset.n_segments)


def _unique(name: str, taken) -> str:
    out, k = name, 2
    while out in taken:
        out, k = f"{name} #{k}", k + 1
    return out


def with_runs(dataset: Dataset, comparison: Comparison, runs: list[Run]) -> tuple[Dataset, Comparison]:
    """The dataset and comparison with every system of ``runs`` added (its outputs, its stored per-segment scores
    under the comparison's signature), systems re-ranked best first. A run given twice is added once.

    Raises:
        InputError: a run scored with another signature, on other references or another number of segments,
            quoting :func:`~bertscore_viz.files.runs.compatibility`'s sentences.
    """
    problems = [s for run in runs for s in run_problems(run, dataset, comparison)]
    if problems:
        raise InputError(" ".join(problems))
    first = next(iter(comparison.results.values()))
    results = dict(comparison.results)
    outputs = dict(dataset.systems)
    seen: set = set()
    for run in runs:
        key = (str(run.path), run.created, run.name)
        if key in seen:
            continue
        seen.add(key)
        for system, kept in run.systems.items():
            name = _unique(run_system_name(system, run), results)
            results[name] = ScoreResult(kept.precision, kept.recall, kept.f1, kept.raw_precision, kept.raw_recall,
                                        kept.raw_f1, first.signature, first.baseline, None,
                                        tuple(kept.warnings))
            outputs[name] = list(kept.outputs)
    means = {k: counted_mean(v.f1) for k, v in results.items()}
    ranked = {k: results[k] for k in rank_order(means)}
    return replace(dataset, systems=outputs), replace(comparison, results=ranked)


def save_comparison(folder: str | Path, name: str, dataset: Dataset, comparison: Comparison,
                    systems: list[str] | None = None) -> Path:
    """Keep ``comparison``'s systems (or only ``systems``) as a run called ``name`` in ``folder``
    (:func:`~bertscore_viz.files.runs.save_run`); returns the file's path."""
    chosen = comparison.systems if systems is None else [s for s in comparison.systems if s in systems]
    first = next(iter(comparison.results.values()))
    return save_run(folder, name, signature=comparison.signature, layer=comparison.layer, idf=comparison.idf,
                    rescaled=comparison.rescaled, references=dataset.references, segment_ids=dataset.segment_ids,
                    systems={s: comparison.results[s] for s in chosen},
                    outputs={s: dataset.systems[s] for s in chosen},
                    baseline=None if first.baseline is None else np.asarray(first.baseline))
