"""The statistics of comparing systems on one test set, for any metric (pure numpy; layer 3).

A metric is given as ``{system: np.ndarray}`` with its name and direction (``higher_is_better``: False for an error
rate such as TER), in one of two forms (:mod:`~bertscore_viz.stats.resampling`): per-segment scores whose corpus
score is their mean (BERTScore F1, COMET, a human score), or per-segment sufficient statistics with the function
that turns their sum into the corpus score (sacrebleu's chrF, BLEU, TER). Nothing here knows BERTScore.

* :mod:`~bertscore_viz.stats.resampling`: sacrebleu's resamples, resampled scores, percentile intervals, how many
  resamples a family needs; the rule for missing scores (refused, :func:`segment_scores`);
* :mod:`~bertscore_viz.stats.paired`: the p values of a paired test and :class:`PairedResult`, the one result type
  of the paired bootstrap and of approximate randomization, with its sentence;
* :mod:`~bertscore_viz.stats.analysis`: :func:`analyse` / :func:`analyse_statistics` / :func:`analyse_resampled`
  give a :class:`Significance`: intervals, all pairs, Holm, clusters;
* :mod:`~bertscore_viz.stats.randomization`: sacrebleu's paired approximate randomization against a baseline;
* :mod:`~bertscore_viz.stats.corrections`: Holm's step-down correction;
* :mod:`~bertscore_viz.stats.ranking`: order by score (natural names for ties, no score last), WMT-style clusters;
* :mod:`~bertscore_viz.stats.power`: the paired bootstrap's power and minimum detectable difference;
* :mod:`~bertscore_viz.stats.gate`: a CI gate's verdict (any system significantly worse than the baseline, or not
  significantly better) read from the paired tests.
* :mod:`~bertscore_viz.stats.meta`: meta-evaluation of a metric against human scores by pairwise accuracy: acc_eq
  with tie calibration (Deutsch et al. 2023), soft pairwise accuracy (Thompson et al. 2024), system-level pairwise
  accuracy (Kocmi et al. 2021), their intervals and the tests between two metrics, as mt-metrics-eval computes them.

Defaults are sacrebleu's: 1,000 resamples, 10,000 randomization trials, seed :data:`DEFAULT_SEED` (12345).
"""

from bertscore_viz.stats.analysis import (
    Significance,
    SystemInterval,
    analyse,
    analyse_resampled,
    analyse_statistics,
)
from bertscore_viz.stats.corrections import CORRECTIONS, holm
from bertscore_viz.stats.gate import GateResult, gate
from bertscore_viz.stats.paired import PairedResult, describe
from bertscore_viz.stats.randomization import DEFAULT_TRIALS, Randomization, paired_randomization
from bertscore_viz.stats.ranking import Cluster, SystemStanding, clusters, rank_order
from bertscore_viz.stats.resampling import (
    DEFAULT_SAMPLES,
    DEFAULT_SEED,
    bootstrap_interval,
    bootstrap_means,
    percentile_ci,
    resampled_corpus_scores,
    resamples_for,
    segment_scores,
)

__all__ = [
    "CORRECTIONS", "DEFAULT_SAMPLES", "DEFAULT_SEED", "DEFAULT_TRIALS", "Cluster", "GateResult", "PairedResult",
    "Randomization", "Significance", "SystemInterval", "SystemStanding", "analyse", "analyse_resampled",
    "analyse_statistics",
    "bootstrap_interval", "bootstrap_means", "clusters", "describe", "gate", "holm", "paired_randomization",
    "percentile_ci", "rank_order", "resampled_corpus_scores", "resamples_for", "segment_scores",
]
