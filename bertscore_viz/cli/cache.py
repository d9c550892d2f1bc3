"""``bertscore-viz cache info|clear``: what the persistent embedding store holds, or empty it (docs/STORE.md)."""

from __future__ import annotations

import json
from dataclasses import asdict

from bertscore_viz.engine.store import STORE_ENV, default_store, default_store_dir
from bertscore_viz.files.fileio import terminal_safe

__all__ = ["run", "store_line"]


def _mb(n: int) -> str:
    return f"{n / 2**20:,.1f} MB"


def store_line(before=None) -> str:
    """One line for ``--verbose``: how much of this run the store gave back, and what it holds. ``before``: the
    store's :class:`~bertscore_viz.engine.store.StoreInfo` when the run started (counts are the process's)."""
    store = default_store()
    if store is None:
        return f"embedding store: off ({STORE_ENV}=off)"
    info = store.info()
    if not info.enabled:
        return f"embedding store: not used ({terminal_safe(info.reason)})"
    hits = info.hits - (before.hits if before else 0)
    misses = info.misses - (before.misses if before else 0)
    written = info.written - (before.written if before else 0)
    asked = hits + misses
    reused = f"{hits:,} of {asked:,} sentence-layers reused ({100 * hits / asked:.0f}%)" if asked else "nothing asked"
    return (f"embedding store: {reused}, {written:,} written; {terminal_safe(info.path)} holds {info.entries:,} "
            f"entries, {_mb(info.bytes)} of {_mb(info.max_bytes)}")


def run(args) -> int:
    """``bertscore-viz cache info [--json]`` / ``bertscore-viz cache clear``."""
    folder = default_store_dir()
    store = default_store()
    if store is None:
        print(f"The embedding store is off ({STORE_ENV}=off): nothing is kept between runs.")
        return 0
    if args.action == "clear":
        n = store.clear()
        print(f"Deleted {n:,} entries from {terminal_safe(store.path)}.")
        return 0
    info = store.info()
    if args.json:
        print(json.dumps(asdict(info) | {"folder": str(folder)}, indent=1))
        return 0
    state = "in use" if info.enabled else f"not usable: {terminal_safe(info.reason)}"
    print(f"embedding store: {terminal_safe(info.path)} ({state})")
    print(f"  entries: {info.entries:,} (one per sentence and layer), {_mb(info.bytes)} of vectors")
    print(f"  bound:   {_mb(info.max_bytes)} (set {STORE_ENV}_MB to change; least recently used entries go first)")
    print(f"  on disk: {_mb(info.file_bytes)}")
    return 0
