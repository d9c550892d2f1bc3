"""``bertscore-viz baseline --corpus FILE -m MODEL --lang LANG -o OUT.tsv``: a rescaling baseline from random pairs of
a monolingual corpus, every layer, with its provenance (``--ray``: the blocks on Ray)."""

from __future__ import annotations

import importlib
import sys

from bertscore_viz.errors import InputError
from bertscore_viz.files.fileio import check_writable
from bertscore_viz.progress import progress_bar
from bertscore_viz.rescaling.baseline_compute import (
    DEFAULT_MAX_WORDS,
    compute_baseline,
    provenance_path,
    read_corpus,
    write_baseline,
)

__all__ = ["run"]


def run(args) -> int:
    """``python -m bertscore_viz baseline --corpus FILE -m MODEL --lang LANG [--pairs N] [--seed S] -o OUT.tsv``."""

    max_words = getattr(args, "max_words", DEFAULT_MAX_WORDS)
    if args.pairs is not None and args.pairs < 1:
        raise InputError(f"--pairs must be at least 1, got {args.pairs}.")
    check_writable(args.output, "the baseline")  # before minutes of work, not after
    check_writable(provenance_path(args.output), "its provenance")
    corpus = read_corpus(args.corpus, max_words)
    print(f"corpus {' '.join(map(str, args.corpus))}: {len(corpus.sentences)} usable sentences of "
          f"{corpus.lines_read} lines",
          file=sys.stderr)

    run_blocks = None
    if getattr(args, "ray", None) is not None:  # --ray [ADDRESS]: blocks scored by a Ray actor pool
        # the Ray job's module: the [ray] extra only when --ray is given
        jobs = importlib.import_module("bertscore_viz.distributed.jobs")
        run_blocks = jobs.ray_block_runner(address=args.ray, workers=args.workers, model=args.model,
                                           batch_size=args.batch_size, device=args.device)
    with progress_bar("scoring pairs", "pairs") as progress:
        result = compute_baseline(corpus, model=args.model, lang=args.lang, n_pairs=args.pairs, seed=args.seed,
                                  max_words=max_words, batch_size=args.batch_size, device=args.device,
                                  progress=progress, run_blocks=run_blocks)
    out, prov = write_baseline(result, args.output)
    print(result.tsv(), end="")
    print(f"wrote {out} and {prov} ({result.provenance['pairs']} pairs, seed {args.seed}, "
          f"{result.n_layers} layers)", file=sys.stderr)
    return 0
