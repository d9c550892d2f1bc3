"""Scoring corpora and computing baselines on a Ray cluster (Ray Data), with the numbers of one process.

Ray is imported inside the functions here only, so the engine and the app import without it
(``pip install 'bertscore-viz[ray]'`` or ``-r requirements-ray.txt`` adds it).

Scoring (:func:`score_files`):

1. **On the driver, before any worker starts**: the input files (Parquet, CSV/TSV, JSON Lines; files or
   directories) are read and validated with the Compare page's rules (:mod:`bertscore_viz.upload`: wide or long
   layout, or plain ``candidate``/``reference`` columns; bad rows listed and left out, good rows kept); the model's
   layer and the baseline are checked. Any error stops here with a message.
2. The segments are cut into **blocks** of ``block_segments`` segments (all systems of a segment in the same block,
   so each reference is embedded once per block). Block ids are positions, so they are the same on every run.
3. **idf** (when on): a first Ray Data pass counts, per block, in how many reference sentences each token id occurs;
   the driver sums the counts and the number of sentences and broadcasts the weights to the scoring actors. The
   weights equal :func:`bertscore_viz.idf.compute_idf` over all references, as one process computes them.
4. **Scoring**: a Ray Data actor pool (one :class:`~bertscore_viz.scorer.Scorer`, hence one model load, per actor;
   ``num_gpus=1`` per actor when the cluster has GPUs, else CPU actors) scores one block per call with the engine's
   own token-sorted batching (``Scorer.match`` / ``Scorer.result``) and returns its raw P/R/F1. Ray Data streams the
   blocks with backpressure: a worker holds one block, its model and a bounded embedding cache.
5. The driver writes each finished block as ``parts/part-NNNNNN.parquet`` atomically (temporary file, then rename),
   then merges the parts into ``scores.parquet`` (:mod:`bertscore_viz.results_file` describes the columns and the
   signature in the metadata). A rerun into the same directory skips the finished parts: an interrupted job
   completes without duplicating or losing rows. A worker that dies is restarted by Ray and its block retried; a
   retried block overwrites the same part file.

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
from typing import Callable, Sequence

import numpy as np

from . import upload
from .errors import BaselineError, BertScoreVizError, InputError, ModelError
from .scorer import Scorer

ProgressFn = Callable[[int, int], None]
#: Segments per block (all systems of a segment go to the same block).
DEFAULT_BLOCK_SEGMENTS = 1000
#: Embedding cache of each worker, MB: a block's texts are embedded once anyway; the cache bounds reuse across blocks.
DEFAULT_WORKER_CACHE_MB = 512
INPUT_KINDS = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".tsv": "csv", ".txt": "csv",
               ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl"}
SCORES_FILE = "scores.parquet"
PARTS_DIR = "parts"
JOB_FILE = "_job.json"
PROBLEMS_FILE = "problems.json"
_UNLIMITED = 1 << 62


class RayNotInstalled(BertScoreVizError):
    """Ray (with Ray Data) is needed for this and is not installed."""


def _ray():
    try:
        import ray
        import ray.data  # noqa: F401
    except ImportError:
        raise RayNotInstalled("Distributed scoring needs Ray with Ray Data, which is not installed. Install it with "
                              "`pip install -r requirements-ray.txt` (or `pip install 'bertscore-viz[ray]'`).") from None
    return ray


def connect(address: str | None = None, num_cpus: int | None = None):
    """Ray, initialised: an existing session is reused; no address (or ``local``) starts a local instance on this
    machine's cores; ``auto`` joins the cluster this machine belongs to; ``ray://host:10001`` connects a client.

    Raises:
        RayNotInstalled, InputError: Ray missing, or the cluster cannot be reached (with the address).
    """
    ray = _ray()
    if not ray.is_initialized():
        try:
            if address in (None, "", "local"):
                ray.init(num_cpus=num_cpus, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
            else:
                ray.init(address=address, logging_level="ERROR", log_to_driver=False)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise InputError(f"Could not connect to the Ray cluster at {address!r}: {str(exc).splitlines()[0][:200]}. "
                             "Start one with `ray start --head` (then use --ray auto on that machine) or give the "
                             "client address ray://HEAD:10001.") from None
    import logging

    logging.getLogger("ray.data").setLevel(logging.WARNING)
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False  # we print one bar with counts
    ctx.print_on_execution_start = False
    return ray


# --- input ------------------------------------------------------------------------------------------------------
def _filesystem(path: str):
    import pyarrow.fs as pafs

    if "://" in path:
        try:
            return pafs.FileSystem.from_uri(path)
        except Exception as exc:
            raise InputError(f"Cannot open {path}: {str(exc).splitlines()[0][:200]}.") from None
    return pafs.LocalFileSystem(), os.path.abspath(path)


def list_input_files(paths: str | Sequence[str]) -> list[tuple[object, str, str]]:
    """``(filesystem, path, kind)`` of every input file; a directory means its Parquet/CSV/TSV/JSON Lines files,
    sorted by name (hidden files and names starting with ``_`` skipped).

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
            found = sorted((f for f in fs.get_file_info(pafs.FileSelector(path))
                            if f.type == pafs.FileType.File and not f.base_name.startswith((".", "_"))
                            and Path(f.base_name).suffix.lower() in INPUT_KINDS), key=lambda f: f.path)
            if not found:
                raise InputError(f"The input directory {given} holds no .parquet, .csv, .tsv or .jsonl file.")
            out.extend((fs, f.path, INPUT_KINDS[Path(f.base_name).suffix.lower()]) for f in found)
            continue
        kind = INPUT_KINDS.get(Path(path).suffix.lower())
        if kind is None:
            raise InputError(f"Cannot tell the format of {given} from its extension; name it .parquet, .csv, .tsv, "
                             ".jsonl or .json.")
        out.append((fs, path, kind))
    if not out:
        raise InputError("No input given: pass --input FILE_OR_DIRECTORY.")
    return out


def _cell(v):
    if v is None:
        return ""
    if isinstance(v, str):
        return v
    if isinstance(v, (list, tuple)) and all(isinstance(x, str) for x in v):
        return tuple(v)  # several references in one cell, as a JSON list
    if isinstance(v, bool):
        return str(v).lower()
    return str(v)


def _read_one(fs, path: str, kind: str) -> tuple[upload.Table | None, list[upload.Problem]]:
    if kind == "parquet":
        import pyarrow.parquet as pq

        try:
            with fs.open_input_file(path) as fh:
                table = pq.read_table(fh)
        except Exception as exc:  # pyarrow's errors carry the reason
            return None, [upload.Problem(None, None, f"{path} cannot be read as Parquet: "
                                                     f"{str(exc).splitlines()[0][:200]}.")]
        if table.num_rows == 0:
            return None, [upload.Problem(None, None, f"{path} has no rows.")]
        cols = [[_cell(v) for v in table.column(i).to_pylist()] for i in range(table.num_columns)]
        rows = tuple(zip(*cols))
        return upload.Table(tuple(str(c).strip() for c in table.column_names), rows,
                            tuple(range(2, len(rows) + 2)), "parquet"), []
    try:
        with fs.open_input_stream(path) as fh:
            data = fh.read()
    except OSError as exc:
        return None, [upload.Problem(None, None, f"{path} cannot be read: {exc}.")]
    table, problems = upload.read_table(data, Path(path).name, max_bytes=_UNLIMITED, max_rows=_UNLIMITED)
    return table, [upload.Problem(p.row, p.column, f"{Path(path).name}: {p.problem}", p.severity) for p in problems]


def read_input(paths: str | Sequence[str], mapping: upload.ColumnMapping | None = None,
               empty: str = upload.EMPTY_SCORE, max_cell_chars: int = upload.MAX_CELL_CHARS) -> upload.Dataset:
    """Read and validate input files into a :class:`~bertscore_viz.upload.Dataset` with the Compare page's rules.

    Several files must have the same columns; they are read as one table in file-name order, rows numbered on
    from one file to the next (the header is row 1).

    Raises:
        InputError: a file missing, unreadable or empty; a required column missing; nothing left to score. The
            message lists the problems found. Row-level problems with good rows left are in ``dataset.problems``.
    """
    files = list_input_files(paths)
    columns = None
    rows: list[tuple] = []
    numbers: list[int] = []
    problems: list[upload.Problem] = []
    for fs, path, kind in files:
        table, found = _read_one(fs, path, kind)
        if table is None:
            raise InputError(f"The input file {path} cannot be used: " + " ".join(p.problem for p in found))
        problems.extend(found)
        if columns is None:
            columns = table.columns
        elif table.columns != columns:
            raise InputError(f"The input files have different columns: {files[0][1]} has {list(columns)}, {path} has "
                             f"{list(table.columns)}. Give files of one layout, or score them separately.")
        offset = (numbers[-1] - 1) if numbers else 0
        rows.extend(table.rows)
        numbers.extend(n + offset for n in table.row_numbers)
    table = upload.Table(tuple(columns or ()), tuple(rows), tuple(numbers), files[0][2])
    ds = upload.build_dataset(table, mapping, empty, max_cell_chars, problems)
    if not ds.ok:
        errors = [p for p in ds.problems if p.severity == "error"] or ds.problems
        listing = " ".join(f"[{'row ' + str(p.row) + ': ' if p.row and p.row > 1 else ''}{p.problem}]"
                           for p in errors[:5])
        more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
        raise InputError(f"Nothing can be scored in {', '.join(p for _, p, _ in files[:3])}: {listing}{more}")
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
        raise InputError("Name the system output column(s): --candidate-column (one system) or --system-column "
                         "with --candidate-column (long layout).")
    return upload.ColumnMapping("wide", tuple(reference), cols, None, None, source, segment_id)


# --- workers ------------------------------------------------------------------------------------------------------
class _BroadcastIdfScorer(Scorer):
    """A Scorer whose idf is given (computed over the whole corpus), not taken from each call's references."""

    def __init__(self, idf_weights=None, **kwargs):
        super().__init__(idf=idf_weights is not None, **kwargs)
        self._broadcast_idf = idf_weights

    def idf_weights(self, references):
        if self._broadcast_idf is not None:
            return self._broadcast_idf
        return super().idf_weights(references)


def _setup_worker(threads: int | None, cache_mb: float | None):
    import torch

    if threads:
        torch.set_num_threads(int(threads))
    if cache_mb is not None:
        from .encoder import CACHE

        CACHE.max_bytes = int(cache_mb * 2**20)


def _fail_once(path: str | None, index: int) -> None:
    """Fault injection for the tests: the first worker to reach block ``index`` written in ``path`` dies."""
    if not path or not os.path.exists(path):
        return
    try:
        with open(path) as fh:
            target = int(fh.read().strip() or 0)
        if index != target:
            return
        os.remove(path)
    except (OSError, ValueError):
        return
    os._exit(1)


def _peak_rss_mb() -> float:
    """Peak resident memory of this process so far, MB (Linux reports kB, macOS bytes)."""
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
    stats = scorer.match(cands, refs)
    res = scorer.result(stats, baseline=None)
    raw = np.stack([res.raw_precision, res.raw_recall, res.raw_f1], axis=1).astype(np.float64)
    return {"raw": raw, "best": np.asarray(res.best_reference[:, 2], dtype=np.int64), "notes": pair_notes(stats, raw)}


class _BlockScorer:
    """Ray Data actor: one Scorer (one model load); each call scores one block."""

    def __init__(self, scorer_kwargs: dict, idf_weights=None, threads: int | None = None,
                 cache_mb: float | None = DEFAULT_WORKER_CACHE_MB, fail_once: str | None = None):
        _setup_worker(threads, cache_mb)
        self.scorer = _BroadcastIdfScorer(idf_weights, **scorer_kwargs)
        _ = self.scorer.encoder  # load now: one model load per actor, before the first block
        self.fail_once = fail_once

    def __call__(self, batch: dict) -> dict:
        out = {"block": [], "raw": [], "best": [], "notes": [], "seconds": [], "peak_rss_mb": []}
        for block, payload in zip(batch["block"], batch["payload"]):
            _fail_once(self.fail_once, int(block))
            t0 = time.perf_counter()
            data = json.loads(payload)
            res = score_block(self.scorer, data["systems"], data["references"])
            out["block"].append(int(block))
            out["raw"].append(res["raw"].tobytes())
            out["best"].append(res["best"].tobytes())
            out["notes"].append(json.dumps(res["notes"]))
            out["seconds"].append(time.perf_counter() - t0)
            out["peak_rss_mb"].append(_peak_rss_mb())
        return {"peak_rss_mb": np.asarray(out["peak_rss_mb"], dtype=np.float64),
                "block": np.asarray(out["block"], dtype=np.int64), "raw": np.asarray(out["raw"], dtype=object),
                "best": np.asarray(out["best"], dtype=object), "notes": np.asarray(out["notes"], dtype=object),
                "seconds": np.asarray(out["seconds"], dtype=np.float64)}


class _DocumentFrequencies:
    """Ray Data actor: token-id document frequencies of one block's reference sentences."""

    def __init__(self, model, device=None, precision: str = "fp32", threads: int | None = None):
        from .encoder import get_encoder
        from .models import resolve_model

        _setup_worker(threads, None)
        self.encoder = get_encoder(resolve_model(model), device, precision)

    def __call__(self, batch: dict) -> dict:
        ids_out, counts_out, docs = [], [], []
        for payload in batch["payload"]:
            sentences = json.loads(payload)
            counts: Counter = Counter()
            for tok in self.encoder.encode(sentences):
                counts.update(set(tok.ids.tolist()))
            ids_out.append(np.fromiter(counts.keys(), dtype=np.int64, count=len(counts)).tobytes())
            counts_out.append(np.fromiter(counts.values(), dtype=np.int64, count=len(counts)).tobytes())
            docs.append(len(sentences))
        return {"ids": np.asarray(ids_out, dtype=object), "counts": np.asarray(counts_out, dtype=object),
                "documents": np.asarray(docs, dtype=np.int64)}


class _BaselineBlock:
    """Ray Data actor: one baseline block at every layer, summarised as count, mean and squared deviations."""

    def __init__(self, scorer_kwargs: dict, threads: int | None = None,
                 cache_mb: float | None = DEFAULT_WORKER_CACHE_MB, fail_once: str | None = None):
        _setup_worker(threads, cache_mb)
        self.scorer = Scorer(**scorer_kwargs)
        self.n_layers = self.scorer.encoder.num_layers + 1
        self.fail_once = fail_once

    def __call__(self, batch: dict) -> dict:
        from .baseline_compute import block_moments, score_block as baseline_block

        out = {"block": [], "k": [], "mean": [], "m2": []}
        for block, payload in zip(batch["block"], batch["payload"]):
            _fail_once(self.fail_once, int(block))
            cands, refs = json.loads(payload)
            k, mean_b, m2_b = block_moments(baseline_block(self.scorer, cands, refs, self.n_layers))
            out["block"].append(int(block))
            out["k"].append(k)
            out["mean"].append(mean_b.tobytes())
            out["m2"].append(m2_b.tobytes())
        return {"block": np.asarray(out["block"], dtype=np.int64), "k": np.asarray(out["k"], dtype=np.int64),
                "mean": np.asarray(out["mean"], dtype=object), "m2": np.asarray(out["m2"], dtype=object)}


@dataclass(frozen=True)
class Resources:
    """How the actor pool is laid out: ``workers`` actors, each with ``cpus`` CPUs (torch threads) and ``gpus``."""

    workers: int
    cpus: int
    gpus: int

    def describe(self) -> str:
        kind = f"{self.gpus} GPU + {self.cpus} CPU" if self.gpus else f"{self.cpus} CPU thread(s)"
        return f"{self.workers} worker(s), {kind} each"


def plan_resources(ray, workers: int | None = None, cpus_per_worker: int | None = None,
                   device: str | None = None) -> Resources:
    """One actor per GPU when the cluster has GPUs (and the device is not ``cpu``); else CPU actors: by default one
    per CPU with one thread each, or ``workers`` actors sharing the CPUs."""
    res = ray.cluster_resources()
    total_cpu = max(1, int(res.get("CPU", 1)))
    gpus = int(res.get("GPU", 0))
    if workers is not None and workers < 1:
        raise InputError(f"--workers must be at least 1, got {workers}.")
    if gpus and (device is None or str(device).startswith("cuda")):
        return Resources(workers or gpus, cpus_per_worker or 1, 1)
    if workers is None:
        cpus = cpus_per_worker or 1
        return Resources(max(1, total_cpu // cpus), cpus, 0)
    return Resources(workers, cpus_per_worker or max(1, total_cpu // workers), 0)


def _map(ray, items: list[dict], cls, ctor_kwargs: dict, res: Resources):
    """A Ray Data pipeline: one item per block, through an actor pool of ``cls``, one block per call.

    Ray Data restarts an actor that dies and retries its block (``max_restarts=-1``, ``max_task_retries=-1`` are its
    defaults for actor pools); a block's output reaches the driver once, after its call succeeded.
    """
    data = ray.data.from_items(items, override_num_blocks=max(1, len(items)))
    kwargs = {"num_gpus": res.gpus} if res.gpus else {}
    return data.map_batches(cls, batch_size=1, batch_format="numpy",
                            compute=ray.data.ActorPoolStrategy(size=max(1, min(res.workers, len(items)))),
                            fn_constructor_kwargs=ctor_kwargs, num_cpus=res.cpus, **kwargs)


# --- scoring ------------------------------------------------------------------------------------------------------
@dataclass
class ScoreRun:
    """What a distributed scoring run did.

    Attributes:
        output: the output directory; scores: its ``scores.parquet``.
        rows: rows in ``scores.parquet`` (segments x systems); blocks: total blocks; blocks_run: scored by this run
        (the others were already done); signature: of the reported numbers; problems: input problems (rows left
        out, empty cells); seconds: wall time; startup_seconds: Ray start-up and actor pool set-up (first block);
        block_seconds: each block's scoring time in its worker; worker_peak_rss_mb: largest peak resident memory
        of a worker process.
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
    h = hashlib.sha256(json.dumps([settings, block_segments, list(ds.systems), list(ds.systems.values()),
                                   ds.references, ds.segment_ids, ds.rows, ds.sources],
                                  ensure_ascii=False).encode("utf-8"))
    return h.hexdigest()[:32]


def _write_atomic(table, path: Path) -> None:
    import pyarrow.parquet as pq

    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    pq.write_table(table, tmp)
    os.replace(tmp, path)


def _part_done(path: Path, expected_rows: int) -> bool:
    import pyarrow.parquet as pq

    try:
        return path.is_file() and pq.read_metadata(path).num_rows == expected_rows
    except Exception:  # a damaged part is scored again
        return False


def _block_table(ds: upload.Dataset, names: list[str], a: int, b: int, raw: np.ndarray, best: np.ndarray,
                 notes: list[str], baseline: np.ndarray | None, rescale: bool, meta: dict):
    import pyarrow as pa

    from . import results_file
    from .similarity import rescale as rescale_fn

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
        output: a directory; holds ``parts/``, ``scores.parquet``, ``_job.json`` and ``problems.json``.
        model, layer, idf, rescale_with_baseline, lang, baseline_path, batch_size, device, precision: as
            :class:`~bertscore_viz.scorer.Scorer` (idf over all references of the input).
        mapping, empty: column roles (None = detected) and the empty-cell policy of the Compare page.
        address: None/``local`` (a local Ray instance), ``auto`` or ``ray://host:10001``.
        workers, cpus_per_worker: actor pool (default one per GPU, else one per CPU).
        block_segments: segments per block (all systems of each segment).
        worker_cache_mb: each worker's embedding cache bound.
        overwrite: replace the results of a different job found in ``output`` (else an error).
        progress: ``progress(pairs done, pairs total)``; log: one-line status messages.
        fail_once: testing only: a file holding a block id; the worker reaching that block dies once.

    Raises:
        InputError, ModelError, BaselineError: before any worker starts.
    """
    t_start = time.perf_counter()
    say = log or (lambda _m: None)
    if block_segments < 1:
        raise InputError(f"The block size must be at least 1 segment, got {block_segments}.")
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
    names = list(ds.systems)
    n = ds.n_segments
    n_blocks = math.ceil(n / block_segments)
    settings = {"model": scorer.spec.name, "source": scorer.spec.source, "layer": scorer.layer, "idf": scorer.idf,
                "rescale": scorer.rescale_with_baseline, "lang": lang,
                "baseline": None if baseline is None else baseline.tolist(), "precision": precision}
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
                raise InputError(f"The output directory {out} holds the results of a different job (other input or "
                                 "settings). Give a new directory, or --overwrite to replace them.")
            for p in parts.glob("part-*.parquet"):
                p.unlink()
            (out / SCORES_FILE).unlink(missing_ok=True)
    parts.mkdir(parents=True, exist_ok=True)
    sig = scorer.signature
    from . import results_file

    meta = results_file.metadata(sig, baseline, names, n,
                                 {"job": fingerprint, "model_source": scorer.spec.source, "input": [str(p) for p in ([inputs] if isinstance(
                                     inputs, (str, Path)) else inputs)]})
    job_path.write_text(json.dumps({"fingerprint": fingerprint, "blocks": n_blocks, "block_segments": block_segments,
                                    "segments": n, "systems": names, "signature": str(sig), "settings": settings},
                                   indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    (out / PROBLEMS_FILE).write_text(json.dumps([p.as_dict() for p in ds.problems], indent=1, ensure_ascii=False),
                                     encoding="utf-8")
    bounds = [(k * block_segments, min(n, (k + 1) * block_segments)) for k in range(n_blocks)]
    todo = [k for k, (a, b) in enumerate(bounds)
            if not _part_done(parts / f"part-{k:06d}.parquet", (b - a) * len(names))]
    total_pairs = n * len(names)
    done_pairs = total_pairs - sum((bounds[k][1] - bounds[k][0]) * len(names) for k in todo)
    if progress:
        progress(done_pairs, total_pairs)
    run = ScoreRun(out, out / SCORES_FILE, total_pairs, n_blocks, len(todo), str(sig), list(ds.problems))
    if todo:
        if done_pairs:
            say(f"resuming: {n_blocks - len(todo)} of {n_blocks} blocks already done in {parts}")
        ray = connect(address)
        res = plan_resources(ray, workers, cpus_per_worker, device)
        run.resources = res
        say(f"Ray: {res.describe()}; {len(todo)} block(s) of up to {block_segments} segments x {len(names)} system(s)")
        weights = None
        if scorer.idf:
            weights = _distributed_idf(ray, ds, bounds, model, scorer, res)
            say(f"idf from {weights.num_documents:,} reference sentences ({len(weights.weights):,} token ids)")
        scorer_kwargs = {"model": model, "layer": scorer.layer, "batch_size": batch_size, "device": device,
                         "precision": precision}
        items = [{"block": k, "payload": json.dumps(
            {"systems": {s: ds.systems[s][bounds[k][0]:bounds[k][1]] for s in names},
             "references": ds.references[bounds[k][0]:bounds[k][1]]}, ensure_ascii=False)} for k in todo]
        pipeline = _map(ray, items, _BlockScorer,
                        {"scorer_kwargs": scorer_kwargs, "idf_weights": weights, "threads": res.cpus,
                         "cache_mb": worker_cache_mb, "fail_once": fail_once}, res)
        first = None
        for row in pipeline.iter_rows():
            k = int(row["block"])
            a, b = bounds[k]
            raw = np.frombuffer(row["raw"], dtype=np.float64).reshape(-1, 3)
            best = np.frombuffer(row["best"], dtype=np.int64)
            table = _block_table(ds, names, a, b, raw, best, json.loads(row["notes"]), baseline,
                                 scorer.rescale_with_baseline, meta)
            _write_atomic(table, parts / f"part-{k:06d}.parquet")
            run.block_seconds.append(float(row["seconds"]))
            run.worker_peak_rss_mb = max(run.worker_peak_rss_mb, float(row["peak_rss_mb"]))
            if first is None:
                first = time.perf_counter() - t_start - float(row["seconds"])
            done_pairs += (b - a) * len(names)
            if progress:
                progress(done_pairs, total_pairs)
        run.startup_seconds = first or 0.0
    missing = [k for k, (a, b) in enumerate(bounds)
               if not _part_done(parts / f"part-{k:06d}.parquet", (b - a) * len(names))]
    if missing:
        raise BertScoreVizError(f"{len(missing)} block(s) have no results after the run (first: {missing[0]}). Run "
                                "the same command again: finished blocks are kept.")
    _merge(parts, n_blocks, out / SCORES_FILE, meta)
    run.seconds = time.perf_counter() - t_start
    return run


def _merge(parts: Path, n_blocks: int, target: Path, meta: dict) -> None:
    """Concatenate the parts in block order into one file, one part in memory at a time; written atomically."""
    import pyarrow.parquet as pq

    from . import results_file

    schema = results_file.schema().with_metadata(meta)
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
    with pq.ParquetWriter(tmp, schema) as writer:
        for k in range(n_blocks):
            writer.write_table(pq.read_table(parts / f"part-{k:06d}.parquet").cast(schema))
    os.replace(tmp, target)


def _distributed_idf(ray, ds: upload.Dataset, bounds, model, scorer: Scorer, res: Resources):
    """First pass: document frequencies of all reference sentences, counted per block by an actor pool, summed."""
    from .idf import idf_from_counts

    items = [{"block": k, "payload": json.dumps([r for group in ds.references[a:b] for r in group],
                                                 ensure_ascii=False)} for k, (a, b) in enumerate(bounds)]
    pipeline = _map(ray, items, _DocumentFrequencies,
                    {"model": model, "device": scorer.device,
                     "precision": scorer.precision, "threads": res.cpus}, res)
    totals: Counter = Counter()
    documents = 0
    for row in pipeline.iter_rows():
        ids = np.frombuffer(row["ids"], dtype=np.int64)
        counts = np.frombuffer(row["counts"], dtype=np.int64)
        totals.update(dict(zip(ids.tolist(), counts.tolist())))
        documents += int(row["documents"])
    return idf_from_counts(totals, documents)


# --- baselines ----------------------------------------------------------------------------------------------------
def ray_block_runner(address: str | None = None, workers: int | None = None, cpus_per_worker: int | None = None,
                     model: str | None = None, batch_size: int = 64, device: str | None = None,
                     precision: str = "fp32", worker_cache_mb: float | None = DEFAULT_WORKER_CACHE_MB,
                     fail_once: str | None = None, stats: dict | None = None):
    """A ``run_blocks`` for :func:`~bertscore_viz.baseline_compute.compute_baseline`: the blocks on a Ray actor pool.

    Returns:
        ``run(sentences, blocks, n_layers, progress)`` giving ``(k, mean, m2)`` per block in block order.
    """

    def run(sentences, blocks, n_layers, progress=None):
        ray = connect(address)
        res = plan_resources(ray, workers, cpus_per_worker, device)
        if stats is not None:
            stats["resources"] = res
        items = [{"block": b, "payload": json.dumps([[sentences[i] for i in pairs[:, 0]],
                                                     [sentences[j] for j in pairs[:, 1]]], ensure_ascii=False)}
                 for b, pairs in enumerate(blocks)]
        total = int(sum(len(p) for p in blocks))
        kwargs = {"scorer_kwargs": {"model": model, "layer": 0, "batch_size": batch_size, "device": device,
                                    "precision": precision},
                  "threads": res.cpus, "cache_mb": worker_cache_mb, "fail_once": fail_once}
        got: dict[int, tuple] = {}
        done = 0
        if progress:
            progress(0, total)
        for row in _map(ray, items, _BaselineBlock, kwargs, res).iter_rows():
            b = int(row["block"])
            shape = (n_layers, 3)
            got[b] = (int(row["k"]), np.frombuffer(row["mean"], dtype=np.float64).reshape(shape),
                      np.frombuffer(row["m2"], dtype=np.float64).reshape(shape))
            done += int(row["k"])
            if progress:
                progress(done, total)
        missing = [b for b in range(len(blocks)) if b not in got]
        if missing:
            raise BertScoreVizError(f"{len(missing)} baseline block(s) came back without results; run again.")
        return [got[b] for b in range(len(blocks))]

    return run


# --- command line -------------------------------------------------------------------------------------------------
def add_score_args(p) -> None:
    """The ``score --ray`` options (the model/layer/idf/rescale flags are the score command's own)."""
    g = p.add_argument_group("distributed (Ray)")
    g.add_argument("--ray", nargs="?", const="local", default=None, metavar="ADDRESS",
                   help="score on Ray: no address = a local Ray instance on this machine's cores; 'auto' or "
                        "ray://HEAD:10001 for a cluster. Needs --input and --output")
    g.add_argument("--input", nargs="+", default=None, help="Parquet/CSV/TSV/JSON Lines file(s) or directories")
    g.add_argument("--output", default=None, help="output directory (scores.parquet, parts/, problems.json)")
    g.add_argument("--workers", type=int, default=None, help="actors (default: one per GPU, else one per CPU)")
    g.add_argument("--cpus-per-worker", type=int, default=None, help="CPU threads per actor")
    g.add_argument("--block-segments", type=int, default=DEFAULT_BLOCK_SEGMENTS,
                   help=f"segments per block (default {DEFAULT_BLOCK_SEGMENTS})")
    g.add_argument("--reference-column", nargs="+", default=None, help="reference column(s) (default: detected)")
    g.add_argument("--candidate-column", default=None, help="candidate column (plain or long layout)")
    g.add_argument("--system-column", default=None, help="system-name column (long layout)")
    g.add_argument("--empty", choices=[upload.EMPTY_SCORE, upload.EMPTY_SKIP], default=upload.EMPTY_SCORE,
                   help="empty cells: score them as empty text (0) or skip the segment")
    g.add_argument("--overwrite", action="store_true", help="replace another job's results in --output")


def _bar(what: str):
    start = time.perf_counter()

    def progress(done: int, total: int) -> None:
        rate = done / max(1e-9, time.perf_counter() - start)
        width = 30
        filled = int(width * done / total) if total else width
        print(f"\r{what} [{'#' * filled}{'.' * (width - filled)}] {done:,}/{total:,} ({rate:,.0f}/s)", end="",
              file=sys.stderr, flush=True)

    return progress


def run_score_cli(args) -> int:
    """``python -m bertscore_viz score --ray [ADDRESS] --input PATH --output DIR [model flags]``."""
    if not args.input or not args.output:
        raise InputError("score --ray needs --input (files or directories) and --output (a directory).")
    mapping = mapping_from_args(args.reference_column, args.candidate_column, args.system_column)
    run = score_files(args.input, args.output, model=args.model, layer=args.layer, idf=args.idf,
                      rescale_with_baseline=args.rescale_with_baseline, lang=args.lang,
                      baseline_path=args.baseline_path, batch_size=args.batch_size, device=args.device,
                      precision=args.precision, mapping=mapping, empty=args.empty, address=args.ray,
                      workers=args.workers, cpus_per_worker=args.cpus_per_worker, block_segments=args.block_segments,
                      overwrite=args.overwrite, progress=_bar("scoring pairs"),
                      log=lambda m: print(m, file=sys.stderr))
    print(file=sys.stderr)
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
