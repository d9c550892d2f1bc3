"""``python -m bertscore_viz audit``: the stress test of the metric on a data set (docs/AUDIT.md).

    python -m bertscore_viz audit -c CANDS -r REFS [-r REFS2 ...] [--layers all|N,M] [--seed N]
        [--perturbations name,...] [--json] [--dump FILE] [-m MODEL] [--lang en] [--idf] [-b 64] [--device cpu]
        [--precision fp32] [--long_texts truncate]

Every candidate is perturbed (negation, numbers, entities, shuffle, omission, addition, typos) and scored against
its reference(s) with the original and an unrelated candidate, in one model pass. Printed per perturbation and
layer: ``n``, ``pass_rate``, ``mean_drop`` and ``relative_drop`` (:mod:`bertscore_viz.evaluation.audit`), as a
table or (``--json``) a JSON list of ``{perturbation, layer, n, pass_rate, mean_drop, relative_drop}``.
``--dump FILE`` writes every perturbed candidate as JSON Lines (``perturbation``, ``index``, ``candidate``,
``perturbed``) so the figures can be checked by scoring them again.
"""

from __future__ import annotations

import json
import sys
import warnings

from bertscore_viz.engine.options import ScoringOptions
from bertscore_viz.engine.scorer import BertScoreWarning
from bertscore_viz.errors import InputError
from bertscore_viz.evaluation.audit import AuditResult, audit
from bertscore_viz.files.fileio import atomic_write_text, check_writable, terminal_json, terminal_safe
from bertscore_viz.files.textfile import read_text_lines
from bertscore_viz.progress import progress_bar

__all__ = ["format_table", "parse_layers", "read_inputs", "run"]


def parse_layers(value: str) -> str | list[int]:
    """``"all"`` or a comma-separated list of layer numbers (``"4,6"``) from ``--layers``.

    Raises:
        InputError: anything else, with the value given.
    """
    value = value.strip()
    if value.lower() == "all":
        return "all"
    parts = [v.strip() for v in value.split(",") if v.strip()]
    if not parts or not all(v.isdigit() for v in parts):
        raise InputError(f"--layers takes 'all' or layer numbers separated by commas (e.g. 4,6), got {value!r}.")
    return [int(v) for v in parts]


def read_inputs(cand: str, refs: list[str]) -> tuple[list[str], list[list[str]]]:
    """Candidates and, per candidate, its references from files of one sentence per line.

    Raises:
        InputError: a missing, empty or non-UTF-8 file, or files of different lengths.
    """
    cands = read_text_lines(cand, "candidate file")
    columns = []
    for ref in refs:
        lines = read_text_lines(ref, "reference file")
        if len(lines) != len(cands):
            raise InputError(f"Expected as many lines in {ref} as in {cand}, got {len(lines)} references and "
                             f"{len(cands)} candidates. Each file needs one sentence per line.")
        columns.append(lines)
    return cands, [list(group) for group in zip(*columns)]


def _figure(x: float, width: int, digits: int) -> str:
    return f"{'n/a':>{width}}" if x != x else f"{x:>{width}.{digits}f}"


def format_table(result: AuditResult) -> str:
    """The plain-text report: a header (data, seed, signature), one line per perturbation and layer, the notes."""
    lines = [f"{len(result.candidates)} segments, seed {result.seed}, language {result.lang}; raw F1 of "
             f"{result.signatures[0].replace(f'_L{result.layers[0]}_', '_L*_')}",
             "pass rate: share of pairs where the perturbed candidate scores lower; mean drop: F1(original) - "
             "F1(perturbed); relative drop: the mean drop / that of an unrelated candidate (0 = not noticed, "
             "1 = as bad as an unrelated text)", "",
             f"{'perturbation':16} {'layer':>5} {'n':>6} {'pass rate':>9} {'mean drop':>9} {'rel. drop':>9}"]
    notes: dict[tuple[str, str], int] = {}  # a note once per perturbation, with the first layer it holds for
    for r in result.rows:
        lines.append(f"{r.perturbation:16} {r.layer:>5} {r.n:>6} {_figure(r.pass_rate, 9, 3)} "
                     f"{_figure(r.mean_drop, 9, 4)} {_figure(r.relative_drop, 9, 3)}")
        if r.note:
            notes.setdefault((r.perturbation, r.note), r.layer)
    for (name, note), layer in notes.items():
        lines.append(f"note: {name} (layer {layer} and maybe others): {note}")
    for skip in result.skipped:
        lines.append(f"left out: {skip}")
    return "\n".join(lines)


def run(args) -> int:
    """Run ``audit``: read the files, audit in one model pass, print (and dump); returns the exit code 0.

    Raises:
        InputError, ModelError, OutputError: bad files or options, a --dump file that cannot be written (the main
            entry prints them as ``error: ...``).
    """
    layers = parse_layers(args.layers)
    if args.dump:
        check_writable(args.dump, "the --dump file")  # before the model pass, not after it
    cands, refs = read_inputs(args.cand, args.ref)
    scorer = ScoringOptions.from_namespace(args).scorer()
    with warnings.catch_warnings(), progress_bar("embedding", "sentences") as progress:
        warnings.simplefilter("ignore", BertScoreWarning)  # printed once below, as "Warning: ..."
        result = audit(cands, refs, scorer=scorer, perturbations=args.perturbations, layers=layers, seed=args.seed,
                       progress=progress)
    for w in result.warnings:
        print(f"Warning: {terminal_safe(w)}", file=sys.stderr)
    if args.dump:
        records = result.dump_rows()
        atomic_write_text(args.dump, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
        print(f"wrote {len(records)} perturbed candidates to {terminal_safe(args.dump)}", file=sys.stderr)
    if args.json:
        print(terminal_json(json.dumps(result.as_rows(), ensure_ascii=False)))
    else:
        print(terminal_safe(format_table(result), keep="\n"))
    return 0
