"""Power of the Compare page's paired test: the normal quantile, the test's critical value, the minimum detectable
difference and the segments needed, each held to a hand computation or to a simulation running the page's own
test (sacrebleu's paired bootstrap from significance.py) on resampled observed differences."""

from __future__ import annotations

import csv
import math

import numpy as np
import pytest

from bertscore_viz import Scorer
from bertscore_viz.errors import InputError
from bertscore_viz.evaluation.significance import analyse, bootstrap_means, p_value
from bertscore_viz.locations import EXAMPLES_DIR
from bertscore_viz.stats import power as pw


def skewed_differences(n: int = 120, seed: int = 5) -> np.ndarray:
    """Per-segment differences shaped like real ones: spread 0.045 and a tail of large gains (skewness 0.86; the
    F1 differences of the Compare example's system pairs on the bundled model have skewness -0.4 to 1.0)."""
    rng = np.random.default_rng(seed)
    return 0.01 + 0.04 * rng.standard_normal(n) + np.where(rng.random(n) < 0.15, rng.exponential(0.05, n), 0.0)


def normal_differences(n: int = 120, seed: int = 3) -> np.ndarray:
    return np.random.default_rng(seed).normal(0.0, 0.05, n)


def within(sim: pw.PowerSimulation, expected: float, k: float = 3.0) -> bool:
    """The simulated rate agrees with ``expected`` within ``k`` Monte-Carlo standard errors (taken at ``expected``,
    so that a rate of exactly 0 or 1 is not judged with a zero error)."""
    se = math.sqrt(expected * (1 - expected) / sim.n_sims)
    return abs(sim.rate - expected) <= k * se


# --- the normal distribution ------------------------------------------------------------------------------------
@pytest.mark.parametrize("p, z", [
    (0.975, 1.959963984540054), (0.95, 1.6448536269514722), (0.8, 0.8416212335729143),
    (0.99, 2.3263478740408408), (0.001, -3.090232306167813), (0.1, -1.2815515655446004), (0.5, 0.0),
    (1e-10, -6.361340902404056), (0.02425, -1.972961051311885), (0.3, -0.5244005127080409),
])
def test_normal_quantile_known_values(p, z):
    assert pw.normal_quantile(p) == pytest.approx(z, abs=1e-12)


def test_normal_quantile_inverts_the_cdf_and_handles_the_ends():
    for p in np.linspace(1e-6, 1 - 1e-6, 401):
        assert pw.normal_cdf(pw.normal_quantile(p)) == pytest.approx(p, rel=1e-12, abs=1e-15)
    assert pw.normal_quantile(0.0) == -math.inf and pw.normal_quantile(1.0) == math.inf
    assert math.isnan(pw.normal_quantile(1.5)) and math.isnan(pw.normal_quantile(float("nan")))
    assert pw.normal_cdf(1.959963984540054) == pytest.approx(0.975, abs=1e-15)


# --- the test's critical value ----------------------------------------------------------------------------------
def test_critical_value_solves_the_folded_normal_equation():
    """Independently of the module: the tail P(|X| - E|X| > k), X ~ N(k, 1), by numeric integration on a grid,
    equals (c_max + 0.5) / B at the returned k (c_max = 49 of B = 1000 at alpha 0.05)."""
    k = pw.critical_value(0.05, 1000)
    x = np.linspace(k - 12, k + 12, 400_001)
    dens = np.exp(-0.5 * (x - k) ** 2) / math.sqrt(2 * math.pi)
    dx = x[1] - x[0]
    mean_abs = float(np.sum(np.abs(x) * dens) * dx)
    tail = float(np.sum(dens[np.abs(x) - mean_abs > k]) * dx)
    assert tail == pytest.approx(49.5 / 1000, abs=2e-5)
    assert k == pytest.approx(1.6036, abs=1e-3)  # between one-sided 5% (1.645) and its folded correction
    assert pw.critical_value(0.05, 10) == math.inf  # (c + 1) / 11 < 0.05 never holds
    assert pw.critical_value(0.01, 1000) > k


def test_the_pages_test_rejects_about_eleven_percent_of_true_nulls():
    """The size of sacrebleu's paired bootstrap at alpha 0.05 is 2 Phi(-k'), about 0.11, not 0.05: simulated with the
    page's own test on differences with mean 0."""
    d = normal_differences()
    a = pw.power_analysis(d)
    sim = pw.simulate_power(d, 0.0, n_sims=600, seed=1)
    assert within(sim, a.power_at(0.0))
    assert 0.08 < a.power_at(0.0) < 0.13


# --- minimum detectable difference ------------------------------------------------------------------------------
def test_mde_formula_by_hand():
    d = skewed_differences()
    a = pw.power_analysis(d)
    n, sd = len(d), float(np.std(d, ddof=1))
    k = pw.critical_value()
    kk = k * math.sqrt((n - 1) / n)
    closed_form = (kk + 0.8416212335729143) * sd / math.sqrt(n)
    assert a.sd == pytest.approx(sd, rel=1e-12) and a.n == n
    assert a.mde == pytest.approx(closed_form, rel=1e-4)  # the second tail adds ~3e-5 of power there
    phi = lambda x: 0.5 * (1 + math.erf(x / math.sqrt(2)))  # noqa: E731
    s = sd / math.sqrt(n)
    assert a.power_at(a.mde) == pytest.approx(phi(a.mde / s - kk) + phi(-a.mde / s - kk), abs=1e-12)
    assert a.power_at(a.mde) == pytest.approx(0.8, abs=1e-9)


@pytest.mark.parametrize("make", [skewed_differences, normal_differences])
@pytest.mark.parametrize("sign", [1, -1])
def test_mde_agrees_with_simulation_of_the_pages_test(make, sign):
    """Simulated power at the MDE (test sets resampled from the observed differences shifted to mean +-MDE, each run
    through bootstrap_means and p_value as on the page) is 0.80 within 3 Monte-Carlo standard errors."""
    d = make()
    a = pw.power_analysis(d)
    sim = pw.simulate_power(d, sign * a.mde, n_sims=800, seed=2)
    assert within(sim, 0.8), (sim.rate, sim.stderr)


def test_a_two_sided_five_percent_critical_value_would_disagree_with_the_simulation():
    """The check that the formula follows the page's test: at (1.96 + z_0.8) standard errors the page's test has
    about 89% power, far outside 0.80 +- 3 standard errors, and as the formula with k = 1.60 says (on differences
    without skew, where the normal approximation is at its best)."""
    d = normal_differences()
    a = pw.power_analysis(d)
    naive = (1.959963984540054 + 0.8416212335729143) * a.standard_error
    sim = pw.simulate_power(d, naive, n_sims=800, seed=3)
    assert not within(sim, 0.8)
    assert within(sim, a.power_at(naive))


def test_significance_analyse_is_the_test_being_simulated():
    """The p simulate_power computes from the differences alone (bootstrap_means and p_value on d against zeros) is
    the p significance.analyse, the page's entry point, gives the pair of systems."""
    rng = np.random.default_rng(0)
    b = rng.uniform(0.6, 0.9, 50)
    a = b + skewed_differences(50, seed=9)
    sig = analyse({"A": a, "B": b})
    d = pw.paired_differences(a, b)
    means = bootstrap_means({"A": d, "B": np.zeros(len(d))}, 1000, 12345)
    assert p_value(d, np.zeros(len(d)), means["A"], means["B"]) == pytest.approx(sig.pair("A", "B"), abs=1e-12)


@pytest.mark.slow
def test_mde_on_real_bertscore_differences_agrees_with_simulation():
    """The shipped Compare example scored with the bundled model: the differences of two systems' F1, resampled to
    test sets of 120 segments."""
    with (EXAMPLES_DIR / "systems_example.csv").open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    refs = [r["reference"] for r in rows]
    scorer = Scorer()
    f_a = scorer.score([r["paraphrase"] for r in rows], refs).f1
    f_b = scorer.score([r["literal"] for r in rows], refs).f1
    d = pw.paired_differences(f_a, f_b)
    pool = np.random.default_rng(4).choice(d, 120)  # a test set of 120 segments like these 30
    a = pw.power_analysis(pool)
    sim = pw.simulate_power(pool, a.mde, n_sims=800, seed=5)
    assert within(sim, 0.8), (sim.rate, a.mde)


# --- segments needed --------------------------------------------------------------------------------------------
def test_segments_needed_is_the_smallest_n_reaching_the_power():
    d = skewed_differences()
    a = pw.power_analysis(d)
    delta = 0.01
    need = a.segments_needed(delta)
    k = pw.critical_value()
    assert pw.power_of(delta, a.sd, need.n, k) >= 0.8 > pw.power_of(delta, a.sd, need.n - 1, k)
    approx = ((k + 0.8416212335729143) * a.sd / delta) ** 2
    assert abs(need.n - approx) <= 2  # the sqrt((n-1)/n) factor moves it by at most a segment or two
    assert a.segments_needed(-delta).n == need.n  # two-sided
    assert "segments" in need.sentence() and need.as_dict()["segments"] == need.n


def test_segments_needed_agrees_with_simulation():
    d = skewed_differences()
    a = pw.power_analysis(d)
    need = a.segments_needed(0.012)
    sim = pw.simulate_power(d, 0.012, n=need.n, n_sims=800, seed=6)
    assert within(sim, 0.8), (need.n, sim.rate)


def test_mde_of_the_needed_test_set_is_the_delta():
    """A test set of the needed size (with the same sd) detects delta; one segment fewer does not."""
    a = pw.power_analysis(skewed_differences())
    need = a.segments_needed(0.015)

    def with_sd(n: int) -> np.ndarray:
        z = np.random.default_rng(n).standard_normal(n)
        return (z - z.mean()) / z.std(ddof=1) * a.sd

    assert pw.power_analysis(with_sd(need.n)).mde <= 0.015 < pw.power_analysis(with_sd(need.n - 1)).mde
    assert pw.power_analysis(with_sd(need.n)).mde == pytest.approx(0.015, rel=0.02)


# --- edge cases -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("d", [[], [0.3]])
def test_fewer_than_two_segments_give_nan_and_a_message(d):
    a = pw.power_analysis(d)
    assert math.isnan(a.mde) and "at least 2 segments" in a.note
    assert a.sentence() == a.note
    assert a.segments_needed(0.1).n is None and math.isnan(a.power_at(0.1))
    assert a.as_dict()["mde"] is None


def test_zero_variance_gives_nan_and_a_message():
    a = pw.power_analysis([0.02] * 10)
    assert math.isnan(a.mde) and "sd = 0" in a.note
    need = a.segments_needed(0.01)
    assert need.n == 2 and "sd = 0" in need.note


def test_zero_difference_cannot_be_detected():
    need = pw.power_analysis(skewed_differences()).segments_needed(0.0)
    assert need.n is None and "0 cannot be detected" in need.note


def test_too_few_resamples_make_nothing_detectable():
    a = pw.power_analysis(skewed_differences(), n_samples=10)
    assert math.isnan(a.mde) and "no difference is detectable" in a.note


def test_bad_inputs_are_refused_with_messages():
    with pytest.raises(InputError, match="not finite"):
        pw.power_analysis([0.1, float("nan"), 0.2])
    with pytest.raises(InputError, match="alpha"):
        pw.power_analysis([0.1, 0.2], alpha=1.5)
    with pytest.raises(InputError, match="power"):
        pw.power_analysis([0.1, 0.2], power=0)
    with pytest.raises(InputError, match="same segments"):
        pw.paired_differences([0.1, 0.2], [0.1])
    with pytest.raises(InputError, match="at least 2"):
        pw.simulate_power([0.1], 0.0)
    with pytest.raises(InputError, match="finite"):
        pw.power_analysis([0.1, 0.2]).segments_needed(float("inf"))


def test_inputs_are_not_modified():
    d = skewed_differences()
    before = d.copy()
    pw.power_analysis(d)
    pw.simulate_power(d, 0.01, n_sims=5)
    assert np.array_equal(d, before)
