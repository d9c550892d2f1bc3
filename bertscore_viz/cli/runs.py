"""``bertscore-viz runs list|history SYSTEM``: the runs kept by ``score``/``compare --save-run`` (newest first),
or one system's corpus F1 across them (oldest first); ``--json`` for one JSON object. docs/RUNS.md."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from bertscore_viz.errors import InputError
from bertscore_viz.evaluation.runs import run_system_name, save_comparison
from bertscore_viz.files.fileio import terminal_json, terminal_safe
from bertscore_viz.files.runs import Run, RunList, default_runs_dir, find_run, history, list_runs

__all__ = ["run", "runs_folder", "read_runs", "earlier_runs", "run_names", "save_new_run"]


def runs_folder(args) -> Path:
    """``--runs DIR``, else :func:`~bertscore_viz.files.runs.default_runs_dir`."""
    given = getattr(args, "runs_dir", None)
    return Path(given).expanduser() if given else default_runs_dir()


def read_runs(folder: Path, quiet: bool = False) -> RunList:
    """The folder's runs; each file skipped is said on stderr (unless ``quiet``)."""
    listed = list_runs(folder)
    if not quiet:
        for why in listed.skipped:
            print(f"Warning: skipped {terminal_safe(why)}", file=sys.stderr)
        if listed.left_out:
            print(f"Note: {listed.left_out:,} older run file(s) not read.", file=sys.stderr)
    return listed


def earlier_runs(args) -> list[Run]:
    """The runs of ``--with-run NAME`` (each the newest of that name, or ``latest``), read before any model pass.

    Raises:
        InputError: a name with no run, naming the runs there are.
    """
    wanted = getattr(args, "with_run", None) or []
    if not wanted:
        return []
    runs = read_runs(runs_folder(args), quiet=getattr(args, "quiet", False)).runs
    return list({id(r): r for r in (find_run(runs, name) for name in wanted)}.values())


def run_names(runs: list[Run]) -> list[str]:
    """The names the runs' systems take beside the new ones (for ``--baseline`` and the gate)."""
    return [run_system_name(s, r) for r in runs for s in r.systems]


def save_new_run(args, dataset, comparison) -> None:
    """``--save-run NAME``: the systems scored now kept as a run; the file named on stderr."""
    path = save_comparison(runs_folder(args), args.save_run, dataset, comparison)
    print(f"saved run {terminal_safe(args.save_run)} ({len(comparison.systems)} systems) to {terminal_safe(path)}",
          file=sys.stderr)


def _list(folder: Path, as_json: bool) -> None:
    runs = read_runs(folder).runs
    if as_json:
        print(terminal_json(json.dumps({"folder": str(folder), "runs": [
            {"name": r.name, "created": r.created, "signature": r.signature, "segments": r.n_segments,
             "systems": {s: sys_.corpus_f1() for s, sys_ in r.systems.items()}, "path": str(r.path)} for r in runs]},
            ensure_ascii=False)))
        return
    if not runs:
        print(f"No runs in {terminal_safe(folder)}.")
        return
    for r in runs:
        systems = ", ".join(f"{s} {k.corpus_f1():.4f}" for s, k in r.systems.items())
        print(terminal_safe(f"{r.created}  {r.name}  ({r.n_segments:,} segments)  F1: {systems}"))
        print(terminal_safe(f"    signature: {r.signature}"))


def _history(folder: Path, system: str | None, as_json: bool) -> None:
    if not system:
        raise InputError("runs history needs the system's name: bertscore-viz runs history SYSTEM.")
    points = history(read_runs(folder).runs, system)
    if as_json:
        print(terminal_json(json.dumps({"system": system, "history": [
            {"run": p.run, "created": p.created, "f1": p.f1, "signature": p.signature} for p in points]},
            ensure_ascii=False)))
        return
    if not points:
        print(terminal_safe(f"No run in {folder} has a system called {system!r}."))
        return
    signatures = {p.signature for p in points}
    for p in points:
        print(terminal_safe(f"{p.created}  {p.run}  F1 {p.f1:.4f}"))
    if len(signatures) > 1:
        print("Note: these runs were scored with different signatures; their F1 are not directly comparable.",
              file=sys.stderr)


def run(args) -> int:
    """``bertscore-viz runs list|history SYSTEM [--runs DIR] [--json]``."""
    folder = runs_folder(args)
    if args.action == "list":
        _list(folder, args.json)
    else:
        _history(folder, args.system, args.json)
    return 0
