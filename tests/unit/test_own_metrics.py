"""Metrics of one's own (issue 44, part 1): per-segment scores computed elsewhere, read from an upload's score
columns, ``--scores NAME=FILE`` and mt-metrics-eval's ``metric-scores``, with every bad value listed (never 0), and
compared exactly as BERTScore is: fed BERTScore's own per-segment F1 as a metric of one's own, every number of the
analysis (intervals, p values, clusters) equals BERTScore's, through the API, ``compare --json``, LaTeX, the
Markdown summary, the report and the CI gate. The data is written here; the model is the real bundled one.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import subprocess

import numpy as np
import pytest

from bertscore_viz import Scorer
from bertscore_viz.cli.entry import main
from bertscore_viz.errors import InputError
from bertscore_viz.evaluation import compare
from bertscore_viz.evaluation.latex import latex_document, latex_table
from bertscore_viz.evaluation.own_metrics import (
    OwnMetric,
    guess_higher_is_better,
    own_metrics,
    with_own_metrics,
)
from bertscore_viz.figures import tables
from bertscore_viz.figures.markdown import markdown_summary
from bertscore_viz.figures.report import build_report
from bertscore_viz.files import upload
from bertscore_viz.files.columns import ColumnMapping, check_mapping, mapping_from_args
from bertscore_viz.files.score_columns import (
    ScoreColumns,
    parse_score,
    scores_from_lines,
    scores_from_mtme,
    wide_score_column,
)
from bertscore_viz.stats.analysis import analyse

REFS = ["The committee approved the new budget after a long debate.",
        "Heavy rain caused flooding in several villages near the river.",
        "She finished the marathon in under four hours despite the heat.",
        "The museum will reopen next spring with a larger collection.",
        "Researchers found that the drug reduced symptoms in most patients.",
        "The train was delayed because of a signal failure outside the station.",
        "He bought a second-hand bicycle to ride to work every morning.",
        "The company plans to hire two hundred engineers next year.",
        "Local farmers are worried about the dry summer and low prices.",
        "The children built a small boat out of wood and old sails.",
        "Tourists crowded the old town square to watch the fireworks.",
        "The minister promised to lower taxes for small businesses."]
SYSTEMS = {
    "good": [r.replace("the", "a", 1) for r in REFS],
    "short": [" ".join(r.split()[: max(3, len(r.split()) // 2)]) for r in REFS],
    "shuffled": [" ".join(sorted(r.split())) for r in REFS],
}


# --- reading ----------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("value,expected", [("0.83", 0.83), (" -1.5e-2 ", -0.015), (3, 3.0), (2.5, 2.5),
                                            ("", None), ("n/a", None), ("nan", None), ("inf", None),
                                            (float("nan"), None), (True, None), (None, None), (("1",), None)])
def test_a_score_is_a_finite_number(value, expected):
    assert parse_score(value) == expected


def test_wide_score_columns_name_the_metric_and_the_system():
    assert wide_score_column("comet_sysA", ["sysA", "sysB"]) == ("comet", "sysA")
    assert wide_score_column("sysB-comet", ["sysA", "sysB"]) == ("comet", "sysB")
    assert wide_score_column("judge: Online-B", ["Online-B", "B"]) == ("judge", "Online-B")  # longest name first
    assert wide_score_column("comet", ["sysA"]) is None
    assert wide_score_column("sysA", ["sysA"]) is None


WIDE = (b"reference,A,B,comet_A,comet_B\n"
        b"the cat sat,a cat sat,the cat sat,0.5,0.9\n"
        b"hello there,hi,hello there,0.3,x\n"
        b"good night,night,good night,,0.7\n")


def test_an_upload_s_wide_score_columns_are_read_and_bad_cells_listed_not_zero():
    ds = upload.parse_upload(WIDE, "w.csv")
    assert ds.mapping.systems == ("A", "B") and ds.mapping.scores == ("comet_A", "comet_B")
    got = ds.own_scores.scores["comet"]
    np.testing.assert_array_equal(got["A"], [0.5, 0.3, np.nan])
    np.testing.assert_array_equal(got["B"], [0.9, np.nan, 0.7])
    bad = [p for p in ds.problems if "comet of system" in p.problem]
    assert [(p.row, p.column) for p in bad] == [(3, "comet_B"), (4, "comet_A")]
    assert "'x', not a number" in bad[0].problem and "empty" in bad[1].problem and "not read as 0" in bad[0].problem
    guessed = [p.problem for p in ds.problems if p.problem.startswith("Guessed: column 'comet_A'")]
    assert guessed and "--score-columns" in guessed[0]  # the guess is said, with how to correct it
    own, notes = own_metrics(ds.own_scores, ["A", "B"])
    assert own["comet"].n_kept == 1 and own["comet"].corpus == {"A": 0.5, "B": 0.9}
    assert "2 of 3 segments are left out" in notes[0]


def test_an_upload_s_long_score_column_and_a_corrected_mapping():
    data = (b"system,candidate,reference,comet,segment_id\n"
            b"A,a cat,the cat,0.5,1\nB,the cat,the cat,0.9,1\nA,hi,hello,0.25,2\nB,hello,hello,-0.5,2\n")
    ds = upload.parse_upload(data, "l.csv")
    assert ds.mapping.scores == ("comet",)
    np.testing.assert_array_equal(ds.own_scores.scores["comet"]["B"], [0.9, -0.5])
    plain = upload.parse_upload(data, "l.csv", ColumnMapping("long", ("reference",), (), "system", "candidate", None,
                                                             "segment_id"))
    assert plain.own_scores.scores == {}  # taken out of the mapping: not read
    mapped = mapping_from_args(["reference"], "candidate", "system", None, None, "segment_id", ["comet"])
    assert upload.parse_upload(data, "l.csv", mapped).own_scores.scores["comet"]["A"].tolist() == [0.5, 0.25]


def test_a_wide_score_column_that_names_no_system_is_refused_with_the_fix():
    mapping = ColumnMapping("wide", ("reference",), ("A", "B"), scores=("comet",))
    problems = check_mapping(mapping, ["reference", "A", "B", "comet"])
    assert len(problems) == 1 and "<metric>_<system>" in problems[0].problem


def test_a_scores_file_one_per_line_or_system_and_score():
    one = scores_from_lines("COMET", ["0.1", "0.2", "0.3", "bad", "0.5", "0.6"], ["A", "B"], 3, "c.txt")
    np.testing.assert_array_equal(one.scores["COMET"]["A"], [0.1, 0.2, 0.3])
    np.testing.assert_array_equal(one.scores["COMET"]["B"], [np.nan, 0.5, 0.6])
    assert one.problems[0].column == "c.txt line 4" and "segment '1'" in one.problems[0].problem
    two = scores_from_lines("COMET", ["B 1", "A 2", "B 3", "A NaN"], ["A", "B"], 2, "seg.score")
    np.testing.assert_array_equal(two.scores["COMET"]["A"], [2, np.nan])
    np.testing.assert_array_equal(two.scores["COMET"]["B"], [1, 3])
    with pytest.raises(InputError, match="5 lines.*2 systems x 3 segments = 6"):
        scores_from_lines("COMET", ["1"] * 5, ["A", "B"], 3, "c.txt")
    with pytest.raises(InputError, match="unknown system 'C'"):
        scores_from_lines("COMET", ["A 1", "C 2"], ["A", "B"], 1, "seg.score")
    with pytest.raises(InputError, match="taken"):
        scores_from_lines("F1", ["1"], ["A"], 1, "c.txt")


def test_mt_metrics_eval_metric_scores():
    metric_scores = {"COMET-refA": {"seg": {"A": (0.1, 0.2), "B": (0.3, 0.4)}, "sys": {"A": (0.15,), "B": (0.35,)}},
                     "BLEU-refA": {"sys": {"A": (20.0,), "B": (21.0,)}}}
    got = scores_from_mtme(metric_scores, ["A", "B"])
    assert list(got.scores) == ["COMET-refA"]  # BLEU has no segment scores
    with pytest.raises(InputError, match="'BLEU-refA' of mt-metrics-eval has no segment scores"):
        scores_from_mtme(metric_scores, ["A", "B"], ["BLEU-refA"])


def test_two_inputs_naming_one_metric_clash():
    a = ScoreColumns({"m": {"A": np.zeros(1)}}, {"m": "file a"})
    with pytest.raises(InputError, match="given twice"):
        a.merged(ScoreColumns({"m": {"A": np.zeros(1)}}, {"m": "file b"}))


# --- the metric ---------------------------------------------------------------------------------------------------
def test_an_own_metric_by_hand():
    m = OwnMetric("judge", {"A": np.array([1.0, 2.0, np.nan, 4.0]), "B": np.array([2.0, 2.0, 5.0, np.nan])})
    assert m.kept.tolist() == [True, True, False, False]
    assert m.corpus == {"A": 1.5, "B": 2.0} and m.systems == ["B", "A"] and m.ranks() == {"B": 1, "A": 2}
    low = OwnMetric("errors", m.sentence, higher_is_better=False)
    assert low.systems == ["A", "B"]
    sig = low.significance()
    assert sig.systems == ("A", "B") and not sig.higher_is_better
    assert "mean of 2 of 4 segments" in m.corpus_signature and "2 of 4 segments are left out" in m.left_out_note()


def test_direction_guesses_and_choices():
    assert guess_higher_is_better("COMET") and guess_higher_is_better("chrF++")
    assert not guess_higher_is_better("TER-refA".split("-")[0]) and not guess_higher_is_better("my_wer")
    cols = ScoreColumns({"x_ter": {"A": np.ones(2), "B": np.zeros(2)}, "judge": {"A": np.ones(2)}})
    own, notes = own_metrics(cols, ["A", "B"], higher_is_better=["x_ter"])
    assert own["x_ter"].higher_is_better and "judge" not in own  # judge has no scores for B: left out, said
    assert any("judge is left out" in n for n in notes)
    with pytest.raises(InputError, match="No metric named 'nope'"):
        own_metrics(cols, ["A", "B"], lower_is_better=["nope"])


@pytest.fixture(scope="module")
def scored():
    sc = Scorer()
    ds = upload.Dataset({k: list(v) for k, v in SYSTEMS.items()}, [[r] for r in REFS], None,
                        [str(i + 1) for i in range(len(REFS))], list(range(1, len(REFS) + 1)))
    cstats = compare.score_dataset(sc, ds)
    comparison = compare.results_for(sc, cstats, sc.layer, False, False)
    return ds, comparison


def _same_analysis(a, b):
    da, db = a.as_dict(), b.as_dict()
    for key in ("systems", "baseline", "intervals", "pairwise_p", "clusters", "standings", "n_samples", "seed"):
        assert json.dumps(da[key], default=str) == json.dumps(db[key], default=str), key
    for ra, rb in zip(da["versus_baseline"], db["versus_baseline"]):
        assert {k: v for k, v in ra.items() if k != "sentence"} == {k: v for k, v in rb.items() if k != "sentence"}


@pytest.mark.parametrize("correction", [None, "holm"])
def test_bertscore_s_own_f1_as_a_column_gives_bertscore_s_analysis(scored, correction):
    ds, comparison = scored
    f1 = OwnMetric("myF1", {s: r.f1 for s, r in comparison.results.items()})
    n = len(REFS)
    from bertscore_viz.evaluation.significance import resamples_for
    k = resamples_for(3, n, correction)
    _same_analysis(compare.significance(comparison, None, "F1", n_samples=k, correction=correction),
                   f1.significance(None, correction))
    base = comparison.systems[-1]
    _same_analysis(compare.significance(comparison, None, "F1", n_samples=k, correction=correction).rebase(base),
                   f1.significance(base, correction))
    assert f1.significance().as_dict()["versus_baseline"] == analyse(f1.kept_scores(), metric="myF1").as_dict()[
        "versus_baseline"]


def test_tables_latex_markdown_and_the_report_show_the_metric(scored, tmp_path):
    ds, comparison = scored
    f1 = OwnMetric("myF1", {s: r.f1 for s, r in comparison.results.items()}, origin="test")
    err = OwnMetric("err", {s: 1 - r.f1 for s, r in comparison.results.items()}, higher_is_better=False)
    surface = with_own_metrics(None, {"myF1": f1, "err": err}, ds.systems)
    sig = err.significance()
    table = tables.system_table(comparison, sig, surface)
    assert table["System"].tolist() == list(compare.significance(comparison).systems)  # lower error = higher F1
    assert table["Rank"].tolist() == [1, 2, 3] and table["Best"].tolist()[0] == "★ best"
    np.testing.assert_allclose(table["err"], [1 - comparison.means("F1")[s] for s in table["System"]], atol=1e-12)
    js = tables.to_jsonable(ds, comparison, sig, surface=surface)
    assert js["own_metrics"]["err"]["higher_is_better"] is False and "sacrebleu" not in js
    assert js["segments"][0]["systems"]["good"]["myf1"] == pytest.approx(comparison.results["good"].f1[0])
    tex = latex_table(comparison, sig)
    assert r"& F1 & err & 95\% CI & $\Delta$ err" in tex and "Lower err is better" in tex
    pdflatex = shutil.which("pdflatex")
    assert pdflatex, "pdflatex is needed (apt-get install texlive-latex-recommended)"
    (tmp_path / "t.tex").write_text(latex_document(tex), encoding="utf-8")
    run = subprocess.run([pdflatex, "-interaction=nonstopmode", "-halt-on-error", "t.tex"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout[-2000:]
    md = markdown_summary("t", comparison, sig)
    assert "| F1 | err | err 95% CI |" in md
    report = build_report(ds, comparison, sig, n_segments=1, surface=surface)
    assert "err is a metric of one's own" in report.html and ">myF1</th>" in report.html
    head = compare.headline(comparison, sig)
    assert head["best"] == table["System"].iloc[0] and head["margin"] > 0 and "better than" in head["sentence"]


# --- the command line ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def files(tmp_path_factory, scored):
    _, comparison = scored
    root = tmp_path_factory.mktemp("own")
    (root / "refs.txt").write_text("\n".join(REFS) + "\n", encoding="utf-8")
    for name, lines in SYSTEMS.items():
        (root / f"{name}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (root / "f1.txt").write_text("\n".join(repr(float(v)) for s in SYSTEMS for v in comparison.results[s].f1) + "\n")
    return root


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["compare", *argv, "-q"])
    return code, out.getvalue(), err.getvalue()


def test_compare_json_with_scores_equals_bertscore_s_path(files):
    args = ["-r", str(files / "refs.txt"), "-s", *(str(files / f"{s}.txt") for s in SYSTEMS), "--json",
            "--no-segments", "--holm"]
    code, out, _ = cli(*args)
    mine_code, mine, err = cli(*args, "--scores", f"myF1={files / 'f1.txt'}", "--metric", "myF1")
    assert code == mine_code == 0
    a, b = json.loads(out), json.loads(mine)
    for key in ("intervals", "pairwise_p", "clusters", "standings", "systems", "n_samples"):
        assert a["significance"][key] == b["significance"][key], key
    assert [r["p"] for r in a["significance"]["versus_baseline"]] == [r["p"] for r in b["significance"][
        "versus_baseline"]]
    assert b["own_metrics"]["myf1"]["segments_used"] == len(REFS)
    assert [r["myf1"] for r in b["systems"]] == [r["f1"] for r in a["systems"]]


def test_compare_gate_latex_and_bad_values_on_a_lower_is_better_metric(files, tmp_path):
    errs = [line for line in (files / "f1.txt").read_text().splitlines()]
    errs = [repr(1 - float(v)) for v in errs]
    errs[2] = "n/a"
    (tmp_path / "e.txt").write_text("\n".join(errs) + "\n")
    base = ["-r", str(files / "refs.txt"), "-s", *(str(files / f"{s}.txt") for s in SYSTEMS),
            "--scores", f"errors={tmp_path / 'e.txt'}", "--metric", "errors"]
    code, out, err = cli(*base, "--fail-if-worse", "good")
    assert code == 1 and "significantly worse than good on errors" in err  # good has the lowest error rate
    assert "'n/a', not a number" in err and "1 of 12 segments are left out" in err
    assert "taken as lower-is-better" in err
    code, out, _ = cli(*base, "--latex")
    assert code == 0 and r"$\Delta$ errors" in out
    code, out, err = cli(*base, "--higher-is-better", "errors", "--fail-if-worse", "good")
    assert code == 0  # said to be higher-is-better: good is now the worst, nothing is worse than it
    code, _, err = cli(*base[:-2], "--metric", "nothing")
    assert code == 2 and "neither P, R, F1 nor a metric" in err
    code, _, err = cli(*base[:-4], "--scores", "nofile")
    assert code == 2 and "NAME=FILE" in err
