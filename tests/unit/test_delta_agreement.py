"""What a metric difference means (issue 44, part 3): stats/delta_agreement.py, files/wmt16_rated.py and
figures/delta_plots.py.

Hand-worked cases with exact probabilities, an independent slow loop on seeded data, bad inputs, the sentence's
wording in both cases, and the bundled WMT16 DA data scored by the bundled model.
"""

from __future__ import annotations

import math
import os
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest

from bertscore_viz.errors import InputError
from bertscore_viz.figures.delta_plots import delta_figure
from bertscore_viz.files.wmt16_rated import DetailsOfAnotherPair, read_details, read_rated_da, wmt16_delta_agreement
from bertscore_viz.stats.delta_agreement import (
    MIN_SYSTEM_PAIRS,
    MIN_WINDOW_PAIRS,
    default_window,
    delta_agreement,
    fit_sigmoid,
    paired_delta_agreement,
    pairs_agreement,
    segment_delta_agreement,
    sigmoid,
    system_pairs,
    wilson_interval,
)

DATA = Path(os.environ.get("BERTSCORE_VIZ_DATA") or Path(__file__).resolve().parents[2] / "data") \
    / "wmt16-da-to-english"


# ---------------------------------------------------------------- hand-worked


def test_a_hand_worked_curve_has_exact_bins():
    # |metric delta| 1 (disagrees: metric +, humans -), 2, 4 (agree), 8 (agrees)
    a = delta_agreement([2.0, 4.0, 8.0, 1.0], [1.0, 1.0, 2.0, -1.0], window_pairs=2)
    assert a.pair_deltas.tolist() == [1.0, 2.0, 4.0, 8.0]
    assert a.pair_agree.tolist() == [False, True, True, True]
    # centres 1, 2, 4, 8: bins {1,2}, {2,1} (the same: drawn once), {4,2}, {8,4}
    assert a.deltas.tolist() == [1.5, 3.0, 6.0]
    assert a.probability.tolist() == [0.5, 1.0, 1.0]
    assert a.delta_low.tolist() == [1.0, 2.0, 4.0] and a.delta_high.tolist() == [2.0, 4.0, 8.0]
    assert (a.n_pairs, a.n_system_pairs, a.n_human_ties, a.window_pairs) == (4, 4, 0, 2)
    w = a.at(-3.1)  # the size counts, not the sign: nearest 3.1 are 4 and 2
    assert (w.n, w.agree, w.probability, w.delta_low, w.delta_high) == (2, 2, 1.0, 2.0, 4.0)
    assert a.at(0.0).probability == 0.5


def test_signs_ties_and_direction():
    # a metric tie (0) disagrees with any human difference; an exact human tie leaves the curve
    a = delta_agreement([0.0, 1.0, -2.0, 3.0], [5.0, 0.0, -1.0, 1.0], window_pairs=3)
    assert a.n_human_ties == 1 and a.n_pairs == 3
    assert a.pair_deltas.tolist() == [0.0, 2.0, 3.0] and a.pair_agree.tolist() == [False, True, True]
    # a tolerance: |human delta| <= 1 is a tie
    b = delta_agreement([0.0, 1.0, -2.0, 3.0], [5.0, 0.0, -1.0, 1.0], tie_tolerance=1.0)
    assert b.n_human_ties == 3 and b.pair_deltas.tolist() == [0.0]
    # lower is better (TER): a lower score for a is agreement with a higher human score
    c = delta_agreement([-2.0, 3.0], [1.0, 1.0], higher_is_better=False)
    assert c.pair_agree.tolist() == [True, False]


def test_the_interval_counts_distinct_system_pairs():
    # four comparisons from two system pairs, three agreeing: the fraction 3/4 with n = 2
    a = delta_agreement([1.0, 2.0, 3.0, 4.0], [1.0, 1.0, 1.0, -1.0], pair_ids=[7, 7, 9, 9], window_pairs=4)
    w = a.at(2.0)
    assert (w.n, w.n_system_pairs, w.probability) == (4, 2, 0.75)
    p, n, z = 0.75, 2, 1.959963984540054
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert (w.low, w.high) == pytest.approx((centre - half, min(1.0, centre + half)), abs=1e-12)


def test_wilson_interval_matches_the_published_value():
    # 8 of 10: 95% Wilson score interval 0.4902 to 0.9433 (Newcombe 1998, Table I method 3 style)
    low, high = wilson_interval(8, 10)
    assert (round(low, 4), round(high, 4)) == (0.4902, 0.9433)
    assert all(math.isnan(x) for x in wilson_interval(0, 0))


def test_system_pairs_by_hand():
    systems = ["A", "A", "B", "B", "C", "C", "A", "D"]
    groups = ["g1"] * 6 + ["g2"] * 2
    metric = [0.5, 0.7, 0.2, 0.4, 0.9, 0.9, 0.1, 0.3]
    human = [1.0, 3.0, 0.0, 1.0, -1.0, -3.0, 4.0, 2.0]
    p = system_pairs({"F1": metric}, human, systems, groups)
    got = sorted(zip(p.group, p.system_a, p.system_b, p.metric_deltas["F1"].round(12), p.human_delta))
    assert got == [("g1", "A", "B", 0.3, 1.5), ("g1", "A", "C", -0.3, 4.0), ("g1", "B", "C", -0.6, 2.5),
                   ("g2", "A", "D", -0.2, 2.0)]
    assert p.n_system_pairs == 4 and not p.resampled.any() and sorted(p.pair_id.tolist()) == [0, 1, 2, 3]
    # without groups A's four segments pool and D pairs with every system
    q = system_pairs({"F1": metric}, human, systems)
    assert q.n_system_pairs == 6


def test_the_sentence_in_both_cases():
    # 45 system pairs, 35 agreeing: the window holds all 45
    rng = np.random.default_rng(3)
    metric = rng.uniform(0.001, 0.03, 45)
    human = np.where(np.arange(45) < 35, 1.0, -1.0)
    a = delta_agreement(metric, human, window_pairs=45)
    text = a.sentence(0.012, "F1")
    assert text.startswith("a difference of 0.012 F1 agreed with the human ranking in 78% of the 45 system pairs "
                           "of the rated data (differences ")
    assert text.endswith("; 95% interval 64% to 87%")  # Wilson for 35/45: 0.637 to 0.874
    assert not a.too_few(0.012)
    # a smaller bin names its neighbours and the total
    b = delta_agreement(metric, human, window_pairs=20)
    assert "of the 20 system pairs of the rated data whose F1 differences are nearest it (" in b.sentence(0.012, "F1")
    assert "45 pairs in all" in b.sentence(0.012, "F1")
    assert "larger than any rated difference" in b.sentence(1.0, "F1")
    # too few: fewer system pairs than MIN_SYSTEM_PAIRS, or a bin below MIN_WINDOW_PAIRS
    few = delta_agreement(metric[:9], human[:9])
    assert few.sentence(0.012, "F1") == ("too few rated system pairs (9) to say how often humans agree with a "
                                         "difference of this size")
    small = delta_agreement(metric[:15], human[:15])
    assert MIN_SYSTEM_PAIRS <= 15 < MIN_WINDOW_PAIRS and small.too_few(0.01)
    assert small.sentence(0.01, "F1").startswith("too few rated system pairs (15)")


def test_systems_on_the_same_segments():
    # three systems, two segments each: means A (0.5, 2), B (0.3, 0.5), C (0.8, -1)
    metric = {"A": [0.4, 0.6], "B": [0.2, 0.4], "C": [0.9, 0.7]}
    human = {"A": [1.0, 3.0], "B": [0.0, 1.0], "C": [-1.0, -1.0]}
    a = paired_delta_agreement(metric, human)
    # A-B: +0.2 / +1.5 agree; A-C: -0.3 / +3 disagree; B-C: -0.5 / +1.5 disagree
    assert a.pair_deltas.round(12).tolist() == [0.2, 0.3, 0.5] and a.pair_agree.tolist() == [True, False, False]
    assert a.sentence(0.2, "F1").startswith("too few rated system pairs (3)")
    ter = paired_delta_agreement(metric, human, higher_is_better=False)
    assert ter.pair_agree.tolist() == [False, True, True]
    with pytest.raises(InputError, match="same systems"):
        paired_delta_agreement(metric, {"A": [1.0, 2.0]})
    with pytest.raises(InputError, match="the same n"):
        paired_delta_agreement({"A": [0.1], "B": [0.2, 0.3]}, {"A": [1.0], "B": [2.0, 3.0]})
    with pytest.raises(InputError, match="human scores of B"):
        paired_delta_agreement(metric, {**human, "B": [float("nan"), 1.0]})
    # every human difference a tie: nothing to say
    ties = paired_delta_agreement(metric, {s: [1.0, 1.0] for s in metric})
    assert ties.n_pairs == 0 and ties.n_human_ties == 3 and ties.too_few(0.1) and len(ties.deltas) == 0


def test_default_window():
    assert [default_window(n) for n in (0, 5, 45, 100, 1000, 5000)] == [1, 5, 20, 25, 250, 300]


def test_the_sigmoid_fit_recovers_its_parameters():
    x = np.linspace(0.0, 0.05, 40)
    phi1, phi2 = fit_sigmoid(x, sigmoid(x, 0.93, 120.0))
    assert phi1 == pytest.approx(0.93, rel=1e-5) and phi2 == pytest.approx(120.0, rel=1e-4)
    assert all(math.isnan(v) for v in fit_sigmoid([0.0, 0.0], [0.5, 0.5]))
    # MT-Thresholds' form with its BLEU parameters (a in percent there) gives the paper's Table 2: 70% at 1.39 BLEU,
    # 80% at 2.34
    bleu = (0.8833333333333225, 0.9663926931178954)
    assert 100 * sigmoid(1.39, *bleu) == pytest.approx(70.0, abs=0.1)
    assert 100 * sigmoid(2.34, *bleu) == pytest.approx(80.0, abs=0.1)


# ---------------------------------------------------------------- independent slow loop


def _rated(seed: int, n: int = 1500, n_systems: int = 9):
    rng = np.random.default_rng(seed)
    systems = np.array([f"s{k}" for k in rng.integers(0, n_systems, n)])
    groups = np.where(rng.random(n) < 0.5, "de-en", "cs-en")
    quality = {s: rng.normal() for s in set(systems)}
    human = np.array([quality[s] for s in systems]) * 0.3 + rng.normal(size=n)
    metric = human * 0.02 + rng.normal(size=n) * 0.05
    return metric, human, systems, groups


def _slow_mean(values, systems, groups, system, group):
    picked = [v for v, s, g in zip(values, systems, groups) if s == system and g == group]
    return sum(picked) / len(picked)


def _slow_pairs(metric, human, systems, groups):
    out = []
    for g in sorted(set(groups)):
        names = sorted({s for s, gg in zip(systems, groups) if gg == g})
        for a, b in combinations(names, 2):
            dm = _slow_mean(metric, systems, groups, a, g) - _slow_mean(metric, systems, groups, b, g)
            dh = _slow_mean(human, systems, groups, a, g) - _slow_mean(human, systems, groups, b, g)
            out.append((g, a, b, dm, dh))
    return out


def test_an_independent_slow_loop_gives_the_same_pairs_and_curve():
    metric, human, systems, groups = _rated(11)
    pairs = system_pairs({"F1": metric}, human, systems, groups)
    slow = _slow_pairs(metric.tolist(), human.tolist(), systems.tolist(), groups.tolist())
    fast = sorted(zip(pairs.group, pairs.system_a, pairs.system_b, pairs.metric_deltas["F1"], pairs.human_delta))
    assert len(fast) == len(slow) == 72
    for f, s in zip(fast, sorted(slow)):
        assert f[:3] == s[:3] and f[3] == pytest.approx(s[3], abs=1e-12) and f[4] == pytest.approx(s[4], abs=1e-12)
    k = 20
    a = pairs_agreement(pairs, "F1", window_pairs=k, points=72)
    # the slow curve: every comparison's |delta| a centre, its k nearest (earlier one first on a tie), bins drawn once
    rows = sorted((abs(s[3]), (s[3] > 0) == (s[4] > 0)) for s in slow)
    bins: list[list[int]] = []
    for centre, _ in rows:
        near = sorted(range(len(rows)), key=lambda i: (abs(rows[i][0] - centre), i))[:k]
        if not bins or sorted(near) != sorted(bins[-1]):
            bins.append(near)
    assert len(a.deltas) == len(bins)
    for j, near in enumerate(bins):
        assert a.deltas[j] == pytest.approx(sum(rows[i][0] for i in near) / k, abs=1e-12)
        assert a.probability[j] == sum(rows[i][1] for i in near) / k
    lo, hi = wilson_interval(int(round(a.probability[5] * k)), k)
    assert (a.low[5], a.high[5]) == pytest.approx((lo, hi), abs=1e-12)
    # the fit is at least as good as any point of an independent fine grid
    best = min(np.sum((a.probability - p1 * (1 / (1 + np.exp(-p2 * a.deltas)))) ** 2)
               for p2 in np.geomspace(1, 1e4, 3000) for p1 in [np.dot(a.probability, 1 / (1 + np.exp(-p2 * a.deltas)))
                                                              / np.sum((1 / (1 + np.exp(-p2 * a.deltas))) ** 2)])
    assert np.sum((a.probability - a.fitted(a.deltas)) ** 2) <= best + 1e-12


def test_resampled_subsets_are_seeded_and_paired_on_items():
    metric, human, systems, groups = _rated(5, n=600, n_systems=4)
    p1 = system_pairs({"F1": metric}, human, systems, groups, subsets=3, seed=1)
    p2 = system_pairs({"F1": metric}, human, systems, groups, subsets=3, seed=1)
    assert np.array_equal(p1.metric_deltas["F1"], p2.metric_deltas["F1"])
    assert len(p1.human_delta) == 4 * p1.n_system_pairs and p1.resampled.sum() == 3 * p1.n_system_pairs
    assert all(np.sum(p1.pair_id == i) == 4 for i in range(p1.n_system_pairs))
    # items: two systems scored on the same 10 items; a subset takes the same items from both
    items = [f"i{k}" for k in range(10)] * 2
    sys2 = ["A"] * 10 + ["B"] * 10
    rng = np.random.default_rng(2)
    m2, h2 = rng.normal(size=20), rng.normal(size=20)
    p = system_pairs({"m": m2}, h2, sys2, items=items, subsets=5, subset_fraction=0.3, seed=4)
    again = np.random.default_rng(4)
    for r in range(1, 6):
        drawn = again.choice(np.array(sorted(set(items)), dtype=object), size=3, replace=False)
        idx = [k for k in range(10) if items[k] in set(drawn)]
        assert p.metric_deltas["m"][r] == pytest.approx(m2[idx].mean() - m2[[k + 10 for k in idx]].mean())
        assert p.human_delta[r] == pytest.approx(h2[idx].mean() - h2[[k + 10 for k in idx]].mean())
    a = pairs_agreement(p1, "F1")
    assert a.subsets == 3 and a.n_system_pairs == p1.n_system_pairs
    assert "comparisons of the rated data" in a.sentence(0.01, "F1") or a.too_few(0.01)


# ---------------------------------------------------------------- bad inputs


def test_bad_inputs_are_refused_with_clear_messages():
    with pytest.raises(InputError, match="one value per segment"):
        system_pairs({"F1": [0.1, 0.2, 0.3]}, [1.0, 2.0], ["a", "b"])
    with pytest.raises(InputError, match="one entry per segment"):
        system_pairs({"F1": [0.1, 0.2]}, [1.0, 2.0], ["a", "b", "c"])
    with pytest.raises(InputError, match="not finite numbers .*position 1"):
        system_pairs({"F1": [0.1, 0.2]}, [1.0, float("nan")], ["a", "b"])
    with pytest.raises(InputError, match="at least 2 systems in one group"):
        system_pairs({"F1": [0.1, 0.2, 0.3]}, [1.0, 2.0, 3.0], ["a", "a", "a"])
    with pytest.raises(InputError, match="at least 2 systems in one group"):
        system_pairs({"F1": [0.1, 0.2]}, [1.0, 2.0], ["a", "b"], groups=["x", "y"])
    with pytest.raises(InputError, match="at least one metric"):
        system_pairs({}, [1.0], ["a"])
    with pytest.raises(InputError, match="subset_fraction"):
        system_pairs({"F1": [0.1, 0.2]}, [1.0, 2.0], ["a", "b"], subsets=2, subset_fraction=0.0)
    with pytest.raises(InputError, match="one value per comparison"):
        delta_agreement([0.1, 0.2], [1.0])
    with pytest.raises(InputError, match="tie_tolerance"):
        delta_agreement([0.1], [1.0], tie_tolerance=-1.0)
    with pytest.raises(InputError, match="no metric"):
        pairs_agreement(system_pairs({"F1": [0.1, 0.2]}, [1.0, 2.0], ["a", "b"]), "chrF")


def test_details_of_another_language_pair_are_refused(tmp_path):
    header = "LP\tDATA\t\tTHIS.SID\tORIG.SID\tSYSTEM\n"
    (tmp_path / "DAseg-newstest2016.details.de-en").write_text(header + "cs-en\tnewstest2016\t1\t\t7\t\tsysA\n")
    with pytest.raises(DetailsOfAnotherPair, match="for cs-en, not de-en"):
        read_details(tmp_path, "de-en")
    (tmp_path / "DAseg-newstest2016.details.xx-en").write_text("LP\tSYSTEM\nxx-en\ts\n")
    with pytest.raises(InputError, match="header"):
        read_details(tmp_path, "xx-en")


# ---------------------------------------------------------------- the figure


def test_the_figure_draws_the_curve_points_fit_and_the_users_delta():
    metric, human, systems, groups = _rated(11)
    a = segment_delta_agreement({"F1": metric}, human, systems, groups)["F1"]
    fig = delta_figure(a, "F1 <i>mine</i>", delta=-0.01)
    names = [t.name for t in fig.data]
    assert names == ["comparisons (1 agreed, 0 did not)", "95% interval", "agreement (binned)", "fitted sigmoid"]
    assert len(fig.data[0].x) == a.n_pairs and "&lt;i&gt;" in fig.layout.title.text
    line = fig.layout.shapes[0]
    assert line.x0 == 0.01 and f"{a.at(0.01).probability:.0%} agreed" in fig.layout.annotations[0].text
    few = delta_agreement([0.1, 0.2], [1.0, -1.0])
    assert "too few pairs" in delta_figure(few, delta=0.1).layout.annotations[0].text


# ---------------------------------------------------------------- the bundled WMT16 data, the bundled model


def test_wmt16_da_with_the_bundled_model():
    from bertscore_viz import score

    rated = read_rated_da(DATA)
    # the six shipped details files all list cs-en's systems: only cs-en is read
    assert rated.lps == ("cs-en",) and sorted(rated.skipped) == ["de-en", "fi-en", "ro-en", "ru-en", "tr-en"]
    assert "not de-en" in rated.skipped["de-en"] and len(rated.human) == 560
    assert sorted(set(rated.systems)) == ["PJATK", "cu-mergedtrees", "jhu-pbmt", "online-B", "uedin-nmt"]
    f1 = np.asarray(score(list(rated.candidates), list(rated.references)).f1)
    whole = wmt16_delta_agreement({"cs-en": f1}, DATA)
    # independent: the ten system pairs' deltas of means and the signs that agree
    means = {s: (f1[rated.systems == s].mean(), rated.human[rated.systems == s].mean()) for s in set(rated.systems)}
    agree = [(means[a][0] - means[b][0] > 0) == (means[a][1] - means[b][1] > 0) for a, b in combinations(means, 2)]
    assert whole.n_system_pairs == 10 and whole.probability.tolist() == [sum(agree) / 10]
    assert whole.sentence(0.01, "F1") == ("too few rated system pairs (10) to say how often humans agree with a "
                                          "difference of this size")
    assert whole.extra["lps"] == ["cs-en"]
    resampled = wmt16_delta_agreement({"cs-en": f1}, DATA, subsets=20, seed=0)
    assert resampled.n_pairs == 210 and resampled.n_system_pairs == 10
    text = resampled.sentence(0.03, "F1")
    assert text.startswith("a difference of 0.03 F1 agreed with the human ranking in ")
    assert "comparisons of the rated data" in text
    assert "system pairs, each compared on all its segments and on 20 random subsets of 50%)" in text
    # agreement grows with the size of the difference on these data (the fitted sigmoid rises)
    assert resampled.phi[1] > 0 and resampled.at(0.05).probability > resampled.at(0.005).probability
    with pytest.raises(InputError, match="no F1 scores given for cs-en"):
        wmt16_delta_agreement({"de-en": f1}, DATA)
