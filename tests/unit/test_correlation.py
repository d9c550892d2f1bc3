"""Correlations with human scores (issues 22 and 30): equal to scipy's on the same arrays, seeded bootstrap whose
intervals equal scipy on the explicit resamples, the lead test at every level, system level from segment means, the
best of each column, and pairs dropped with a reason."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from bertscore_viz.evaluation.correlation import agreement, best_metrics, correlation, resample_indices
from bertscore_viz.evaluation.resampled import rowwise_kendall as _rowwise_kendall
from bertscore_viz.evaluation.resampled import rowwise_pearson as _rowwise_pearson

RNG = np.random.default_rng(7)
HUMAN = RNG.normal(size=120)
GOOD = HUMAN + RNG.normal(scale=0.5, size=120)
WORSE = HUMAN + RNG.normal(scale=2.0, size=120)
SYSTEMS = np.array([f"sys{i % 6}" for i in range(120)])


def test_hand_computed_values():
    # x = 1,2,3,4 ; y = 1,3,2,4: Pearson = 0.8 (deviations -1.5,-.5,.5,1.5 and -1.5,.5,-.5,1.5: 4/5);
    # Kendall: 6 pairs, one discordant (2,3): (5 - 1) / 6; Spearman = Pearson of the same ranks = 0.8
    x, y = [1, 2, 3, 4], [1, 3, 2, 4]
    assert correlation(x, y, "pearson") == pytest.approx(0.8)
    assert correlation(x, y, "kendall") == pytest.approx(4 / 6)
    assert correlation(x, y, "spearman") == pytest.approx(0.8)


@pytest.mark.parametrize("statistic, scipy_fn", [("pearson", stats.pearsonr), ("spearman", stats.spearmanr),
                                                 ("kendall", stats.kendalltau)])
def test_every_statistic_equals_scipy(statistic, scipy_fn):
    assert correlation(GOOD, HUMAN, statistic) == pytest.approx(float(scipy_fn(GOOD, HUMAN)[0]), abs=1e-12)
    report = agreement({"good": GOOD}, HUMAN)
    assert report.segment["good"].values[statistic] == pytest.approx(float(scipy_fn(GOOD, HUMAN)[0]), abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(-3, 3), st.integers(-3, 3)), min_size=3, max_size=25))
def test_the_vectorised_resample_statistics_equal_scipy_with_ties(points):
    x = np.array([[float(a) for a, _ in points]])
    y = np.array([[float(b) for _, b in points]])
    for mine, name in ((_rowwise_pearson(x, y)[0], "pearson"), (_rowwise_kendall(x, y)[0], "kendall")):
        expected = correlation(x[0], y[0], name)
        assert (math.isnan(mine) and math.isnan(expected)) or mine == pytest.approx(expected, abs=1e-9)


def test_undefined_statistics_are_nan_not_an_error():
    assert math.isnan(correlation([1, 1, 1, 1], [1, 2, 3, 4]))
    assert math.isnan(correlation([1, 2], [2, 1]))
    report = agreement({"flat": np.ones(10)}, np.arange(10.0))
    assert math.isnan(report.segment["flat"].values["pearson"])
    assert report.as_dict()["metrics"]["flat"]["segment"]["pearson"] is None  # JSON null, not NaN


def test_the_bootstrap_is_seeded_reproducible_and_brackets_the_value():
    a = agreement({"good": GOOD, "worse": WORSE}, HUMAN, n_samples=200, seed=3)
    b = agreement({"good": GOOD, "worse": WORSE}, HUMAN, n_samples=200, seed=3)
    c = agreement({"good": GOOD, "worse": WORSE}, HUMAN, n_samples=200, seed=4)
    assert a.as_dict() == b.as_dict()
    assert a.segment["good"].ci95 != c.segment["good"].ci95
    for s in ("pearson", "spearman", "kendall"):
        lo, hi = a.segment["good"].ci95[s]
        assert lo <= a.segment["good"].values[s] <= hi


def test_the_resamples_are_drawn_as_one_rng_choice_call():
    blocks = np.concatenate(list(resample_indices(50, 100, seed=12345)))
    assert np.array_equal(blocks, np.random.default_rng(12345).choice(50, size=(100, 50), replace=True))


def test_the_interval_is_the_percentile_of_the_resampled_pearson():
    report = agreement({"good": GOOD}, HUMAN, n_samples=100, seed=9)
    idx = np.random.default_rng(9).choice(120, size=(100, 120), replace=True)
    r = [stats.pearsonr(GOOD[i], HUMAN[i])[0] for i in idx]
    assert report.segment["good"].ci95["pearson"] == pytest.approx(tuple(np.percentile(r, [2.5, 97.5])))


def test_the_lead_of_a_clearly_better_metric_is_significant_and_a_tie_is_not():
    report = agreement({"worse": WORSE, "good": GOOD}, HUMAN, n_samples=300)
    assert report.lead.best == "good" and report.lead.second == "worse"
    assert report.lead.significant() and report.lead.p_value == pytest.approx(1 / 301)
    assert report.lead.difference == pytest.approx(correlation(GOOD, HUMAN) - correlation(WORSE, HUMAN))
    tie = agreement({"a": GOOD, "b": GOOD.copy()}, HUMAN, n_samples=300)
    assert not tie.lead.significant() and tie.lead.p_value == 1.0
    assert "not significantly" in tie.lead.sentence()


def test_system_level_is_the_correlation_of_system_means():
    report = agreement({"good": GOOD}, HUMAN, systems=SYSTEMS, n_samples=50)
    names = sorted(set(SYSTEMS))
    m = [GOOD[s == SYSTEMS].mean() for s in names]
    h = [HUMAN[s == SYSTEMS].mean() for s in names]
    assert report.n_systems == 6 and report.system["good"].n == 6
    assert report.system["good"].values["pearson"] == pytest.approx(stats.pearsonr(m, h)[0])
    assert report.system["good"].values["kendall"] == pytest.approx(stats.kendalltau(m, h)[0])


def test_fewer_than_three_systems_give_no_system_level():
    report = agreement({"good": GOOD}, HUMAN, systems=np.where(np.arange(120) < 60, "a", "b"), n_samples=20)
    assert report.system == {} and report.n_systems == 0


def test_pairs_without_a_human_score_or_a_metric_value_are_dropped_with_the_reason():
    human = HUMAN.copy()
    human[[3, 10]] = np.nan
    metric = GOOD.copy()
    metric[5] = np.nan
    report = agreement({"m": metric, "chrF": GOOD}, human, n_samples=20)
    assert report.n_pairs == 117
    assert [r for r, _ in report.dropped] == [3, 5, 10]
    assert "human score" in dict(report.dropped)[3] and "m is undefined" in dict(report.dropped)[5]
    keep = np.ones(120, bool)
    keep[[3, 5, 10]] = False
    assert report.segment["chrF"].values["pearson"] == pytest.approx(stats.pearsonr(GOOD[keep], HUMAN[keep])[0])


def test_every_interval_is_the_percentile_of_the_statistic_of_the_explicit_resamples():
    """Independent of the vectorised kernels: scipy on each resampled array, system means by a plain loop."""
    report = agreement({"good": GOOD, "worse": WORSE}, HUMAN, systems=SYSTEMS, n_samples=60, seed=4)
    idx = np.random.default_rng(4).choice(120, size=(60, 120), replace=True)
    fns = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}
    for name, values in (("good", GOOD), ("worse", WORSE)):
        for stat, fn in fns.items():
            resampled = [fn(values[i], HUMAN[i])[0] for i in idx]
            assert report.segment[name].ci95[stat] == pytest.approx(tuple(np.percentile(resampled, [2.5, 97.5])),
                                                                   abs=1e-12)
        for stat in ("pearson", "kendall"):
            resampled = []
            for i in idx:
                names = sorted(set(SYSTEMS[i]))
                m = [values[i][SYSTEMS[i] == s].mean() for s in names]
                h = [HUMAN[i][SYSTEMS[i] == s].mean() for s in names]
                resampled.append(fns[stat](m, h)[0])
            assert report.system[name].ci95[stat] == pytest.approx(tuple(np.percentile(resampled, [2.5, 97.5])),
                                                                  abs=1e-12)


def test_each_level_has_its_lead_on_its_own_resamples():
    report = agreement({"worse": WORSE, "good": GOOD}, HUMAN, systems=SYSTEMS, n_samples=200, seed=8,
                       documents=np.repeat(np.arange(20), 6))
    assert set(report.leads) == {"segment", "system", "summary"} and report.lead is report.leads["segment"]
    for level, lead in report.leads.items():
        assert lead.level == level and lead.statistic == "pearson" and lead.best == "good"
    kendall = agreement({"worse": WORSE, "good": GOOD}, HUMAN, systems=SYSTEMS, n_samples=50, primary="spearman")
    assert kendall.leads["segment"].statistic == "spearman" and kendall.leads["system"].statistic == "pearson"
    with pytest.raises(ValueError, match="primary must be one of"):
        agreement({"good": GOOD}, HUMAN, primary="tau")


def test_the_best_of_a_column_and_equal_bests():
    report = agreement({"a": GOOD, "b": GOOD.copy(), "c": WORSE}, HUMAN, n_samples=20)
    assert best_metrics(report.segment, "pearson") == ["a", "b"]
    assert best_metrics({}, "pearson") == []


def test_the_json_names_every_level_its_best_what_was_resampled_and_the_headline():
    d = agreement({"good": GOOD, "worse": WORSE}, HUMAN, systems=SYSTEMS, n_samples=30).as_dict()
    assert set(d["metrics"]["good"]) == {"segment", "system"}
    assert d["best"] == {"segment": ["good"], "system": [d["leads"]["system"]["best"]]}
    assert d["resampled"]["system"] == "resampling the outputs and re-averaging each system"
    assert d["headline"][0].startswith("Segment level (120 outputs): good leads worse")
    assert d["levels_disagree"] is (d["leads"]["system"]["best"] != "good")
