"""``bertscore-viz score --ray``: a corpus scored on Ray into a results directory (:mod:`bertscore_viz.distributed.jobs`
runs the job; needs bertscore-viz[ray])."""

from __future__ import annotations

import sys

from bertscore_viz.distributed.jobs import score_files
from bertscore_viz.distributed.options import ScoreOptions
from bertscore_viz.errors import InputError
from bertscore_viz.files import upload
from bertscore_viz.files.columns import mapping_from_args
from bertscore_viz.files.fileio import terminal_safe
from bertscore_viz.files.results.layout import PROBLEMS_FILE
from bertscore_viz.progress import progress_bar

__all__ = ["run", "mapping_from_cli", "options_from_cli"]


def mapping_from_cli(args) -> upload.ColumnMapping | None:
    """The column mapping the ``score --ray`` flags give (None: detected from the header)."""
    return mapping_from_args(args.reference_column, args.candidate_column, args.system_column,
                             getattr(args, "system_columns", None), getattr(args, "source_column", None),
                             getattr(args, "segment_id_column", None))


def options_from_cli(args) -> ScoreOptions:
    return ScoreOptions(model=args.model, layer=args.layer, idf=args.idf,
                        rescale_with_baseline=args.rescale_with_baseline, lang=args.lang,
                        baseline_path=args.baseline_path, batch_size=args.batch_size, device=args.device,
                        precision=args.precision, long_texts=args.long_texts, mapping=mapping_from_cli(args),
                        empty=args.empty, address=args.ray, workers=args.workers,
                        cpus_per_worker=args.cpus_per_worker, block_segments=args.block_segments,
                        overwrite=args.overwrite)


def run(args) -> int:
    """``bertscore-viz score --ray [ADDRESS] --input PATH --output DIR [model flags]``."""
    if not args.input or not args.output:
        raise InputError("score --ray needs --input (files or directories) and --output (a directory).")
    with progress_bar("scoring pairs", "pairs") as bar:
        run = score_files(args.input, args.output, options_from_cli(args), progress=bar, log=bar.write)
    errors = [p for p in run.problems if p.severity == "error"]
    if run.problems:
        print(f"{len(run.problems)} input problem(s) ({len(errors)} row(s) left out); the list is in "
              f"{terminal_safe(run.output / PROBLEMS_FILE)}", file=sys.stderr)
        for p in run.problems[:5]:
            print(f"  row {p.row}: {terminal_safe(p.problem)}", file=sys.stderr)
    skipped = run.blocks - run.blocks_run
    print(f"wrote {terminal_safe(run.scores)} ({run.rows:,} rows; {run.blocks_run} block(s) scored"
          + (f", {skipped} already done" if skipped else "") + f"; {run.seconds:.1f} s)", file=sys.stderr)
    print(f"signature: {terminal_safe(run.signature)}")
    return 0
