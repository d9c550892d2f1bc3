"""The statistics layer (bertscore_viz.stats) on any metric: hand-computed answers for a metric where lower is better,
for sufficient statistics with a corpus function, for the one paired result type, and the rule for missing scores."""

from types import SimpleNamespace

import numpy as np
import pytest

from bertscore_viz.errors import InputError
from bertscore_viz.evaluation import compare
from bertscore_viz.stats import (
    DEFAULT_SEED,
    PairedResult,
    analyse,
    analyse_statistics,
    paired_randomization,
    rank_order,
    resampled_corpus_scores,
    segment_scores,
)
from bertscore_viz.stats.paired import BOOTSTRAP, RANDOMIZATION


@pytest.fixture(scope="module")
def errors():
    """An error rate (lower is better) on 20 segments: B makes 0.5 more errors than A on every segment, C is A."""
    base = np.random.default_rng(0).uniform(0.0, 1.0, 20)
    return {"B": base + 0.5, "A": base, "C": base.copy()}


def test_lower_is_better_through_the_paired_bootstrap_and_the_clusters(errors):
    sig = analyse(errors, metric="TER", higher_is_better=False)
    # the lowest first; A and C tie, in natural name order
    assert sig.systems == ("A", "C", "B") and sig.baseline == "A" and not sig.higher_is_better
    # B - A is 0.5 in every resample: no centred difference exceeds the observed 0.5, p = 1 / 1001
    assert sig.pair("A", "B") == sig.pair("C", "B") == pytest.approx(1 / 1001)
    assert sig.pair("A", "C") == 1.0  # identical scores: no evidence of a difference
    assert [list(c.systems) for c in sig.clusters] == [["A", "C"], ["B"]]
    assert [(s.system, s.wins, s.losses, s.rank_low, s.rank_high) for s in sig.standings] == \
        [("A", 1, 0, 1, 2), ("C", 1, 0, 1, 2), ("B", 0, 2, 3, 3)]
    c, b = sig.versus_baseline
    assert (c.system, c.p, b.system, b.p) == ("C", 1.0, "B", pytest.approx(1 / 1001))
    # Koehn's one-sided p that B is better than A: A is at most B in every resample, so c = 1000
    assert b.p_one_sided == 1.0 and isinstance(b, PairedResult) and b.method == BOOTSTRAP
    assert b.sentence("TER") == "A is better than B on TER: A − B = -0.5000 (p = 0.001, uncorrected, one of 3 " \
                                "comparisons)"


def test_the_direction_changes_the_order_not_the_p_values(errors):
    low = analyse(errors, metric="TER", higher_is_better=False)
    high = analyse(errors, metric="F1")
    assert high.systems == ("B", "A", "C")
    assert np.array_equal(low.matrix[np.ix_([0, 1, 2], [0, 1, 2])],
                          high.matrix[np.ix_([1, 2, 0], [1, 2, 0])])
    assert [list(c.systems) for c in high.clusters] == [["B"], ["A", "C"]]


def _error_rate(summed: np.ndarray) -> float:
    """A TER-like corpus score: 100 x errors / words, from summed (errors, words)."""
    return 100.0 * float(summed[0]) / float(summed[1])


@pytest.fixture(scope="module")
def statistics():
    rng = np.random.default_rng(1)
    errors = rng.integers(0, 5, 30).astype(np.float32)
    words = np.full(30, 10, dtype=np.float32)
    x = np.stack([errors, words], axis=1)
    y = np.stack([errors + 1, words], axis=1)  # one more error on every segment of 10 words: +10 points
    return {"X": x, "Y": y, "X again": x.copy()}


def test_sufficient_statistics_with_a_corpus_function(statistics):
    sig = analyse_statistics(statistics, _error_rate, "errors", higher_is_better=False)
    x = statistics["X"]
    assert sig.interval("X").mean == pytest.approx(100 * x[:, 0].sum() / 300)
    assert sig.interval("Y").mean == pytest.approx(100 * (x[:, 0].sum() + 30) / 300)
    assert sig.systems == ("X", "X again", "Y")
    # Y - X is exactly 10 points in every resample: p = 1 / 1001; identical statistics give p = 1
    assert sig.pair("X", "Y") == pytest.approx(1 / 1001) and sig.pair("X", "X again") == 1.0
    assert [list(c.systems) for c in sig.clusters] == [["X", "X again"], ["Y"]]


def test_resampled_corpus_scores_are_sacrebleus_resamples(statistics):
    """The same draw as sacrebleu's _bootstrap_resample: default_rng(12345).choice(n, size=(1000, n))."""
    got = resampled_corpus_scores(statistics, _error_rate)
    idx = np.random.default_rng(DEFAULT_SEED).choice(30, size=(1000, 30), replace=True)
    for name, stats in statistics.items():
        assert np.array_equal(got[name], [_error_rate(stats[rows].sum(0)) for rows in idx])


def test_one_result_type_for_both_paired_tests(errors):
    ar = paired_randomization(errors, "A", "TER", n_trials=999, higher_is_better=False)
    b, c = ar.results  # in the order given
    assert all(isinstance(r, PairedResult) and r.method == RANDOMIZATION for r in ar.results)
    # a constant shift: only a trial that swaps all or none of the 20 segments reaches the observed 0.5 (a tie)
    assert b.p == pytest.approx(1 / 1000) and b.p_one_sided is None and c.p == 1.0
    assert "p_one_sided" not in b.as_dict() and b.as_dict()["family"] == 2
    assert b.sentence("TER") == ("A is better than B on TER: A − B = -0.5000 (approximate randomization p = "
                                 "0.0010, uncorrected, one of 2 tests)")
    boot = analyse(errors, metric="TER", higher_is_better=False).versus_baseline[1]
    assert type(boot) is type(b) and set(boot.as_dict()) == set(b.as_dict()) | {"p_one_sided"}


def test_missing_scores_are_refused_and_no_score_ranks_last():
    with pytest.raises(InputError, match="System 'b' has 1 missing"):
        analyse({"a": [0.1, 0.2], "b": [0.3, np.nan]})
    with pytest.raises(InputError, match="missing"):
        paired_randomization({"a": [0.1, 0.2], "b": [np.inf, 0.3]}, "a")
    with pytest.raises(InputError, match="same number of segments"):
        segment_scores({"a": [0.1], "b": [0.1, 0.2]})
    assert rank_order({"a": float("nan"), "b": 0.1, "c": 0.2}) == ["c", "b", "a"]
    assert rank_order({"a": float("nan"), "b": 0.1, "c": 0.2}, higher_is_better=False) == ["b", "c", "a"]


def test_wrong_input_is_an_input_error_and_still_a_value_error(errors):
    with pytest.raises(InputError, match="Unknown correction"):
        analyse(errors, correction="bonferroni")
    with pytest.raises(ValueError, match="Unknown baseline"):
        analyse(errors, baseline="Z")


def _comparison(f1: dict[str, list[float]]) -> compare.Comparison:
    results = {k: SimpleNamespace(f1=np.array(v), precision=np.array(v), recall=np.array(v)) for k, v in f1.items()}
    return compare.Comparison(results, layer=0, idf=False, rescaled=False)


def test_an_undefined_bertscore_segment_counts_as_0_everywhere():
    """One rule (compare.counted): the headline, the means and the tests see the same numbers."""
    comparison = _comparison({"a": [np.nan, 0.9, 0.9, 0.9], "b": [0.5, 0.5, 0.5, 0.5]})
    assert compare.counted_mean([np.nan, 0.9, 0.9, 0.9]) == pytest.approx(0.675)
    assert comparison.means() == {"a": pytest.approx(0.675), "b": 0.5}
    assert np.isnan(comparison.scores()["a"][0]) and comparison.counted_scores()["a"][0] == 0.0
    sig = compare.significance(comparison)
    head = compare.headline(comparison, sig)
    assert sig.systems[0] == head["best"] == "a" and head["score"] == pytest.approx(0.675)
    assert np.isnan(compare.counted_mean([]))
