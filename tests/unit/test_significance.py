"""Paired bootstrap and intervals on constructed data, and parity with sacrebleu's own paired_bs code."""

import numpy as np
import pytest
from sacrebleu import significance as sb

from bertscore_viz import significance as sig
from bertscore_viz.significance import analyse, bootstrap_means, describe, percentile_ci


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
    assert r.p == 1.0 and not r.significant()
    assert r.sentence() == "A copy and A are not significantly different on F1 (p = 1.000)"


def test_clearly_better_system_gets_the_smallest_p(data):
    res = analyse({"A": data["A"], "B": data["B"]}, baseline="A")
    (r,) = res.versus_baseline
    assert r.p == pytest.approx(1 / 1001) and r.p_one_sided == pytest.approx(1 / 1001)
    assert r.difference > 0.07
    assert r.sentence() == "B is better than A on F1 (p = 0.001)"


def test_the_sentence_names_the_better_system_whichever_is_baseline(data):
    res = analyse({"B": data["B"], "A": data["A"]}, baseline="B")
    assert res.versus_baseline[0].sentence("F1") == "B is better than A on F1 (p = 0.001)"
    assert res.versus_baseline[0].p_one_sided == pytest.approx(1.0)


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
    monkeypatch.setattr(sig, "_BLOCK_CELLS", 450)  # 2 resamples of 200 segments per block
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


def test_describe_formats():
    assert describe("B", "A", 0.9, 0.8, 0.002) == "B is better than A on F1 (p = 0.002)"
    assert describe("B", "A", 0.7, 0.8, 0.01, "R") == "A is better than B on R (p = 0.010)"
    assert describe("B", "A", 0.80, 0.81, 0.4) == "B and A are not significantly different on F1 (p = 0.400)"


def test_unequal_lengths_and_unknown_baseline_are_errors():
    with pytest.raises(ValueError, match="same number of segments"):
        bootstrap_means({"A": np.ones(3), "B": np.ones(4)})
    with pytest.raises(ValueError, match="Unknown baseline"):
        analyse({"A": np.ones(3)}, baseline="Z")
