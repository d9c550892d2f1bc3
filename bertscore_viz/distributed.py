"""Scoring corpora and computing baselines on a Ray cluster, with the numbers of one process.

Ray is imported inside the functions here only, so the engine and the app import without it
(``pip install 'bertscore-viz[ray]'`` or ``-r requirements-ray.txt`` adds it).

Scoring (:func:`score_files`):

1. **On the driver, before any worker starts**: Ray is checked to be installed; the input files (Parquet, CSV/TSV,
   JSON Lines; files or directories, searched recursively, Hive-style ``key=value`` folders read as columns) are
   read and validated with the Compare page's rules (:mod:`bertscore_viz.upload`: wide or long layout, or plain
   ``candidate``/``reference`` columns; bad rows listed and left out, good rows kept); the model's layer and the
   baseline are checked. Any error stops here with a message, before anything is written.
2. The segments are cut into **blocks** of ``block_segments`` segments (all systems of a segment in the same block,
   so each reference is embedded once per block). Block ids are positions, so they are the same on every run.
3. **idf** (when on): a first pass of Ray tasks that load only the tokenizer counts, per block, in how many reference
   sentences each token id occurs; the driver sums the counts and the number of sentences and broadcasts the
   weights to the scoring actors. The weights equal :func:`bertscore_viz.idf.compute_idf` over all references, as
   one process computes them; the counts are kept beside the output (a rerun reuses them) and in the results file
   (the app's drill-down reproduces the file's numbers with them).
4. **Scoring**: a pool of Ray actors (one :class:`~bertscore_viz.scorer.Scorer`, hence one model load, per actor;
   ``num_gpus=1`` per actor when the cluster has GPUs, else CPU actors) scores one block per call with the engine's
   own token-sorted batching (``Scorer.match`` / ``Scorer.result``) and returns its raw P/R/F1. The driver feeds
   the pool itself: a block's texts are handed to Ray only when an actor has room (at most
   :data:`IN_FLIGHT_PER_WORKER` blocks per actor), so neither the driver, the object store nor a worker ever holds
   more than a few blocks beyond the validated input. (Ray Data's ``from_items`` would place every block in the
   object store before the first one is scored.)
5. The driver writes each finished block as ``parts/part-NNNNNN.parquet`` atomically (temporary file, then rename),
   with the job's id in its metadata, then merges the parts into ``scores.parquet`` (:mod:`bertscore_viz.results_file`
   describes the columns and the signature in the metadata). A rerun into the same directory skips the parts of the
   same job: an interrupted job completes without duplicating or losing rows. An actor that dies is restarted by
   Ray and its blocks retried; a block whose call raises is tried again (up to :data:`BLOCK_ATTEMPTS` times in all).
   A failure that persists stops the job with a message; the finished parts stay.

Baselines (:func:`ray_block_runner`): the pairing of :func:`bertscore_viz.baseline_compute.plan_pairs` is made on the
driver; each block is scored at every layer by an actor, which sends back the block's count, mean and sum of squared
deviations (float64); the driver merges them in block order exactly as the single-process loop does, so the file is
the single-process file for the same corpus, pairs and seed.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence
from urllib.parse import unquote

import numpy as np

from . import upload
from .errors import BaselineError, BertScoreVizError, InputError, ModelError
from .progress import progress_bar
from .scorer import Scorer

ProgressFn = Callable[[int, int], None]
#: Segments per block (all systems of a segment go to the same block).
DEFAULT_BLOCK_SEGMENTS = 1000
#: Embedding cache of each worker, MB: a block's texts are embedded once anyway; the cache bounds reuse across blocks.
DEFAULT_WORKER_CACHE_MB = 512
#: Blocks handed to one actor at a time: one being scored, one waiting, so an actor never idles between blocks.
IN_FLIGHT_PER_WORKER = 2
#: Calls of one block in all when the call raises (an actor that dies is restarted and its blocks retried apart
#: from this: up to :data:`ACTOR_TASK_RETRIES` times).
BLOCK_ATTEMPTS = 3
ACTOR_TASK_RETRIES = 3
INPUT_KINDS = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".tsv": "csv", ".txt": "csv",
               ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl"}
SCORES_FILE = "scores.parquet"
PARTS_DIR = "parts"
JOB_FILE = "_job.json"
IDF_FILE = "_idf.json"
PROBLEMS_FILE = "problems.json"
_UNLIMITED = 1 << 62
_PARQUET_BATCH_ROWS = 8192


class RayNotInstalled(BertScoreVizError):
    """Ray is needed for this and is not installed."""


class WorkerError(BertScoreVizError):
    """A Ray worker could not start, or a block failed on every attempt; the finished blocks are kept."""


def _ray():
    try:
        import ray
    except ImportError:
        raise RayNotInstalled("Distributed scoring needs Ray, which is not installed. Install it with `pip install "
                              "-r requirements-ray.txt` (or `pip install 'bertscore-viz[ray]'`).") from None
    return ray


def connect(address: str | None = None, num_cpus: int | None = None):
    """Ray, initialised: an existing session is reused; no address (or ``local``) starts a new local instance on this
    machine's cores (never joining ``RAY_ADDRESS`` or a ``ray start`` cluster by surprise); ``auto`` joins the cluster
    this machine belongs to; ``HOST:PORT`` a cluster's GCS; ``ray://host:10001`` connects through Ray Client.

    Raises:
        RayNotInstalled, InputError: Ray missing, Ray Client missing for ``ray://``, or the cluster cannot be reached
            (with the address).
    """
    ray = _ray()
    if ray.is_initialized():
        return ray
    local = address in (None, "", "local")
    kwargs = {"logging_level": "ERROR", "log_to_driver": False}
    try:
        if local:
            ray.init(address="local", num_cpus=num_cpus, include_dashboard=False, **kwargs)
        else:
            ray.init(address=address, **kwargs)
    except ImportError as exc:  # ray:// without the client extra (grpcio)
        raise RayNotInstalled(f"Connecting to {address} needs Ray Client, which is not installed "
                              f"({str(exc).splitlines()[0][:120]}). Install it with `pip install -r "
                              "requirements-ray.txt` (it has `ray[data,client]`).") from None
    except (ConnectionError, RuntimeError, ValueError, TimeoutError, OSError) as exc:
        if local:
            raise InputError(f"Could not start a local Ray instance: {str(exc).splitlines()[0][:200]}.") from None
        raise InputError(f"Could not connect to the Ray cluster at {address!r}: {str(exc).splitlines()[0][:200]}. "
                         "Start one with `ray start --head` (then use --ray auto on that machine) or give the "
                         "client address ray://HEAD:10001.") from None
    return ray


# --- input ------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class InputFile:
    """One file to read: its file system, path, kind, and the ``key=value`` folders above it (Hive partitions)."""

    fs: object
    path: str
    kind: str
    partitions: tuple[tuple[str, str], ...] = ()


def _filesystem(path: str):
    import pyarrow.fs as pafs

    if "://" in path:
        try:
            return pafs.FileSystem.from_uri(path)
        except Exception as exc:
            raise InputError(f"Cannot open {path}: {str(exc).splitlines()[0][:200]}.") from None
    return pafs.LocalFileSystem(), os.path.abspath(path)


def _partitions(root: str, path: str) -> tuple[tuple[str, str], ...] | None:
    """The ``key=value`` folders between ``root`` and the file (Spark, Hive), or None when any folder or the file is
    hidden (``.``) or bookkeeping (``_SUCCESS``, ``_temporary``): such files are not input."""
    rel = path[len(root):].strip("/").split("/")
    if any(part.startswith((".", "_")) for part in rel):
        return None
    return tuple((unquote(k), unquote(v)) for k, _, v in (p.partition("=") for p in rel[:-1]) if _ == "=")


def list_input_files(paths: str | Sequence[str]) -> list[InputFile]:
    """Every input file; a directory means its Parquet/CSV/TSV/JSON Lines files at any depth, sorted by path (hidden
    files and folders and names starting with ``_`` skipped, ``key=value`` folders read as columns: partitioned
    Parquet, Spark output).

    Raises:
        InputError: a path that does not exist, a directory without such files, an unknown extension.
    """
    import pyarrow.fs as pafs

    if isinstance(paths, (str, Path)):
        paths = [paths]
    out = []
    for given in map(str, paths):
        fs, path = _filesystem(given)
        info = fs.get_file_info(path)
        if info.type == pafs.FileType.NotFound:
            raise InputError(f"The input {given} does not exist. Give a Parquet, CSV, TSV or JSON Lines file or a "
                             "directory of them.")
        if info.type == pafs.FileType.Directory:
            found = []
            for f in fs.get_file_info(pafs.FileSelector(path, recursive=True)):
                if f.type != pafs.FileType.File or Path(f.base_name).suffix.lower() not in INPUT_KINDS:
                    continue
                parts = _partitions(path, f.path)
                if parts is not None:
                    found.append(InputFile(fs, f.path, INPUT_KINDS[Path(f.base_name).suffix.lower()], parts))
            if not found:
                raise InputError(f"The input directory {given} holds no .parquet, .csv, .tsv or .jsonl file.")
            out.extend(sorted(found, key=lambda f: f.path))
            continue
        kind = INPUT_KINDS.get(Path(path).suffix.lower())
        if kind is None:
            raise InputError(f"Cannot tell the format of {given} from its extension; name it .parquet, .csv, .tsv, "
                             ".jsonl or .json.")
        out.append(InputFile(fs, path, kind))
    if not out:
        raise InputError("No input given: pass --input FILE_OR_DIRECTORY.")
    return out


def _cell(v):
    if v is None:
        return ""
    if isinstance(v, str):
        return v
    if isinstance(v, (list, tuple)) and all(isinstance(x, str) for x in v):
        return tuple(v)  # several references in one cell, as a list
    if isinstance(v, bool):
        return str(v).lower()
    return str(v)


def _read_parquet(fs, path: str) -> tuple[upload.Table | None, list[upload.Problem]]:
    """A Parquet file as a :class:`~bertscore_viz.upload.Table`, converted a batch of rows at a time (the whole file is
    never held as Arrow columns and Python lists at once). A file with no rows gives a table with no rows."""
    import pyarrow.parquet as pq

    rows: list[tuple] = []
    try:
        with fs.open_input_file(path) as fh:
            pf = pq.ParquetFile(fh)
            columns = tuple(str(c).strip() for c in pf.schema_arrow.names)
            for batch in pf.iter_batches(batch_size=_PARQUET_BATCH_ROWS):
                cols = [[_cell(v) for v in batch.column(i).to_pylist()] for i in range(batch.num_columns)]
                rows.extend(zip(*cols))
                del cols
    except Exception as exc:  # pyarrow's errors carry the reason
        return None, [upload.Problem(None, None, f"{path} cannot be read as Parquet: "
                                                 f"{str(exc).splitlines()[0][:200]}.")]
    return upload.Table(columns, tuple(rows), tuple(range(2, len(rows) + 2)), "parquet"), []


def _read_one(f: InputFile) -> tuple[upload.Table | None, list[upload.Problem]]:
    if f.kind == "parquet":
        table, problems = _read_parquet(f.fs, f.path)
    else:
        try:
            with f.fs.open_input_stream(f.path) as fh:
                data = fh.read()
        except OSError as exc:
            return None, [upload.Problem(None, None, f"{f.path} cannot be read: {exc}.")]
        table, found = upload.read_table(data, Path(f.path).name, max_bytes=_UNLIMITED, max_rows=_UNLIMITED)
        del data
        problems = [upload.Problem(p.row, p.column, f"{Path(f.path).name}: {p.problem}", p.severity) for p in found]
    if table is not None and f.partitions:
        extra = [(k, v) for k, v in f.partitions if k not in table.columns]  # a column in the file wins
        if extra:
            values = tuple(v for _, v in extra)
            table = upload.Table(table.columns + tuple(k for k, _ in extra), tuple(r + values for r in table.rows),
                                 table.row_numbers, table.kind, table.delimiter)
    return table, problems


def _same_columns(first: tuple[str, ...], table: upload.Table) -> upload.Table | None:
    """``table`` with its columns in the order of ``first`` (JSON Lines keys and CSV headers may come in another
    order), or None when the sets of columns differ."""
    if table.columns == first:
        return table
    if len(set(first)) != len(first) or set(table.columns) != set(first) or len(table.columns) != len(first):
        return None
    order = [table.columns.index(c) for c in first]
    return upload.Table(first, tuple(tuple(r[i] for i in order) for r in table.rows), table.row_numbers,
                        table.kind, table.delimiter)


def read_input(paths: str | Sequence[str], mapping: upload.ColumnMapping | None = None,
               empty: str = upload.EMPTY_SCORE, max_cell_chars: int = upload.MAX_CELL_CHARS) -> upload.Dataset:
    """Read and validate input files into a :class:`~bertscore_viz.upload.Dataset` with the Compare page's rules.

    Several files must have the same columns (in any order); they are read as one table in path order, rows numbered
    on from one file to the next (the header is row 1). A file with no rows among others is skipped and listed.

    Raises:
        InputError: a file missing or unreadable; no data rows at all; a required column missing; nothing left to
            score. The message lists the problems found. Row-level problems with good rows left are in
            ``dataset.problems``.
    """
    files = list_input_files(paths)
    columns: tuple[str, ...] | None = None
    first_path = ""
    rows: list[tuple] = []
    numbers: list[int] = []
    problems: list[upload.Problem] = []
    empty_files: list[str] = []
    for f in files:
        table, found = _read_one(f)
        if table is None:
            raise InputError(f"The input file {f.path} cannot be used: " + " ".join(p.problem for p in found))
        problems.extend(found)
        if not table.rows and len(files) > 1:
            empty_files.append(f.path)
            continue
        if columns is None:
            columns, first_path = table.columns, f.path
        else:
            same = _same_columns(columns, table)
            if same is None:
                only_first = [c for c in columns if c not in table.columns]
                only_this = [c for c in table.columns if c not in columns]
                raise InputError(f"The input files have different columns: {first_path} has {list(columns)}, "
                                 f"{f.path} has {list(table.columns)} (only in the first: {only_first}; only in "
                                 f"this one: {only_this}). Give files of one layout, or score them separately.")
            table = same
        offset = (numbers[-1] - 1) if numbers else 0
        rows.extend(table.rows)
        numbers.extend(n + offset for n in table.row_numbers)
        del table
    if not rows:
        where = ", ".join(f.path for f in files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
        raise InputError(f"The input has no data rows ({where}): nothing to score.")
    problems.extend(upload.Problem(None, None, f"{p} has no rows; skipped.", "warning") for p in empty_files)
    table = upload.Table(tuple(columns or ()), tuple(rows), tuple(numbers), files[0].kind)
    del rows, numbers
    ds = upload.build_dataset(table, mapping, empty, max_cell_chars, problems)
    del table
    if not ds.ok:
        errors = [p for p in ds.problems if p.severity == "error"] or ds.problems
        listing = " ".join(f"[{'row ' + str(p.row) + ': ' if p.row and p.row > 1 else ''}{p.problem}]"
                           for p in errors[:5])
        more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
        raise InputError(f"Nothing can be scored in {', '.join(f.path for f in files[:3])}: {listing}{more}")
    return ds


def mapping_from_args(reference: Sequence[str] | None = None, candidate: str | None = None,
                      system: str | None = None, systems: Sequence[str] | None = None, source: str | None = None,
                      segment_id: str | None = None) -> upload.ColumnMapping | None:
    """A column mapping from explicit column names (None when nothing is given: detected from the header).

    ``candidate`` without ``system`` is the plain layout: one system named after the candidate column.
    """
    if not (reference or candidate or system or systems or source or segment_id):
        return None
    if not reference:
        raise InputError("Name the reference column(s) too (--reference-column) when giving columns explicitly.")
    if system:
        if not candidate:
            raise InputError("The long layout needs --candidate-column next to --system-column.")
        return upload.ColumnMapping("long", tuple(reference), (), system, candidate, source, segment_id)
    cols = tuple(systems or ()) + ((candidate,) if candidate else ())
    if not cols:
        raise InputError("Name the system output column(s): --system-columns (wide layout), --candidate-column (one "
                         "system) or --system-column with --candidate-column (long layout).")
    return upload.ColumnMapping("wide", tuple(reference), cols, None, None, source, segment_id)


# --- workers ------------------------------------------------------------------------------------------------------
def _setup_worker(threads: int | None, cache_mb: float | None):
    import torch

    if threads:
        torch.set_num_threads(int(threads))
    if cache_mb is not None:
        from .encoder import CACHE

        CACHE.max_bytes = int(cache_mb * 2**20)


def _fail_once(path: str | None, index: int) -> None:
    """Fault injection for the tests, for block ``index`` as written in the file ``path``: ``N`` = the first worker
    to reach it dies, ``raise:N`` = its first call raises (both once: the file is removed first), ``always:N`` = every
    call raises (a block that cannot be scored)."""
    if not path or not os.path.exists(path):
        return
    try:
        with open(path) as fh:
            text = fh.read().strip()
        mode, _, target = text.rpartition(":")
        if index != int(target or 0):
            return
        if mode == "always":
            raise RuntimeError(f"injected failure in block {index}, on every attempt")
        os.remove(path)
    except (OSError, ValueError):
        return
    if mode == "raise":
        raise RuntimeError(f"injected failure in block {index}")
    os._exit(1)


def _peak_rss_mb() -> float:
    """Peak resident memory of this process so far, MB: Linux's ``VmHWM`` (of this program; ``ru_maxrss`` would keep
    the peak of a parent process across ``exec``), else ``ru_maxrss`` (macOS reports bytes, others kB)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 2**10
    except OSError:
        pass
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 2**10


def pair_notes(stats, raw: np.ndarray) -> list[str]:
    """Soft problems of each candidate (empty, truncated, degenerate idf), as short text ("" when none)."""
    special = list(stats.special_ids)
    notes = []
    for i, (a, b) in enumerate(stats.groups):
        found = []
        if np.isin(stats.cand_ids[i], special).all():
            found.append("empty candidate (scored 0)")
        if any(np.isin(stats.ref_ids[p], special).all() for p in range(a, b)):
            found.append("empty reference")
        if stats.cand_truncated[i]:
            found.append("candidate truncated at the model's maximum length")
        if stats.ref_truncated[a:b].any():
            found.append("reference truncated at the model's maximum length")
        if np.isnan(raw[i, 0]) or np.isnan(raw[i, 1]):
            found.append("idf degenerate: P or R undefined (NaN), F1 0")
        notes.append("; ".join(found))
    return notes


def score_block(scorer: Scorer, systems: dict[str, list[str]], references: list[list[str]]) -> dict:
    """Raw P/R/F1 of every (segment, system) of one block, segment-major (all systems of segment 0, then 1, ...).

    Returns:
        ``{"raw": (n, 3) float64, "best": (n,) int64 reference index of F1, "notes": [str]}``.
    """
    names = list(systems)
    cands, refs = [], []
    for i, group in enumerate(references):
        for name in names:
            cands.append(systems[name][i])
            refs.append(group)
    stats = scorer.match(cands, refs, keep="scores")
    res = scorer.result(stats, baseline=None)
    raw = np.stack([res.raw_precision, res.raw_recall, res.raw_f1], axis=1).astype(np.float64)
    return {"raw": raw, "best": np.asarray(res.best_reference[:, 2], dtype=np.int64), "notes": pair_notes(stats, raw)}


class _BlockScorer:
    """Ray actor: one Scorer (one model load, in the constructor); each call scores one block."""

    def __init__(self, scorer_kwargs: dict, idf: bool = False, threads: int | None = None,
                 cache_mb: float | None = DEFAULT_WORKER_CACHE_MB, fail_once: str | None = None):
        _setup_worker(threads, cache_mb)
        self.scorer = Scorer(**scorer_kwargs)
        _ = self.scorer.encoder  # load now: a model that cannot load fails the actor's start, not a block
        self.idf = bool(idf)
        self.fail_once = fail_once

    def ready(self) -> bool:
        return True

    def score(self, block: int, systems: dict[str, list[str]], references: list[list[str]],
              idf: list | None = None) -> dict:
        """``idf``: ``[ObjectRef of the corpus idf weights]`` (in a list, so that Ray hands over the reference and
        the weights are fetched once per actor, not with every block; a restarted actor fetches them again)."""
        if idf is not None and not self.scorer.idf:
            import ray

            self.scorer = self.scorer.replace(idf_weights=ray.get(idf[0]))
        if self.idf and not self.scorer.idf:
            raise RuntimeError("idf is on and the corpus weights have not reached this worker")
        _fail_once(self.fail_once, int(block))
        t0 = time.perf_counter()
        res = score_block(self.scorer, systems, references)
        res["seconds"] = time.perf_counter() - t0
        res["peak_rss_mb"] = _peak_rss_mb()
        return res


def document_frequencies(model: str | None, sentences: list[str]) -> tuple[np.ndarray, np.ndarray, int]:
    """Token ids, the number of sentences each occurs in, and the number of sentences (a Ray task of the idf
    pass; the tokenizer is loaded once per worker process). ``model`` is resolved on the worker, as the scoring
    actors resolve it (the bundled model lives wherever the package is installed on that node)."""
    from .encoder import get_tokenizer
    from .models import resolve_model

    tok = get_tokenizer(resolve_model(model))
    counts: Counter = Counter()
    for t in tok.encode(sentences):
        counts.update(set(t.ids.tolist()))
    ids = np.fromiter(counts.keys(), dtype=np.int64, count=len(counts))
    return ids, np.fromiter(counts.values(), dtype=np.int64, count=len(counts)), len(sentences)


class _BaselineBlock:
    """Ray actor: one baseline block at every layer, summarised as count, mean and squared deviations."""

    def __init__(self, scorer_kwargs: dict, threads: int | None = None,
                 cache_mb: float | None = DEFAULT_WORKER_CACHE_MB, fail_once: str | None = None):
        _setup_worker(threads, cache_mb)
        self.scorer = Scorer(**scorer_kwargs)
        self.n_layers = self.scorer.encoder.num_layers + 1
        self.fail_once = fail_once

    def ready(self) -> bool:
        return True

    def score(self, block: int, cands: list[str], refs: list[str]) -> tuple:
        from .baseline_compute import block_moments, score_block as baseline_block

        _fail_once(self.fail_once, int(block))
        return block_moments(baseline_block(self.scorer, cands, refs, self.n_layers))


# --- the pool -----------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Resources:
    """How the actor pool is laid out: ``workers`` actors, each with ``cpus`` CPUs (torch threads) and ``gpus``.
    ``note`` says what was changed from the request to fit the cluster ("" when nothing)."""

    workers: int
    cpus: int
    gpus: int
    note: str = ""

    def describe(self) -> str:
        kind = f"{self.gpus} GPU + {self.cpus} CPU" if self.gpus else f"{self.cpus} CPU thread(s)"
        return f"{self.workers} worker(s), {kind} each"

    def actor_options(self) -> dict:
        """Ray options of each actor: its resources, restarted when it dies, its calls retried then."""
        opts = {"num_cpus": self.cpus, "max_restarts": -1, "max_task_retries": ACTOR_TASK_RETRIES}
        if self.gpus:
            opts["num_gpus"] = self.gpus
        return opts


def plan_resources(ray, workers: int | None = None, cpus_per_worker: int | None = None,
                   device: str | None = None) -> Resources:
    """The actor pool for the cluster, one that can always be scheduled.

    One actor per GPU when the cluster has GPUs (and the device is not ``cpu``), never more than the GPUs; else CPU
    actors: by default one per CPU with one thread each, or ``workers`` actors sharing the CPUs. Actors that would
    not fit the nodes' CPUs are left out, with a ``note`` saying so.

    Raises:
        InputError: ``workers`` or ``cpus_per_worker`` below 1, more CPUs per worker than any node has, or a CUDA
            device asked for on a cluster without GPUs.
    """
    if workers is not None and workers < 1:
        raise InputError(f"--workers must be at least 1, got {workers}.")
    if cpus_per_worker is not None and cpus_per_worker < 1:
        raise InputError(f"--cpus-per-worker must be at least 1, got {cpus_per_worker}.")
    res = ray.cluster_resources()
    total_cpu = int(res.get("CPU", 0))
    gpus = int(res.get("GPU", 0))
    node_cpus = [int(n.get("Resources", {}).get("CPU", 0)) for n in ray.nodes() if n.get("Alive", True)]
    node_cpus = [c for c in node_cpus if c > 0] or ([total_cpu] if total_cpu else [])
    if not node_cpus:
        raise InputError("The Ray cluster has no CPU to run a worker on.")
    largest = max(node_cpus)
    if cpus_per_worker is not None and cpus_per_worker > largest:
        raise InputError(f"--cpus-per-worker {cpus_per_worker} is more than any node of the Ray cluster has (at most "
                         f"{largest} CPUs): no worker could start. Give at most {largest}.")
    use_gpu = gpus > 0 and (device is None or str(device).startswith("cuda"))
    if device is not None and str(device).startswith("cuda") and not gpus:
        raise InputError(f"--device {device} asks for a GPU, and the Ray cluster has none. Leave --device out (CPU "
                         "workers) or add GPU nodes.")
    if use_gpu:
        cpus = cpus_per_worker or 1
        fit = sum(c // cpus for c in node_cpus)
        want = workers or gpus
        n = max(1, min(want, gpus, fit))
        note = ""
        if n < want:
            note = (f"{want} workers asked for; the cluster has {gpus} GPU(s) and room for {fit} worker(s) of {cpus} "
                    f"CPU: using {n}.")
        return Resources(n, cpus, 1, note)
    if workers is None:
        cpus = cpus_per_worker or 1
        return Resources(max(1, sum(c // cpus for c in node_cpus)), cpus, 0)
    cpus = cpus_per_worker or max(1, min(largest, total_cpu // workers))
    fit = sum(c // cpus for c in node_cpus)
    n = max(1, min(workers, fit))
    note = ""
    if n < workers:
        note = (f"{workers} workers of {cpus} CPU(s) do not fit the cluster's {total_cpu} CPU(s) (largest node "
                f"{largest}): using {n}.")
    return Resources(n, cpus, 0, note)


class _Pool:
    """Actors of one class, fed by the driver: each call goes to the actor with the fewest calls in flight."""

    def __init__(self, ray, cls, ctor_kwargs: dict, res: Resources):
        self.ray = ray
        remote_cls = ray.remote(**res.actor_options())(cls)
        self.actors = [remote_cls.remote(**ctor_kwargs) for _ in range(res.workers)]
        self.load = [0] * len(self.actors)
        self.capacity = IN_FLIGHT_PER_WORKER * len(self.actors)

    def submit(self, key, args: tuple):
        i = min(range(len(self.actors)), key=self.load.__getitem__)
        self.load[i] += 1
        return self.actors[i].score.remote(key, *args), i

    def release(self, slot) -> None:
        self.load[slot] -= 1

    def close(self) -> None:
        for actor in self.actors:
            try:
                self.ray.kill(actor)
            except Exception:  # already gone
                pass
        self.actors = []


class _Tasks:
    """Ray tasks of one function (no actor): the idf pass."""

    def __init__(self, ray, fn, capacity: int, num_cpus: int = 1):
        self.remote = ray.remote(num_cpus=num_cpus, max_retries=ACTOR_TASK_RETRIES)(fn)
        self.capacity = max(1, capacity)

    def submit(self, key, args: tuple):
        return self.remote.remote(*args), None

    def release(self, slot) -> None:
        pass

    def close(self) -> None:
        pass


class _BlockFailed(Exception):
    def __init__(self, key, attempts: int, cause: BaseException):
        super().__init__(key, attempts, cause)
        self.key, self.attempts, self.cause = key, attempts, cause


def _stream(ray, pool, jobs: Iterable[tuple[int, Callable[[], tuple]]]) -> Iterator[tuple[int, object]]:
    """``(key, result)`` of every job, in the order they finish.

    ``jobs`` yields ``(key, make_args)``; ``make_args()`` builds a block's arguments only when the pool has room (at
    most ``pool.capacity`` calls in flight), so the blocks are never all in memory or in the object store at once. A
    call that raises is made again, up to :data:`BLOCK_ATTEMPTS` times in all.

    Raises:
        _BlockFailed: a block raised on every attempt. Ray's own errors (an actor that cannot start) pass through.
    """
    jobs = iter(jobs)
    pending: dict = {}
    exhausted = False

    def submit(key, make, attempt):
        ref, slot = pool.submit(key, make())
        pending[ref] = (key, make, attempt, slot)

    try:
        while True:
            while not exhausted and len(pending) < pool.capacity:
                nxt = next(jobs, None)
                if nxt is None:
                    exhausted = True
                else:
                    submit(nxt[0], nxt[1], 1)
            if not pending:
                return
            done, _ = ray.wait(list(pending), num_returns=1)
            key, make, attempt, slot = pending.pop(done[0])
            pool.release(slot)
            try:
                result = ray.get(done[0])
            except ray.exceptions.RayTaskError as exc:  # raised by the block's code: once more, on any actor
                if attempt < BLOCK_ATTEMPTS:
                    submit(key, make, attempt + 1)
                    continue
                raise _BlockFailed(key, attempt, getattr(exc, "cause", None) or exc) from None
            yield key, result
    finally:  # stopped early (an error, Ctrl-C): what is still queued is not run
        for ref in pending:
            try:
                ray.cancel(ref)
            except Exception:  # already finished, or its actor is gone
                pass


def _reason(exc: BaseException) -> str:
    """What went wrong, in one line, from a Ray error (the original exception, not Ray's traceback)."""
    if isinstance(exc, _BlockFailed):
        cause = exc.cause
        text = str(cause).strip().splitlines()
        return (f"block {exc.key} failed on all {exc.attempts} attempts: {type(cause).__name__}: "
                f"{(text[-1] if text else '')[:300]}")
    import re

    lines = [re.sub(r"\x1b\[[0-9;]*m", "", ln).strip() for ln in str(exc).splitlines()]
    lines = [ln for ln in lines if ln and not set(ln) <= set("^~ ")]
    if getattr(exc, "actor_init_failed", False):
        return f"a worker could not start ({lines[-1][:300] if lines else type(exc).__name__})"
    return f"{type(exc).__name__}: {(lines[-1] if lines else '')[:300]}"


def _guarded(ray, say_failed: Callable[[str], str]):
    """Turns Ray's errors into a :class:`WorkerError` whose message ``say_failed(reason)`` writes."""
    import contextlib

    @contextlib.contextmanager
    def guard():
        try:
            yield
        except _BlockFailed as exc:
            raise WorkerError(say_failed(_reason(exc))) from None
        except ray.exceptions.RayError as exc:
            raise WorkerError(say_failed(_reason(exc))) from None

    return guard()


# --- scoring ------------------------------------------------------------------------------------------------------
@dataclass
class ScoreRun:
    """What a distributed scoring run did.

    Attributes:
        output: the output directory; scores: its ``scores.parquet``.
        rows: rows in ``scores.parquet`` (segments x systems); blocks: total blocks; blocks_run: scored by this run
        (the others were already done); signature: of the reported numbers; problems: input problems (rows left
        out, empty cells); seconds: wall time; startup_seconds: Ray start-up and actor pool set-up (until the first
        block came back, less its own scoring time); block_seconds: each block's scoring time in its worker;
        worker_peak_rss_mb: largest peak resident memory of a worker process; driver_peak_rss_mb: of this process.
    """

    output: Path
    scores: Path
    rows: int
    blocks: int
    blocks_run: int
    signature: str
    problems: list = field(default_factory=list)
    seconds: float = 0.0
    startup_seconds: float = 0.0
    block_seconds: list = field(default_factory=list)
    resources: Resources | None = None
    worker_peak_rss_mb: float = 0.0
    driver_peak_rss_mb: float = 0.0


def _check_layer(scorer: Scorer) -> None:
    """The layer exists in the model, checked from its configuration (no weights loaded)."""
    import transformers

    spec = scorer.spec
    try:
        kwargs = {"local_files_only": True} if spec.local else {}
        config = transformers.AutoConfig.from_pretrained(spec.source, **kwargs)
    except (OSError, ValueError) as exc:
        raise ModelError(f"Could not load the configuration of {spec.name!r} from {spec.source!r}: "
                         f"{str(exc).splitlines()[0][:200]}.") from None
    n = getattr(config, "num_hidden_layers", None) or getattr(config, "n_layers", None)
    if n is not None and scorer.layer > int(n):
        raise ModelError(f"Layer {scorer.layer} does not exist in {spec.name}: it has layers 0 to {n} "
                         "(0 = embeddings).")


def _fingerprint(ds: upload.Dataset, settings: dict, block_segments: int) -> str:
    """The job's id: a hash of the settings (the full signature with its versions, torch's version, the baseline)
    and of every text, segment id, row and source, fed to the hash one piece at a time (no copy of the dataset)."""
    h = hashlib.sha256()

    def put(text: str) -> None:
        b = text.encode("utf-8", "surrogatepass")
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)

    names = list(ds.systems)
    put(json.dumps([settings, block_segments, names, ds.n_segments, ds.sources is not None], sort_keys=True,
                   ensure_ascii=False))
    columns = [ds.systems[s] for s in names]
    for i, refs in enumerate(ds.references):
        put(str(ds.segment_ids[i]))
        put(str(ds.rows[i]))
        put(ds.sources[i] if ds.sources is not None else "")
        h.update(len(refs).to_bytes(4, "little"))
        for r in refs:
            put(r)
        for col in columns:
            put(col[i])
    return h.hexdigest()[:32]


def _write_parquet(table, path: Path) -> None:
    """A Parquet file written atomically (a full disk is a message; the earlier file stays)."""
    import pyarrow.parquet as pq

    from .fileio import atomic_write_via

    atomic_write_via(path, lambda tmp: pq.write_table(table, tmp))


def _part_done(path: Path, expected_rows: int, job: str) -> bool:
    """The part exists, is readable, has the block's rows and was written by this job (its metadata says so)."""
    import pyarrow.parquet as pq

    from . import results_file

    try:
        if not path.is_file():
            return False
        meta = pq.read_metadata(path)
        info = json.loads((meta.metadata or {}).get(results_file.META_KEY, b"{}"))
        return meta.num_rows == expected_rows and info.get("job") == job
    except Exception:  # a damaged part is scored again
        return False


def _block_table(ds: upload.Dataset, names: list[str], a: int, b: int, raw: np.ndarray, best: np.ndarray,
                 notes: list[str], baseline: np.ndarray | None, rescale: bool, meta: dict):
    import pyarrow as pa

    from . import results_file
    from .scorer import rescaled as rescale_fn

    n_sys = len(names)
    seg = np.repeat(np.arange(a, b, dtype=np.int64), n_sys)
    scaled = rescale_fn(raw, baseline) if baseline is not None else np.full_like(raw, np.nan)
    reported = scaled if rescale else raw
    cols = {
        "segment_index": seg,
        "segment_id": [ds.segment_ids[i] for i in seg],
        "row": np.asarray([ds.rows[i] for i in seg], dtype=np.int64),
        "system": [names[k % n_sys] for k in range(len(seg))],
        "candidate": [ds.systems[names[k % n_sys]][i] for k, i in enumerate(seg)],
        "references": [list(ds.references[i]) for i in seg],
        "source": [ds.sources[i] for i in seg] if ds.sources is not None else [None] * len(seg),
        "precision": reported[:, 0], "recall": reported[:, 1], "f1": reported[:, 2],
        "raw_precision": raw[:, 0], "raw_recall": raw[:, 1], "raw_f1": raw[:, 2],
        "rescaled_precision": scaled[:, 0] if baseline is not None else None,
        "rescaled_recall": scaled[:, 1] if baseline is not None else None,
        "rescaled_f1": scaled[:, 2] if baseline is not None else None,
        "best_reference": best, "notes": notes,
    }
    schema = results_file.schema().with_metadata(meta)
    arrays = [pa.nulls(len(seg), pa.float64()) if cols[f.name] is None else pa.array(cols[f.name], type=f.type)
              for f in schema]
    return pa.Table.from_arrays(arrays, schema=schema)


def _baseline_file(scorer: Scorer, lang: str, baseline_path: str | None) -> str | None:
    """The name (not the path) of the baseline file the rescaled columns come from."""
    from .baseline import find_baseline

    try:
        return Path(find_baseline(scorer.spec.name, lang, baseline_path).source).name
    except BertScoreVizError:
        return None


def _load_idf(out: Path, job: str) -> tuple[dict, int] | None:
    """The document frequencies a run of this job counted and kept (None when absent or of another job)."""
    try:
        data = json.loads((out / IDF_FILE).read_text(encoding="utf-8"))
        if data.get("job") != job:
            return None
        return dict(zip(map(int, data["ids"]), map(int, data["counts"]))), int(data["num_documents"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _save_idf(out: Path, job: str, counts: dict, documents: int) -> None:
    from .fileio import atomic_write_text

    ids = sorted(counts)
    atomic_write_text(out / IDF_FILE, json.dumps({"job": job, "num_documents": documents, "ids": ids,
                                                  "counts": [counts[i] for i in ids]}, separators=(",", ":")))


def score_files(inputs: str | Sequence[str], output: str | Path, *, model: str | None = None,
                layer: int | None = None, idf: bool = False, rescale_with_baseline: bool = False, lang: str = "en",
                baseline_path: str | None = None, batch_size: int = 64, device: str | None = None,
                precision: str = "fp32", mapping: upload.ColumnMapping | None = None,
                empty: str = upload.EMPTY_SCORE, address: str | None = None, workers: int | None = None,
                cpus_per_worker: int | None = None, block_segments: int = DEFAULT_BLOCK_SEGMENTS,
                worker_cache_mb: float | None = DEFAULT_WORKER_CACHE_MB, overwrite: bool = False,
                progress: ProgressFn | None = None, log: Callable[[str], None] | None = None,
                fail_once: str | None = None) -> ScoreRun:
    """Score input files on Ray into ``output/scores.parquet``; see the module docstring for the steps.

    Args:
        inputs: file(s) or directory(ies): Parquet, CSV/TSV or JSON Lines, in the wide or long layout (or plain
            candidate/reference columns).
        output: a directory; holds ``parts/``, ``scores.parquet``, ``_job.json``, ``_idf.json`` (with idf) and
            ``problems.json``.
        model, layer, idf, rescale_with_baseline, lang, baseline_path, batch_size, device, precision: as
            :class:`~bertscore_viz.scorer.Scorer` (idf over all references of the input).
        mapping, empty: column roles (None = detected) and the empty-cell policy of the Compare page.
        address: None/``local`` (a new local Ray instance), ``auto``, ``HOST:PORT`` or ``ray://host:10001``.
        workers, cpus_per_worker: actor pool (default one per GPU, else one per CPU).
        block_segments: segments per block (all systems of each segment).
        worker_cache_mb: each worker's embedding cache bound.
        overwrite: replace the results of a different job found in ``output`` (else an error).
        progress: ``progress(pairs done, pairs total)``; log: one-line status messages.
        fail_once: testing only: a file holding a block id (``N``: the worker reaching it dies; ``raise:N``: the
            call raises), once.

    Raises:
        RayNotInstalled, InputError, ModelError, BaselineError: before anything is written or any worker starts.
        WorkerError: a worker could not start or a block failed on every attempt; finished blocks are kept.
    """
    t_start = time.perf_counter()
    say = log or (lambda _m: None)
    if block_segments < 1:
        raise InputError(f"The block size must be at least 1 segment, got {block_segments}.")
    _ray()  # installed? (said before anything is read or written)
    ds = read_input(inputs, mapping, empty)
    scorer = Scorer(model=model, layer=layer, idf=idf, rescale_with_baseline=rescale_with_baseline, lang=lang,
                    baseline_path=baseline_path, batch_size=batch_size, device=device, precision=precision)
    _check_layer(scorer)
    baseline = scorer.baseline
    if baseline is None:
        try:
            baseline = scorer.baseline_for(scorer.layer)  # rescaled columns too when a baseline exists
        except BaselineError:
            baseline = None
    from importlib.metadata import PackageNotFoundError, version

    try:
        torch_version = version("torch")  # not `import torch`: the driver loads no model and needs no torch
    except PackageNotFoundError:
        torch_version = ""
    names = list(ds.systems)
    n = ds.n_segments
    n_blocks = math.ceil(n / block_segments)
    sig = scorer.signature
    settings = {"model": scorer.spec.name, "source": scorer.spec.source, "layer": scorer.layer, "idf": scorer.idf,
                "rescale": scorer.rescale_with_baseline, "lang": lang, "signature": str(sig),
                "torch": torch_version, "baseline": None if baseline is None else baseline.tolist(),
                "precision": precision}
    fingerprint = _fingerprint(ds, settings, block_segments)
    out = Path(output)
    if out.suffix.lower() in (".parquet", ".pq"):
        raise InputError(f"--output names a directory (it will hold {SCORES_FILE} and the parts of the job); got "
                         f"{out}. Give a directory, e.g. {out.with_suffix('')}.")
    parts = out / PARTS_DIR
    job_path = out / JOB_FILE
    if job_path.exists():
        try:
            old = json.loads(job_path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            old = {}
        if old.get("fingerprint") != fingerprint:
            if not overwrite:
                raise InputError(f"The output directory {out} holds the results of a different job (other input, "
                                 "settings or software versions). Give a new directory, or --overwrite to replace "
                                 "them.")
            for p in parts.glob("part-*.parquet"):
                p.unlink()
            (out / SCORES_FILE).unlink(missing_ok=True)
            (out / IDF_FILE).unlink(missing_ok=True)
    parts.mkdir(parents=True, exist_ok=True)
    from . import results_file
    from .fileio import atomic_write_text

    given = [inputs] if isinstance(inputs, (str, Path)) else list(inputs)
    from .catalog import model_source_record

    # the results file travels (the app reads it on other machines): no path of this machine in it
    # model_path (a local directory only) lets the app on the same machine reopen the model for the drill-down
    extra = {"job": fingerprint, "model_source": model_source_record(scorer.spec),
             "model_path": scorer.spec.source if scorer.spec.local else None, "input": [str(p) for p in given],
             "lang": lang, "block_segments": block_segments,
             "baseline_file": _baseline_file(scorer, lang, baseline_path) if baseline is not None else None}
    meta = results_file.metadata(sig, baseline, names, n, extra)
    atomic_write_text(job_path, json.dumps({"fingerprint": fingerprint, "blocks": n_blocks,
                                            "block_segments": block_segments, "segments": n, "systems": names,
                                            "signature": str(sig), "settings": settings},
                                           indent=2, ensure_ascii=False) + "\n")
    atomic_write_text(out / PROBLEMS_FILE, json.dumps([p.as_dict() for p in ds.problems], indent=1,
                                                      ensure_ascii=False))
    bounds = [(k * block_segments, min(n, (k + 1) * block_segments)) for k in range(n_blocks)]
    todo = [k for k, (a, b) in enumerate(bounds)
            if not _part_done(parts / f"part-{k:06d}.parquet", (b - a) * len(names), fingerprint)]
    total_pairs = n * len(names)
    done_pairs = total_pairs - sum((bounds[k][1] - bounds[k][0]) * len(names) for k in todo)
    if progress:
        progress(done_pairs, total_pairs)
    run = ScoreRun(out, out / SCORES_FILE, total_pairs, n_blocks, len(todo), str(sig), list(ds.problems))
    frequencies = _load_idf(out, fingerprint) if scorer.idf else None
    if todo or (scorer.idf and frequencies is None):
        if done_pairs:
            say(f"resuming: {n_blocks - len(todo)} of {n_blocks} blocks already done in {parts}")
        ray = connect(address)
        res = plan_resources(ray, workers, cpus_per_worker, device)
        run.resources = res
        if res.note:
            say(res.note)
        say(f"Ray: {res.describe()}; {len(todo)} block(s) of up to {block_segments} segments x {len(names)} system(s)")
        finished = [n_blocks - len(todo)]

        def failed(reason: str) -> str:
            return (f"The Ray job stopped: {reason}. {finished[0]} of {n_blocks} block(s) are finished and kept in "
                    f"{parts}. Fix the cause and run the same command again: it scores only the rest.")

        with _guarded(ray, failed):
            if scorer.idf and frequencies is None:
                frequencies = _distributed_document_frequencies(ray, ds, bounds, model, res)
                _save_idf(out, fingerprint, *frequencies)
            weights = None
            if scorer.idf:
                from .idf import idf_from_counts

                weights = idf_from_counts(*frequencies)
                say(f"idf from {weights.num_documents:,} reference sentences ({len(weights.weights):,} token ids)")
            if todo:
                _score_blocks(ray, ds, names, bounds, todo, parts, meta, baseline, scorer, res, weights, run,
                              {"model": model, "layer": scorer.layer, "batch_size": batch_size,
                               "device": None if res.gpus else device, "precision": precision},
                              worker_cache_mb, fail_once, total_pairs, done_pairs, progress, finished, t_start)
    missing = [k for k, (a, b) in enumerate(bounds)
               if not _part_done(parts / f"part-{k:06d}.parquet", (b - a) * len(names), fingerprint)]
    if missing:
        raise WorkerError(f"{len(missing)} block(s) have no results after the run (first: {missing[0]}). Run the same "
                          "command again: finished blocks are kept.")
    if scorer.idf:
        meta = results_file.metadata(sig, baseline, names, n, extra, document_frequencies=frequencies)
    _merge(parts, n_blocks, out / SCORES_FILE, meta)
    run.seconds = time.perf_counter() - t_start
    run.driver_peak_rss_mb = _peak_rss_mb()
    return run


def _score_blocks(ray, ds, names, bounds, todo, parts: Path, meta: dict, baseline, scorer: Scorer, res: Resources,
                  weights, run: ScoreRun, scorer_kwargs: dict, worker_cache_mb, fail_once, total_pairs: int,
                  done_pairs: int, progress, finished: list, t_start: float) -> None:
    """The scoring pass: the blocks in ``todo`` through an actor pool, each result written as its part file."""

    def block_args(k: int) -> Callable[[], tuple]:
        a, b = bounds[k]
        return lambda: ({s: ds.systems[s][a:b] for s in names}, ds.references[a:b], idf_ref)

    idf_ref = [ray.put(weights)] if weights is not None else None  # held here until the pool is closed
    pool = _Pool(ray, _BlockScorer, {"scorer_kwargs": scorer_kwargs, "idf": weights is not None,
                                     "threads": res.cpus, "cache_mb": worker_cache_mb, "fail_once": fail_once}, res)
    first = None
    try:
        for k, row in _stream(ray, pool, ((k, block_args(k)) for k in todo)):
            a, b = bounds[k]
            table = _block_table(ds, names, a, b, np.asarray(row["raw"], dtype=np.float64).reshape(-1, 3),
                                 np.asarray(row["best"], dtype=np.int64), list(row["notes"]), baseline,
                                 scorer.rescale_with_baseline, meta)
            _write_parquet(table, parts / f"part-{k:06d}.parquet")
            del table
            finished[0] += 1
            run.block_seconds.append(float(row["seconds"]))
            run.worker_peak_rss_mb = max(run.worker_peak_rss_mb, float(row["peak_rss_mb"]))
            if first is None:
                first = time.perf_counter() - t_start - float(row["seconds"])
            done_pairs += (b - a) * len(names)
            if progress:
                progress(done_pairs, total_pairs)
    finally:
        pool.close()
    run.startup_seconds = first or 0.0


def _merge(parts: Path, n_blocks: int, target: Path, meta: dict) -> None:
    """Concatenate the parts in block order into one file, one part in memory at a time; written atomically."""
    import pyarrow.parquet as pq

    from . import results_file
    from .fileio import atomic_write_via

    schema = results_file.schema().with_metadata(meta)

    def render(tmp: str) -> None:
        with pq.ParquetWriter(tmp, schema) as writer:
            for k in range(n_blocks):
                writer.write_table(pq.read_table(parts / f"part-{k:06d}.parquet").cast(schema))

    atomic_write_via(target, render)


def _distributed_document_frequencies(ray, ds: upload.Dataset, bounds, model: str | None,
                                      res: Resources) -> tuple[dict, int]:
    """First pass: document frequencies of all reference sentences, counted per block by tokenizer-only Ray tasks
    (no model weights loaded), summed on the driver. Returns ``(token id -> count, number of sentences)``."""

    def block_args(a: int, b: int) -> Callable[[], tuple]:
        return lambda: (model, [r for group in ds.references[a:b] for r in group])

    tasks = _Tasks(ray, document_frequencies, IN_FLIGHT_PER_WORKER * res.workers * res.cpus)
    totals: Counter = Counter()
    documents = 0
    for _, (ids, counts, docs) in _stream(ray, tasks, ((k, block_args(a, b)) for k, (a, b) in enumerate(bounds))):
        totals.update(dict(zip(ids.tolist(), counts.tolist())))
        documents += int(docs)
    return dict(totals), documents


def _distributed_idf(ray, ds: upload.Dataset, bounds, model, scorer: Scorer, res: Resources):
    """idf weights over all references of ``ds`` from the distributed first pass (as :func:`score_files` uses)."""
    from .idf import idf_from_counts

    return idf_from_counts(*_distributed_document_frequencies(ray, ds, bounds, model, res))


# --- baselines ----------------------------------------------------------------------------------------------------
def ray_block_runner(address: str | None = None, workers: int | None = None, cpus_per_worker: int | None = None,
                     model: str | None = None, batch_size: int = 64, device: str | None = None,
                     precision: str = "fp32", worker_cache_mb: float | None = DEFAULT_WORKER_CACHE_MB,
                     fail_once: str | None = None, stats: dict | None = None):
    """A ``run_blocks`` for :func:`~bertscore_viz.baseline_compute.compute_baseline`: the blocks on a Ray actor pool,
    each block's sentences handed to Ray only when an actor has room.

    Raises:
        RayNotInstalled: at once, before the corpus is read.

    Returns:
        ``run(sentences, blocks, n_layers, progress)`` giving ``(k, mean, m2)`` per block in block order; it raises
        :class:`WorkerError` when a worker cannot start or a block fails on every attempt.
    """
    _ray()

    def run(sentences, blocks, n_layers, progress=None):
        ray = connect(address)
        res = plan_resources(ray, workers, cpus_per_worker, device)
        if stats is not None:
            stats["resources"] = res
        total = int(sum(len(p) for p in blocks))
        kwargs = {"scorer_kwargs": {"model": model, "layer": 0, "batch_size": batch_size,
                                    "device": None if res.gpus else device, "precision": precision},
                  "threads": res.cpus, "cache_mb": worker_cache_mb, "fail_once": fail_once}

        def block_args(pairs) -> Callable[[], tuple]:
            return lambda: ([sentences[i] for i in pairs[:, 0]], [sentences[j] for j in pairs[:, 1]])

        got: dict[int, tuple] = {}
        done = 0
        if progress:
            progress(0, total)

        def failed(reason: str) -> str:
            return f"The Ray baseline job stopped: {reason}. No file was written; run the same command again."

        with _guarded(ray, failed):
            pool = _Pool(ray, _BaselineBlock, kwargs, res)
            try:
                for b, (k, mean_b, m2_b) in _stream(ray, pool, ((b, block_args(p)) for b, p in enumerate(blocks))):
                    got[b] = (int(k), np.asarray(mean_b, dtype=np.float64).reshape(n_layers, 3),
                              np.asarray(m2_b, dtype=np.float64).reshape(n_layers, 3))
                    done += int(k)
                    if progress:
                        progress(done, total)
            finally:
                pool.close()
        missing = [b for b in range(len(blocks)) if b not in got]
        if missing:
            raise WorkerError(f"{len(missing)} baseline block(s) came back without results; run again.")
        return [got[b] for b in range(len(blocks))]

    return run


# --- command line -------------------------------------------------------------------------------------------------
def add_score_args(p) -> None:
    """The ``score --ray`` options (the model/layer/idf/rescale flags are the score command's own)."""
    g = p.add_argument_group("distributed (Ray)")
    g.add_argument("--ray", nargs="?", const="local", default=None, metavar="ADDRESS",
                   help="score on Ray: no address = a new local Ray instance on this machine's cores; 'auto' (the "
                        "cluster this machine joined), HOST:6379 or ray://HEAD:10001 for a cluster. Needs --input "
                        "and --output")
    g.add_argument("--input", nargs="+", default=None,
                   help="Parquet/CSV/TSV/JSON Lines file(s) or directories (searched recursively)")
    g.add_argument("--output", default=None, help="output directory (scores.parquet, parts/, problems.json)")
    g.add_argument("--workers", type=int, default=None, help="actors (default: one per GPU, else one per CPU)")
    g.add_argument("--cpus-per-worker", type=int, default=None, help="CPU threads per actor")
    g.add_argument("--block-segments", type=int, default=DEFAULT_BLOCK_SEGMENTS,
                   help=f"segments per block (default {DEFAULT_BLOCK_SEGMENTS})")
    g.add_argument("--reference-column", nargs="+", default=None, help="reference column(s) (default: detected)")
    g.add_argument("--candidate-column", default=None, help="candidate column (plain or long layout)")
    g.add_argument("--system-column", default=None, help="system-name column (long layout)")
    g.add_argument("--system-columns", nargs="+", default=None, help="one column per system (wide layout)")
    g.add_argument("--source-column", default=None, help="source-sentence column (optional)")
    g.add_argument("--segment-id-column", default=None, help="segment-id column (optional)")
    g.add_argument("--empty", choices=[upload.EMPTY_SCORE, upload.EMPTY_SKIP], default=upload.EMPTY_SCORE,
                   help="empty cells: score them as empty text (0) or skip the segment")
    g.add_argument("--overwrite", action="store_true", help="replace another job's results in --output")


def mapping_from_cli(args) -> upload.ColumnMapping | None:
    """The column mapping the ``score --ray`` flags give (None: detected from the header)."""
    return mapping_from_args(args.reference_column, args.candidate_column, args.system_column,
                             getattr(args, "system_columns", None), getattr(args, "source_column", None),
                             getattr(args, "segment_id_column", None))


def interrupted_message(args) -> str:
    """What Ctrl-C left behind in a ``score --ray`` run (for the command line's message)."""
    out = Path(args.output or ".")
    return (f"the blocks finished so far are kept in {out / PARTS_DIR} ({SCORES_FILE} is written only at the end and "
            "was not changed); run the same command again to score the rest")


def run_score_cli(args) -> int:
    """``python -m bertscore_viz score --ray [ADDRESS] --input PATH --output DIR [model flags]``."""
    if not args.input or not args.output:
        raise InputError("score --ray needs --input (files or directories) and --output (a directory).")
    with progress_bar("scoring pairs", "pairs") as bar:
        run = score_files(args.input, args.output, model=args.model, layer=args.layer, idf=args.idf,
                          rescale_with_baseline=args.rescale_with_baseline, lang=args.lang,
                          baseline_path=args.baseline_path, batch_size=args.batch_size, device=args.device,
                          precision=args.precision, mapping=mapping_from_cli(args), empty=args.empty,
                          address=args.ray, workers=args.workers, cpus_per_worker=args.cpus_per_worker,
                          block_segments=args.block_segments, overwrite=args.overwrite, progress=bar, log=bar.write)
    errors = [p for p in run.problems if p.severity == "error"]
    if run.problems:
        print(f"{len(run.problems)} input problem(s) ({len(errors)} row(s) left out); the list is in "
              f"{run.output / PROBLEMS_FILE}", file=sys.stderr)
        for p in run.problems[:5]:
            print(f"  row {p.row}: {p.problem}", file=sys.stderr)
    skipped = run.blocks - run.blocks_run
    print(f"wrote {run.scores} ({run.rows:,} rows; {run.blocks_run} block(s) scored"
          + (f", {skipped} already done" if skipped else "") + f"; {run.seconds:.1f} s)", file=sys.stderr)
    print(f"signature: {run.signature}")
    return 0
