"""``python -m bertscore_viz correlate``: agreement of BERTScore (every layer), chrF and BLEU with human scores.

    python -m bertscore_viz correlate --input rated.csv [-m MODEL] [-l LAYER] [--idf] [--human COLUMN] [--json]
    python -m bertscore_viz correlate --example wmt16        # the WMT16 DA to-English data, built in

The input is a CSV, TSV or JSON Lines file in the Compare page's layouts plus a human-score column
(:mod:`bertscore_viz.files.human_scores`); rows without a usable human score are listed and left out.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from bertscore_viz.cli.parser import EXAMPLES
from bertscore_viz.progress import progress_bar
from bertscore_viz.engine.scorer import Scorer
from bertscore_viz.errors import InputError
from bertscore_viz.evaluation.human_agreement import run_agreement
from bertscore_viz.files.human_scores import parse_human_scores
from bertscore_viz.locations import EXAMPLES_DIR

__all__ = ["run", "read_input", "format_report"]


def read_input(args):

    if args.example:
        path = EXAMPLES_DIR / EXAMPLES[args.example]
    else:
        path = Path(args.input)
        if path.is_dir():
            raise InputError(f"{path} is a directory; --input takes one CSV, TSV or JSON Lines file.")
        if not path.is_file():
            raise InputError(f"The input file {path} does not exist.")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"The input file {path} cannot be read: {exc.strerror or exc}.") from None
    return parse_human_scores(data, path.name, human_column=args.human), path


def run(args) -> int:
    """``bertscore-viz correlate --input FILE | --example wmt16 [flags]``."""
    if args.resamples < 0:
        raise InputError(f"--resamples must be 0 or more, got {args.resamples}.")
    rated, path = read_input(args)
    for p in rated.problems:
        where = f"row {p.row}: " if p.row else ""
        print(f"{p.severity}: {path.name}: {where}{p.problem}", file=sys.stderr)
    if not rated.ok:
        raise InputError(f"Nothing to correlate in {path.name}: fewer than 3 rated outputs could be read (the "
                         "problems are listed above).")
    scorer = Scorer(model=args.model, layer=args.layer, idf=args.idf, lang=args.lang, batch_size=args.batch_size,
                    device=args.device, long_texts=args.long_texts)
    with progress_bar("embedding", "sentences") as progress:
        report = run_agreement(scorer, rated.candidates, rated.references, rated.human, rated.systems,
                               rated.groups, n_samples=args.resamples, seed=args.seed,
                               sentence_metrics=not args.no_sentence_metrics, progress=progress,
                               labels=[f"row {r}" for r in rated.rows])
    out = report.as_dict()
    out["input"] = {"file": path.name, "layout": rated.layout, "human_column": rated.human_column,
                    "rows_left_out": [p.as_dict() for p in rated.errors]}
    if args.json:
        print(json.dumps(out, ensure_ascii=False))
        return 0
    print(format_report(report, rated, path.name))
    return 0


def _ci(level: dict, stat: str) -> str:
    v = level.get(stat)
    lo, hi = level["ci95"].get(stat, [None, None])
    if v is None:
        return f"{'n/a':>22}"
    interval = "" if lo is None else f" [{lo:+.3f}, {hi:+.3f}]"
    return f"{v:+.4f}{interval:>17}"


def format_report(report, rated, name: str) -> str:
    d = report.as_dict()
    lines = [f"{name}: {d['n_pairs']} rated outputs ({rated.layout} layout, human column {rated.human_column!r}); "
             f"{len(rated.errors)} row(s) left out; {d['bootstrap']['resamples']} bootstrap resamples, seed "
             f"{d['bootstrap']['seed']}", f"BERTScore: {report.signature} (rescaling changes no correlation)", "",
             f"{'metric':14} {'Pearson [95% CI]':>24} {'Spearman [95% CI]':>24} {'Kendall [95% CI]':>24}"]
    for metric, levels in d["metrics"].items():
        seg = levels["segment"]
        lines.append(f"{metric:14} {_ci(seg, 'pearson'):>24} {_ci(seg, 'spearman'):>24} {_ci(seg, 'kendall'):>24}")
    if d["n_systems"]:
        lines += ["", f"system level ({d['n_systems']} systems): {'Pearson [95% CI]':>24} {'Kendall [95% CI]':>24}"]
        for metric, levels in d["metrics"].items():
            sys_ = levels["system"]
            lines.append(f"{metric:14} {' ' * 20} {_ci(sys_, 'pearson'):>24} {_ci(sys_, 'kendall'):>24}")
    if report.overall.lead is not None:
        lines += ["", report.overall.lead.sentence()]
    f1 = d["layers"]["F1"]
    curve = "  ".join(f"L{k} {'n/a' if v is None else f'{v:.3f}'}" for k, v in enumerate(f1))
    lines += ["", f"F1 Pearson by layer: {curve}",
              f"best layer here: {d['best_layer']}; tuned layer of the model: {d['tuned_layer']}; shown: {d['layer']}"]
    for group, g in d.get("groups", {}).items():
        best = max(g["metrics"], key=lambda m: g["metrics"][m]["segment"]["pearson"] or -2)
        f1g = g["metrics"]["BERTScore-F1"]["segment"]
        lines.append(f"group {group}: {g['n_pairs']} outputs, BERTScore-F1 Pearson {_ci(f1g, 'pearson').strip()}; "
                     f"best metric {best}")
    for w in report.warnings:
        lines.append(f"Warning: {w}")
    return "\n".join(lines)

