"""``score --ray``: the options and the command (``bertscore_viz.distributed.jobs`` runs the job; Ray is imported
only when it does)."""

from __future__ import annotations

import sys
from pathlib import Path

from bertscore_viz.cli.progress import progress_bar
from bertscore_viz.distributed.inputs import mapping_from_args
from bertscore_viz.distributed.jobs import DEFAULT_BLOCK_SEGMENTS, PARTS_DIR, PROBLEMS_FILE, SCORES_FILE, score_files
from bertscore_viz.errors import InputError
from bertscore_viz.files import upload


# --- command line -------------------------------------------------------------------------------------------------
def add_score_args(p) -> None:
    """The ``score --ray`` options (the model/layer/idf/rescale flags are the score command's own)."""
    g = p.add_argument_group("distributed (Ray)")
    g.add_argument("--ray", nargs="?", const="local", default=None, metavar="ADDRESS",
                   help="score on Ray: no address = a new local Ray instance on this machine's cores; 'auto' (the "
                        "cluster this machine joined), HOST:6379 or ray://HEAD:10001 for a cluster. Needs --input "
                        "and --output")
    g.add_argument("--input", nargs="+", default=None,
                   help="Parquet/CSV/TSV/JSON Lines file(s) or directories (searched recursively)")
    g.add_argument("--output", default=None, help="output directory (scores.parquet, parts/, problems.json)")
    g.add_argument("--workers", type=int, default=None, help="actors (default: one per GPU, else one per CPU)")
    g.add_argument("--cpus-per-worker", type=int, default=None, help="CPU threads per actor")
    g.add_argument("--block-segments", type=int, default=DEFAULT_BLOCK_SEGMENTS,
                   help=f"segments per block (default {DEFAULT_BLOCK_SEGMENTS})")
    g.add_argument("--reference-column", nargs="+", default=None, help="reference column(s) (default: detected)")
    g.add_argument("--candidate-column", default=None, help="candidate column (plain or long layout)")
    g.add_argument("--system-column", default=None, help="system-name column (long layout)")
    g.add_argument("--system-columns", nargs="+", default=None, help="one column per system (wide layout)")
    g.add_argument("--source-column", default=None, help="source-sentence column (optional)")
    g.add_argument("--segment-id-column", default=None, help="segment-id column (optional)")
    g.add_argument("--empty", choices=[upload.EMPTY_SCORE, upload.EMPTY_SKIP], default=upload.EMPTY_SCORE,
                   help="empty cells: score them as empty text (0) or skip the segment")
    g.add_argument("--overwrite", action="store_true", help="replace another job's results in --output")


def mapping_from_cli(args) -> upload.ColumnMapping | None:
    """The column mapping the ``score --ray`` flags give (None: detected from the header)."""
    return mapping_from_args(args.reference_column, args.candidate_column, args.system_column,
                             getattr(args, "system_columns", None), getattr(args, "source_column", None),
                             getattr(args, "segment_id_column", None))


def interrupted_message(args) -> str:
    """What Ctrl-C left behind in a ``score --ray`` run (for the command line's message)."""
    out = Path(args.output or ".")
    return (f"the blocks finished so far are kept in {out / PARTS_DIR} ({SCORES_FILE} is written only at the end and "
            "was not changed); run the same command again to score the rest")


def run_score_cli(args) -> int:
    """``python -m bertscore_viz score --ray [ADDRESS] --input PATH --output DIR [model flags]``."""
    if not args.input or not args.output:
        raise InputError("score --ray needs --input (files or directories) and --output (a directory).")
    with progress_bar("scoring pairs", "pairs") as bar:
        run = score_files(args.input, args.output, model=args.model, layer=args.layer, idf=args.idf,
                          rescale_with_baseline=args.rescale_with_baseline, lang=args.lang,
                          baseline_path=args.baseline_path, batch_size=args.batch_size, device=args.device,
                          precision=args.precision, long_texts=args.long_texts, mapping=mapping_from_cli(args),
                          empty=args.empty,
                          address=args.ray, workers=args.workers, cpus_per_worker=args.cpus_per_worker,
                          block_segments=args.block_segments, overwrite=args.overwrite, progress=bar, log=bar.write)
    errors = [p for p in run.problems if p.severity == "error"]
    if run.problems:
        print(f"{len(run.problems)} input problem(s) ({len(errors)} row(s) left out); the list is in "
              f"{run.output / PROBLEMS_FILE}", file=sys.stderr)
        for p in run.problems[:5]:
            print(f"  row {p.row}: {p.problem}", file=sys.stderr)
    skipped = run.blocks - run.blocks_run
    print(f"wrote {run.scores} ({run.rows:,} rows; {run.blocks_run} block(s) scored"
          + (f", {skipped} already done" if skipped else "") + f"; {run.seconds:.1f} s)", file=sys.stderr)
    print(f"signature: {run.signature}")
    return 0
