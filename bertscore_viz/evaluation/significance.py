"""The Compare page's and the command line's statistics, as they import them: every name here is
:mod:`bertscore_viz.stats`'s (paired bootstrap and intervals as sacrebleu makes them, Holm, clusters), re-exported
so that ``from bertscore_viz.evaluation.significance import analyse`` keeps working. New code imports from
:mod:`bertscore_viz.stats`, which works on any metric's scores (``{system: array}``, a name and a direction)."""

from __future__ import annotations

from bertscore_viz.stats.analysis import Significance, SystemInterval, analyse, analyse_resampled, analyse_statistics
from bertscore_viz.stats.corrections import CORRECTIONS, holm
from bertscore_viz.stats.paired import (
    PairedResult,
    describe,
    family_text,
    format_difference,
    format_p,
    format_p_family,
    p_value,
    p_value_from_samples,
    p_value_one_sided,
)
from bertscore_viz.stats.ranking import Cluster, SystemStanding, clusters, natural_key, rank_order
from bertscore_viz.stats.resampling import (
    DEFAULT_SAMPLES,
    DEFAULT_SEED,
    HOLM_HEADROOM,
    INTERVAL_SAMPLES,
    MAX_RESAMPLED_CELLS,
    MAX_SAMPLES,
    bootstrap_interval,
    bootstrap_means,
    percentile_ci,
    resample_indices,
    resamples_for,
    smallest_p,
)

__all__ = [
    "CORRECTIONS", "DEFAULT_SAMPLES", "DEFAULT_SEED", "HOLM_HEADROOM", "INTERVAL_SAMPLES", "MAX_RESAMPLED_CELLS",
    "MAX_SAMPLES", "Cluster",
    "PairedResult", "Significance", "SystemInterval", "SystemStanding", "analyse", "analyse_resampled",
    "analyse_statistics", "bootstrap_interval", "bootstrap_means", "clusters", "describe", "family_text",
    "format_difference", "format_p", "format_p_family", "holm", "natural_key", "p_value", "p_value_from_samples",
    "p_value_one_sided", "percentile_ci", "rank_order", "resample_indices", "resamples_for", "smallest_p",
]
