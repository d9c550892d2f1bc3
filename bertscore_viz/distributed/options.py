"""What a distributed job is asked to do: the scoring settings, how the input is read, and where it runs (no Ray,
no pyarrow here: the command line reads its defaults from this module)."""

from __future__ import annotations

from dataclasses import asdict, dataclass

__all__ = ["DEFAULT_BLOCK_SEGMENTS", "DEFAULT_WORKER_CACHE_MB", "EMPTY_SCORE", "EMPTY_SKIP", "ScoreOptions",
           "SCORES_FILE", "PARTS_DIR", "JOB_FILE", "IDF_FILE", "PROBLEMS_FILE"]

#: What a job writes in its output directory: the merged results, each block's part, the job's id and settings, the
#: idf pass's counts (a rerun reuses them) and the input problems.
SCORES_FILE, PARTS_DIR, JOB_FILE, IDF_FILE, PROBLEMS_FILE = (
    "scores.parquet", "parts", "_job.json", "_idf.json", "problems.json")

#: Segments per block (all systems of a segment go to the same block).
DEFAULT_BLOCK_SEGMENTS = 1000
#: Embedding cache of each worker, MB: a block's texts are embedded once anyway; the cache bounds reuse across blocks.
DEFAULT_WORKER_CACHE_MB = 512
#: The empty-cell policies of the Compare page (:mod:`bertscore_viz.files.upload`): empty cells scored as empty text
#: (0, with a note), or the segments holding one left out for every system.
EMPTY_SCORE, EMPTY_SKIP = "score", "skip"


@dataclass(frozen=True)
class ScoreOptions:
    """The options of :func:`~bertscore_viz.distributed.jobs.score_files`.

    Attributes:
        model, layer, idf, rescale_with_baseline, lang, baseline_path, batch_size, device, precision, long_texts:
            as :class:`~bertscore_viz.engine.scorer.Scorer` (idf over all references of the input; in window mode
            it counts every token of a long reference).
        mapping: column roles (a :class:`~bertscore_viz.files.upload.ColumnMapping`; None = detected).
        empty: :data:`EMPTY_SCORE` or :data:`EMPTY_SKIP`, as on the Compare page.
        address: None/``local`` (a new local Ray instance), ``auto``, ``HOST:PORT`` or ``ray://host:10001``.
        workers, cpus_per_worker: the actor pool (default one per GPU, else one per CPU).
        block_segments: segments per block (all systems of each segment).
        worker_cache_mb: each worker's embedding cache bound.
        overwrite: replace the results of a different job found in the output directory (else an error).
    """

    model: str | None = None
    layer: int | None = None
    idf: bool = False
    rescale_with_baseline: bool = False
    lang: str = "en"
    baseline_path: str | None = None
    batch_size: int = 64
    device: str | None = None
    precision: str = "fp32"
    long_texts: str = "truncate"
    mapping: object | None = None
    empty: str = EMPTY_SCORE
    address: str | None = None
    workers: int | None = None
    cpus_per_worker: int | None = None
    block_segments: int = DEFAULT_BLOCK_SEGMENTS
    worker_cache_mb: float | None = DEFAULT_WORKER_CACHE_MB
    overwrite: bool = False

    def scorer_kwargs(self) -> dict:
        """The :class:`~bertscore_viz.engine.scorer.Scorer` arguments among these options."""
        keys = ("model", "layer", "idf", "rescale_with_baseline", "lang", "baseline_path", "batch_size", "device",
                "precision", "long_texts")
        values = asdict(self)
        return {k: values[k] for k in keys}
