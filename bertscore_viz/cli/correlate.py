"""``python -m bertscore_viz correlate``: agreement of BERTScore (every layer), chrF and BLEU with human scores, at
every level the data allow (segment; system when outputs name their system; summary when several outputs share a
segment id), and where the metric and the humans disagree most.

    python -m bertscore_viz correlate --input rated.csv [-m MODEL] [-l LAYER] [--idf] [--human COLUMN] [--json]
    python -m bertscore_viz correlate --example wmt16        # the WMT16 DA to-English data, built in
    python -m bertscore_viz correlate --mtme wmt22.zip --lp en-de [--test-set wmt22] [--reference refA]
        [--human mqm]                                        # WMT's mt-metrics-eval layout (a folder or a zip)
    ... --disagreements 10 [--within group|all]              # the 10 largest disagreements each way
    ... --metric-column comet --metric-column ter --lower-is-better ter   # your own metrics' columns
    ... --no-meta                                            # skip the pairwise accuracy meta-evaluation

The input is a CSV, TSV or JSON Lines file in the Compare page's layouts plus a human-score column
(:mod:`bertscore_viz.files.human_scores`); rows without a usable human score are listed and left out. In the
mt-metrics-eval layout every system but the reference is rated by the segment-level human scores chosen, the
domains are the groups and the system-level human scores, when present, are correlated too.

``--disagreements N`` lists, for BERTScore-F1 against the humans, chrF against the humans and BERTScore-F1 against
chrF, the ``N`` outputs each way whose percentile ranks differ most
(:func:`bertscore_viz.evaluation.disagreements.disagreements`); with ``--json`` they are the ``"disagreements"``
list.

Pairwise accuracy (WMT's meta-evaluation, :func:`bertscore_viz.evaluation.meta_evaluation.meta_evaluate`) follows
the correlations for every metric: acc_eq with its tie-calibrated epsilon (grouped by segment id when several
systems were rated on one segment, else over all pairs of outputs), soft and system-level pairwise accuracy (3 or
more systems rated on the same segments), each with a 95% interval and the permutation test of the best metric
against each other one (``--seed``; its own resample counts); with ``--json`` it is ``"meta_evaluation"``.
``--metric-column NAME`` adds a column of the input as a metric in every table (``--lower-is-better NAME``: negated,
named ``"NAME (negated)"``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from bertscore_viz.cli.parser import EXAMPLES
from bertscore_viz.engine.options import ScoringOptions
from bertscore_viz.errors import InputError
from bertscore_viz.evaluation import MAX_RESAMPLES, MIN_RESAMPLES
from bertscore_viz.evaluation.disagreements import SCOPES, disagreements
from bertscore_viz.evaluation.documents import system_documents
from bertscore_viz.evaluation.human_agreement import own_metric_scores, run_agreement
from bertscore_viz.evaluation.levels import document_keys
from bertscore_viz.evaluation.meta_evaluation import format_p, meta_evaluate
from bertscore_viz.files.fileio import terminal_json, terminal_safe
from bertscore_viz.files.human_scores import parse_human_scores
from bertscore_viz.files.mqm import guess_reference, read_mqm
from bertscore_viz.files.mtme import open_mtme
from bertscore_viz.locations import EXAMPLES_DIR
from bertscore_viz.progress import progress_bar

__all__ = ["run", "read_input", "read_mtme", "format_report", "format_meta", "disagreement_lists", "meta_of",
           "COMPARISONS"]

#: ``--disagreements``: (metric, against) pairs; "human" = the human scores.
COMPARISONS = (("BERTScore-F1", "human"), ("chrF", "human"), ("BERTScore-F1", "chrF"))


def read_input(args):
    """The rated outputs of ``--input`` or ``--example`` and the file's path.

    Raises:
        InputError: the file does not exist, is a directory, or cannot be read.
    """
    if args.example:
        path = EXAMPLES_DIR / EXAMPLES[args.example]
    else:
        path = Path(args.input)
        if path.is_dir():
            raise InputError(f"{path} is a directory; --input takes one CSV, TSV or JSON Lines file (a folder in "
                             "the mt-metrics-eval layout goes to --mtme).")
        if not path.is_file():
            raise InputError(f"The input file {path} does not exist.")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"The input file {path} cannot be read: {exc.strerror or exc}.") from None
    return parse_human_scores(data, path.name, human_column=args.human,
                              metric_columns=getattr(args, "metric_columns", None) or (),
                              document_column=getattr(args, "document_column", None)), path


def read_mtme(args):
    """The rated outputs of ``--mtme PATH --lp LP`` (``--test-set``, ``--reference``, ``--human`` choose among
    several; default: the first reference and the first human scores with a segment level), the human system
    scores (or None) and a label.

    Raises:
        InputError: no ``--lp``, an unknown name, or a layout that cannot be read.
    """
    source = open_mtme(args.mtme)
    lp = getattr(args, "lp", None)
    test_set = getattr(args, "test_set", None)
    if not lp:
        raise InputError(f"--mtme needs --lp: the language pairs of {source.label} are "
                         f"{', '.join(source.language_pairs(test_set)) or 'none'}.")
    evalset = source.read(lp, test_set, read_metric_scores=False)
    reference = getattr(args, "reference", None) or next(iter(evalset.references), None)
    seg_level = [k for k in evalset.human_scores if "seg" in evalset.levels(k)]
    human = args.human or (seg_level[0] if seg_level else None)
    if human is None:
        raise InputError(f"{lp} of {source.label} has no segment-level human scores (human-scores/{lp}.NAME.seg."
                         "score); correlate needs them.")
    rated = evalset.human_scored(reference, human)
    gold = {s: float(v[0]) for s, v in evalset.human_scores[human].get("sys", {}).items() if v and v[0] is not None}
    return rated, gold or None, f"{evalset.name} {lp} (reference {reference}, human scores {human})"


def disagreement_lists(report, rated, n: int, within: str = "group") -> list[dict]:
    """``n`` disagreements each way for each of :data:`COMPARISONS` the report has, as JSON-ready dicts whose rows
    also carry the file row, segment id and output."""
    out = []
    for metric, against in COMPARISONS:
        if metric not in report.scores or (against != "human" and against not in report.scores):
            continue
        other = report.human if against == "human" else report.scores[against]
        found = disagreements(report.scores[metric], other, n=n, groups=rated.groups, systems=rated.systems,
                              within=within, metric_name=metric, human_name=against)
        item = found.as_dict()
        for direction in ("too_kind", "too_harsh"):
            for row in item[direction]:
                i = row["index"]
                row.update(row_in_file=rated.rows[i], segment_id=rated.segment_ids[i], candidate=rated.candidates[i])
        out.append(item)
    return out


def read_expert_mqm(args):
    """The rated outputs of ``--mqm FILE`` (Google's MQM layout) against ``--reference`` (default: the first
    system named ``ref...`` or ``human...``, said), ``--leave-out`` systems not scored, and a label.

    Raises:
        InputError: the file cannot be read, or no reference is given or guessed.
    """
    data = read_mqm(args.mqm_file)
    reference = getattr(args, "reference", None) or guess_reference(data.systems)
    if reference is None:
        raise InputError(f"--mqm needs --reference: the system whose outputs are the references (a human "
                         f"translation); the file's systems: {', '.join(data.systems)}.")
    if not getattr(args, "reference", None):
        print(f"note: {terminal_safe(reference)} is the reference (its name says a human translation); "
              "--reference NAME chooses another.", file=sys.stderr)
    leave = getattr(args, "leave_out", None) or []
    rated = data.human_scored(reference, leave)
    return rated, f"{Path(args.mqm_file).name} (expert MQM, reference {reference})"


def _check(args) -> int:
    n = getattr(args, "disagreements", None) or 0
    if args.resamples != 0 and not MIN_RESAMPLES <= args.resamples <= MAX_RESAMPLES:
        raise InputError(f"--resamples must be 0 (no intervals, no test of the lead) or from {MIN_RESAMPLES:,} to "
                         f"{MAX_RESAMPLES:,}, got {args.resamples:,}.")
    if n < 0:
        raise InputError(f"--disagreements must be 0 or more, got {n}.")
    within = getattr(args, "within", None) or "group"
    if within not in SCOPES:
        raise InputError(f"--within must be one of {', '.join(SCOPES)}, got {within!r}.")
    columns, lower = getattr(args, "metric_columns", None) or [], getattr(args, "lower_is_better", None) or []
    if columns and (getattr(args, "mtme", None) or getattr(args, "mqm_file", None)):
        raise InputError("--metric-column reads a column of an --input table; the mt-metrics-eval layout (--mtme) "
                         "and an MQM file (--mqm) have no such columns.")
    unknown = [c for c in lower if c not in columns]
    if unknown:
        raise InputError(f"--lower-is-better {unknown[0]!r} is not a --metric-column; name it with --metric-column "
                         "too.")
    return n


def meta_of(report, rated, documents, seed: int):
    """Pairwise accuracy of every metric of ``report`` (BERTScore F1, P, R first), with a progress bar."""
    first = [m for m in ("BERTScore-F1", "BERTScore-P", "BERTScore-R") if m in report.scores]
    scores = {m: report.scores[m] for m in first + [m for m in report.scores if m not in first]}
    with progress_bar("pairwise accuracy", "statistics") as progress:
        return meta_evaluate(scores, report.human, rated.systems, documents, seed=seed, progress=progress)


def _context_documents(args, rated, name: str) -> list[str] | None:
    """Each output's document for ``--context`` (its system's own), with how many are scored alone said.

    Raises:
        InputError: ``--context`` without any document in the input.
    """
    if not getattr(args, "context", 0):
        return None
    docs = system_documents(rated.doc_ids, rated.systems)
    if docs is None:
        raise InputError(f"--context needs documents and {name} names none: give a column 'document' (or 'doc', or "
                         "--document-column NAME), or with --mtme a test set with documents/LP.docs. (doc_id is read "
                         "as the item the systems' outputs share, not as a document.)")
    alone = sum(1 for d in docs if not d)
    if alone:
        print(f"note: {alone:,} of {len(docs):,} rated outputs have no document and are scored without context.",
              file=sys.stderr)
    return docs


def run(args) -> int:
    """``bertscore-viz correlate --input FILE | --example wmt16 | --mtme PATH --lp LP [flags]``."""
    n_disagreements = _check(args)
    gold = None
    if getattr(args, "mtme", None):
        rated, gold, name = read_mtme(args)
    elif getattr(args, "mqm_file", None):
        rated, name = read_expert_mqm(args)
    else:
        rated, path = read_input(args)
        name = path.name
    for p in rated.problems:
        where = f"row {p.row}: " if p.row else ""
        print(f"{p.severity}: {terminal_safe(name)}: {where}{terminal_safe(p.problem)}", file=sys.stderr)
    if not rated.ok:
        raise InputError(f"Nothing to correlate in {name}: fewer than 3 rated outputs could be read (the "
                         "problems are listed above).")
    missing = [c for c in getattr(args, "metric_columns", None) or [] if c not in rated.metrics]
    if missing:
        raise InputError(f"--metric-column {missing[0]!r} cannot be used (the problem is listed above).")
    scorer = ScoringOptions.from_namespace(args).scorer()
    documents = document_keys(rated.segment_ids, rated.groups)
    doc_ids = _context_documents(args, rated, name)
    with progress_bar("embedding", "sentences") as progress:
        report = run_agreement(scorer, rated.candidates, rated.references, rated.human, rated.systems,
                               rated.groups, n_samples=args.resamples, seed=args.seed,
                               sentence_metrics=not args.no_sentence_metrics, progress=progress,
                               labels=[f"row {r}" for r in rated.rows], documents=documents, system_scores=gold,
                               extra_metrics=own_metric_scores(rated.metrics, getattr(args, "lower_is_better", ())),
                               doc_ids=doc_ids)
    meta = None if getattr(args, "no_meta", False) else meta_of(report, rated, documents, args.seed)
    out = report.as_dict()
    if meta is not None:
        out["meta_evaluation"] = meta.as_dict()
    out["input"] = {"file": name, "layout": rated.layout, "human_column": rated.human_column,
                    "document_column": rated.document_column, "rows_left_out": [p.as_dict() for p in rated.errors]}
    lists = (disagreement_lists(report, rated, n_disagreements, getattr(args, "within", None) or "group")
             if n_disagreements else [])
    if n_disagreements:
        out["disagreements"] = lists
    if args.json:
        print(terminal_json(json.dumps(out, ensure_ascii=False)))
        return 0
    print(format_report(report, rated, name))
    if meta is not None:
        print("\n" + format_meta(meta))
    if lists:
        print("\n" + format_disagreements(lists))
    return 0


def _ci(level: dict, stat: str) -> str:
    v = level.get(stat)
    lo, hi = level["ci95"].get(stat, [None, None])
    if v is None:
        return f"{'n/a':>22}"
    interval = "" if lo is None else f" [{lo:+.3f}, {hi:+.3f}]"
    return f"{v:+.4f}{interval:>17}"


def _level_lines(d: dict, level: str, title: str, stats: tuple) -> list[str]:
    header = f"{title:36}" + "".join(f"{s.capitalize() + ' [95% CI]':>25}" for s in stats)
    lines = ["", header]
    best = set(d["best"].get(level, []))
    for metric, levels in d["metrics"].items():
        if level in levels:
            mark = "*" if metric in best else " "
            lines.append(f"{mark} {metric:34}" + "".join(f"{_ci(levels[level], s):>25}" for s in stats))
    return lines


def format_report(report, rated, name: str) -> str:
    d = report.as_dict()
    lines = [f"{terminal_safe(name)}: {d['n_pairs']} rated outputs ({rated.layout} layout, human column "
             f"{terminal_safe(rated.human_column)!r}); "
             f"{len(rated.errors)} row(s) left out; {d['bootstrap']['resamples']} bootstrap resamples, seed "
             f"{d['bootstrap']['seed']}",
             f"BERTScore: {terminal_safe(report.signature)} (rescaling changes no correlation)"]
    all_stats = ("pearson", "spearman", "kendall")
    lines += _level_lines(d, "segment", "segment level (outputs resampled)", all_stats)
    if d["n_systems"]:
        lines += _level_lines(d, "system", f"system level, {d['n_systems']} systems", ("pearson", "kendall"))
    if d["n_gold_systems"] and "system_gold" in d["best"]:
        lines += _level_lines(d, "system_gold", f"vs human system scores, {d['n_gold_systems']} systems",
                              ("pearson", "kendall"))
    if d["n_documents"]:
        lines += _level_lines(d, "summary", f"summary level, {d['n_documents']} documents", all_stats)
    lines += ["", "* best in its column at that level. Intervals: " + "; ".join(
        f"{lv} level: {how}" for lv, how in d["resampled"].items()) + "."]
    lines += [""] + report.overall.headline()
    f1 = d["layers"]["F1"]
    curve = "  ".join(f"L{k} {'n/a' if v is None else f'{v:.3f}'}" for k, v in enumerate(f1))
    lines += ["", f"F1 Pearson by layer: {curve}",
              f"best layer here: {d['best_layer']}; tuned layer of the model: {d['tuned_layer']}; shown: {d['layer']}"]
    for group, g in d.get("groups", {}).items():
        best = ", ".join(f"{lv}: {'/'.join(m)}" for lv, m in g["best"].items())
        f1g = g["metrics"]["BERTScore-F1"]["segment"]
        lines.append(f"group {terminal_safe(group)}: {g['n_pairs']} outputs, BERTScore-F1 Pearson "
                     f"{_ci(f1g, 'pearson').strip()}; best {best}")
    for w in report.warnings:
        lines.append(f"Warning: {terminal_safe(w)}")
    return "\n".join(lines)


def _meta_cell(value: float | None, ci) -> str:
    if value is None:
        return f"{'n/a':>24}"
    if ci is None or None in ci:
        return f"{value:.4f}" + " " * 17
    return f"{value:.4f}" + f" [{ci[0]:.3f}, {ci[1]:.3f}]".rjust(17)


def format_meta(meta) -> str:
    """The pairwise accuracy meta-evaluation as text: one row per metric (``*`` the best of each column), the
    grouping, the system level's segments, and which differences from the best are significant."""
    d = meta.as_dict()
    levels = [("acc_eq", "acc_eq [95% CI]")] + ([("spa", "soft pairwise [95% CI]"),
                                                  ("system", "system pairwise [95% CI]")] if d["system_level"] else [])
    lines = ["Pairwise accuracy (WMT meta-evaluation): how often each metric orders pairs as the humans do",
             f"{'':36}{'epsilon':>10}" + "".join(f"{title:>26}" for _, title in levels)]
    for name, m in d["metrics"].items():
        cells = "".join(f"{('*' if d['best'].get(lv) == name else ' ') + _meta_cell(m[lv], m[lv + '_ci95']):>26}"
                        for lv, _ in levels)
        eps = "n/a" if m["epsilon"] is None else f"{m['epsilon']:.4g}"
        lines.append(f"  {terminal_safe(name):34}{eps:>10}{cells}")
    lines += ["", f"acc_eq grouped {d['grouping_reason']}.",
              ("soft and system pairwise accuracy: " if d["system_level"] else "no system level: ")
              + d["system_reason"],
              f"{d['n_used']} of {d['n_outputs']} outputs used; intervals: {d['settings']['n_resamples']} bootstrap "
              f"resamples ({d['settings']['spa_resamples']} for soft pairwise, its p values from "
              f"{d['settings']['spa_permutations']} permutations), tests: "
              f"{d['settings']['n_permutations']} permutations, seed {d['settings']['seed']}."]
    for level, best in d["best"].items():
        tests = [t for t in d["tests"] if t["level"] == level]
        if best is None or not tests:
            continue
        said = ", ".join(f"{terminal_safe(t['other'])} (p {format_p(t['p_value'], t['n_permutations'])}"
                         + (", significant)" if t["significant"] else ")") for t in tests)
        lines.append(f"{level}: best {terminal_safe(best)}; against {said} ({tests[0]['n_permutations']} "
                     "permutations)")
    lines += [terminal_safe(n) for n in d["notes"]]
    return "\n".join(lines)


def format_disagreements(lists: list[dict]) -> str:
    """The ``--disagreements`` lists as text: per comparison and direction, row, percentile difference, output."""
    lines = []
    for item in lists:
        lines.append(f"Where {item['metric']} and {item['human']} disagree most (ranked within "
                     f"{'each group' if item['within'] == 'group' else 'the whole set'}; difference = "
                     f"{item['metric']} percentile - {item['human']} percentile):")
        for direction, title in (("too_kind", "metric too kind"), ("too_harsh", "metric too harsh")):
            lines.append(f"  {title}:")
            for row in item[direction]:
                text = terminal_safe(row["candidate"] if len(row["candidate"]) <= 70 else row["candidate"][:69] + "…")
                lines.append(f"    row {row['row_in_file']:>6}  {row['difference']:+7.1f}  {text}")
    return "\n".join(lines)
