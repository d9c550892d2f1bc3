"""What a batch scoring run (``score --ray``) writes in its output directory, and its block size (no imports: the
command line's parser states these without loading pyarrow)."""

from __future__ import annotations

__all__ = ["SCORES_FILE", "PARTS_DIR", "JOB_FILE", "IDF_FILE", "PROBLEMS_FILE", "DEFAULT_BLOCK_SEGMENTS"]

#: What a job writes in its output directory: the merged results, each block's part, the job's id and settings, the
#: idf pass's counts (a rerun reuses them) and the input problems.
SCORES_FILE, PARTS_DIR, JOB_FILE, IDF_FILE, PROBLEMS_FILE = (
    "scores.parquet", "parts", "_job.json", "_idf.json", "problems.json")

#: Segments per block (all systems of a segment go to the same block).
DEFAULT_BLOCK_SEGMENTS = 1000
