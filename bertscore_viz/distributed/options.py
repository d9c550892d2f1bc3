"""What a distributed job is asked to do: the scoring settings, how the input is read, and where it runs (no Ray,
no pyarrow here). The output directory's names and the block size are :mod:`bertscore_viz.files.results.layout`'s,
the empty-cell policies :mod:`bertscore_viz.files.dataset`'s (the command line reads its defaults from those)."""

from __future__ import annotations

from dataclasses import dataclass

from bertscore_viz.engine.options import ScoringOptions
from bertscore_viz.files.dataset import EMPTY_SCORE
from bertscore_viz.files.results.layout import DEFAULT_BLOCK_SEGMENTS

__all__ = ["DEFAULT_WORKER_CACHE_MB", "ScoreOptions"]

#: Embedding cache of each worker, MB: a block's texts are embedded once anyway; the cache bounds reuse across blocks.
DEFAULT_WORKER_CACHE_MB = 512


@dataclass(frozen=True)
class ScoreOptions:
    """The options of :func:`~bertscore_viz.distributed.jobs.score_files`.

    Attributes:
        model, layer, idf, rescale_with_baseline, lang, baseline_path, batch_size, device, precision, long_texts:
            as :class:`~bertscore_viz.engine.scorer.Scorer` (idf over all references of the input; in window mode
            it counts every token of a long reference).
        mapping: column roles (a :class:`~bertscore_viz.files.columns.ColumnMapping`; None = detected).
        empty: ``EMPTY_SCORE`` or ``EMPTY_SKIP`` of :mod:`bertscore_viz.files.dataset`, as on the Compare page.
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

    def scoring(self) -> ScoringOptions:
        """The scoring options among these (what builds the driver's scorer)."""
        return ScoringOptions.from_namespace(self)
