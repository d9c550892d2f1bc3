"""Scoring corpora and computing baselines on a Ray cluster, with the numbers of one process.

Ray is imported inside the functions here only, so the engine and the app import without it
(``pip install 'bertscore-viz[ray]'`` or ``-r requirements-ray.txt`` adds it).

Scoring (:func:`score_files`):

1. **On the driver, before any worker starts**: Ray is checked to be installed; the input files (Parquet, CSV/TSV,
   JSON Lines; files or directories, searched recursively, Hive-style ``key=value`` folders read as columns) are
   read and validated with the Compare page's rules (:mod:`bertscore_viz.files.upload`: wide or long layout, or plain
   ``candidate``/``reference`` columns; bad rows listed and left out, good rows kept); the model's layer and the
   baseline are checked. Any error stops here with a message, before anything is written.
2. The segments are cut into **blocks** of ``block_segments`` segments (all systems of a segment in the same block,
   so each reference is embedded once per block). Block ids are positions, so they are the same on every run.
3. **idf** (when on): a first pass of Ray tasks that load only the tokenizer counts, per block, in how many reference
   sentences each token id occurs; the driver sums the counts and the number of sentences and broadcasts the
   weights to the scoring actors. The weights equal :func:`bertscore_viz.engine.idf.compute_idf` over all references, as
   one process computes them; the counts are kept beside the output (a rerun reuses them) and in the results file
   (the app's drill-down reproduces the file's numbers with them).
4. **Scoring**: a pool of Ray actors (one :class:`~bertscore_viz.engine.scorer.Scorer`, hence one model load, per actor;
   ``num_gpus=1`` per actor when the cluster has GPUs, else CPU actors) scores one block per call with the engine's
   own token-sorted batching (``Scorer.match`` / ``Scorer.result``) and returns its raw P/R/F1. The driver feeds
   the pool itself: a block's texts are handed to Ray only when an actor has room (at most
   :data:`IN_FLIGHT_PER_WORKER` blocks per actor), so neither the driver, the object store nor a worker ever holds
   more than a few blocks beyond the validated input. (Ray Data's ``from_items`` would place every block in the
   object store before the first one is scored.)
5. The driver writes each finished block as ``parts/part-NNNNNN.parquet`` atomically (temporary file, then rename),
   with the job's id in its metadata, then merges the parts into ``scores.parquet``
   (:mod:`bertscore_viz.files.results.format` describes the columns and the signature in the metadata). A rerun into
   the same directory skips the parts of the same job: an interrupted job completes without duplicating or losing rows.
   An actor that dies is restarted by Ray and its blocks retried; a block whose call raises is tried again (up to
   :data:`BLOCK_ATTEMPTS` times in all). A failure that persists stops the job with a message; the finished parts stay.

Baselines (:func:`ray_block_runner`): the pairing of :func:`bertscore_viz.rescaling.baseline_compute.plan_pairs` is made
on the driver; each block is scored at every layer by an actor, which sends back the block's count, mean and sum of
squared deviations (float64); the driver merges them in block order exactly as the single-process loop does, so the file
is the single-process file for the same corpus, pairs and seed.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import transformers

from bertscore_viz.distributed.inputs import read_input
from bertscore_viz.distributed.options import DEFAULT_WORKER_CACHE_MB, ScoreOptions
from bertscore_viz.distributed.pool import (
    IN_FLIGHT_PER_WORKER,
    ActorPool,
    Resources,
    TaskPool,
    WorkerError,
    connect,
    guarded,
    import_ray,
    plan_resources,
    stream,
)
from bertscore_viz.distributed.workers import (
    BaselineBlock,
    BlockScorer,
    document_frequencies,
)
from bertscore_viz.engine.baseline import find_baseline
from bertscore_viz.engine.idf import idf_from_counts
from bertscore_viz.engine.matching import rescaled as rescale_fn
from bertscore_viz.engine.options import ScoringOptions
from bertscore_viz.engine.scorer import Scorer
from bertscore_viz.errors import (
    BaselineError,
    BertScoreVizError,
    InputError,
    ModelError,
)
from bertscore_viz.files.dataset import Dataset
from bertscore_viz.files.fileio import atomic_write_text, atomic_write_via, check_writable
from bertscore_viz.files.results import format as results_format
from bertscore_viz.files.results.layout import IDF_FILE, JOB_FILE, PARTS_DIR, PROBLEMS_FILE, SCORES_FILE
from bertscore_viz.models.catalog import model_source_record

__all__ = ["ProgressFn", "ScoreRun", "score_files", "distributed_document_frequencies", "ray_block_runner"]

ProgressFn = Callable[[int, int], None]


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
        worker_peak_rss_mb: largest peak resident memory of a worker process.
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


def _fingerprint(ds: Dataset, settings: dict, block_segments: int) -> str:
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

    atomic_write_via(path, lambda tmp: pq.write_table(table, tmp))


def _part_done(path: Path, expected_rows: int, job: str) -> bool:
    """The part exists, is readable, has the block's rows and was written by this job (its metadata says so)."""

    try:
        if not path.is_file():
            return False
        meta = pq.read_metadata(path)
        info = json.loads((meta.metadata or {}).get(results_format.META_KEY, b"{}"))
        return meta.num_rows == expected_rows and info.get("job") == job
    except Exception:  # a damaged part is scored again
        return False


def _block_table(ds: Dataset, names: list[str], a: int, b: int, raw: np.ndarray, best: np.ndarray,
                 notes: list[str], baseline: np.ndarray | None, rescale: bool, meta: dict):

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
    schema = results_format.schema().with_metadata(meta)
    arrays = [pa.nulls(len(seg), pa.float64()) if cols[f.name] is None else pa.array(cols[f.name], type=f.type)
              for f in schema]
    return pa.Table.from_arrays(arrays, schema=schema)


def _baseline_file(scorer: Scorer, lang: str, baseline_path: str | None) -> str | None:
    """The name (not the path) of the baseline file the rescaled columns come from."""

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

    ids = sorted(counts)
    atomic_write_text(out / IDF_FILE, json.dumps({"job": job, "num_documents": documents, "ids": ids,
                                                  "counts": [counts[i] for i in ids]}, separators=(",", ":")))


@dataclass
class _Job:
    """A validated job, before any worker starts: its input, scorer, baseline, settings and output files."""

    ds: Dataset
    scorer: Scorer
    options: ScoreOptions
    baseline: np.ndarray | None
    names: list[str]
    bounds: list[tuple[int, int]]
    fingerprint: str
    out: Path
    meta: dict
    extra: dict

    @property
    def parts(self) -> Path:
        return self.out / PARTS_DIR

    def part(self, k: int) -> Path:
        return self.parts / f"part-{k:06d}.parquet"

    def todo(self) -> list[int]:
        """The blocks without a finished part of this job."""
        return [k for k, (a, b) in enumerate(self.bounds)
                if not _part_done(self.part(k), (b - a) * len(self.names), self.fingerprint)]


def score_files(inputs: str | Sequence[str], output: str | Path, options: ScoreOptions = ScoreOptions(), *,
                progress: ProgressFn | None = None, log: Callable[[str], None] | None = None) -> ScoreRun:
    """Score input files on Ray into ``output/scores.parquet``; see the module docstring for the steps.

    Args:
        inputs: file(s) or directory(ies): Parquet, CSV/TSV or JSON Lines, in the wide or long layout (or plain
            candidate/reference columns).
        output: a directory; holds ``parts/``, ``scores.parquet``, ``_job.json``, ``_idf.json`` (with idf) and
            ``problems.json``.
        options: the scoring settings, how the input is read and where the job runs (:class:`ScoreOptions`).
        progress: ``progress(pairs done, pairs total)``; log: one-line status messages.

    Raises:
        RayNotInstalled, InputError, ModelError, BaselineError: before anything is written or any worker starts.
        WorkerError: a worker could not start or a block failed on every attempt; finished blocks are kept.
    """
    t_start = time.perf_counter()
    say = log or (lambda _m: None)
    job = _prepare(inputs, output, options)
    todo = job.todo()
    total_pairs = job.ds.n_segments * len(job.names)
    done_pairs = total_pairs - sum((job.bounds[k][1] - job.bounds[k][0]) * len(job.names) for k in todo)
    if progress:
        progress(done_pairs, total_pairs)
    run = ScoreRun(job.out, job.out / SCORES_FILE, total_pairs, len(job.bounds), len(todo), str(job.scorer.signature),
                   list(job.ds.problems))
    frequencies = _load_idf(job.out, job.fingerprint) if job.scorer.idf else None
    if todo or (job.scorer.idf and frequencies is None):
        if done_pairs:
            say(f"resuming: {len(job.bounds) - len(todo)} of {len(job.bounds)} blocks already done in {job.parts}")
        frequencies = _run_on_ray(job, todo, frequencies, run, say, progress, (done_pairs, total_pairs), t_start)
    missing = job.todo()
    if missing:
        raise WorkerError(f"{len(missing)} block(s) have no results after the run (first: {missing[0]}). Run the same "
                          "command again: finished blocks are kept.")
    meta = job.meta
    if job.scorer.idf:
        meta = results_format.metadata(job.scorer.signature, job.baseline, job.names, job.ds.n_segments, job.extra,
                                     document_frequencies=frequencies)
    _merge(job.parts, len(job.bounds), job.out / SCORES_FILE, meta)
    run.seconds = time.perf_counter() - t_start
    return run


def _prepare(inputs, output, options: ScoreOptions) -> _Job:
    """Step 1 (driver, before any worker starts): Ray installed, the input read and checked, the scorer, the layer
    and the baseline checked, the job's id, and the output directory made ready (job file, problems list)."""
    if options.block_segments < 1:
        raise InputError(f"The block size must be at least 1 segment, got {options.block_segments}.")
    import_ray()  # installed? (said before anything is read or written)
    ds = read_input(inputs, options.mapping, options.empty)
    scorer = options.scoring().scorer()
    _check_layer(scorer)
    baseline = scorer.baseline
    if baseline is None:
        try:
            baseline = scorer.baseline_for(scorer.layer)  # rescaled columns too when a baseline exists
        except BaselineError:
            baseline = None
    names, n = list(ds.systems), ds.n_segments
    settings = {"model": scorer.spec.name, "source": scorer.spec.source, "layer": scorer.layer, "idf": scorer.idf,
                "rescale": scorer.rescale_with_baseline, "lang": options.lang, "signature": str(scorer.signature),
                "torch": _torch_version(), "baseline": None if baseline is None else baseline.tolist(),
                "precision": options.precision, "long_texts": options.long_texts}
    fingerprint = _fingerprint(ds, settings, options.block_segments)
    out = _output_dir(output, fingerprint, options.overwrite)
    given = [inputs] if isinstance(inputs, (str, Path)) else list(inputs)
    # the results file travels (the app reads it on other machines): no path of this machine in it;
    # model_path (a local directory only) lets the app on the same machine reopen the model for the drill-down
    extra = {"job": fingerprint, "model_source": model_source_record(scorer.spec),
             "model_path": scorer.spec.source if scorer.spec.local else None, "input": [str(p) for p in given],
             "lang": options.lang, "block_segments": options.block_segments,
             "baseline_file": (_baseline_file(scorer, options.lang, options.baseline_path)
                               if baseline is not None else None)}
    meta = results_format.metadata(scorer.signature, baseline, names, n, extra)
    n_blocks = math.ceil(n / options.block_segments)
    atomic_write_text(out / JOB_FILE, json.dumps({"fingerprint": fingerprint, "blocks": n_blocks,
                                                  "block_segments": options.block_segments, "segments": n,
                                                  "systems": names, "signature": str(scorer.signature),
                                                  "settings": settings}, indent=2, ensure_ascii=False) + "\n")
    atomic_write_text(out / PROBLEMS_FILE, json.dumps([p.as_dict() for p in ds.problems], indent=1,
                                                      ensure_ascii=False))
    bounds = [(k * options.block_segments, min(n, (k + 1) * options.block_segments)) for k in range(n_blocks)]
    return _Job(ds, scorer, options, baseline, names, bounds, fingerprint, out, meta, extra)


def _torch_version() -> str:
    """The installed torch, from its metadata (part of the job's id: another torch may round differently)."""
    try:
        return version("torch")
    except PackageNotFoundError:
        return ""


def _output_dir(output, fingerprint: str, overwrite: bool) -> Path:
    """The output directory, with ``parts/``; another job's results there are an error (or removed with
    ``overwrite``); this job's finished parts stay (a rerun resumes)."""
    out = Path(output)
    if out.suffix.lower() in (".parquet", ".pq"):
        raise InputError(f"--output names a directory (it will hold {SCORES_FILE} and the parts of the job); got "
                         f"{out}. Give a directory, e.g. {out.with_suffix('')}.")
    parts = out / PARTS_DIR
    job_path = out / JOB_FILE
    check_writable(job_path, "the job's output directory")  # a file in the way, a folder not writable: before work
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
    return out


def _run_on_ray(job: _Job, todo: list[int], frequencies, run: ScoreRun, say, progress, pairs: tuple[int, int],
                t_start: float):
    """Steps 3 and 4: the idf pass (when on and not kept from an earlier run) and the scoring pass, on an actor
    pool planned for the cluster. Returns the document frequencies (None without idf)."""
    options = job.options
    ray = connect(options.address)
    res = plan_resources(ray, options.workers, options.cpus_per_worker, options.device)
    run.resources = res
    if res.note:
        say(res.note)
    say(f"Ray: {res.describe()}; {len(todo)} block(s) of up to {options.block_segments} segments x "
        f"{len(job.names)} system(s)")
    finished = [len(job.bounds) - len(todo)]

    def failed(reason: str) -> str:
        return (f"The Ray job stopped: {reason}. {finished[0]} of {len(job.bounds)} block(s) are finished and kept "
                f"in {job.parts}. Fix the cause and run the same command again: it scores only the rest.")

    with guarded(ray, failed):
        if job.scorer.idf and frequencies is None:
            frequencies = distributed_document_frequencies(ray, job.ds, job.bounds, options.model, res,
                                                           options.long_texts)
            _save_idf(job.out, job.fingerprint, *frequencies)
        weights = None
        if job.scorer.idf:
            weights = idf_from_counts(*frequencies)
            say(f"idf from {weights.num_documents:,} reference sentences ({len(weights.weights):,} token ids)")
        if todo:
            # each worker resolves the model itself (the bundled model is wherever the package is on its node);
            # idf comes as the corpus weights, rescaling is applied by the driver to the merged raw scores
            scoring = ScoringOptions(model=options.model, layer=job.scorer.layer, batch_size=options.batch_size,
                                     device=None if res.gpus else options.device, precision=options.precision,
                                     long_texts=options.long_texts)
            _score_blocks(ray, job, todo, res, weights, run, scoring, pairs, progress, finished, t_start)
    return frequencies


def _score_blocks(ray, job: _Job, todo: list[int], res: Resources, weights, run: ScoreRun, scoring: ScoringOptions,
                  pairs: tuple[int, int], progress, finished: list, t_start: float) -> None:
    """The scoring pass: the blocks in ``todo`` through an actor pool, each result written as its part file."""
    ds, names = job.ds, job.names
    done_pairs, total_pairs = pairs

    def block_args(k: int) -> Callable[[], tuple]:
        a, b = job.bounds[k]
        return lambda: ({s: ds.systems[s][a:b] for s in names}, ds.references[a:b], idf_ref)

    idf_ref = [ray.put(weights)] if weights is not None else None  # held here until the pool is closed
    pool = ActorPool(ray, BlockScorer, {"scoring": scoring, "idf": weights is not None,
                                        "threads": res.cpus, "cache_mb": job.options.worker_cache_mb}, res)
    first = None
    try:
        for k, row in stream(ray, pool, ((k, block_args(k)) for k in todo)):
            a, b = job.bounds[k]
            table = _block_table(ds, names, a, b, np.asarray(row["raw"], dtype=np.float64).reshape(-1, 3),
                                 np.asarray(row["best"], dtype=np.int64), list(row["notes"]), job.baseline,
                                 job.scorer.rescale_with_baseline, job.meta)
            _write_parquet(table, job.part(k))
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

    schema = results_format.schema().with_metadata(meta)

    def render(tmp: str) -> None:
        with pq.ParquetWriter(tmp, schema) as writer:
            for k in range(n_blocks):
                writer.write_table(pq.read_table(parts / f"part-{k:06d}.parquet").cast(schema))

    atomic_write_via(target, render)


def distributed_document_frequencies(ray, ds: Dataset, bounds, model: str | None,
                                      res: Resources, long_texts: str = "truncate") -> tuple[dict, int]:
    """First pass: document frequencies of all reference sentences, counted per block by tokenizer-only Ray tasks
    (no model weights loaded), summed on the driver. Returns ``(token id -> count, number of sentences)``."""

    def block_args(a: int, b: int) -> Callable[[], tuple]:
        return lambda: (model, [r for group in ds.references[a:b] for r in group], long_texts)

    tasks = TaskPool(ray, document_frequencies, IN_FLIGHT_PER_WORKER * res.workers * res.cpus)
    totals: Counter = Counter()
    documents = 0
    for _, (ids, counts, docs) in stream(ray, tasks, ((k, block_args(a, b)) for k, (a, b) in enumerate(bounds))):
        totals.update(dict(zip(ids.tolist(), counts.tolist())))
        documents += int(docs)
    return dict(totals), documents


# --- baselines ----------------------------------------------------------------------------------------------------
def ray_block_runner(address: str | None = None, workers: int | None = None, cpus_per_worker: int | None = None,
                     model: str | None = None, batch_size: int = 64, device: str | None = None,
                     precision: str = "fp32", worker_cache_mb: float | None = DEFAULT_WORKER_CACHE_MB,
                     stats: dict | None = None):
    """A ``run_blocks`` for :func:`~bertscore_viz.rescaling.baseline_compute.compute_baseline`: the blocks on a Ray
    actor pool, each block's sentences handed to Ray only when an actor has room.

    Raises:
        RayNotInstalled: at once, before the corpus is read.

    Returns:
        ``run(sentences, blocks, n_layers, progress)`` giving ``(k, mean, m2)`` per block in block order; it raises
        :class:`WorkerError` when a worker cannot start or a block fails on every attempt.
    """
    import_ray()

    def run(sentences, blocks, n_layers, progress=None):
        ray = connect(address)
        res = plan_resources(ray, workers, cpus_per_worker, device)
        if stats is not None:
            stats["resources"] = res
        total = int(sum(len(p) for p in blocks))
        kwargs = {"scoring": ScoringOptions(model=model, layer=0, batch_size=batch_size,
                                            device=None if res.gpus else device, precision=precision),
                  "threads": res.cpus, "cache_mb": worker_cache_mb}

        def block_args(pairs) -> Callable[[], tuple]:
            return lambda: ([sentences[i] for i in pairs[:, 0]], [sentences[j] for j in pairs[:, 1]])

        got: dict[int, tuple] = {}
        done = 0
        if progress:
            progress(0, total)

        def failed(reason: str) -> str:
            return f"The Ray baseline job stopped: {reason}. No file was written; run the same command again."

        with guarded(ray, failed):
            pool = ActorPool(ray, BaselineBlock, kwargs, res)
            try:
                for b, (k, mean_b, m2_b) in stream(ray, pool, ((b, block_args(p)) for b, p in enumerate(blocks))):
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
