"""``bertscore-viz baseline --corpus FILE -m MODEL --lang LANG -o OUT.tsv``: a rescaling baseline from random pairs of
a monolingual corpus, every layer, with its provenance (``--ray``: the blocks on Ray)."""

from __future__ import annotations

import importlib
import shlex
import sys
from pathlib import Path

from bertscore_viz.engine.options import ScoringOptions
from bertscore_viz.errors import InputError
from bertscore_viz.evaluation.calibration import (
    add_human_bands,
    calibration_path_for,
    compute_baseline_and_calibration,
    read_rated_example,
    write_calibration,
)
from bertscore_viz.files.fileio import check_writable, terminal_safe
from bertscore_viz.models.spec import resolve_model
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
    """``bertscore-viz baseline --corpus FILE -m MODEL --lang LANG [--pairs N] [--seed S] -o OUT.tsv``: the baseline,
    its provenance and (in one process) the calibration of the same random pairs beside it."""
    max_words = getattr(args, "max_words", DEFAULT_MAX_WORDS)
    if args.pairs is not None and args.pairs < 1:
        raise InputError(f"--pairs must be at least 1, got {args.pairs}.")
    calibrate = getattr(args, "ray", None) is None and not args.no_calibration
    check_writable(args.output, "the baseline")  # before minutes of work, not after
    check_writable(provenance_path(args.output), "its provenance")
    if calibrate:
        check_writable(calibration_path_for(args.output), "its calibration")
    corpus = read_corpus(args.corpus, max_words)
    print(f"corpus {terminal_safe(' '.join(map(str, args.corpus)))}: {len(corpus.sentences)} usable sentences of "
          f"{corpus.lines_read} lines", file=sys.stderr)
    with progress_bar("scoring pairs", "pairs") as progress:
        if calibrate:
            result, cal = _with_calibration(args, corpus, max_words, progress)
        else:
            result, cal = compute_baseline(corpus, model=args.model, lang=args.lang, n_pairs=args.pairs,
                                           seed=args.seed, max_words=max_words, batch_size=args.batch_size,
                                           device=args.device, progress=progress, block_pairs=args.block_pairs,
                                           run_blocks=_ray_runner(args)), None
    out, prov = write_baseline(result, args.output)
    print(result.tsv(), end="")
    print(f"wrote {terminal_safe(out)} and {terminal_safe(prov)} ({result.provenance['pairs']} pairs, seed "
          f"{args.seed}, {result.n_layers} layers)", file=sys.stderr)
    if cal is not None:
        print(f"wrote {terminal_safe(write_calibration(cal, calibration_path_for(args.output)))}", file=sys.stderr)
    return 0


def _ray_runner(args):
    """``--ray [ADDRESS]``: the blocks scored by a Ray actor pool (None: here)."""
    if getattr(args, "ray", None) is None:
        return None
    # the Ray job's module: the [ray] extra only when --ray is given
    jobs = importlib.import_module("bertscore_viz.distributed.jobs")
    return jobs.ray_block_runner(address=args.ray, workers=args.workers, model=args.model,
                                 batch_size=args.batch_size, device=args.device)


def _with_calibration(args, corpus, max_words: int, progress):
    """The baseline and the calibration from one pass over the same pairs; with ``--human``, the calibration's
    human bands from that rated file."""
    spec = resolve_model(args.model)
    scorer = ScoringOptions(model=spec, batch_size=args.batch_size, device=args.device).for_every_layer().scorer()
    result, cal = compute_baseline_and_calibration(
        corpus, lang=args.lang, n_pairs=args.pairs, seed=args.seed, max_words=max_words, progress=progress,
        block_pairs=args.block_pairs, scorer=scorer,
        command="bertscore-viz " + " ".join(shlex.quote(a) for a in sys.argv[1:]))
    if args.human:
        rated, record = read_rated_example(args.human)
        cal = add_human_bands(cal, scorer, rated.candidates, rated.references, rated.human, Path(args.human).name,
                              "outputs", record)
    return result, cal
