"""``bertscore-viz show -c CAND -r REF -o FILE``: the heatmap of one pair, like ``bert-score-show`` (needs
bertscore-viz[app] for the figures)."""

from __future__ import annotations

import sys
from pathlib import Path

from bertscore_viz.engine.options import ScoringOptions
from bertscore_viz.errors import InputError
from bertscore_viz.figures.plots import figure_html, heatmap_figure
from bertscore_viz.figures.static_figures import heatmap_image
from bertscore_viz.files.fileio import atomic_write_bytes, atomic_write_text, check_writable, terminal_safe

__all__ = ["run"]


def run(args) -> int:
    """``python -m bertscore_viz show -c CAND -r REF -o pair.html``: the heatmap of one pair, like
    ``bert-score-show``, with match markers, idf and rescaling (rescaled with the F baseline)."""

    out = Path(args.output)
    if out.suffix.lower() not in (".html", ".htm", ".png", ".svg", ".pdf"):
        raise InputError(f"Cannot write {terminal_safe(out.name)!r}: expected an output ending in .html, .png, .svg "
                         "or .pdf.")
    check_writable(out, "the figure")  # before the model loads
    scorer = ScoringOptions.from_namespace(args).scorer()
    pair = scorer.explain(args.cand, args.ref)
    for w in pair.warnings:
        print(f"Warning: {terminal_safe(w)}", file=sys.stderr)
    for note in pair.special_best_matches():
        print(f"Note: {terminal_safe(note)}", file=sys.stderr)
    special = getattr(args, "show_special", False)
    # written atomically: an interrupted run never leaves a truncated figure (or destroys an earlier one)
    if out.suffix.lower() in (".html", ".htm"):
        fig = heatmap_figure(pair, show_special=special)
        atomic_write_text(out, figure_html(fig, "BERTScore heatmap", pair))
    else:  # matplotlib, like bert-score-show: works on a fresh install, the value printed in each cell

        atomic_write_bytes(out, heatmap_image(pair, out.suffix.lower().lstrip("."), show_special=special))
    p, r, f = (float(x) for x in pair.scores)
    print(f"{terminal_safe(pair.signature)} P: {p:.6f} R: {r:.6f} F1: {f:.6f}")
    print(f"wrote {terminal_safe(out)}", file=sys.stderr)
    return 0
