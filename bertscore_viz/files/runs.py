"""Runs that last: one scoring of a test set kept as a JSON file, so that tomorrow's checkpoint is compared with
today's systems without scoring them again (``score``/``compare --save-run``, ``compare --with-run``, the Compare
page's "Earlier runs"; docs/RUNS.md).

A run is ``<runs folder>/<safe name>-<UTC time>.json`` (schema :data:`RUN_SCHEMA`, version :data:`RUN_VERSION`):
its name, when it was made, the signature, the scoring settings (layer, idf, rescaled), the hash of the references
(:func:`references_hash`), the segment ids and, per system, the hash of its outputs (:func:`outputs_hash`), its
outputs (so that a segment of an earlier system can still be shown and drilled down) and its per-segment P, R,
F1 (NaN as null; the raw ones too when rescaled). Floats are written as Python's ``repr``, so they read back exact.

Two runs can be compared only when they were scored alike on the same references: :func:`compatibility` says in
plain sentences what differs. A damaged or foreign file in the folder is skipped by :func:`list_runs` and named
in its ``skipped``; nothing here crashes on a file a person put there. numpy and json only (core install).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from bertscore_viz.errors import InputError
from bertscore_viz.files.fileio import atomic_write_text

__all__ = ["RUN_SCHEMA", "RUN_VERSION", "MAX_RUN_BYTES", "MAX_RUNS_LISTED", "MAX_NAME_CHARS", "RUNS_ENV",
           "Run", "RunSystem", "RunList", "HistoryPoint", "default_runs_dir", "references_hash", "outputs_hash",
           "safe_name", "save_run", "list_runs", "load_run", "find_run", "compatibility", "history"]

RUN_SCHEMA = "bertscore-viz-run"
RUN_VERSION = 1
#: The largest run file written or read (bytes): a run holds every system's outputs and scores.
MAX_RUN_BYTES = 64 * 2**20
#: The most runs :func:`list_runs` reads (the newest by file time); older ones are left out and counted.
MAX_RUNS_LISTED = 500
#: A run's name is cut to this many characters (its file name to fewer).
MAX_NAME_CHARS = 120
#: The environment variable naming the runs folder of the command line and of a local app.
RUNS_ENV = "BERTSCORE_VIZ_RUNS"
_FILE_NAME_CHARS = 60
_MAX_WARNINGS = 50


def default_runs_dir() -> Path:
    """``$BERTSCORE_VIZ_RUNS``, else ``~/.cache/bertscore-viz/runs``."""
    given = os.environ.get(RUNS_ENV, "").strip()
    return Path(given).expanduser() if given else Path.home() / ".cache" / "bertscore-viz" / "runs"


def _digest(value) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def references_hash(references) -> str:
    """sha256 (hex) of the references of every segment, in order: the UTF-8 of the JSON list of lists
    ``[["ref 1 of segment 1", "ref 2 of segment 1"], ["ref 1 of segment 2"], ...]`` written compactly
    (``json.dumps(..., ensure_ascii=False, separators=(",", ":"))``)."""
    return _digest([[str(r) for r in group] for group in references])


def outputs_hash(outputs) -> str:
    """sha256 (hex) of one system's outputs in segment order: the UTF-8 of their compact JSON list."""
    return _digest([str(o) for o in outputs])


def safe_name(name: str) -> str:
    """A run's name as part of a file name: letters, digits, ``.``, ``_`` and ``-`` kept (accents dropped),
    anything else ``_``, at most 60 characters, never empty nor starting with a dot."""
    text = unicodedata.normalize("NFKD", str(name)).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._-")[:_FILE_NAME_CHARS]
    return text or "run"


@dataclass(frozen=True)
class RunSystem:
    """One system of a run: its outputs (and their hash) and per-segment scores (reported; raw before rescaling)."""

    name: str
    outputs_hash: str
    outputs: tuple[str, ...]
    precision: np.ndarray
    recall: np.ndarray
    f1: np.ndarray
    raw_precision: np.ndarray
    raw_recall: np.ndarray
    raw_f1: np.ndarray
    warnings: tuple[str, ...] = ()

    def corpus_f1(self) -> float:
        """The mean F1, an undefined segment counted as 0 (as every system-level number counts it)."""
        f1 = np.nan_to_num(self.f1, nan=0.0)
        return float(f1.mean()) if len(f1) else float("nan")


@dataclass(frozen=True)
class Run:
    """A run read back (:func:`load_run`).

    Attributes:
        name: as the user gave it; created: ISO 8601 UTC time; signature: the signature's text; layer, idf,
        rescaled: the setting; references_hash: :func:`references_hash`; segment_ids: in order; systems: by name;
        path: the file it came from.
    """

    name: str
    created: str
    signature: str
    layer: int
    idf: bool
    rescaled: bool
    references_hash: str
    segment_ids: tuple[str, ...]
    systems: dict[str, RunSystem]
    baseline: tuple[float, float, float] | None = None
    path: Path | None = None

    @property
    def n_segments(self) -> int:
        return len(self.segment_ids)

    @property
    def label(self) -> str:
        """``name (2026-11-28 09:46 UTC)``: how lists show a run."""
        return f"{self.name} ({self.created[:16].replace('T', ' ')} UTC)"


def _floats(values) -> list:
    return [None if not math.isfinite(x) else float(x) for x in np.asarray(values, dtype=np.float64).tolist()]


def _utc_now() -> datetime:
    return datetime.now(timezone.utc)


def save_run(folder: str | Path, name: str, *, signature: str, layer: int, idf: bool, rescaled: bool,
             references, segment_ids, systems: dict, outputs: dict, baseline=None) -> Path:
    """Write a run, atomically, as ``<folder>/<safe name>-<UTC time>.json``; returns its path.

    Args:
        name: any text (cut to :data:`MAX_NAME_CHARS`); its file name is :func:`safe_name` of it.
        signature: the signature's text; layer, idf, rescaled: the setting.
        references: the references of every segment (a list per segment): only their hash is kept.
        segment_ids: one per segment.
        systems: ``{system: ScoreResult}`` (anything with precision, recall, f1, raw_* and warnings).
        outputs: ``{system: outputs}``, in segment order.
        baseline: the ``(3,)`` P/R/F baseline when rescaled.

    Raises:
        InputError: an empty name, no system, lengths that disagree, or a run larger than :data:`MAX_RUN_BYTES`.
        OutputError: the folder cannot be written.
    """
    name = " ".join(str(name).split())[:MAX_NAME_CHARS]
    if not name:
        raise InputError("A run needs a name (e.g. --save-run checkpoint-5).")
    if not systems:
        raise InputError("A run needs at least one scored system.")
    ids = [str(s) for s in segment_ids]
    refs = [list(group) for group in references]
    out_systems = {}
    for sys_name, res in systems.items():
        texts = [str(o) for o in outputs[sys_name]]
        if not len(res.f1) == len(texts) == len(ids) == len(refs):
            raise InputError(f"System {sys_name!r} has {len(res.f1)} scores and {len(texts)} outputs for "
                             f"{len(ids)} segments; a run keeps one of each per segment.")
        out_systems[str(sys_name)] = {
            "outputs_hash": outputs_hash(texts), "outputs": texts,
            "precision": _floats(res.precision), "recall": _floats(res.recall), "f1": _floats(res.f1),
            "raw_precision": _floats(res.raw_precision), "raw_recall": _floats(res.raw_recall),
            "raw_f1": _floats(res.raw_f1), "warnings": [str(w) for w in res.warnings][:_MAX_WARNINGS]}
    now = _utc_now()
    doc = {"schema": RUN_SCHEMA, "version": RUN_VERSION, "name": name,
           "created": now.isoformat(timespec="microseconds"), "signature": str(signature),
           "settings": {"layer": int(layer), "idf": bool(idf), "rescaled": bool(rescaled)},
           "baseline": None if baseline is None else _floats(baseline), "references_hash": references_hash(refs),
           "segment_ids": ids, "systems": out_systems}
    text = json.dumps(doc, ensure_ascii=False, allow_nan=False)
    if len(text.encode("utf-8", "surrogatepass")) > MAX_RUN_BYTES:
        raise InputError(f"This run would take more than {MAX_RUN_BYTES // 2**20} MiB; save fewer systems.")
    folder = Path(folder).expanduser()
    stem = f"{safe_name(name)}-{now.strftime('%Y%m%dT%H%M%S')}{now.microsecond:06d}Z"
    return atomic_write_text(folder / f"{stem}.json", text)


def _array(values, what: str) -> np.ndarray:
    if not isinstance(values, list) or not all(v is None or isinstance(v, (int, float)) for v in values):
        raise ValueError(f"{what} is not a list of numbers")
    return np.asarray([np.nan if v is None else float(v) for v in values], dtype=np.float64)


def _system(name: str, d: dict, n: int) -> RunSystem:
    outputs = d.get("outputs")
    if not isinstance(outputs, list) or len(outputs) != n or not all(isinstance(o, str) for o in outputs):
        raise ValueError(f"system {name!r}: outputs are not {n} texts")
    arrays = {k: _array(d.get(k), f"system {name!r}: {k}") for k in (
        "precision", "recall", "f1", "raw_precision", "raw_recall", "raw_f1")}
    if any(len(a) != n for a in arrays.values()):
        raise ValueError(f"system {name!r}: not {n} scores")
    warns = d.get("warnings") or []
    return RunSystem(name, str(d.get("outputs_hash", "")), tuple(outputs), **arrays,
                     warnings=tuple(str(w) for w in warns) if isinstance(warns, list) else ())


def _parse(doc, path: Path | None) -> Run:
    if not isinstance(doc, dict) or doc.get("schema") != RUN_SCHEMA:
        raise ValueError("not a bertscore-viz run")
    if doc.get("version") != RUN_VERSION:
        raise ValueError(f"run format version {doc.get('version')!r}; this installation reads {RUN_VERSION}")
    settings = doc.get("settings")
    ids = doc.get("segment_ids")
    systems = doc.get("systems")
    if not isinstance(settings, dict) or not isinstance(ids, list) or not isinstance(systems, dict) or not systems:
        raise ValueError("settings, segment ids or systems missing")
    baseline = doc.get("baseline")
    base = None if baseline is None else tuple(float(x) for x in _array(baseline, "baseline"))
    return Run(str(doc["name"]), str(doc["created"]), str(doc["signature"]), int(settings["layer"]),
               bool(settings["idf"]), bool(settings["rescaled"]), str(doc["references_hash"]),
               tuple(str(s) for s in ids), {str(k): _system(str(k), v, len(ids)) for k, v in systems.items()},
               base if base is None or len(base) == 3 else None, path)


def load_run(path: str | Path) -> Run:
    """Read a run file.

    Raises:
        InputError: missing, larger than :data:`MAX_RUN_BYTES`, not JSON, or not a run of this format.
    """
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_RUN_BYTES:
            raise InputError(f"{path.name} is larger than a run may be ({MAX_RUN_BYTES // 2**20} MiB).")
        doc = json.loads(path.read_text(encoding="utf-8"))
        return _parse(doc, path)
    except InputError:
        raise
    except OSError as exc:
        raise InputError(f"The run {path} cannot be read: {exc.strerror or exc}.") from None
    except (ValueError, KeyError, TypeError, AttributeError) as exc:  # JSON, schema, a field of the wrong kind
        raise InputError(f"{path.name} is not a readable bertscore-viz run ({exc}).") from None


@dataclass(frozen=True)
class RunList:
    """The runs of a folder, newest first; ``skipped``: one sentence per file that could not be read;
    ``left_out``: older files beyond :data:`MAX_RUNS_LISTED`."""

    runs: list[Run] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    left_out: int = 0


def list_runs(folder: str | Path, limit: int = MAX_RUNS_LISTED) -> RunList:
    """Every readable run in ``folder`` (a missing folder has none), newest first (by their ``created``)."""
    folder = Path(folder).expanduser()
    try:
        files = [p for p in folder.iterdir() if p.suffix == ".json" and not p.name.startswith(".")]
    except OSError:
        return RunList()
    files.sort(key=lambda p: _mtime(p), reverse=True)
    left_out = max(0, len(files) - limit)
    runs, skipped = [], []
    for p in files[:limit]:
        try:
            runs.append(load_run(p))
        except InputError as exc:
            skipped.append(str(exc))
    runs.sort(key=lambda r: (r.created, str(r.path)), reverse=True)
    return RunList(runs, skipped, left_out)


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def find_run(runs: list[Run], name: str) -> Run:
    """The newest run called ``name`` (``"latest"``: the newest run) among ``runs`` (newest first).

    Raises:
        InputError: no such run, naming the runs there are.
    """
    if name == "latest" and runs:
        return runs[0]
    for run in runs:
        if run.name == name:
            return run
    known = ", ".join(repr(n) for n in dict.fromkeys(r.name for r in runs[:20])) or "none"
    raise InputError(f"No run called {name!r}; the runs are: {known}.")


def compatibility(run: Run, signature: str, references_hash: str, n_segments: int) -> list[str]:
    """What keeps ``run`` from being compared with scores of ``signature`` on references of ``references_hash``
    over ``n_segments`` segments, one plain sentence each; empty when they can be compared."""
    out = []
    if run.signature != str(signature):
        out.append(f"The run {run.name!r} was scored with another signature ({run.signature}) than these scores "
                   f"({signature}): its numbers are not comparable.")
    if run.n_segments != int(n_segments):
        out.append(f"The run {run.name!r} has {run.n_segments:,} segments; this test set has {int(n_segments):,}.")
    elif run.references_hash != references_hash:
        out.append(f"The run {run.name!r} was scored against other references than this test set's (their hashes "
                   "differ): the same references are needed to compare.")
    return out


@dataclass(frozen=True)
class HistoryPoint:
    """A system's corpus F1 in one run."""

    run: str
    created: str
    f1: float
    signature: str


def history(runs: list[Run], system: str) -> list[HistoryPoint]:
    """``system``'s corpus F1 (:meth:`RunSystem.corpus_f1`) in every run that has it, oldest first."""
    points = [HistoryPoint(r.name, r.created, r.systems[system].corpus_f1(), r.signature)
              for r in runs if system in r.systems]
    return sorted(points, key=lambda p: p.created)
