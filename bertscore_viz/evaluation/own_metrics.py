"""Metrics of one's own beside BERTScore: per-segment scores computed elsewhere (COMET, an LLM judge, a learned
metric, human ratings) treated exactly as the comparison treats its own metrics (pure, no Streamlit).

A metric of one's own is an :class:`OwnMetric`: every system's segment scores (read and checked by
:mod:`bertscore_viz.files.score_columns`) and its direction. Its system score is the **mean of its segment scores**,
and its statistics are BERTScore's code path, :func:`bertscore_viz.stats.analysis.analyse` (the paired bootstrap
over segments, 1,000 resamples with seed 12345, under Holm as many as
:func:`~bertscore_viz.evaluation.significance.resamples_for` gives; intervals, tests, clusters, power), with the
metric's direction: fed BERTScore's own F1, it gives BERTScore's numbers exactly.

**Missing scores.** A segment that some system has no score for (a text, NaN, an empty cell, a missing line: each
listed when read) is left out of that metric for **every** system, so that the tests stay paired and no missing
score is read as 0; how many were left out is said (:meth:`OwnMetric.left_out_note`). BERTScore and the other
metrics still score every segment.

It joins the comparison's other metrics through :func:`with_own_metrics`: the object holding chrF, BLEU and TER
(:class:`~bertscore_viz.evaluation.sacrebleu_metrics.SurfaceScores`) gets the metrics of one's own after them, so the
system table, the segment table, the rank chart, the JSON, LaTeX, the report and the CI gate show them as they show
chrF.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

import numpy as np

from bertscore_viz.errors import InputError
from bertscore_viz.evaluation.sacrebleu_metrics import SurfaceScores, identical_pairs
from bertscore_viz.evaluation.significance import resamples_for
from bertscore_viz.files.score_columns import MAX_METRICS, ScoreColumns
from bertscore_viz.stats.analysis import Significance, analyse
from bertscore_viz.stats.ranking import rank_order
from bertscore_viz.stats.resampling import DEFAULT_SEED

__all__ = ["LOWER_IS_BETTER_HINTS", "OwnMetric", "guess_higher_is_better", "is_own", "own_metrics",
           "with_own_metrics"]

#: Name parts that suggest a metric where lower is better (an error or edit rate): the default direction of a
#: metric so named; it is said and can be changed.
LOWER_IS_BETTER_HINTS = ("ter", "wer", "cer", "error", "errors", "mqm_errors", "loss", "perplexity", "ppl",
                         "distance")


def guess_higher_is_better(name: str) -> bool:
    """Higher is better unless the name is or ends with an error-rate word (``TER``, ``wer``, ``edit_distance``)."""
    low = name.lower().replace("-", "_").replace(" ", "_")
    return not any(low == w or low.endswith("_" + w) for w in LOWER_IS_BETTER_HINTS)


@dataclass(frozen=True)
class OwnMetric:
    """One metric of one's own over every system of a comparison.

    Attributes:
        name: its name (a column or ``--scores NAME``); sentence: ``{system: (n,) segment scores}``, NaN where a
            score is missing; higher_is_better: its direction; origin: where the scores came from, in words.
    """

    name: str
    sentence: dict[str, np.ndarray] = field(repr=False)
    higher_is_better: bool = True
    origin: str = ""

    @property
    def score_name(self) -> str:
        return self.name

    @functools.cached_property
    def kept(self) -> np.ndarray:
        """``(n,)`` bool: the segments every system has a score for (the ones the metric uses)."""
        arrays = list(self.sentence.values())
        if not arrays:
            return np.zeros(0, dtype=bool)
        return np.logical_and.reduce([np.isfinite(a) for a in arrays])

    @property
    def n_segments(self) -> int:
        return len(self.kept)

    @property
    def n_kept(self) -> int:
        return int(self.kept.sum())

    def kept_scores(self) -> dict[str, np.ndarray]:
        """``{system: scores of the segments kept}`` (the input of every statistic)."""
        return {s: np.asarray(v, dtype=np.float64)[self.kept] for s, v in self.sentence.items()}

    @functools.cached_property
    def corpus(self) -> dict[str, float]:
        """``{system: mean of its kept segment scores}`` (NaN when no segment is kept)."""
        return {s: float(v.mean()) if len(v) else float("nan") for s, v in self.kept_scores().items()}

    @property
    def systems(self) -> list[str]:
        """Best first (by the metric's direction; ties in natural name order)."""
        return rank_order(self.corpus, self.higher_is_better)

    def ranks(self) -> dict[str, int]:
        return {s: i + 1 for i, s in enumerate(self.systems)}

    @property
    def direction(self) -> str:
        return "higher is better" if self.higher_is_better else "lower is better"

    @property
    def corpus_signature(self) -> str:
        """What the number is, in the place sacrebleu's signature takes: name, origin, direction, segments used."""
        return (f"{self.name}|own scores|{self.origin or 'given'}|{self.direction}|mean of {self.n_kept} of "
                f"{self.n_segments} segments")

    @property
    def sentence_signature(self) -> str:
        return self.corpus_signature

    def left_out_note(self) -> str | None:
        """One sentence when segments were left out (None when every segment is used)."""
        gone = self.n_segments - self.n_kept
        if not gone:
            return None
        if not self.n_kept:
            return (f"{self.name}: no segment has a score for every system, so {self.name} cannot be compared; the "
                    "missing scores are listed with the input's problems.")
        return (f"{self.name}: {gone:,} of {self.n_segments:,} segments are left out for every system (some system "
                f"has no score for them: listed with the input's problems); {self.name} is compared on the other "
                f"{self.n_kept:,}.")

    def significance(self, baseline: str | None = None, correction: str | None = None, alpha: float = 0.05,
                     n_samples: int | None = None, seed: int | None = DEFAULT_SEED, progress=None) -> Significance:
        """Intervals, paired tests, clusters of the metric: BERTScore's analysis (top-ranked baseline, rebased to
        ``baseline``) over the kept segments, with the metric's direction.

        Raises:
            InputError: no segment kept, or an unknown baseline.
        """
        if not self.n_kept:
            raise InputError(self.left_out_note() or f"{self.name} has no scores.")
        if n_samples is None:
            n_samples = resamples_for(len(self.sentence), self.n_kept, correction, alpha)
        sig = analyse(self.kept_scores(), None, self.name, n_samples, seed, correction, alpha, progress,
                      self.higher_is_better)
        return sig if baseline is None else sig.rebase(baseline)


def is_own(metric) -> bool:
    """Whether a metric object of :class:`SurfaceScores` is one of one's own (not sacrebleu's)."""
    return isinstance(metric, OwnMetric)


def own_metrics(columns: ScoreColumns, systems: Iterable[str], lower_is_better: Iterable[str] = (),
                higher_is_better: Iterable[str] = ()) -> tuple[dict[str, OwnMetric], list[str]]:
    """The metrics of one's own of an input for these systems, and a sentence for each left out.

    Args:
        columns: the input's scores (``Dataset.own_scores``, ``--scores`` files).
        systems: the comparison's systems: a metric without scores for one of them is left out (said).
        lower_is_better, higher_is_better: metric names whose direction is given; any other metric's direction is
            :func:`guess_higher_is_better`'s (said in the notes when it is "lower").

    Raises:
        InputError: a direction given for a metric the input does not have, or both directions for one, or more
            than :data:`MAX_METRICS` metrics.
    """
    lower, higher = set(lower_is_better), set(higher_is_better)
    both = sorted(lower & higher)
    if both:
        raise InputError(f"{both[0]!r} is said to be both higher- and lower-is-better; say one.")
    unknown = sorted((lower | higher) - set(columns.scores))
    if unknown:
        raise InputError(f"No metric named {unknown[0]!r} came with the input; its metrics are "
                         f"{', '.join(map(repr, columns.scores)) or 'none'}.")
    if len(columns.scores) > MAX_METRICS:
        raise InputError(f"{len(columns.scores)} metrics of one's own; at most {MAX_METRICS} are compared at once.")
    names = list(systems)
    out: dict[str, OwnMetric] = {}
    notes: list[str] = []
    for name, by_system in columns.scores.items():
        missing = [s for s in names if s not in by_system]
        if missing:
            notes.append(f"{name} is left out: it has no scores for {', '.join(map(repr, missing[:5]))}"
                         f"{' and more' if len(missing) > 5 else ''}.")
            continue
        hib = (name not in lower) if (name in lower or name in higher) else guess_higher_is_better(name)
        if not hib and name not in lower:
            notes.append(f"{name} is taken as lower-is-better (an error rate, by its name); say otherwise if not.")
        metric = OwnMetric(name, {s: np.asarray(by_system[s], dtype=np.float64) for s in names}, hib,
                           columns.origins.get(name, ""))
        note = metric.left_out_note()
        if note:
            notes.append(note)
        if metric.n_kept:
            out[name] = metric
    return out, notes


def with_own_metrics(surface: SurfaceScores | None, metrics: Mapping[str, OwnMetric],
                     systems: Mapping[str, list[str]]) -> SurfaceScores | None:
    """``surface`` (sacrebleu's metrics, or None) with the metrics of one's own after them; None when there are
    neither. ``systems``: the comparison's outputs (for the pairs of identical outputs)."""
    if not metrics:
        return surface
    if surface is None:
        n = len(next(iter(metrics.values())).kept)
        return SurfaceScores(dict(metrics), {}, n, identical_pairs(systems))
    return replace(surface, metrics={**surface.metrics, **metrics})
