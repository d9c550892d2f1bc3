"""Baselines computed or uploaded in the app, kept on the server for later sessions (``BASELINE_DIR``)."""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import re
from pathlib import Path

from bertscore_viz.engine.baseline import BaselineTable, format_baseline, read_baseline
from bertscore_viz.errors import BaselineError
from bertscore_viz.files.fileio import atomic_write_many, atomic_write_text

__all__ = ["saved_baseline_path", "save_baseline", "saved_baseline"]

log = logging.getLogger("bertscore_viz.app")

_SAFE = re.compile(r"[^A-Za-z0-9._-]")


def _safe_name(name: str) -> str:
    """A file name for a model or language name, one-to-one: a name of only ``A-Z a-z 0-9 . _ -`` (not starting
    with a dot) is kept as it is; any other gets its characters replaced and ``~`` plus a hash of the original
    added, a character a kept name cannot hold (``org/model`` -> ``org__model~<hash>``, ``org__model`` stays)."""
    if name and not name.startswith(".") and not _SAFE.search(name) and len(name) <= 120:
        return name
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    base = _SAFE.sub("_", name.replace("/", "__")).lstrip(".")[:100] or "model"
    return f"{base}~{digest}"


def saved_baseline_path(directory: str | Path, lang: str, model: str) -> Path:
    """``<directory>/<lang>/<model>.tsv`` with the names made safe (and one-to-one) as file names."""
    return Path(directory) / _safe_name(lang) / f"{_safe_name(model)}.tsv"


def save_baseline(directory: str | Path, lang: str, model: str, table, provenance_json: str | None = None) -> Path:
    """Keep a baseline (bert-score's format) for later sessions, written atomically, provenance beside it.

    With a provenance, the table and the provenance are written as one (a failure leaves both as they were);
    without, the provenance of an earlier baseline of the same model and language is removed first, then the table
    is written: a table never stands beside another baseline's provenance.
    """
    path = saved_baseline_path(directory, lang, model)
    provenance = path.with_suffix(".provenance.json")
    if provenance_json is not None:
        atomic_write_many([(path, format_baseline(table.values).encode("utf-8")),
                           (provenance, provenance_json.encode("utf-8"))])
        return path
    provenance.unlink(missing_ok=True)
    atomic_write_text(path, format_baseline(table.values))
    return path


def saved_baseline(directory: str | Path, lang: str, model: str):
    """The baseline saved for (lang, model), or None. A saved file that cannot be read is ignored (and logged)."""
    path = saved_baseline_path(directory, lang, model)
    try:
        stamp = path.stat().st_mtime
        table = read_baseline(path)
    except FileNotFoundError:
        return None
    except (OSError, BaselineError) as exc:
        log.error("ignoring the saved baseline %s: %s", path, exc)
        return None
    when = dt.datetime.fromtimestamp(stamp, dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return BaselineTable(table.values, f"saved on this server {when}")
