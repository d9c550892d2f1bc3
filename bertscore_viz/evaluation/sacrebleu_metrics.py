"""chrF, BLEU and TER beside BERTScore: sacrebleu's sentence and corpus scores of every system, its signatures, and
its paired bootstrap over the corpus scores, with sacrebleu's numbers.

**Scores.** Each metric's sufficient statistics are extracted once per system, by sacrebleu itself
(``Metric._extract_corpus_statistics``, the step its ``corpus_score``, ``sentence_score`` and significance tests all
start from); from them:

* the corpus score is ``Metric._aggregate_and_compute(statistics)``, which is what ``sacrebleu.corpus_chrf``,
  ``corpus_bleu`` and ``corpus_ter`` return with their defaults (chrF2: 6 character and 0 word n-grams; BLEU: 13a,
  exp smoothing, no effective order; TER: case-insensitive, not normalised);
* a segment's score is ``_aggregate_and_compute([its statistics])``, which is what ``sentence_chrf``,
  ``sentence_bleu`` (its own defaults: effective order) and ``sentence_ter`` return for that segment.

Several references per segment go to sacrebleu as reference streams, a segment with fewer references padded with
``None`` (sacrebleu's variable-reference convention, ``nrefs:var`` in the signature). An empty reference is passed
as it is: sacrebleu scores the segment 0 (TER 100); in corpus chrF such a segment adds nothing to the statistics.

**Significance** (:func:`resampled_scores`, :func:`metric_significance`): sacrebleu's paired bootstrap
(``sacrebleu --paired-bs``: ``significance._paired_bs_test``), computed by :mod:`bertscore_viz.stats` from the
statistics (:func:`~bertscore_viz.stats.resampling.resampled_corpus_scores`): resamples
``numpy.random.default_rng(DEFAULT_SEED).choice(n, size=(1000, n))`` (sacrebleu's seed, 12345); in each, a system's
statistics of the drawn segments (float32) are summed and the corpus score recomputed
(``Metric._compute_score_from_stats``); the p of a pair is sacrebleu's ``(c + 1) / (n + 1)`` over the centred
absolute differences, the interval its ``n // 40`` indices. sacrebleu draws the same resamples for every system (one
seed), so one pass over each system's resamples serves every pair, not only the pairs with sacrebleu's baseline: the
p of a system against the baseline is the p ``PairedTest(..., test_type="bs")`` gives (pinned by the tests), and
every other pair's is the p sacrebleu would give with that pair's baseline. The resamples are drawn in blocks
(:func:`~bertscore_viz.stats.resampling.resample_indices`) and each resample's statistics summed on its own, so
memory does not grow with resamples x segments, which sacrebleu's one ``stats[idxs]`` array does. As
:mod:`bertscore_viz.stats.analysis` does for BERTScore, a pair of systems with identical outputs, or one segment,
gets ``p = 1`` (sacrebleu: ``1 / (n + 1)``).

**Bounds.** chrF and BLEU cost about 1 ms an output of 70 words; TER's shift search grows with about the cube of
the length (6 ms at 20 words, 0.3 s at 75, 3 s at 150). :func:`plan` leaves out a metric over :data:`MAX_OUTPUTS`
outputs (systems x segments) or over a bound in seconds of its :func:`estimated_seconds`, with the reason and the
sacrebleu command that scores it (:attr:`SurfaceScores.skipped`). The app computes them in the background
(:mod:`bertscore_viz.serving.sentence_metrics`) from :func:`chunk_statistics`, chunk by chunk.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
from sacrebleu.metrics import BLEU, CHRF, TER

from bertscore_viz.errors import InputError
from bertscore_viz.stats.analysis import Significance, analyse_resampled
from bertscore_viz.stats.ranking import rank_order
from bertscore_viz.stats.resampling import DEFAULT_SAMPLES, DEFAULT_SEED, resampled_corpus_scores

__all__ = [
    "COST_PER_OUTPUT", "HIGHER_IS_BETTER", "MAX_OUTPUTS", "METRICS", "MetricScores", "SurfaceScores",
    "chunk_statistics", "chunks_statistics", "corpus_metric", "duration", "estimated_seconds", "identical_pairs",
    "metric_scores", "metric_significance", "plan", "reference_streams", "resampled_scores", "segment_chunks",
    "sentence_metric", "surface_scores",
]

#: The metrics, in the order the page shows them.
METRICS = ("chrF", "BLEU", "TER")
#: TER is an edit rate: the best system has the lowest.
HIGHER_IS_BETTER = {"chrF": True, "BLEU": True, "TER": False}
#: Most outputs (systems x segments) scored per metric; a metric over its bound is left out, with the reason.
MAX_OUTPUTS = {"chrF": 200_000, "BLEU": 200_000, "TER": 20_000}
#: Seconds of one core per output as a function of its length in words (the mean of the output's and its
#: reference's), per reference: fitted on this machine by ``bench/bench_sentence_metrics.py`` (docs/SPEED.md).
COST_PER_OUTPUT: dict[str, Callable[[float], float]] = {
    "chrF": lambda w: 2e-5 + 1.3e-5 * w,
    "BLEU": lambda w: 1e-5 + 6e-6 * w,
    "TER": lambda w: 1e-4 + 8e-7 * w ** 3,
}
#: Segments whose statistics are extracted between two progress updates.
_CHUNK = 250
_COMMAND = {"chrF": "chrf", "BLEU": "bleu", "TER": "ter"}
ProgressFn = Callable[[int, int], None]


def corpus_metric(name: str):
    """A sacrebleu metric with the defaults of ``corpus_chrf`` / ``corpus_bleu`` / ``corpus_ter``."""
    return {"chrF": CHRF, "BLEU": BLEU, "TER": TER}[name]()


def sentence_metric(name: str):
    """A sacrebleu metric with the defaults of ``sentence_chrf`` / ``sentence_bleu`` (effective order) /
    ``sentence_ter``."""
    return BLEU(effective_order=True) if name == "BLEU" else corpus_metric(name)


def reference_streams(references: Sequence[Sequence[str]]) -> list[list[str | None]]:
    """sacrebleu's reference streams from one list of references per segment: stream ``j`` holds each segment's
    ``j``-th reference, ``None`` where a segment has fewer (sacrebleu's variable number of references)."""
    k = max((len(r) for r in references), default=1)
    return [[refs[j] if j < len(refs) else None for refs in references] for j in range(k)]


def _num_refs(references: Sequence[Sequence[str]]) -> int:
    """References per segment as sacrebleu's signature counts them: the count, or -1 (``var``) when it varies."""
    counts = {len(r) for r in references}
    return counts.pop() if len(counts) == 1 else -1


def _signature(metric, num_refs: int, extra: Mapping[str, object] = ()) -> str:
    """``chrF2|nrefs:1|case:mixed|...|version:2.6.0`` as sacrebleu prints it (``extra``: e.g. its bootstrap's
    ``seed`` and ``bs``, added as its ``PairedTest`` adds them)."""
    metric.num_refs = num_refs  # what sacrebleu sets when it reads the references
    sig = metric.get_signature()
    for key, value in dict(extra).items():
        sig.update(key, value)
    return f"{_SCORE_NAME[type(metric).__name__]}|{sig.format()}"


_SCORE_NAME = {"CHRF": "chrF2", "BLEU": "BLEU", "TER": "TER"}


@dataclass(frozen=True)
class MetricScores:
    """One sacrebleu metric over every system of a test set.

    Attributes:
        name: ``"chrF"``, ``"BLEU"`` or ``"TER"``; score_name: sacrebleu's (``"chrF2"``).
        corpus: ``{system: corpus score}`` (0-100); sentence: ``{system: (n,) float64 segment scores}``.
        statistics: ``{system: (n, k) float32}`` sacrebleu's sufficient statistics per segment (its bootstrap's
            input).
        corpus_signature, sentence_signature: sacrebleu's signatures of the two levels.
        num_refs: references per segment as the signature counts them (-1: variable).
        higher_is_better: False for TER.
    """

    name: str
    score_name: str
    corpus: dict[str, float]
    sentence: dict[str, np.ndarray]
    statistics: dict[str, np.ndarray] = field(repr=False)
    corpus_signature: str
    sentence_signature: str
    num_refs: int
    higher_is_better: bool

    @property
    def systems(self) -> list[str]:
        """Best first by the corpus score (ties in natural name order)."""
        return rank_order(self.corpus, self.higher_is_better)

    def ranks(self) -> dict[str, int]:
        """``{system: rank}``, 1 the best, by the corpus score (ties in natural name order)."""
        return {s: i + 1 for i, s in enumerate(self.systems)}

    def bootstrap_signature(self, n_samples: int = DEFAULT_SAMPLES, seed: int | None = DEFAULT_SEED) -> str:
        """The corpus signature with the bootstrap's seed and resamples, as ``sacrebleu --paired-bs`` prints it."""
        return _signature(corpus_metric(self.name), self.num_refs, {"seed": str(seed).lower(), "bs": n_samples})


@dataclass(frozen=True)
class SurfaceScores:
    """chrF, BLEU and TER of every system of a test set (:func:`surface_scores`).

    Attributes:
        metrics: ``{name: MetricScores}`` in :data:`METRICS` order, the metrics scored.
        skipped: ``{name: why it was not scored}`` (over :data:`MAX_OUTPUTS`).
        n_segments: segments per system; identical: pairs of systems (frozensets of two names) with identical
            outputs (their tests give p = 1).
    """

    metrics: dict[str, MetricScores]
    skipped: dict[str, str]
    n_segments: int
    identical: frozenset

    def corpus_table(self) -> dict[str, dict[str, float]]:
        """``{system: {metric: corpus score}}``."""
        systems = next(iter(self.metrics.values())).corpus if self.metrics else {}
        return {s: {m: ms.corpus[s] for m, ms in self.metrics.items()} for s in systems}


@contextmanager
def _quiet_sacrebleu():
    """sacrebleu's logger silenced below errors: its "forgot to detokenize" warnings (3 lines per 100 segments that
    end in " .") went to the server's terminal for every chunk of every system."""
    logger = logging.getLogger("sacrebleu")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def chunk_statistics(name: str, hypotheses: Sequence[str], streams: Sequence[Sequence[str | None]]
                     ) -> tuple[list, np.ndarray]:
    """sacrebleu's sufficient statistics of each segment of a chunk, and each segment's sentence score.

    A top-level function of plain arguments, so that a worker process can run it (the app's background job,
    :mod:`bertscore_viz.serving.sentence_metrics`); each segment's statistics are its own, so chunks give what one
    call over all segments gives.

    Args:
        name: ``"chrF"``, ``"BLEU"`` or ``"TER"``.
        hypotheses: the chunk's outputs of one system.
        streams: :func:`reference_streams` of the chunk's segments (each stream sliced to the chunk).

    Returns:
        ``(statistics, sentence)``: sacrebleu's statistics (one list per segment, as it returns them) and the
        ``(n,)`` float64 sentence scores (``sentence_chrf`` / ``sentence_bleu`` / ``sentence_ter``).
    """
    corpus_m, sentence_m = corpus_metric(name), sentence_metric(name)
    with _quiet_sacrebleu():
        stats = corpus_m._extract_corpus_statistics(list(hypotheses), [list(s) for s in streams])
    # the statistics do not depend on BLEU's effective order, only the score computed from them does
    sentence = np.array([sentence_m._aggregate_and_compute([row]).score for row in stats], dtype=np.float64)
    return stats, sentence


def chunks_statistics(name: str, work: Sequence[tuple[Sequence[str], Sequence[Sequence[str | None]]]]
                      ) -> list[tuple[list, np.ndarray]]:
    """:func:`chunk_statistics` of several chunks (of one system or several) in one call: ``work`` is
    ``[(hypotheses, streams), ...]``, the result one ``(statistics, sentence)`` per chunk, in order."""
    return [chunk_statistics(name, hyps, streams) for hyps, streams in work]


def segment_chunks(n: int, chunk: int = _CHUNK) -> list[tuple[int, int]]:
    """``(start, stop)`` of the chunks of ``n`` segments, ``chunk`` at a time."""
    return [(start, min(n, start + chunk)) for start in range(0, n, max(1, int(chunk)))]


def metric_scores(name: str, parts: Mapping[str, tuple[list, np.ndarray]],
                  references: Sequence[Sequence[str]]) -> MetricScores:
    """One metric's :class:`MetricScores` from each system's ``(statistics, sentence scores)`` of every segment (the
    chunks of :func:`chunk_statistics` joined in order)."""
    corpus_m, sentence_m = corpus_metric(name), sentence_metric(name)
    corpus, sentence, statistics = {}, {}, {}
    for system, (stats, scores) in parts.items():
        corpus[system] = float(corpus_m._aggregate_and_compute(stats).score)
        sentence[system] = np.asarray(scores, dtype=np.float64)
        statistics[system] = np.array(stats, dtype=np.float32).reshape(len(stats), -1)
    n_refs = _num_refs(references)
    return MetricScores(name, _SCORE_NAME[type(corpus_m).__name__], corpus, sentence, statistics,
                        _signature(corpus_m, n_refs), _signature(sentence_m, n_refs), n_refs,
                        HIGHER_IS_BETTER[name])


def _score_metric(name: str, systems: Mapping[str, Sequence[str]], references: Sequence[Sequence[str]],
                  progress) -> MetricScores:
    streams = reference_streams(references)
    parts = {}
    for system, hypotheses in systems.items():
        stats: list = []
        scores: list = []
        for start, stop in segment_chunks(len(hypotheses)):
            s, x = chunk_statistics(name, hypotheses[start:stop], [st[start:stop] for st in streams])
            stats.extend(s)
            scores.append(x)
            progress(stop - start)
        parts[system] = (stats, np.concatenate(scores) if scores else np.zeros(0))
    return metric_scores(name, parts, references)


def identical_pairs(systems: Mapping[str, Sequence[str]]) -> frozenset:
    """Pairs of systems (frozensets of two names) whose outputs are identical: their tests give p = 1."""
    names = list(systems)
    return frozenset(frozenset((a, b)) for i, a in enumerate(names) for b in names[i + 1:]
                     if list(systems[a]) == list(systems[b]))


def _words(text: str | None) -> int:
    return len(text.split()) if text else 0


def estimated_seconds(name: str, systems: Mapping[str, Sequence[str]], references: Sequence[Sequence[str]]) -> float:
    """Seconds of one core that sacrebleu needs for one metric of every output, estimated from the words of each
    output and its references (:data:`COST_PER_OUTPUT`; measured by ``bench/bench_sentence_metrics.py``).

    TER's shift search grows with about the cube of the length: 20 words cost about 6 ms an output, 75 words
    about 0.3 s and 150 words about 3 s; chrF and BLEU grow linearly and stay near 1 ms an output."""
    ref_words = [sum(_words(r) for r in refs) / max(1, len(refs)) for refs in references]
    cost = COST_PER_OUTPUT[name]
    return float(sum(cost((_words(h) + rw) / 2.0) * max(1, len(refs))
                     for outputs in systems.values() for h, rw, refs in zip(outputs, ref_words, references)))


def plan(systems: Mapping[str, Sequence[str]], references: Sequence[Sequence[str]], metrics: Sequence[str] = METRICS,
         max_outputs: Mapping[str, int] | None = None, max_seconds: float | None = None,
         bound_name: str = "this page's") -> tuple[list[str], dict[str, str], dict[str, float]]:
    """Which metrics are scored: ``(to score, {metric: why it is not}, {metric: estimated seconds})``.

    A metric is left out when its outputs (systems x segments) exceed ``max_outputs`` (default
    :data:`MAX_OUTPUTS`) or when its :func:`estimated_seconds` exceed ``max_seconds`` (None: no time bound);
    ``bound_name`` says whose bound it is in the reason (``"this server's 300 s (server setting ...)"``).

    Raises:
        InputError: an unknown metric, or a system whose number of outputs is not the number of segments.
    """
    unknown = [m for m in metrics if m not in METRICS]
    if unknown:
        raise InputError(f"Unknown metric(s) {unknown}; choose from {list(METRICS)}.")
    n = len(references)
    wrong = {s: len(v) for s, v in systems.items() if len(v) != n}
    if wrong:
        raise InputError(f"Every system needs one output per segment ({n}); got {wrong}.")
    bounds = dict(MAX_OUTPUTS if max_outputs is None else max_outputs)
    outputs = n * len(systems)
    todo, skipped, cost = [], {}, {}
    command = "sacrebleu scores them on the command line: `sacrebleu REFERENCE -i SYSTEM.txt ... -m {}`."
    for m in METRICS:
        if m not in metrics:
            continue
        if outputs > bounds.get(m, outputs):
            skipped[m] = (f"{m} was not computed: {len(systems)} systems x {n:,} segments = {outputs:,} outputs, over "
                          f"{bound_name} {bounds[m]:,} for {m}. " + command.format(_COMMAND[m]))
            continue
        cost[m] = estimated_seconds(m, systems, references)
        if max_seconds is not None and cost[m] > max_seconds:
            words = sum(_words(h) for v in systems.values() for h in v) / max(1, outputs)
            skipped[m] = (f"{m} was not computed: about {duration(cost[m])} of work for {outputs:,} outputs of "
                          f"{words:.0f} words on average"
                          + (" (its shift search grows with the cube of the length)" if m == "TER" else "")
                          + f", over {bound_name} {duration(max_seconds)}. " + command.format(_COMMAND[m]))
            continue
        todo.append(m)
    return todo, skipped, cost


def duration(seconds: float) -> str:
    """``"45 s"``, ``"9 min 20 s"``, ``"2 h 5 min"``."""
    s = max(0, int(round(seconds)))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s" if s % 60 else f"{s // 60} min"
    return f"{s // 3600} h {s % 3600 // 60} min"


def surface_scores(systems: Mapping[str, Sequence[str]], references: Sequence[Sequence[str]],
                   metrics: Sequence[str] = METRICS, progress: ProgressFn | None = None,
                   max_outputs: Mapping[str, int] | None = None, max_seconds: float | None = None) -> SurfaceScores:
    """chrF, BLEU and TER of every system at sentence and corpus level (see the module docstring), in this process.

    Args:
        systems: ``{name: (n,) outputs}``, every system on the same segments.
        references: ``(n,)`` lists of references (at least one each; ``""`` is an empty reference).
        metrics: which of :data:`METRICS`.
        progress: ``progress(done, total)`` in outputs scored (each metric counts every output once).
        max_outputs, max_seconds: the bounds of :func:`plan`; a metric over one is skipped, with the reason.

    Returns:
        :class:`SurfaceScores`.

    Raises:
        InputError: an unknown metric, or a system whose number of outputs is not the number of segments.
    """
    todo, skipped, _ = plan(systems, references, metrics, max_outputs, max_seconds)
    n = len(references)
    total, done = n * len(systems) * len(todo), [0]

    def step(k: int) -> None:
        done[0] += k
        if progress is not None:
            progress(done[0], total)

    scored = {m: _score_metric(m, systems, references, step) for m in todo}
    return SurfaceScores(scored, skipped, n, identical_pairs(systems))


def resampled_scores(scores: MetricScores, n_samples: int = DEFAULT_SAMPLES, seed: int | None = DEFAULT_SEED,
                     progress: ProgressFn | None = None) -> dict[str, np.ndarray]:
    """Each system's corpus score in each of sacrebleu's bootstrap resamples (the same resamples for every system).

    Args:
        scores: one metric's :class:`MetricScores`.
        n_samples: resamples; seed: sacrebleu's (:data:`DEFAULT_SEED`).
        progress: ``progress(done, total)`` in resampled scores (systems x resamples).

    Returns:
        ``{system: (n_samples,) float64}``.
    """
    metric = corpus_metric(scores.name)
    return resampled_corpus_scores(scores.statistics, lambda v: metric._compute_score_from_stats(v).score,
                                   n_samples, seed, progress)


def metric_significance(surface: SurfaceScores, name: str, samples: Mapping[str, np.ndarray],
                        baseline: str | None = None, correction: str | None = None, alpha: float = 0.05,
                        seed: int | None = DEFAULT_SEED) -> Significance:
    """Intervals, paired tests, Holm and clusters of one metric's corpus scores from their resampled scores
    (:func:`resampled_scores`), as :func:`bertscore_viz.stats.analysis.analyse` gives them for
    BERTScore."""
    scores = surface.metrics[name]
    return analyse_resampled(scores.corpus, dict(samples), name, baseline, surface.n_segments, surface.identical,
                             seed, correction, alpha, scores.higher_is_better)
