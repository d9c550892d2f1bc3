"""Command line: ``bertscore-viz score|show|compare|baseline|tune-layers|correlate|audit|mbr|mtme|evaluate-path|
models|cache|runs|app|check-deploy`` (also
``python -m bertscore_viz``).

``score`` takes bert-score's flags (``-c``, ``-r``, ``-m``, ``-l``, ``--lang``, ``--idf``, ``--rescale_with_baseline``,
``--baseline_path``, ``-b``, ``-s``) and prints in its format: ``{signature} P: ... R: ... F1: ...`` and, with
``-s``, one ``P\\tR\\tF1`` line per candidate. ``--json`` prints one JSON object instead. The arguments of every
command are in :mod:`bertscore_viz.cli.parser`; each command runs in its own module (``run(args)``).
"""

from __future__ import annotations

import importlib
import os
import sys
import warnings
from pathlib import Path

from bertscore_viz.cli.parser import build_parser
from bertscore_viz.engine.baseline import full_paths
from bertscore_viz.errors import BertScoreVizError
from bertscore_viz.extras import extra_for, missing_extra_message
from bertscore_viz.files.fileio import terminal_safe
from bertscore_viz.files.results.layout import PARTS_DIR, SCORES_FILE

__all__ = ["main", "build_parser", "BROKEN_PIPE_STATUS"]

#: Exit status when the reader of the output went away (``... | head``): 128 + SIGPIPE, a shell's status of a
#: tool killed by SIGPIPE.
BROKEN_PIPE_STATUS = 141


def main(argv: list[str] | None = None) -> int:
    """Run one command; its exit status (0, 2 for a user's mistake, 130 on Ctrl-C, 141 when the output's reader
    went away)."""
    try:
        try:
            return _run(argv)
        finally:  # a closed pipe fails here, inside the try, not in the interpreter's final flush (also after --help)
            sys.stdout.flush()
    except BrokenPipeError:  # the reader stopped reading (`... | head`): no traceback, nothing said, as SIGPIPE
        _silence_stdout()
        return BROKEN_PIPE_STATUS


def _run(argv: list[str] | None) -> int:
    parser = build_parser()
    try:
        args, rest = parser.parse_known_args(argv)
    except BertScoreVizError as exc:  # a number out of its bound (cli.parser.count): one line, before any work
        print(f"error: {terminal_safe(exc)}", file=sys.stderr)
        return 2
    if rest and not getattr(args, "passthrough", False):
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    args.passthrough_args = rest  # `app`: Streamlit's own options
    before = warnings.showwarning
    warnings.showwarning = _plain_warning  # any warning a command lets through: one line, as the others print them
    try:
        # The command's module is imported here, when it runs: its dependencies (torch, an extra) load only then,
        # so `--help` answers at once and a core install runs `score` without the app's packages.
        command = importlib.import_module(args.command_module)
        with full_paths():  # messages name shipped baseline files by their absolute path
            return int(command.run(args) or 0)
    except BertScoreVizError as exc:
        print(f"error: {terminal_safe(exc, keep=chr(10))}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as exc:  # an optional dependency: name the extra that brings it, in one line
        extra = extra_for(exc.name)
        if extra is None:
            raise
        print(f"error: {missing_extra_message(f'`{args.command}`', exc.name, extra)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C: outputs are written atomically, so no partial file is left
        print(f"\ninterrupted: {_interrupted_note(args)}", file=sys.stderr)
        return 130
    finally:
        warnings.showwarning = before


def _silence_stdout() -> None:
    """Point standard output at os.devnull (Python's recipe for SIGPIPE): the output still buffered is dropped and
    the interpreter's flush at exit does not fail again on the closed pipe."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # a replaced sys.stdout (a test's capture): nothing to point
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


def _plain_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """``Warning: <message>`` on stderr (not Python's file, line and source line), its control characters escaped."""
    print(f"Warning: {terminal_safe(message, keep=chr(10))}", file=sys.stderr if file is None else file)


def _interrupted_note(args) -> str:
    if args.command == "score" and getattr(args, "ray", None) is not None and getattr(args, "output", None):
        out = Path(args.output)  # a Ray job keeps its finished blocks to resume
        return (f"the blocks finished so far are kept in {out / PARTS_DIR} ({SCORES_FILE} is written only at the end "
                "and was not changed); run the same command again to score the rest")
    return "no output file was written or changed"


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
