"""``bertscore-viz tune-layers --data DIR -m MODEL``: correlation with human judgments per layer on WMT16 DA data, and
the best layer (needs bertscore-viz[app] for the statistics)."""

from __future__ import annotations

import sys

from bertscore_viz.evaluation.layer_tuning import tune_layers, write_table
from bertscore_viz.files.fileio import check_writable, terminal_safe
from bertscore_viz.progress import progress_bar

__all__ = ["run"]


def run(args) -> int:
    """``python -m bertscore_viz tune-layers --data DIR -m MODEL [--idf] [--no-bleu] [-o OUT.tsv]``."""

    if args.output:
        check_writable(args.output, "the table")  # before the model pass, not after
    with progress_bar("scoring segments", "segments") as progress:
        table = tune_layers(args.data, model=args.model, idf=args.idf, bleu=not args.no_bleu,
                            batch_size=args.batch_size, device=args.device, progress=progress)
    print(table.to_markdown(), end="")
    print(f"best layer (average Pearson): {table.best_layer} ({table.average(table.best_layer):.4f})")
    if args.output:
        paths = write_table(table, args.output)
        print("wrote " + ", ".join(map(terminal_safe, paths)), file=sys.stderr)
    return 0
