"""Paired bootstrap and intervals on constructed data, and parity with sacrebleu's own paired_bs code."""

import numpy as np
import pytest
from sacrebleu import significance as sb

from bertscore_viz.evaluation import significance as sig
from bertscore_viz.evaluation.significance import (
    analyse,
    bootstrap_means,
    clusters,
    describe,
    holm,
    natural_key,
    percentile_ci,
    rank_order,
)
from bertscore_viz.stats import resampling


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    base = rng.uniform(0.6, 0.9, size=200)
    return {
        "A": base,
        "A copy": base.copy(),
        "B": np.clip(base + 0.08 + rng.normal(0, 0.01, 200), 0, 1),  # better on every segment
        "A noisy": np.clip(base + rng.normal(0, 0.05, 200), 0, 1),  # same level, different segments
    }


def test_identical_systems_are_not_significantly_different(data):
    res = analyse({"A": data["A"], "A copy": data["A copy"]})
    (r,) = res.versus_baseline
    assert res.baseline == "A"  # tied means: natural name order, "A" before "A copy"
    assert r.p == 1.0 and not r.significant()
    assert r.sentence() == "A copy and A are not significantly different on F1: A copy − A = +0.0000 (p = 1.000)"


def test_clearly_better_system_gets_the_smallest_p(data):
    res = analyse({"A": data["A"], "B": data["B"]}, baseline="A")
    (r,) = res.versus_baseline
    assert r.p == pytest.approx(1 / 1001) and r.p_one_sided == pytest.approx(1 / 1001)
    assert r.difference > 0.07
    d = data["B"].mean() - data["A"].mean()
    assert r.sentence() == f"B is better than A on F1: B − A = +{d:.4f} (p = 0.001)"


def test_the_sentence_names_the_better_system_first_and_its_difference_is_positive(data):
    d = data["B"].mean() - data["A"].mean()
    res = analyse({"B": data["B"], "A": data["A"]}, baseline="B")
    (r,) = res.versus_baseline
    assert r.system == "A" and r.difference == pytest.approx(-d)
    assert r.sentence("F1") == f"B is better than A on F1: B − A = +{d:.4f} (p = 0.001)"
    assert r.p_one_sided == pytest.approx(1.0)


def test_same_level_systems_get_a_large_p(data):
    scores = {"A": data["A"], "A noisy": data["A"] + np.random.default_rng(1).normal(0, 0.05, 200)}
    scores["A noisy"] += data["A"].mean() - scores["A noisy"].mean()  # exactly the same mean
    res = analyse(scores)
    # The centred |difference| statistic is skewed: a zero observed difference gives p near 0.4, not 1.
    assert res.versus_baseline[0].p > 0.3 and not res.versus_baseline[0].significant()


def test_intervals_contain_the_mean_and_are_ordered(data):
    res = analyse(data)
    for iv in res.intervals:
        assert iv.low <= iv.mean <= iv.high
        assert iv.high - iv.low < 0.05
    assert res.interval("B").low > res.interval("A").high


def test_pairwise_matrix_is_symmetric_with_ones_on_the_diagonal(data):
    res = analyse(data)
    assert res.matrix.shape == (4, 4)
    assert np.allclose(res.matrix, res.matrix.T) and np.all(np.diag(res.matrix) == 1)
    assert res.pair("A", "B") == pytest.approx(1 / 1001)
    assert res.pair("A", "A copy") == 1.0


def test_seed_is_fixed_and_shown(data):
    a = analyse(data)
    b = analyse(data)
    assert a.seed == 12345 and a.n_samples == 1000
    assert np.array_equal(a.matrix, b.matrix)
    d = a.as_dict()
    assert d["seed"] == 12345 and d["n_samples"] == 1000 and "(c + 1) / (n + 1)" in d["method"]


def test_resamples_drawn_in_blocks_equal_one_draw(data, monkeypatch):
    whole = bootstrap_means(data)
    monkeypatch.setattr(resampling, "_BLOCK_CELLS", 450)  # 2 resamples of 200 segments per block
    blocks = bootstrap_means(data)
    for k in data:
        assert np.array_equal(whole[k], blocks[k])


def test_resamples_are_sacrebleus(data):
    """Same generator, seed and index matrix as sacrebleu's _bootstrap_resample."""
    rng = np.random.default_rng(12345)
    idx = rng.choice(200, size=(1000, 200), replace=True)
    expected = data["B"][idx].mean(axis=1)
    assert np.allclose(bootstrap_means({"B": data["B"]})["B"], expected)


class _MeanMetric:
    """A sacrebleu-style metric whose corpus score is the mean of given segment scores (BERTScore's)."""

    def __init__(self, scores_by_hyp):
        self.scores = scores_by_hyp

    def _extract_corpus_statistics(self, hypotheses, references):
        return [[self.scores[h], 1.0] for h in hypotheses]

    def _compute_score_from_stats(self, stats):
        return sb.Result(float(stats[0] / stats[1]))

    def _aggregate_and_compute(self, stats):
        return self._compute_score_from_stats(np.asarray(stats, dtype=np.float64).sum(0))


@pytest.mark.parametrize("system", ["B", "A noisy"])
def test_p_value_and_interval_match_sacrebleu_paired_bs(data, system):
    n = 200
    base = data["A"].astype(np.float32).astype(np.float64)
    other = data[system].astype(np.float32).astype(np.float64)
    scores = {f"bl{i}": base[i] for i in range(n)} | {f"sy{i}": other[i] for i in range(n)}
    metric = _MeanMetric(scores)
    bl_stats = metric._extract_corpus_statistics([f"bl{i}" for i in range(n)], None)
    bl_result = metric._aggregate_and_compute(bl_stats)
    _, results = sb._paired_bs_test({"M": (bl_stats, bl_result)}, "sys", [f"sy{i}" for i in range(n)], None,
                                    {"M": metric}, n_samples=1000, seed=12345)
    theirs = results["M"]
    ours = analyse({"A": base, system: other}, baseline="A")
    # float32 sums in sacrebleu: allow one resample of difference at a boundary.
    assert abs(ours.versus_baseline[0].p - theirs.p_value) <= 1 / 1001 + 1e-12
    iv = ours.interval(system)
    assert 0.5 * (iv.high - iv.low) == pytest.approx(theirs.ci, abs=1e-5)


def test_one_segment_is_never_significant():
    res = analyse({"A": np.array([0.5]), "B": np.array([0.9])})
    assert res.versus_baseline[0].p == 1.0


def test_percentile_ci_uses_sacrebleus_indices():
    samples = np.arange(1000, dtype=float)
    assert percentile_ci(samples) == (25.0, 974.0)


@pytest.mark.parametrize("args, expected", [
    (("B", "A", 0.9, 0.8, 0.002), "B is better than A on F1: B − A = +0.1000 (p = 0.002)"),
    (("B", "A", 0.7, 0.8, 0.01, "R"), "A is better than B on R: A − B = +0.1000 (p = 0.010)"),
    (("B", "A", 0.80, 0.81, 0.4), "B and A are not significantly different on F1: B − A = -0.0100 (p = 0.400)"),
    (("M17", "M0", 0.50, 0.532, 0.001), "M0 is better than M17 on F1: M0 − M17 = +0.0320 (p = 0.001)"),
    (("B", "A", 0.9, 0.8, 0.03, "F1", 0.05, "holm"),
     "B is better than A on F1: B − A = +0.1000 (p = 0.030, Holm-adjusted)"),
    (("B", "A", 0.9, 0.8, 0.03, "F1", 0.05, "holm", 6),
     "B is better than A on F1: B − A = +0.1000 (p = 0.030, Holm-adjusted over 6 comparisons)"),
    (("B", "A", 0.9, 0.8, 0.03, "F1", 0.05, None, 6),
     "B is better than A on F1: B − A = +0.1000 (p = 0.030, uncorrected, one of 6 comparisons)"),
    (("B", "A", 0.9, 0.8, 0.03, "F1", 0.01), "B and A are not significantly different on F1: B − A = +0.1000 "
                                              "(p = 0.030)"),
])
def test_describe_states_the_difference_with_the_sign_of_the_names_as_written(args, expected):
    assert describe(*args) == expected


def test_natural_sort_and_rank_order():
    assert sorted(["M10", "M2", "M1", "M0", "m11"], key=natural_key) == ["M0", "M1", "M2", "M10", "m11"]
    assert sorted(["sys-b", "sys-a10", "sys-a9"], key=natural_key) == ["sys-a9", "sys-a10", "sys-b"]
    means = {"M10": 0.5, "M2": 0.5, "M1": 0.7, "M3": float("nan"), "M0": 0.4}
    assert rank_order(means) == ["M1", "M2", "M10", "M0", "M3"]


@pytest.mark.parametrize("p, expected", [
    ([0.01, 0.04, 0.03], [0.03, 0.06, 0.06]),  # 0.01*3; 0.03*2; 0.04*1 raised to 0.06 (monotone)
    ([0.5, 0.001], [0.5, 0.002]),
    ([0.6, 0.7], [1.0, 1.0]),                 # 0.6*2 capped at 1
    ([0.02], [0.02]),
    ([], []),
])
def test_holm_by_hand(p, expected):
    assert holm(p) == pytest.approx(expected)


def _matrix(names, pairs):
    k = len(names)
    m = np.ones((k, k))
    for (a, b), p in pairs.items():
        i, j = names.index(a), names.index(b)
        m[i, j] = m[j, i] = p
    return m


def test_clusters_group_systems_not_separated_and_count_wins():
    # A and C differ significantly though each is tied with B: one cluster {A, B, C} (not separable), D below.
    names = ["D", "C", "B", "A"]  # any order in: ordered by score out
    means = {"A": 0.9, "B": 0.85, "C": 0.8, "D": 0.5}
    m = _matrix(names, {("A", "B"): 0.3, ("A", "C"): 0.01, ("B", "C"): 0.2, ("A", "D"): 0.001,
                        ("B", "D"): 0.001, ("C", "D"): 0.001})
    cl, standing = clusters(names, means, m)
    assert [c.systems for c in cl] == [("A", "B", "C"), ("D",)]
    assert [(s.system, s.cluster, s.wins, s.losses, s.rank_low, s.rank_high) for s in standing] == [
        ("A", 1, 2, 0, 1, 2), ("B", 1, 1, 0, 1, 3), ("C", 1, 1, 1, 2, 3), ("D", 2, 0, 3, 4, 4)]


def test_clusters_split_where_every_upper_system_beats_every_lower_one():
    names = ["A", "B", "C", "D"]
    means = {"A": 0.9, "B": 0.89, "C": 0.7, "D": 0.69}
    m = _matrix(names, {("A", "B"): 0.5, ("A", "C"): 0.001, ("A", "D"): 0.001, ("B", "C"): 0.04,
                        ("B", "D"): 0.001, ("C", "D"): 0.6})
    cl, _ = clusters(names, means, m)
    assert [c.systems for c in cl] == [("A", "B"), ("C", "D")]
    cl, _ = clusters(names, means, m, alpha=0.01)  # B vs C no longer significant: one group
    assert [c.systems for c in cl] == [("A", "B", "C", "D")]


def test_analyse_orders_by_score_defaults_to_the_top_and_counts_comparisons(data):
    res = analyse({"A": data["A"], "A noisy": data["A noisy"], "B": data["B"]})
    assert res.systems[0] == "B" and res.baseline == "B"
    assert [i.system for i in res.intervals] == list(res.systems)
    assert res.n_baseline_comparisons == 2 and res.n_pairwise_comparisons == 3
    assert "Tests made: 2 against the baseline, among the 3 pairwise test(s) of 3 systems" in \
        res.comparisons_note()
    assert res.clusters[0].systems == ("B",) and res.standing("B").wins == 2
    for r in res.versus_baseline:
        assert r.sentence().startswith("B is better than")
        assert "B − " + r.system + " = +" in r.sentence()


def test_holm_adjusts_over_the_pairs_as_one_family(data):
    plain = analyse({"A": data["A"], "A noisy": data["A noisy"], "B": data["B"]}, baseline="A")
    holm_res = analyse({"A": data["A"], "A noisy": data["A noisy"], "B": data["B"]}, baseline="A",
                       correction="holm")
    np.testing.assert_allclose(holm_res.matrix_raw, plain.matrix)
    iu = np.triu_indices(3, 1)
    np.testing.assert_allclose(holm_res.matrix[iu], holm(plain.matrix[iu]))
    # the tests against the baseline read the adjusted p of their pair: one p per pair
    for r in holm_res.versus_baseline:
        assert r.p == holm_res.pair(r.system, "A") and r.p_raw == plain.pair(r.system, "A")
        assert r.family == 3 and "Holm-adjusted over 3 comparisons" in r.sentence()
    assert all("uncorrected, one of 3 comparisons" in r.sentence() for r in plain.versus_baseline)
    assert "Holm's correction over all 3 pairs as one family" in holm_res.comparisons_note()
    assert holm_res.as_dict()["family"] == 3 and holm_res.as_dict()["versus_baseline"][0]["family"] == 3
    with pytest.raises(ValueError, match="Unknown correction"):
        analyse({"A": data["A"]}, correction="bonferroni")


def _constructed_four():
    """Four systems built so that Holm over the 3 tests against the best and Holm over the 6 pairs disagree on
    best vs 2nd (an analysis that corrected the two families separately said "significant" in one place and
    "not significant" in the other for the same pair)."""
    rng = np.random.default_rng(3)
    base = rng.uniform(0.5, 0.9, 60)
    return {"best": base + 0.025 + rng.normal(0, 0.05, 60), "second": base + rng.normal(0, 0.05, 60),
            "third": base - 0.002 + rng.normal(0, 0.05, 60), "fourth": base - 0.2 + rng.normal(0, 0.01, 60)}


def test_best_vs_second_reads_the_same_in_every_place_with_holm():
    scores = _constructed_four()
    raw = analyse(scores)
    p_raw = raw.pair("best", "second")
    three = holm([raw.pair("best", s) for s in ("second", "third", "fourth")])[0]
    iu = np.triu_indices(4, 1)
    six = holm(raw.matrix[iu])[list(zip(*iu)).index((0, 1))]
    assert raw.systems[:2] == ("best", "second") and three < 0.05 <= six, (p_raw, three, six)  # the premise
    res = analyse(scores, correction="holm")
    r = next(x for x in res.versus_baseline if x.system == "second")
    assert r.p == res.pair("best", "second") == pytest.approx(six)
    assert not r.significant() and "not significantly different" in r.sentence()
    assert res.p_text("best", "second") == f"p = {six:.3f}, Holm-adjusted over 6 comparisons"
    rebased = res.rebase("third")
    assert rebased.baseline == "third" and rebased.pair("best", "second") == res.pair("best", "second")
    assert next(x for x in rebased.versus_baseline if x.system == "best").p == res.pair("best", "third")
    fresh = analyse(scores, baseline="third", correction="holm")
    assert [(x.system, x.p, x.p_one_sided) for x in rebased.versus_baseline] == \
        [(x.system, x.p, x.p_one_sided) for x in fresh.versus_baseline]


def test_unequal_lengths_and_unknown_baseline_are_errors():
    with pytest.raises(ValueError, match="same number of segments"):
        bootstrap_means({"A": np.ones(3), "B": np.ones(4)})
    with pytest.raises(ValueError, match="Unknown baseline"):
        analyse({"A": np.ones(3)}, baseline="Z")


def test_holm_over_sixteen_systems_can_find_differences_with_the_resamples_it_needs():
    """Issue 23: with 1,000 resamples the smallest p is 1/1001 and Holm over 120 pairs made it 0.120, so no pair of
    16 systems could ever differ. The resamples now follow the family (24,000 here) and the clear differences
    (uncorrected p = 0.001 at 1,000 resamples) survive the correction."""
    from bertscore_viz.evaluation.significance import resamples_for

    rng = np.random.default_rng(1)
    base = rng.normal(0.6, 0.08, size=100)
    scores = {f"M{i:02d}": base + 0.01 * i + rng.normal(0, 0.01, size=100) for i in range(16)}
    plain = analyse(scores)
    assert plain.n_samples == 1000 and plain.pair("M15", "M00") == pytest.approx(1 / 1001)
    trapped = analyse(scores, correction="holm", n_samples=1000)
    assert trapped.matrix.min() == pytest.approx(120 / 1001) and sum(s.wins for s in trapped.standings) == 0
    assert "No difference can reach p < 0.05" in trapped.resolution_note()
    holm_res = analyse(scores, correction="holm", n_samples=None)
    assert holm_res.n_samples == resamples_for(16, 100, "holm") == 24_000
    assert holm_res.smallest_p == pytest.approx(120 / 24_001)
    assert "No difference can reach" not in holm_res.resolution_note()
    assert holm_res.pair("M15", "M00") < 0.05 and sum(s.wins for s in holm_res.standings) > 50
    survived = [(a, b) for a in holm_res.systems for b in holm_res.systems
                if a < b and holm_res.pair(a, b) < 0.05]
    assert all(plain.pair(a, b) < 0.05 for a, b in survived)  # Holm never adds a difference


@pytest.mark.parametrize("k, n, correction, expected", [
    (4, 100, None, 1000), (16, 100, None, 1000), (4, 100, "holm", 2000), (3, 100, "holm", 1000),
    (16, 20_000, "holm", 15_000), (200, 100, "holm", 100_000),
])
def test_resamples_follow_the_family_within_the_ceilings(k, n, correction, expected):
    from bertscore_viz.evaluation.significance import resamples_for

    assert resamples_for(k, n, correction) == expected


# --- corpus scores that are not means (chrF, BLEU, TER), and metrics where lower is better ---------------------------
def test_resample_indices_in_blocks_are_sacrebleus_one_draw():
    whole = np.random.default_rng(12345).choice(37, size=(100, 37), replace=True)
    blocks = list(sig.resample_indices(37, 100, 12345, max_cells=37 * 7))  # 7 resamples per block
    assert [(a, b) for a, b, _ in blocks][:2] == [(0, 7), (7, 14)] and blocks[-1][1] == 100
    assert np.array_equal(np.concatenate([idx for _, _, idx in blocks]), whole)


def test_analyse_resampled_of_means_is_analyse(data):
    """A corpus score that is the mean of segment scores, with its resampled means: the same analysis, p for p."""
    scores = {k: data[k] for k in ("A", "B", "A noisy")}
    samples = bootstrap_means(scores)
    means = {k: float(v.mean()) for k, v in scores.items()}
    for correction in (None, "holm"):
        direct = analyse(scores, correction=correction)
        again = sig.analyse_resampled(means, samples, "F1", correction=correction, n_segments=200)
        assert again.systems == direct.systems and np.array_equal(again.matrix, direct.matrix)
        assert [(i.low, i.high) for i in again.intervals] == [(i.low, i.high) for i in direct.intervals]
        assert [c.systems for c in again.clusters] == [c.systems for c in direct.clusters]


def test_lower_is_better_orders_tests_and_clusters_the_other_way():
    rng = np.random.default_rng(3)
    samples = {"low": rng.normal(20, 1, 1000), "high": rng.normal(40, 1, 1000), "mid": rng.normal(20.5, 1, 1000)}
    scores = {"low": 20.0, "high": 40.0, "mid": 20.5}
    res = sig.analyse_resampled(scores, samples, "TER", higher_is_better=False)
    assert res.systems == ("low", "mid", "high") and res.baseline == "low"
    assert [c.systems for c in res.clusters] == [("low", "mid"), ("high",)]
    assert res.standing("low").wins == 1 and res.standing("high").losses == 2
    worse = next(r for r in res.versus_baseline if r.system == "high")
    assert worse.sentence("TER") == "low is better than high on TER: low − high = -20.0000 (p = 0.001, " \
                                    "uncorrected, one of 3 comparisons)"
    assert worse.p_one_sided == sig.p_value_one_sided(samples["high"], samples["low"], higher_is_better=False)
    assert rank_order({"a": 2.0, "b": 1.0, "c": float("nan")}, higher_is_better=False) == ["b", "a", "c"]
    assert res.as_dict()["higher_is_better"] is False
    rebased = res.rebase("high")
    assert all(r.higher_is_better is False for r in rebased.versus_baseline)


def test_p_value_from_samples_by_hand():
    """sacrebleu's _compute_p_value on the centred absolute differences: |(1,3,2,6) - (0,0,0,0)| centred on their
    mean 3 are (-2, 0, -1, 3); one of them exceeds the observed difference 2: p = (1 + 1) / (4 + 1)."""
    assert sig.p_value_from_samples(2.0, np.array([1.0, 3, 2, 6]), np.zeros(4)) == pytest.approx(2 / 5)
    assert sb._compute_p_value(np.array([-2.0, 0, -1, 3]), 2.0) == pytest.approx(2 / 5)


def test_bootstrap_interval_is_the_pages_interval_of_a_group():
    values = np.linspace(0.1, 0.9, 23)
    idx = np.random.default_rng(12345).choice(23, size=(1000, 23), replace=True)
    means = np.sort(values[idx].mean(axis=1))
    assert sig.bootstrap_interval(values) == (means[25], means[1000 - 25 - 1])
    assert all(np.isnan(sig.bootstrap_interval(np.array([]))))
