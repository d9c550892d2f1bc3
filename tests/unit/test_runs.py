"""Runs that last: a run file read back exactly, what keeps two runs apart said in sentences, damaged and foreign
files skipped, odd names, a system's history; the command line's ``--save-run`` / ``--with-run`` give the numbers
and p values of scoring the systems together; ``runs list|history``."""

from __future__ import annotations

import contextlib
import io
import json
import os
from pathlib import Path

import numpy as np
import pytest

from bertscore_viz import score
from bertscore_viz.cli.entry import main
from bertscore_viz.engine.results import ScoreResult, Signature
from bertscore_viz.errors import InputError
from bertscore_viz.evaluation.compare import Comparison
from bertscore_viz.evaluation.runs import save_comparison, with_runs
from bertscore_viz.files.dataset import Dataset
from bertscore_viz.files.runs import (
    MAX_RUNS_LISTED,
    compatibility,
    find_run,
    history,
    list_runs,
    load_run,
    references_hash,
    safe_name,
    save_run,
)

REFS = ["The cat sat on the mat.", "A dog barked loudly at the postman.", "It is raining in the city today.",
        "The committee approved the budget.", "She finished the marathon in four hours."]
SYSTEMS = {
    "a": ["The cat sat on a mat.", "A dog barked at the postman.", "It rains in the city today.",
          "The committee passed the budget.", "She ran the marathon in four hours."],
    "b": ["A cat is on the mat.", "The dog was loud to the mailman.", "Today the city has rain.",
          "The budget was approved by the committee.", "In four hours she finished the marathon."],
    "c": ["Cat mat sat.", "Dog postman barked.", "Rain city today is.", "Committee budget.", "Marathon hours she."],
}
SIG = Signature("m", 4, False, transformers_version="t")


def _result(f1, sig=SIG) -> ScoreResult:
    f1 = np.asarray(f1, dtype=np.float64)
    return ScoreResult(f1 + 0.01, f1 - 0.01, f1, f1 + 0.01, f1 - 0.01, f1, sig, warnings=("row 2: empty",))


def _save(folder, name="base", f1=(0.1 + 0.2, np.nan, 1 / 3), refs=(["r1"], ["r2", "r2b"], ["r3"]), sig=SIG):
    res = _result(f1, sig)
    return save_run(folder, name, signature=str(sig), layer=4, idf=False, rescaled=False, references=list(refs),
                    segment_ids=["s1", "s2", "s3"], systems={"sys": res}, outputs={"sys": ["o1", "o2", "o3"]})


def test_round_trip_is_exact_nan_included(tmp_path):
    path = _save(tmp_path)
    run = load_run(path)
    kept = run.systems["sys"]
    expected = _result((0.1 + 0.2, np.nan, 1 / 3))
    for attr in ("precision", "recall", "f1", "raw_precision", "raw_recall", "raw_f1"):
        np.testing.assert_array_equal(getattr(kept, attr), getattr(expected, attr))  # bit for bit, NaN at NaN
    assert kept.f1[0] == 0.1 + 0.2 and np.isnan(kept.f1[1])
    assert run.signature == str(SIG) and run.segment_ids == ("s1", "s2", "s3") and kept.outputs == ("o1", "o2", "o3")
    assert run.references_hash == references_hash([["r1"], ["r2", "r2b"], ["r3"]])
    assert kept.warnings == ("row 2: empty",) and run.name == "base" and run.created.endswith("+00:00")
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["schema"] == "bertscore-viz-run" and doc["version"] == 1 and doc["systems"]["sys"]["f1"][1] is None
    assert kept.corpus_f1() == pytest.approx((0.1 + 0.2 + 0 + 1 / 3) / 3)  # NaN counted as 0


def test_compatibility_says_what_differs(tmp_path):
    run = load_run(_save(tmp_path))
    refs_hash = references_hash([["r1"], ["r2", "r2b"], ["r3"]])
    assert compatibility(run, str(SIG), refs_hash, 3) == []
    other = str(Signature("m", 5, False, transformers_version="t"))
    said = compatibility(run, other, refs_hash, 3)
    assert len(said) == 1 and "another signature" in said[0] and other in said[0]
    said = compatibility(run, str(SIG), references_hash([["r1"], ["r2"], ["r3"]]), 3)
    assert len(said) == 1 and "other references" in said[0]
    said = compatibility(run, other, refs_hash, 4)
    assert len(said) == 2 and "has 3 segments; this test set has 4" in said[1]
    # the order of references within a segment and across segments matters to the hash
    assert references_hash([["a"], ["b"]]) != references_hash([["b"], ["a"]]) != references_hash([["a", "b"]])


def test_damaged_and_foreign_files_are_skipped_and_reported(tmp_path):
    good = _save(tmp_path)
    (tmp_path / "broken.json").write_text('{"schema": "bertscore-viz-run", "version": 1, "name": ', encoding="utf-8")
    (tmp_path / "foreign.json").write_text('{"hello": "world"}', encoding="utf-8")
    (tmp_path / "newer.json").write_text('{"schema": "bertscore-viz-run", "version": 99}', encoding="utf-8")
    doc = json.loads(good.read_text(encoding="utf-8"))
    doc["systems"]["sys"]["f1"] = doc["systems"]["sys"]["f1"][:2]  # one score short
    (tmp_path / "short.json").write_text(json.dumps(doc), encoding="utf-8")
    (tmp_path / "binary.json").write_bytes(b"\xff\xfe\x00garbage")
    (tmp_path / "notes.txt").write_text("not a run", encoding="utf-8")
    listed = list_runs(tmp_path)
    assert [r.path for r in listed.runs] == [good]
    assert len(listed.skipped) == 5
    assert any("version 99" in s for s in listed.skipped) and any("not 3 scores" in s for s in listed.skipped)
    assert list_runs(tmp_path / "missing").runs == []
    with pytest.raises(InputError, match="not a readable bertscore-viz run"):
        load_run(tmp_path / "foreign.json")


def test_listing_is_bounded_newest_first(tmp_path):
    for i in range(3):
        path = _save(tmp_path, name=f"r{i}")
        os.utime(path, (1000 + i, 1000 + i))
    assert [r.name for r in list_runs(tmp_path).runs] == ["r2", "r1", "r0"]
    limited = list_runs(tmp_path, limit=2)
    assert [r.name for r in limited.runs] == ["r2", "r1"] and limited.left_out == 1
    assert MAX_RUNS_LISTED >= 100
    runs = list_runs(tmp_path).runs
    assert find_run(runs, "latest").name == "r2" and find_run(runs, "r0").name == "r0"
    with pytest.raises(InputError, match="No run called 'nope'; the runs are: 'r2', 'r1', 'r0'"):
        find_run(runs, "nope")


@pytest.mark.parametrize("name", ["../../etc/passwd", "a/b\\c", "\x1b[31mred\x1b[0m", "名前 ünï", "CON", ".hidden",
                                  "x" * 500, "<script>alert(1)</script>", "  spaced   out  "])
def test_odd_names_stay_in_the_folder_and_read_back(tmp_path, name):
    path = _save(tmp_path / "runs", name=name)
    assert path.parent == tmp_path / "runs" and not path.name.startswith(".")
    assert len(path.name) < 100 and set(path.stem) <= set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                          "0123456789._-")
    run = load_run(path)
    assert run.name == " ".join(name.split())[:120]
    assert find_run(list_runs(tmp_path / "runs").runs, run.name).path == path
    assert safe_name("") == "run" and safe_name("...") == "run"
    with pytest.raises(InputError, match="needs a name"):
        _save(tmp_path, name="   ")


def test_history_is_oldest_first_per_system(tmp_path):
    for name, f1 in (("one", (0.5, 0.5, 0.5)), ("two", (0.7, 0.7, 0.7))):
        _save(tmp_path, name=name, f1=f1)
    points = history(list_runs(tmp_path).runs, "sys")
    assert [p.run for p in points] == ["one", "two"] and [p.f1 for p in points] == pytest.approx([0.5, 0.7])
    assert history(list_runs(tmp_path).runs, "other") == []


def _dataset(names) -> Dataset:
    n = len(REFS)
    return Dataset({k: SYSTEMS[k] for k in names}, [[r] for r in REFS], None, [str(i + 1) for i in range(n)],
                   list(range(1, n + 1)))


def test_with_runs_adds_kept_systems_and_refuses_incompatible_ones(tmp_path):
    old = {k: score(SYSTEMS[k], REFS) for k in ("a", "b")}
    new = score(SYSTEMS["c"], REFS)
    save_comparison(tmp_path, "old", _dataset(["a", "b"]), Comparison(old, 4, False, False))
    run = list_runs(tmp_path).runs[0]
    ds, comparison = with_runs(_dataset(["c"]), Comparison({"c": new}, 4, False, False), [run, run])
    assert comparison.systems == ["a @ old", "b @ old", "c"]  # best first; a run given twice is added once
    assert ds.systems["a @ old"] == SYSTEMS["a"]
    np.testing.assert_allclose(comparison.results["a @ old"].f1, score(SYSTEMS["a"], REFS).f1, atol=1e-6)
    other_refs = Dataset({"c": SYSTEMS["c"]}, [[r + "!"] for r in REFS], None, list("12345"), [1, 2, 3, 4, 5])
    with pytest.raises(InputError, match="other references"):
        with_runs(other_refs, Comparison({"c": new}, 4, False, False), [run])
    idf = score(SYSTEMS["c"], REFS, idf=True)
    with pytest.raises(InputError, match="another signature"):
        with_runs(_dataset(["c"]), Comparison({"c": idf}, 4, True, False), [run])


def _cli(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def files(tmp_path):
    (tmp_path / "refs.txt").write_text("\n".join(REFS) + "\n", encoding="utf-8")
    for k, lines in SYSTEMS.items():
        (tmp_path / f"{k}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tmp_path


def test_cli_saved_runs_compare_as_if_scored_together(files):
    runs = str(files / "runs")
    f = {k: str(files / f"{k}.txt") for k in ("refs", "a", "b", "c")}
    code, _, err = _cli("score", "-c", f["a"], "-r", f["refs"], "--save-run", "first", "--runs", runs)
    assert code == 0 and "saved run first (a)" in err
    code, _, _ = _cli("compare", "-r", f["refs"], "-s", f["b"], f["c"], "--save-run", "second", "--runs", runs, "-q")
    assert code == 0
    code, out, err = _cli("compare", "-r", f["refs"], "-s", f["c"], "--runs", runs, "--with-run", "first",
                          "--with-run", "second", "--json", "-q")
    assert code == 0, err
    with_runs_ = json.loads(out)
    code, out, _ = _cli("compare", "-r", f["refs"], "-s", f["c"], f["a"], f["b"], "--json", "-q")
    together = json.loads(out)
    names = {"c": "c", "a @ first": "a", "b @ second": "b"}
    assert set(with_runs_["input"]["systems"]) == set(names) | {"c @ second"}
    for seg_runs, seg_together in zip(with_runs_["segments"], together["segments"]):
        for mine, theirs in names.items():
            for m in ("precision", "recall", "f1"):
                assert seg_runs["systems"][mine][m] == pytest.approx(seg_together["systems"][theirs][m], abs=1e-6)
    for mine, theirs in names.items():  # the engine's numbers
        engine = score(SYSTEMS[theirs], REFS).f1
        got = [seg["systems"][mine]["f1"] for seg in with_runs_["segments"]]
        np.testing.assert_allclose(got, engine, atol=1e-6)
    p_runs = {r["system"]: r["p"] for r in with_runs_["significance"]["versus_baseline"]}
    p_together = {r["system"]: r["p"] for r in together["significance"]["versus_baseline"]}
    assert p_runs["a @ first"] == p_together["a"] and p_runs["b @ second"] == p_together["b"]


def test_cli_with_run_refuses_other_references_and_unknown_runs(files):
    runs = str(files / "runs")
    f = {k: str(files / f"{k}.txt") for k in ("refs", "a", "b", "c")}
    assert _cli("score", "-c", f["a"], "-r", f["refs"], "--save-run", "first", "--runs", runs)[0] == 0
    (files / "other.txt").write_text("\n".join(r + " Indeed." for r in REFS) + "\n", encoding="utf-8")
    code, _, err = _cli("compare", "-r", str(files / "other.txt"), "-s", f["c"], "--runs", runs, "--with-run",
                        "latest", "-q")
    assert code == 2 and "other references" in err
    code, _, err = _cli("compare", "-r", f["refs"], "-s", f["c"], "--runs", runs, "--with-run", "nope", "-q")
    assert code == 2 and "No run called 'nope'" in err
    code, _, err = _cli("compare", "-r", f["refs"], "-s", f["c"], "--runs", runs, "--with-run", "first", "-l", "3",
                        "-q")
    assert code == 2 and "another signature" in err


def test_cli_runs_list_and_history(files):
    runs = str(files / "runs")
    f = {k: str(files / f"{k}.txt") for k in ("refs", "a", "b")}
    for name in ("one", "two"):
        assert _cli("compare", "-r", f["refs"], "-s", f["a"], f["b"], "--save-run", name, "--runs", runs, "-q")[0] == 0
    (Path(runs) / "junk.json").write_text("{", encoding="utf-8")
    code, out, err = _cli("runs", "list", "--runs", runs)
    assert code == 0 and out.index("two") < out.index("one") and "skipped junk.json" in err
    code, out, _ = _cli("runs", "history", "a", "--runs", runs, "--json")
    points = json.loads(out)["history"]
    assert [p["run"] for p in points] == ["one", "two"]
    assert points[0]["f1"] == pytest.approx(float(np.mean(score(SYSTEMS["a"], REFS).f1)), abs=1e-6)
    code, out, _ = _cli("runs", "history", "a", "--runs", runs)
    assert code == 0 and len(out.strip().splitlines()) == 2 and "F1 0." in out
    assert _cli("runs", "history", "--runs", runs)[0] == 2
