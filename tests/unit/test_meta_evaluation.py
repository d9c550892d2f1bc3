"""evaluation/meta_evaluation.py: rated outputs in long form (several systems per item, human and metric ties) give
acc_eq and its calibrated epsilon equal to a loop over the pairs, soft and system-level pairwise accuracy equal to
stats/meta.py's on matrices built here by hand, the tests between the best metric and the others equal meta's; a
non-finite value leaves its output out for every metric and is counted; a lower-is-better metric is negated;
bad inputs are refused with a message."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

from bertscore_viz.errors import InputError
from bertscore_viz.evaluation.meta_evaluation import MAX_GLOBAL_OUTPUTS, meta_evaluate
from bertscore_viz.stats import meta

N_ITEMS, N_SYS = 24, 4


def long_data(seed: int = 3, missing: int = 0):
    """Items x systems in long form, shuffled; human scores on a 1-5 scale (many ties), metrics rounded (ties).
    ``missing`` outputs (item, system) are removed."""
    rng = np.random.default_rng(seed)
    quality = rng.normal(size=(N_ITEMS, N_SYS)) + np.arange(N_SYS) * 0.4
    human = np.clip(np.round(quality + 3), 1, 5)
    good = np.round(quality + rng.normal(scale=0.5, size=quality.shape), 1)
    poor = np.round(quality + rng.normal(scale=1.5, size=quality.shape), 0)
    rows = [(i, s) for i in range(N_ITEMS) for s in range(N_SYS)]
    rows = [rows[k] for k in rng.permutation(len(rows))][missing:]
    return {"human": np.array([human[i, s] for i, s in rows]), "good": np.array([good[i, s] for i, s in rows]),
            "poor": np.array([poor[i, s] for i, s in rows]), "systems": [f"sys{s}" for _, s in rows],
            "items": [f"doc{i}" for i, _ in rows], "cells": rows}


def loop_acc_eq(human, metric, items) -> tuple[float, float]:
    """acc_eq by item, tie-calibrated, by loops: every epsilon in {0} and |metric differences|, the largest mean
    over items (the smallest epsilon of equal ones)."""
    by_item: dict = {}
    for h, m, i in zip(human, metric, items):
        by_item.setdefault(i, []).append((h, m))
    pairs = {i: list(itertools.combinations(v, 2)) for i, v in by_item.items()}
    pairs = {i: p for i, p in pairs.items() if p}
    candidates = sorted({0.0} | {abs(a[1] - b[1]) for p in pairs.values() for a, b in p})

    def acc(eps):
        per = []
        for p in pairs.values():
            agree = 0
            for a, b in p:
                dh, dm = a[0] - b[0], a[1] - b[1]
                ht, mt = dh == 0, abs(dm) <= eps
                agree += (ht and mt) or (not ht and not mt and (dh > 0) == (dm > 0))
            per.append(agree / len(p))
        return sum(per) / len(per)

    values = [acc(e) for e in candidates]
    best = max(values)
    k = next(k for k, v in enumerate(values) if v >= best - 1e-12)
    return values[k], candidates[k]


def matrices(data, names, drop_incomplete=True):
    """(systems, segments) human and metric matrices of the segments every system has, built by hand."""
    items = list(dict.fromkeys(data["items"]))  # the order of first appearance, as meta_evaluate's
    systems = sorted(set(data["systems"]))
    h = np.full((len(systems), len(items)), np.nan)
    ms = {n: np.full_like(h, np.nan) for n in names}
    for k, (i, s) in enumerate(zip(data["items"], data["systems"])):
        h[systems.index(s), items.index(i)] = data["human"][k]
        for n in names:
            ms[n][systems.index(s), items.index(i)] = data[n][k]
    keep = ~np.isnan(h).any(axis=0)
    return h[:, keep], {n: m[:, keep] for n, m in ms.items()}


def run(data, **kw):
    return meta_evaluate({"good": data["good"], "poor": data["poor"]}, data["human"], data["systems"],
                         data["items"], n_resamples=200, spa_resamples=20, n_permutations=200, spa_permutations=150,
                         **kw)


def test_acc_eq_and_epsilon_equal_a_loop_over_the_pairs_grouped_by_item():
    data = long_data()
    res = run(data)
    assert res.grouping == "item" and "by item" in res.grouping_reason
    for name in ("good", "poor"):
        value, eps = loop_acc_eq(data["human"], data[name], data["items"])
        assert res.metrics[name].epsilon == eps
        assert res.metrics[name].acc_eq == pytest.approx(value, abs=1e-12)
        assert res.metrics[name].pairs == N_ITEMS * N_SYS * (N_SYS - 1) // 2
    assert res.best["acc_eq"] == "good"
    assert res.metrics["good"].acc_eq > res.metrics["poor"].acc_eq


def test_system_statistics_equal_meta_on_matrices_built_by_hand():
    data = long_data()
    res = run(data)
    h, ms = matrices(data, ("good", "poor"))
    assert res.system_level and res.n_segments == N_ITEMS and res.n_systems == N_SYS
    for name, m in ms.items():
        got = res.metrics[name]
        assert got.spa == meta.soft_pairwise_accuracy(h, m, n_resamples=150, seed=12345)
        assert got.spa_ci == meta.soft_pairwise_interval(h, m, n_resamples=20, n_permutations=150, seed=12345)
        assert got.system_ci == meta.system_accuracy_interval(h, m, n_resamples=200, seed=12345)
        hm, mm = h.mean(axis=1), m.mean(axis=1)
        agree = [np.sign(hm[a] - hm[b]) == np.sign(mm[a] - mm[b]) for a, b in itertools.combinations(range(N_SYS), 2)]
        assert got.system == sum(agree) / len(agree) and got.system_pairs == 6


def test_the_tests_are_metas_between_the_best_and_each_other_metric():
    data = long_data()
    res = run(data)
    h, ms = matrices(data, ("good", "poor"))
    by_level = {t.level: t for t in res.tests}
    assert set(by_level) == {"acc_eq", "spa", "system"}
    items = list(dict.fromkeys(data["items"]))
    seg_h = np.full((N_ITEMS, N_SYS), np.nan)
    seg = {n: seg_h.copy() for n in ("good", "poor")}
    for k, (i, s) in enumerate(data["cells"]):
        seg_h[items.index(f"doc{i}"), s] = data["human"][k]
        for n in seg:
            seg[n][items.index(f"doc{i}"), s] = data[n][k]
    b = res.best["acc_eq"]
    other = "poor" if b == "good" else "good"
    expected = meta.compare_accuracy(seg_h, seg[b], seg[other], n_resamples=200, seed=12345)
    assert by_level["acc_eq"].p_value == expected.p_value
    assert by_level["acc_eq"].delta == pytest.approx(expected.delta, abs=1e-12)
    assert by_level["acc_eq"].significant == (expected.p_value < 0.05)
    b = res.best["spa"]
    other = "poor" if b == "good" else "good"
    spa = meta.compare_soft_pairwise(h, ms[b], ms[other], n_resamples=20, n_permutations=150, seed=12345)
    assert by_level["spa"].p_value == spa.p_value and by_level["spa"].best == b
    b = res.best["system"]
    other = "poor" if b == "good" else "good"
    assert by_level["system"].p_value == meta.compare_system_accuracy(h, ms[b], ms[other], n_resamples=200,
                                                                      seed=12345).p_value


def test_a_system_missing_an_item_leaves_that_item_out_of_the_system_level_only():
    data = long_data(missing=3)
    res = run(data)
    h, ms = matrices(data, ("good",))
    assert res.n_segments == h.shape[1] < N_ITEMS
    assert "left out" in res.system_reason
    assert res.metrics["good"].spa == meta.soft_pairwise_accuracy(h, ms["good"], n_resamples=150, seed=12345)
    value, eps = loop_acc_eq(data["human"], data["good"], data["items"])
    assert (res.metrics["good"].acc_eq, res.metrics["good"].epsilon) == (pytest.approx(value, abs=1e-12), eps)


def test_a_bad_value_drops_its_output_for_every_metric_and_is_counted():
    data = long_data()
    data["poor"] = data["poor"].copy()
    data["poor"][[5, 9]] = [np.nan, np.inf]
    data["human"] = data["human"].copy()
    data["human"][11] = np.nan
    res = run(data)
    assert res.dropped == {"poor": [5, 9], "human": [11]}
    assert res.n_used == N_ITEMS * N_SYS - 3 and res.n_outputs == N_ITEMS * N_SYS
    keep = np.ones(len(data["human"]), bool)
    keep[[5, 9, 11]] = False
    value, eps = loop_acc_eq(data["human"][keep], data["good"][keep], np.array(data["items"])[keep])
    assert res.metrics["good"].acc_eq == pytest.approx(value, abs=1e-12) and res.metrics["good"].epsilon == eps
    d = res.as_dict()
    json.dumps(d, allow_nan=False)
    assert d["dropped"]["poor"] == [5, 9]


def test_a_lower_is_better_metric_is_negated():
    data = long_data()
    flipped = meta_evaluate({"good": -data["good"]}, data["human"], data["systems"], data["items"],
                            lower_is_better=["good"], n_resamples=50, spa_resamples=5, n_permutations=50)
    plain = meta_evaluate({"good": data["good"]}, data["human"], data["systems"], data["items"], n_resamples=50,
                          spa_resamples=5, n_permutations=50)
    assert flipped.metrics["good"].negated and not plain.metrics["good"].negated
    for attr in ("acc_eq", "epsilon", "acc_eq_ci", "spa", "system"):
        assert getattr(flipped.metrics["good"], attr) == getattr(plain.metrics["good"], attr)


def test_global_grouping_without_systems_and_fewer_than_three_systems():
    rng = np.random.default_rng(1)
    human = np.round(rng.normal(size=40), 1)
    metric = np.round(human + rng.normal(size=40), 1)
    res = meta_evaluate({"m": metric}, human, n_resamples=50, n_permutations=50)
    assert res.grouping == "none" and "no system" in res.grouping_reason
    assert not res.system_level and "0 system" in res.system_reason
    value, eps = loop_acc_eq(human, metric, ["all"] * 40)
    assert res.metrics["m"].acc_eq == pytest.approx(value, abs=1e-12) and res.metrics["m"].epsilon == eps
    assert res.metrics["m"].acc_eq_ci is None and math.isnan(res.metrics["m"].spa)
    two = meta_evaluate({"m": metric}, human, ["a", "b"] * 20, [str(i // 2) for i in range(40)], n_resamples=50,
                        n_permutations=50)
    assert two.grouping == "item" and not two.system_level and "2 system(s)" in two.system_reason


def test_systems_not_rated_on_the_same_items_say_so():
    rng = np.random.default_rng(2)
    human = rng.normal(size=30)
    res = meta_evaluate({"m": human + rng.normal(size=30)}, human, [f"s{i % 3}" for i in range(30)],
                        [str(i) for i in range(30)], n_resamples=50, n_permutations=50)
    assert res.grouping == "none" and not res.system_level and "not rated on the same segments" in res.system_reason


def test_a_large_global_set_is_sampled_and_said():
    rng = np.random.default_rng(4)
    n = MAX_GLOBAL_OUTPUTS + 50
    human = rng.normal(size=n)
    res = meta_evaluate({"m": human + rng.normal(size=n)}, human, n_resamples=20, n_permutations=20)
    assert res.metrics["m"].pairs == MAX_GLOBAL_OUTPUTS * (MAX_GLOBAL_OUTPUTS - 1) // 2
    assert any("seeded sample" in note for note in res.notes)


def test_progress_counts_to_its_total_and_to_pandas():
    data = long_data()
    seen = []
    res = run(data, progress=lambda done, total: seen.append((done, total)))
    assert seen[-1][0] == seen[-1][1] and [d for d, _ in seen] == list(range(1, seen[-1][1] + 1))
    frame = res.to_pandas()
    assert list(frame["metric"]) == ["good", "poor"]
    assert frame.set_index("metric").loc["good", "spa"] == res.metrics["good"].spa


@pytest.mark.parametrize("kwargs, message", [
    ({"metrics": {}}, "non-empty"),
    ({"metrics": {"m": [1.0, 2.0]}}, "one per output"),
    ({"metrics": {"m": ["a", "b", "c"]}}, "must be numbers"),
    ({"lower_is_better": ["x"]}, "not among the metrics"),
    ({"n_resamples": 0}, "positive whole number"),
    ({"systems": ["a", None, "b"]}, "None among"),
    ({"human": [np.nan, np.nan, 1.0]}, "at least 2"),
])
def test_bad_inputs_are_refused(kwargs, message):
    args = {"metrics": {"m": [1.0, 2.0, 3.0]}, "human": [1.0, 3.0, 2.0]}
    args.update(kwargs)
    with pytest.raises(InputError, match=message):
        meta_evaluate(**args)


def test_a_tiny_set_gives_json_without_nan():
    """One item rated for 2 systems, two items for one: resamples without a pair give no interval bound."""
    res = meta_evaluate({"m": [0.9, 0.2, 0.4, 0.7]}, [0.9, -0.5, 0.1, 0.7], ["A", "B", "A", "C"],
                        ["1", "1", "2", "3"], n_resamples=50, n_permutations=50)
    assert res.grouping == "item" and res.metrics["m"].pairs == 1 and res.metrics["m"].acc_eq == 1.0
    assert not res.system_level and "No item has an output of every one of the 3 systems" in res.system_reason
    json.dumps(res.as_dict(), allow_nan=False)


def test_a_p_value_of_zero_is_shown_as_below_one_over_the_permutations():
    from bertscore_viz.evaluation.meta_evaluation import format_p

    assert format_p(0.0, 1000) == "< 0.001" and format_p(0.0, 6) == "< 0.17"
    assert format_p(0.0342, 1000) == "0.034" and format_p(None, 10) == "n/a" and format_p(float("nan"), 10) == "n/a"
