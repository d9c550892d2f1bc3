"""``bertscore-viz mtme --data DIR --lp LP --ref NAME``: score a language pair laid out as WMT's mt-metrics-eval
data and write the scores back as its ``metric-scores/LP/NAME-REF.LEVEL.score`` files (docs/WMT_LAYOUT.md)."""

from __future__ import annotations

from pathlib import Path

from bertscore_viz.engine.options import ScoringOptions
from bertscore_viz.errors import InputError
from bertscore_viz.files import mtme
from bertscore_viz.files.fileio import check_writable, terminal_safe

__all__ = ["run"]


def run(args) -> int:
    source = mtme.open_mtme(args.data)
    ev = source.read(args.lp, args.test_set, read_metric_scores=False)
    out = args.output or source.folder(args.test_set)
    if out is None:
        raise InputError(f"{args.data} is a zip: give -o FOLDER to write metric-scores/{args.lp}/ into.")
    _check_output(Path(out).expanduser(), ev, args)  # before any scoring: a bad -o used to fail after all of it
    scorer = ScoringOptions.from_namespace(args).scorer()
    results = mtme.score_evalset(scorer, ev, args.ref)
    scores = {name: getattr(res, args.which) for name, res in results.items()}
    for path in mtme.write_metric_scores(out, ev, scores, args.ref, args.metric, args.levels, args.overwrite):
        print(terminal_safe(path))
    return 0


def _check_output(out: Path, ev: mtme.EvalSet, args) -> None:
    """The metric-score files can be written (a folder, writable) and, without --overwrite, do not exist yet."""
    names = mtme.metric_files(ev, {s: [0.0] * ev.n_segments for s in ev.scored_systems(args.ref)}, args.ref,
                              args.metric, args.levels)
    folder = out / "metric-scores" / ev.lp
    check_writable(folder / next(iter(names)), "the metric-score files")
    existing = [n for n in names if (folder / n).exists()]
    if existing and not args.overwrite:
        raise InputError(f"{folder} already holds {', '.join(existing)}; add --overwrite to replace them, or "
                         "--metric NAME to write under another name.")
