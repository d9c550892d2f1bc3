"""What runs on the workers: the scoring actor (one Scorer, one model load; a block per call), the idf pass's
document frequencies (tokenizer only), and the baseline actor."""

from __future__ import annotations

import time
from collections import Counter

import numpy as np

from bertscore_viz.distributed.options import DEFAULT_WORKER_CACHE_MB
from bertscore_viz.distributed.pool import peak_rss_mb, setup_worker
from bertscore_viz.engine.encoder import get_tokenizer
from bertscore_viz.engine.options import ScoringOptions
from bertscore_viz.engine.scorer import Scorer
from bertscore_viz.models.spec import resolve_model
from bertscore_viz.rescaling.baseline_compute import block_moments
from bertscore_viz.rescaling.baseline_compute import score_block as baseline_block


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


class BlockScorer:
    """Ray actor: one Scorer (one model load, in the constructor); each call scores one block."""

    def __init__(self, scoring: ScoringOptions, idf: bool = False, threads: int | None = None,
                 cache_mb: float | None = DEFAULT_WORKER_CACHE_MB):
        setup_worker(threads, cache_mb)
        self.scorer = scoring.scorer()
        _ = self.scorer.encoder  # load now: a model that cannot load fails the actor's start, not a block
        self.idf = bool(idf)

    def ready(self) -> bool:
        return True

    def score(self, block: int, systems: dict[str, list[str]], references: list[list[str]],
              idf: list | None = None) -> dict:
        """``idf``: ``[ObjectRef of the corpus idf weights]`` (in a list, so that Ray hands over the reference and
        the weights are fetched once per actor, not with every block; a restarted actor fetches them again)."""
        if idf is not None and not self.scorer.idf:
            import ray  # optional (the [ray] extra); this runs only inside a Ray worker

            self.scorer = self.scorer.replace(idf_weights=ray.get(idf[0]))
        if self.idf and not self.scorer.idf:
            raise RuntimeError("idf is on and the corpus weights have not reached this worker")
        t0 = time.perf_counter()
        res = score_block(self.scorer, systems, references)
        res["seconds"] = time.perf_counter() - t0
        res["peak_rss_mb"] = peak_rss_mb()
        return res


def document_frequencies(model: str | None, sentences: list[str], long_texts: str = "truncate"
                         ) -> tuple[np.ndarray, np.ndarray, int]:
    """Token ids, the number of sentences each occurs in, and the number of sentences (a Ray task of the idf
    pass; the tokenizer is loaded once per worker process). ``model`` is resolved on the worker, as the scoring
    actors resolve it (the bundled model lives wherever the package is installed on that node)."""
    tok = get_tokenizer(resolve_model(model))
    counts: Counter = Counter()
    for t in tok.encode(sentences, long_texts):
        counts.update(set(t.ids.tolist()))
    ids = np.fromiter(counts.keys(), dtype=np.int64, count=len(counts))
    return ids, np.fromiter(counts.values(), dtype=np.int64, count=len(counts)), len(sentences)


class BaselineBlock:
    """Ray actor: one baseline block at every layer, summarised as count, mean and squared deviations."""

    def __init__(self, scoring: ScoringOptions, threads: int | None = None,
                 cache_mb: float | None = DEFAULT_WORKER_CACHE_MB):
        setup_worker(threads, cache_mb)
        self.scorer = scoring.scorer()
        self.n_layers = self.scorer.encoder.num_layers + 1

    def ready(self) -> bool:
        return True

    def score(self, block: int, cands: list[str], refs: list[str]) -> tuple:
        return block_moments(baseline_block(self.scorer, cands, refs, self.n_layers))
