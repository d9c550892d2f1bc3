"""Disagreements between a metric and the humans: equal to a direct ranking computed here with plain Python loops,
on hand examples, random data with ties, groups, NaN and filters, and on real scores (BERTScore from the bundled
model and sacrebleu's chrF on WMT16 DA rows)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import sacrebleu

from bertscore_viz import Scorer
from bertscore_viz.errors import InputError
from bertscore_viz.evaluation import disagreements as dg
from bertscore_viz.files.human_scores import parse_human_scores
from bertscore_viz.locations import EXAMPLES_DIR


# --- an independent implementation: plain loops ----------------------------------------------------------------
def loop_rank(values: list[float], i: int) -> float:
    """1 + number below + (number equal - 1) / 2: the average rank of values[i]."""
    below = sum(1 for v in values if v < values[i])
    equal = sum(1 for v in values if v == values[i])
    return 1 + below + (equal - 1) / 2


def direct(metric, human, n, groups=None, systems=None, within="group", only_groups=None, only_systems=None):
    """The expected lists: (index, difference) of each direction, by loops over the outputs."""
    size = len(metric)
    ok = [i for i in range(size) if not (np.isnan(metric[i]) or np.isnan(human[i]))]
    scope = (lambda i: groups[i]) if (groups is not None and within == "group") else (lambda i: None)
    diffs = {}
    for i in ok:
        members = [j for j in ok if scope(j) == scope(i)]
        m = [metric[j] for j in members]
        h = [human[j] for j in members]
        pos = members.index(i)
        size_s = len(members)
        pm = 50.0 if size_s == 1 else 100 * (loop_rank(m, pos) - 1) / (size_s - 1)
        ph = 50.0 if size_s == 1 else 100 * (loop_rank(h, pos) - 1) / (size_s - 1)
        diffs[i] = pm - ph
    shown = [i for i in ok if (only_groups is None or groups[i] in only_groups)
             and (only_systems is None or systems[i] in only_systems)]
    kind = sorted((i for i in shown if diffs[i] > 1e-9), key=lambda i: (-round(diffs[i], 9), i))[:n]
    harsh = sorted((i for i in shown if diffs[i] < -1e-9), key=lambda i: (round(diffs[i], 9), i))[:n]
    return [(i, diffs[i]) for i in kind], [(i, diffs[i]) for i in harsh]


def as_pairs(rows):
    return [(r.index, r.difference) for r in rows]


def same(got, expected):
    assert [i for i, _ in got] == [i for i, _ in expected]
    assert np.allclose([d for _, d in got], [d for _, d in expected], atol=1e-9)


# --- ranks ------------------------------------------------------------------------------------------------------
def test_average_ranks_by_hand():
    assert dg.average_ranks([10, 20, 20, 5]).tolist() == [2.0, 3.5, 3.5, 1.0]
    assert dg.average_ranks([3, 3, 3]).tolist() == [2.0, 2.0, 2.0]
    assert dg.rank_percentiles([10, 20, 20, 5]).tolist() == pytest.approx([100 / 3, 250 / 3, 250 / 3, 0.0])
    assert dg.rank_percentiles([7.0]).tolist() == [50.0]
    assert dg.average_ranks([]).tolist() == []


def test_average_ranks_equal_loops_on_random_ties():
    rng = np.random.default_rng(0)
    x = rng.integers(0, 15, 200).astype(float)
    assert dg.average_ranks(x).tolist() == [loop_rank(list(x), i) for i in range(len(x))]


# --- directions by hand -----------------------------------------------------------------------------------------
def test_directions_by_hand():
    # output 3: metric ranks it top, humans bottom -> too kind by 100; output 0 the opposite -> too harsh by 100
    res = dg.disagreements([0.1, 0.2, 0.3, 0.4], [4, 3, 2, 1], n=2)
    assert as_pairs(res.too_kind) == [(3, 100.0), (2, pytest.approx(100 / 3))]
    assert as_pairs(res.too_harsh) == [(0, -100.0), (1, pytest.approx(-100 / 3))]
    top = res.too_kind[0]
    assert (top.metric_rank, top.human_rank, top.metric_percentile, top.human_percentile) == (4.0, 1.0, 100.0, 0.0)
    assert top.direction == "too_kind" and res.too_harsh[0].direction == "too_harsh"


def test_agreement_lists_nothing():
    res = dg.disagreements([1, 2, 3], [10, 20, 30])
    assert res.too_kind == () and res.too_harsh == () and res.n_ranked == 3


def test_equal_differences_are_listed_in_index_order():
    # four swaps of neighbours: every difference is +-100/7
    metric = [1, 0, 3, 2, 5, 4, 7, 6]
    human = [0, 1, 2, 3, 4, 5, 6, 7]
    res = dg.disagreements(metric, human, n=10)
    assert [r.index for r in res.too_kind] == [0, 2, 4, 6]
    assert [r.index for r in res.too_harsh] == [1, 3, 5, 7]


# --- equal to the direct ranking --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def random_set():
    rng = np.random.default_rng(42)
    size = 300
    human = np.round(rng.normal(size=size), 1)  # rounded: many ties
    metric = np.round(0.6 * human + rng.normal(size=size), 1)
    metric[[5, 77]] = np.nan
    human[[12]] = np.nan
    groups = [f"lp{i % 4}" for i in range(size)]
    systems = [f"sys{(i * 7) % 5}" for i in range(size)]
    return metric, human, groups, systems


@pytest.mark.parametrize("within", ["group", "all"])
def test_equals_direct_ranking(random_set, within):
    metric, human, groups, systems = random_set
    res = dg.disagreements(metric, human, n=15, groups=groups, systems=systems, within=within)
    kind, harsh = direct(metric, human, 15, groups, systems, within)
    same(as_pairs(res.too_kind), kind)
    same(as_pairs(res.too_harsh), harsh)
    assert res.n_ranked == 297 and res.n_missing == 3 and res.within == within
    for r in res.rows():
        assert r.group == groups[r.index] and r.system == systems[r.index]
        assert r.metric == metric[r.index] and r.human == human[r.index]


def test_filters_do_not_change_ranks(random_set):
    metric, human, groups, systems = random_set
    res = dg.disagreements(metric, human, n=8, groups=groups, systems=systems, only_groups="lp1",
                           only_systems=["sys2", "sys3"])
    kind, harsh = direct(metric, human, 8, groups, systems, "group", {"lp1"}, {"sys2", "sys3"})
    same(as_pairs(res.too_kind), kind)
    same(as_pairs(res.too_harsh), harsh)
    full = {r.index: r for r in dg.disagreements(metric, human, n=300, groups=groups, systems=systems).rows()}
    for r in res.rows():
        assert r.group == "lp1" and r.system in ("sys2", "sys3")
        assert r == full[r.index]  # the same ranks with and without the filter
    assert res.groups == ("lp1",) and res.systems == ("sys2", "sys3")


def test_without_groups_within_group_is_the_whole_set(random_set):
    metric, human, _, _ = random_set
    a = dg.disagreements(metric, human, n=10, within="group")
    b = dg.disagreements(metric, human, n=10, within="all")
    assert a.rows() == b.rows()


def test_json_output(random_set):
    metric, human, groups, systems = random_set
    out = dg.disagreements(metric, human, n=3, groups=groups, systems=systems).as_dict()
    text = json.dumps(out)
    assert json.loads(text)["too_kind"][0]["direction"] == "too_kind"
    assert "average ranks" in out["rank_difference"] and out["n_missing"] == 3


# --- real scores: BERTScore and chrF alike ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def wmt_rows():
    """60 WMT16 DA rows (10 of each language pair), BERTScore F1 on the bundled model and sentence chrF."""
    rated = parse_human_scores((EXAMPLES_DIR / "wmt16_da_to_english.csv").read_bytes(), "wmt16_da_to_english.csv")
    take = [i for g in sorted(set(rated.groups)) for i in [j for j, x in enumerate(rated.groups) if x == g][:10]]
    cands = [rated.candidates[i] for i in take]
    refs = [rated.references[i][0] for i in take]
    f1 = Scorer().score(cands, refs).f1
    chrf = np.array([sacrebleu.sentence_chrf(c, [r]).score for c, r in zip(cands, refs)])
    human = np.array([rated.human[i] for i in take])
    return f1, chrf, human, [rated.groups[i] for i in take]


@pytest.mark.parametrize("name", ["BERTScore-F1", "chrF"])
def test_real_metric_against_humans_equals_direct_ranking(wmt_rows, name):
    f1, chrf, human, groups = wmt_rows
    metric = f1 if name == "BERTScore-F1" else chrf
    res = dg.disagreements(metric, human, n=5, groups=groups, metric_name=name)
    kind, harsh = direct(metric, human, 5, groups)
    same(as_pairs(res.too_kind), kind)
    same(as_pairs(res.too_harsh), harsh)
    assert res.metric_name == name and len(res.too_kind) == 5 and len(res.too_harsh) == 5


def test_bertscore_against_chrf(wmt_rows):
    """chrF in the place of the humans: where the two metrics disagree."""
    f1, chrf, _, groups = wmt_rows
    res = dg.disagreements(f1, chrf, n=4, groups=groups, human_name="chrF")
    kind, harsh = direct(f1, chrf, 4, groups)
    same(as_pairs(res.too_kind), kind)
    same(as_pairs(res.too_harsh), harsh)


# --- errors and inputs ------------------------------------------------------------------------------------------
def test_errors_say_what_is_wrong():
    with pytest.raises(InputError, match="same length"):
        dg.disagreements([1, 2], [1, 2, 3])
    with pytest.raises(InputError, match="infinite"):
        dg.disagreements([1, np.inf], [1, 2])
    with pytest.raises(InputError, match="group label"):
        dg.disagreements([1, 2], [1, 2], groups=["a"])
    with pytest.raises(InputError, match="no group labels"):
        dg.disagreements([1, 2], [1, 2], only_groups="a")
    with pytest.raises(InputError, match="Unknown system"):
        dg.disagreements([1, 2], [1, 2], systems=["a", "b"], only_systems="c")
    with pytest.raises(InputError, match="within"):
        dg.disagreements([1, 2], [1, 2], within="system")
    with pytest.raises(InputError, match="at least 1"):
        dg.disagreements([1, 2], [1, 2], n=0)


def test_inputs_are_not_modified(random_set):
    metric, human, groups, systems = random_set
    m0, h0, g0 = metric.copy(), human.copy(), list(groups)
    dg.disagreements(metric, human, n=5, groups=groups, systems=systems)
    assert np.array_equal(m0, metric, equal_nan=True) and np.array_equal(h0, human, equal_nan=True)
    assert g0 == groups
