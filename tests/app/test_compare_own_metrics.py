"""A metric of one's own on the Compare page (issue 44), in Streamlit's AppTest with the real model: an upload whose
score column holds BERTScore's own per-segment F1 gets, on that column, exactly BERTScore's analysis (the answer's
p, the system table's interval, the clusters); a bad cell is listed and leaves its segment out of that metric
only; the direction chosen re-ranks; the downloads carry the metric."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest

from bertscore_viz import Scorer
from bertscore_viz.evaluation import compare
from bertscore_viz.files.upload import parse_upload
from tests.unit.test_own_metrics import REFS as UNIT_REFS

from .navigation import app, texts

pytestmark = pytest.mark.app

REFS = UNIT_REFS[:8]  # the unit tests' sentences, written once
SYSTEMS = {"good": [r.replace("the", "a", 1) for r in REFS],
           "short": [" ".join(r.split()[:4]) for r in REFS],
           "shuffled": [" ".join(sorted(r.split())) for r in REFS]}


def _upload(f1: dict[str, np.ndarray], bad: bool = False) -> bytes:
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(["system", "candidate", "reference", "segment_id", "judge"])
    for s, outputs in SYSTEMS.items():
        for i, (c, r) in enumerate(zip(outputs, REFS)):
            w.writerow([s, c, r, i + 1, "oops" if bad and (s, i) == ("short", 2) else repr(float(f1[s][i]))])
    return out.getvalue().encode()


@pytest.fixture(scope="module")
def f1():
    sc = Scorer()
    return {s: sc.score(o, REFS).f1 for s, o in SYSTEMS.items()}


def _frame_with(at, column: str):
    for df in at.dataframe:
        if column in df.value.columns:
            return df.value
    raise AssertionError(f"no table with a {column!r} column")


def test_bertscore_s_f1_as_a_score_column_gets_bertscore_s_analysis(f1):
    data = _upload(f1)
    at = app("compare.py", compare_input={"name": "judged.csv", "data": data, "origin": "upload"})
    assert not at.exception, at.exception
    table = _frame_with(at, "judge")
    np.testing.assert_allclose(table["judge"].to_numpy(), table["F1"].to_numpy(), atol=1e-12)
    assert "Metrics of one's own (1)" in " ".join(e.label for e in at.expander)
    # the Significance tab on the score column: BERTScore's numbers
    metric_box = next(s for s in at.selectbox if s.label == "Metric")
    assert "judge" in metric_box.options
    metric_box.set_value("judge").run()
    assert not at.exception, at.exception
    ds = parse_upload(data, "judged.csv")
    comparison = compare.Comparison({s: _result(f1[s]) for s in ds.systems}, 0, False, False)
    want = compare.significance(comparison)
    page = texts(at).replace("\\", "")
    for r in want.versus_baseline:
        assert r.sentence("judge", want.alpha) in page
    standings = _frame_with(at, "Rank range")
    assert standings["System"].tolist() == list(want.systems)
    assert standings["Cluster"].tolist() == [s.cluster for s in want.standings]


def _result(f1):
    from bertscore_viz.engine.results import ScoreResult
    return ScoreResult(f1, f1, f1, f1, f1, f1, "sig")


def test_a_bad_cell_is_listed_and_the_direction_re_ranks(f1):
    at = app("compare.py", compare_input={"name": "judged_bad.csv", "data": _upload(f1, bad=True), "origin": "upload"})
    assert not at.exception, at.exception
    page = texts(at).replace("\\", "")
    problems = " ".join(str(v) for df in at.dataframe for v in df.value.to_numpy().ravel())
    assert "'oops', not a number" in problems + page and "1 of 8 segments are left out" in page
    kept = np.ones(8, dtype=bool)
    kept[2] = False
    table = _frame_with(at, "judge")
    for s, v in zip(table["System"], table["judge"]):
        assert v == pytest.approx(float(f1[s][kept].mean()), abs=1e-12)
    control = next(c for c in at.segmented_control if c.label == "judge")
    control.set_value("lower is better").run()
    assert not at.exception, at.exception
    metric_box = next(s for s in at.selectbox if s.label == "Metric")
    metric_box.set_value("judge").run()
    standings = _frame_with(at, "Rank range")
    means = {s: float(f1[s][kept].mean()) for s in SYSTEMS}
    assert standings["System"].tolist() == sorted(SYSTEMS, key=means.get)  # lower first now


def test_human_ratings_in_the_file_say_what_a_difference_means(f1):
    """A ``human`` column (long layout) joins as a metric of one's own; beside each test the page says how often the
    humans of the file agreed with a difference of its size, or that 3 systems are too few to say."""
    rng = np.random.default_rng(3)
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(["system", "candidate", "reference", "segment_id", "human"])
    for s, outputs in SYSTEMS.items():
        for i, (c, r) in enumerate(zip(outputs, REFS)):
            w.writerow([s, c, r, i + 1, f"{float(f1[s][i]) * 100 + rng.normal(0, 2):.2f}"])
    at = app("compare.py", compare_input={"name": "rated.csv", "data": out.getvalue().encode(), "origin": "upload"})
    assert not at.exception, at.exception
    table = _frame_with(at, "human")
    assert len(table) == 3
    page = texts(at).replace("\\", "")
    assert "What a difference means" in page
    assert "too few rated system pairs (3) to say how often humans agree" in page
