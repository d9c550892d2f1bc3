"""``compare``'s inputs beyond the outputs and references: metrics of one's own (``--scores NAME=FILE``, score
columns, ``--mtme-scores``; :mod:`bertscore_viz.evaluation.own_metrics`) and what document context did
(docs/CONTEXT.md)."""

from __future__ import annotations

from dataclasses import replace

from bertscore_viz.errors import InputError
from bertscore_viz.evaluation import compare
from bertscore_viz.evaluation.own_metrics import OwnMetric, own_metrics
from bertscore_viz.files.dataset import Dataset
from bertscore_viz.files.fileio import terminal_safe as plain
from bertscore_viz.files.score_columns import scores_from_lines
from bertscore_viz.files.textfile import read_text_lines

__all__ = ["context_note", "own_metric_set", "with_score_files"]


def with_score_files(specs: list[str], loaded):
    """The dataset with the metrics of ``--scores NAME=FILE`` (read and checked; bad values listed)."""
    ds = loaded.dataset
    own = ds.own_scores
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep or not path:
            raise InputError(f"--scores takes NAME=FILE (e.g. --scores COMET=comet.txt); got {plain(spec)!r}.")
        lines = read_text_lines(path, "scores file", allow_empty=True)
        own = own.merged(scores_from_lines(name, lines, ds.system_names, ds.n_segments, path))
    extra = [p for p in own.problems if p not in ds.own_scores.problems]
    return replace(loaded, dataset=replace(ds, own_scores=own, problems=ds.problems + extra))


def own_metric_set(args, dataset: Dataset, systems) -> tuple[dict[str, OwnMetric], list[str]]:
    """The metrics of one's own of the input for ``systems`` and the notes about them; checks ``--metric``.

    Raises:
        InputError: ``--metric`` names neither P, R, F1 nor a metric of the input; a direction for an unknown metric.
    """
    own, notes = own_metrics(dataset.own_scores, systems, args.lower_is_better or (), args.higher_is_better or ())
    if args.metric not in compare.METRICS and args.metric not in own:
        given = ", ".join(map(repr, dataset.own_scores.scores))
        raise InputError(f"--metric {plain(args.metric)!r} is neither P, R, F1 nor a metric of one's own of the input"
                         + (f" (those: {plain(given)})" if given else " (give one with --scores NAME=FILE or a score "
                                                                      "column)")
                         + ("; it was left out: " + " ".join(plain(n) for n in notes) if notes else "") + ".")
    return own, notes


def context_note(ds: Dataset, k: int) -> str:
    """What document context did, in one sentence: how many segments had documents, how many were scored alone."""
    if ds.doc_ids is None:
        return (f"--context {k} asked for, but the input names no documents (--doc-ids FILE, a doc_id column, or "
                "mt-metrics-eval's documents/): every segment was scored alone.")
    alone = sum(1 for d in ds.doc_ids if not d)
    docs = len({d for d in ds.doc_ids if d})
    return (f"Document context: each segment encoded after the previous {k} segment(s) of its document "
            f"({docs:,} documents); {alone:,} of {ds.n_segments:,} segments have no document id and were scored "
            "alone.")
