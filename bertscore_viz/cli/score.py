"""``bertscore-viz score``: candidates and references from files or the command line, scored as bert-score's CLI
does (its output format, or ``--json``), with two rules against scoring file names by mistake."""

from __future__ import annotations

import importlib
import json
import re
import sys
import warnings
from pathlib import Path

import numpy as np

from bertscore_viz.cli.cache import store_line
from bertscore_viz.cli.runs import runs_folder
from bertscore_viz.cli.tracking import log_results
from bertscore_viz.engine.options import ScoringOptions
from bertscore_viz.engine.scorer import BertScoreWarning
from bertscore_viz.engine.store import default_store
from bertscore_viz.errors import InputError
from bertscore_viz.evaluation.calibration import percentile_random, require_calibration
from bertscore_viz.files.fileio import terminal_json, terminal_safe
from bertscore_viz.files.runs import save_run
from bertscore_viz.files.textfile import read_text_lines
from bertscore_viz.progress import progress_bar

__all__ = ["run", "read_lines", "looks_like_path", "looks_like_bare_name"]


def read_lines(path: str | Path, what: str) -> list[str]:
    """Lines of a UTF-8 text file as bert-score's CLI reads them (:mod:`bertscore_viz.files.textfile`: universal
    newlines, each line stripped); a directory, a missing, empty or non-UTF-8 file is an InputError."""
    return read_text_lines(path, f"{what} file")


#: One word holding a path separator, or ending in an extension with a letter (``.txt``; ``3.14`` is a number).
_PATH_LIKE = re.compile(r"^\S*([/\\]\S*|\.(?=[A-Za-z0-9]{0,4}[A-Za-z])[A-Za-z0-9]{1,5})$")


def looks_like_path(text: str) -> bool:
    """The rule for ``-c``/``-r`` values that are not existing files: one "word" (no whitespace) that holds a
    path separator or ends in a file extension (``a.txt``, ``data/refs``, ``test.de-en.ref``) is a missing file,
    an error; anything else (``"The cat sat."``, ``3.14``) is a sentence, as in bert-score."""
    return bool(_PATH_LIKE.match(text.strip())) and text.strip() != ""


#: A bare name: one word of letters, digits, ``_`` and ``-`` (``hyps``, ``refs_v2``), with no sentence punctuation.
_BARE_NAME = re.compile(r"^[\w-]*[^\W\d_][\w-]*$")


def looks_like_bare_name(text: str) -> bool:
    """A word with a letter and nothing but letters, digits, ``_`` and ``-`` (``hyps``; not ``Hello.``, ``3.14``,
    ``"The cat sat."``): given for every ``-c``/``-r`` value while none is a file, these are file names."""
    return bool(_BARE_NAME.match(text.strip()))


def _inputs(args) -> tuple[list[str], list[list[str]]]:
    """Files (one sentence per line) or sentences, as bert-score reads ``-c``/``-r``; with two rules against
    scoring file names: a value that looks like a path (:func:`looks_like_path`) must exist, and when no value is
    an existing file and every value is a bare name (:func:`looks_like_bare_name`: ``-c hyps -r refs``), those are
    taken for missing files too (bert-score would score the two names as sentences and exit 0). Sentences, even of
    one word when punctuated (``Hello.``) or a number (``3.14``), are scored as in bert-score."""
    roles = [("candidate", args.cand)] + [("reference", r) for r in args.ref]
    dirs = [f"the {role} {v} is a directory" for role, v in roles if Path(v).is_dir()]
    if dirs:
        raise InputError(f"{'; '.join(dirs).capitalize()}. -c and -r take files (one sentence per line) or "
                         "sentences.")
    special = [f"the {role} {v} is not a regular file (a pipe, socket or device)" for role, v in roles
               if Path(v).exists() and not Path(v).is_file()]
    if special:
        raise InputError(f"{'; '.join(special).capitalize()}. -c and -r take files (one sentence per line) or "
                         "sentences: save the content to a file and give that.")
    missing = [f"the {role} file {v} does not exist" for role, v in roles
               if not Path(v).exists() and looks_like_path(v)]
    if missing:
        raise InputError(f"No such file: {'; '.join(missing)}. -c and -r take files (one sentence per line) or "
                         "sentences; a single word with a path separator or a file extension is read as a file "
                         "name. Check the path (relative to the current directory).")
    if not any(Path(v).is_file() for _, v in roles) and all(looks_like_bare_name(v) for _, v in roles):
        given = ", ".join(f"-{'c' if role == 'candidate' else 'r'} {v}" for role, v in roles)
        raise InputError(f"No such files: {given}. None of them is an existing file, and each is a bare word, so "
                         "they read as file names rather than sentences. Check the paths (relative to the current "
                         "directory). To score one-word sentences, punctuate them (-c \"Hello.\" -r \"Hi.\").")
    cand_path = Path(args.cand)
    if cand_path.is_file():
        cands = read_lines(cand_path, "candidate")
        columns = []
        for ref in args.ref:
            lines = read_lines(ref, "reference")
            if len(lines) != len(cands):
                raise InputError(f"Expected as many lines in {ref} as in {args.cand}, got {len(lines)} references "
                                 f"and {len(cands)} candidates. Each file needs one sentence per line.")
            columns.append(lines)
        return cands, [list(group) for group in zip(*columns)]
    if Path(args.ref[0]).is_file():
        raise InputError(f"The candidate file {args.cand} does not exist (the reference {args.ref[0]} is a file).")
    if args.idf:
        raise InputError("idf needs a corpus of references: give files with -c and -r, not single sentences.")
    return [args.cand], [list(args.ref)]


def _doc_ids(args, n: int) -> list[str | None] | None:
    """``--doc-ids FILE``: one document id per candidate line (an empty line: no document), for ``--context K``
    (docs/CONTEXT.md); each needs the other."""
    context, path = getattr(args, "context", 0), getattr(args, "doc_ids", None)
    if path is None:
        if context:
            raise InputError(f"--context {context} needs --doc-ids FILE: one document id per candidate line (an "
                             "empty line for a segment without a document).")
        return None
    if not context:
        raise InputError("--doc-ids is used with --context K (K previous segments of each document, e.g. 2).")
    ids = read_lines(path, "document id")
    if len(ids) != n:
        raise InputError(f"Expected one document id per candidate in {path}, got {len(ids)} lines for {n} "
                         "candidates (an empty line: a segment without a document).")
    return [x or None for x in ids]


def _save_run(args, cands: list[str], refs: list[list[str]], res) -> None:
    """``--save-run NAME``: the scores kept as a run (docs/RUNS.md); the system is named as ``compare`` names a
    system file (its name without the extension), or ``candidate`` for a sentence."""
    system = Path(args.cand).stem if Path(args.cand).is_file() else "candidate"
    path = save_run(runs_folder(args), args.save_run, signature=str(res.signature), layer=res.signature.layer,
                    idf=res.signature.idf, rescaled=res.rescaled, references=refs,
                    segment_ids=[str(i + 1) for i in range(len(cands))], systems={system: res},
                    outputs={system: cands}, baseline=res.baseline)
    print(f"saved run {terminal_safe(args.save_run)} ({terminal_safe(system)}) to {terminal_safe(path)}",
          file=sys.stderr)


def run(args) -> int:
    """``bertscore-viz score -c CANDS -r REFS [flags]`` (``--ray``: :mod:`bertscore_viz.cli.ray`)."""
    if args.ray is not None:
        if getattr(args, "context", 0) or getattr(args, "doc_ids", None):
            raise InputError("--context and --doc-ids are not available with --ray: score on one machine "
                             "(docs/CONTEXT.md).")
        # the Ray job's module: the [ray] extra (pyarrow, Ray) only when --ray is given
        return importlib.import_module("bertscore_viz.cli.ray").run(args)
    if not args.cand or not args.ref:
        raise InputError("score needs -c CANDIDATES and -r REFERENCES (or --ray with --input and --output).")
    cands, refs = _inputs(args)
    doc_ids = _doc_ids(args, len(cands))
    scorer = ScoringOptions.from_namespace(args).scorer()
    # before the model pass: a missing calibration is said at once, with how to compute one
    cal = require_calibration(scorer.spec.name, args.lang, scorer.idf) if args.calibrate else None
    store = default_store()
    before = store.info() if store is not None and args.verbose else None
    with warnings.catch_warnings(), progress_bar("embedding", "sentences") as progress:
        warnings.simplefilter("ignore", BertScoreWarning)  # printed once below, as "Warning: ..."
        res = scorer.score(cands, refs, progress=progress if args.verbose else None, doc_ids=doc_ids)
    if args.verbose:
        print(store_line(before), file=sys.stderr)
    for w in res.warnings:
        print(f"Warning: {terminal_safe(w)}", file=sys.stderr)
    if args.log_to:
        log_results(args.log_to, result=res, candidates=cands, references=refs, scorer=scorer)
    if getattr(args, "save_run", None) is not None:
        _save_run(args, cands, refs, res)
    if args.json:
        d = res.as_dict()
        print(terminal_json(json.dumps({"precision": d["precision"], "recall": d["recall"], "f1": d["f1"],
                          "signature": d["signature"], "raw_precision": d["raw_precision"],
                          "raw_recall": d["raw_recall"], "raw_f1": d["raw_f1"], "baseline": d["baseline"],
                          "warnings": d["warnings"],
                          **({"percentile_random": [round(float(x), 4) for x in percentile_random(res, cal)]}
                             if cal is not None else {})})))
        return 0
    p, r, f = res.mean()
    print(f"{terminal_safe(res.signature)} P: {p:.6f} R: {r:.6f} F1: {f:.6f}")
    if cal is not None:
        pct = percentile_random(res, cal)
        print(f"F1 among random pairs of unrelated sentences: median percentile {float(np.median(pct)):.1f} "
              f"(per pair with -s --json)")
    if args.seg_level:
        for a, b, c in zip(res.precision, res.recall, res.f1):
            print(f"{a:.6f}\t{b:.6f}\t{c:.6f}")
    return 0
