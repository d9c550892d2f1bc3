"""``python -m bertscore_viz score``: bert-score's flags and output format, --json, several -r files, errors."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bertscore_viz import Scorer
from bertscore_viz.cli.entry import main
from bertscore_viz.cli.score import read_lines

ROOT = Path(__file__).resolve().parents[2]
CANDS = ["The cat sat on the mat.", "A quick brown fox jumps over the lazy dog.",
         "He went to the store to buy some milk."]
REFS = ["There is a cat sitting on the mat.", "The quick brown fox leaped over a lazy dog.",
        "She walked to the shop to purchase bread."]
REFS2 = ["A cat was on the mat.", "A fast brown fox jumped over the lazy dog.", "He bought milk at the store."]
LINE = re.compile(r"^(?P<sig>\S+) P: (?P<p>-?\d+\.\d{6}) R: (?P<r>-?\d+\.\d{6}) F1: (?P<f>-?\d+\.\d{6})$")


@pytest.fixture()
def files(tmp_path):
    def write(name, lines):
        p = tmp_path / name
        p.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return str(p)

    return {"cand": write("cand.txt", CANDS), "ref": write("ref.txt", REFS), "ref2": write("ref2.txt", REFS2),
            "short": write("short.txt", REFS[:2]), "dir": str(tmp_path), "write": write}


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_bert_score_output_format(files, capsys):
    code, out, err = run(capsys, "score", "-c", files["cand"], "-r", files["ref"], "-l", "4")
    assert code == 0
    lines = out.splitlines()
    assert len(lines) == 1
    m = LINE.match(lines[0])
    assert m, lines[0]
    res = Scorer(layer=4).score(CANDS, REFS)
    assert m["sig"] == str(res.signature)
    assert float(m["p"]) == pytest.approx(res.precision.mean(), abs=5e-7)
    assert float(m["r"]) == pytest.approx(res.recall.mean(), abs=5e-7)
    assert float(m["f"]) == pytest.approx(res.f1.mean(), abs=5e-7)


def test_seg_level(files, capsys):
    code, out, _ = run(capsys, "score", "-c", files["cand"], "-r", files["ref"], "-l", "6", "-s")
    assert code == 0
    lines = out.splitlines()
    assert LINE.match(lines[0]) and len(lines) == 1 + len(CANDS)
    seg = np.array([[float(x) for x in line.split("\t")] for line in lines[1:]])
    # BERTSCORE.md pairs 0..2 at layer 6
    np.testing.assert_allclose(seg, [[.915798, .906159, .910953], [.889763, .892181, .890970],
                                     [.534062, .550658, .542233]], atol=1.5e-6)


def test_json(files, capsys):
    code, out, _ = run(capsys, "score", "-c", files["cand"], "-r", files["ref"], "--num_layers", "4", "--json")
    assert code == 0
    d = json.loads(out)
    res = Scorer(layer=4).score(CANDS, REFS)
    for key, arr in (("precision", res.precision), ("recall", res.recall), ("f1", res.f1)):
        assert isinstance(d[key], list) and len(d[key]) == len(CANDS)
        np.testing.assert_allclose(d[key], arr, atol=1e-12)
    assert d["signature"] == str(res.signature)


def test_several_reference_files(files, capsys):
    code, out, _ = run(capsys, "score", "-c", files["cand"], "-r", files["ref"], files["ref2"], "-l", "4",
                       "--json")
    assert code == 0
    d = json.loads(out)
    res = Scorer(layer=4).score(CANDS, [[a, b] for a, b in zip(REFS, REFS2)])
    np.testing.assert_allclose(d["f1"], res.f1, atol=1e-12)
    np.testing.assert_allclose(d["precision"], res.precision, atol=1e-12)
    # the maximum over both files: at least each file's own score
    one = Scorer(layer=4).score(CANDS, REFS)
    assert np.all(np.asarray(d["f1"]) >= one.f1 - 1e-12)


def test_idf_and_rescale_with_baseline_path(files, capsys, tmp_path):
    baseline = tmp_path / "base.tsv"
    baseline.write_text("LAYER,P,R,F\n" + "".join(f"{i},0.6,0.55,0.57\n" for i in range(7)), encoding="utf-8")
    code, out, _ = run(capsys, "score", "-c", files["cand"], "-r", files["ref"], "-l", "4", "--idf",
                       "--rescale_with_baseline", "--baseline_path", str(baseline), "--json")
    assert code == 0
    d = json.loads(out)
    res = Scorer(layer=4, idf=True, rescale_with_baseline=True, baseline_path=str(baseline)).score(CANDS, REFS)
    np.testing.assert_allclose(d["f1"], res.f1, atol=1e-12)
    np.testing.assert_allclose(d["raw_f1"], res.raw_f1, atol=1e-12)
    np.testing.assert_allclose(d["precision"], (np.asarray(d["raw_precision"]) - 0.6) / 0.4, atol=1e-12)
    tv = res.signature.transformers_version
    assert d["signature"].endswith(f"_idf_version=bertscore-viz-0.1.0(hug_trans={tv})-custom-rescaled")


def test_single_sentences_instead_of_files(capsys):
    code, out, _ = run(capsys, "score", "-c", CANDS[0], "-r", REFS[0], "-l", "6", "-s")
    assert code == 0
    assert out.splitlines()[1].split("\t") == ["0.915798", "0.906159", "0.910953"]


def test_missing_reference_file_exit_2(files, capsys):
    code, out, err = run(capsys, "score", "-c", files["cand"], "-r", files["dir"] + "/nope.txt")
    assert code == 2 and out == ""
    assert "error:" in err and "reference file" in err and "nope.txt" in err and "does not exist" in err
    assert "Traceback" not in err


def test_missing_candidate_file_exit_2(files, capsys):
    code, _, err = run(capsys, "score", "-c", files["dir"] + "/nope.txt", "-r", files["ref"])
    assert code == 2 and "candidate file" in err and "does not exist" in err


def test_a_directory_as_reference_exit_2_and_is_called_a_directory(files, capsys):
    code, _, err = run(capsys, "score", "-c", files["cand"], "-r", files["dir"])
    assert code == 2 and "is a directory" in err


def test_non_utf8_file_exit_2(files, capsys, tmp_path):
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("caf\u00e9\nb\nc\n".encode("latin-1"))
    code, _, err = run(capsys, "score", "-c", files["cand"], "-r", str(bad))
    assert code == 2 and "not UTF-8" in err and "iconv" in err


def test_unequal_line_counts_exit_2(files, capsys):
    code, out, err = run(capsys, "score", "-c", files["cand"], "-r", files["ref"], files["short"])
    assert code == 2 and out == ""
    assert "got 2 references and 3 candidates" in err and "short.txt" in err


def test_missing_baseline_exit_2(files, capsys):
    code, _, err = run(capsys, "score", "-c", files["cand"], "-r", files["ref"], "--rescale_with_baseline",
                       "--lang", "zz")
    assert code == 2 and "No rescaling baseline" in err and "--baseline_path" in err


def test_read_lines_keeps_empty_lines_and_strips(tmp_path):
    p = tmp_path / "x.txt"
    p.write_bytes(b"\xef\xbb\xbf  one \r\n\r\nthree\n")
    assert read_lines(p, "candidate") == ["one", "", "three"]


def test_empty_line_is_scored_zero_with_a_warning(files, capsys):
    cand = files["write"]("c_empty.txt", ["", CANDS[1]])
    ref = files["write"]("r_empty.txt", [REFS[0], REFS[1]])
    code, out, err = run(capsys, "score", "-c", cand, "-r", ref, "-l", "4", "--json")
    assert code == 0
    assert json.loads(out)["f1"][0] == 0.0
    assert err.count("1 empty candidate(s)") == 1  # printed once, not also as a Python warning
    assert "Warning: 1 empty candidate(s)" in err


@pytest.mark.slow
def test_module_entry_point_subprocess(files):
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    proc = subprocess.run([sys.executable, "-m", "bertscore_viz", "score", "-c", files["cand"], "-r", files["ref"],
                           "-l", "4", "--json"], capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    d = json.loads(proc.stdout)
    np.testing.assert_allclose(d["f1"], Scorer(layer=4).score(CANDS, REFS).f1, atol=1e-7)
    proc = subprocess.run([sys.executable, "-m", "bertscore_viz", "score", "-c", files["cand"], "-r",
                           files["short"]], capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    assert proc.returncode == 2
    assert "Expected as many lines" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("text, is_path", [
    ("a.txt", True), ("data/refs", True), ("test.de-en.ref", True), ("C:\\refs", True), ("x.jsonl", True),
    ("The cat sat.", False), ("Hello.", False), ("cat", False), ("e.g. this", False), ("", False), ("3.14", False),
    ("v1.2", False), ("notes.md", True),
])
def test_the_rule_for_missing_files(text, is_path):
    from bertscore_viz.cli.score import looks_like_path

    assert looks_like_path(text) is is_path


def test_missing_files_exit_non_zero_with_a_clear_error(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["score", "-c", "a.txt", "-r", "b.txt"]) != 0
    err = capsys.readouterr().err
    assert "the candidate file a.txt does not exist; the reference file b.txt does not exist" in err
    assert "Traceback" not in err
    (tmp_path / "a.txt").write_text("The cat sat.\n", encoding="utf-8")
    assert main(["score", "-c", "a.txt", "-r", "refs/b.txt"]) != 0
    assert "No such file: the reference file refs/b.txt does not exist" in capsys.readouterr().err


@pytest.mark.parametrize("text, bare", [
    ("hyps", True), ("refs_v2", True), ("sys-out", True), ("Hello", True),
    ("Hello.", False), ("3.14", False), ("42", False), ("The cat sat.", False), ("", False), ("it's", False),
])
def test_the_rule_for_bare_names(text, bare):
    from bertscore_viz.cli.score import looks_like_bare_name

    assert looks_like_bare_name(text) is bare


def test_two_missing_files_without_extension_are_not_scored_as_words(tmp_path, capsys, monkeypatch):
    """``score -c hyps -r refs`` with neither file there: bert-score scores the two names and exits 0; here it is
    an error naming both, with how to score one-word sentences."""
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "score", "-c", "hyps", "-r", "refs")
    assert code == 2 and out == ""
    assert "No such files: -c hyps, -r refs. None of them is an existing file" in err
    assert 'punctuate them (-c "Hello." -r "Hi.")' in err and "Traceback" not in err
    code, out, err = run(capsys, "score", "-c", "hyps", "-r", "refs", "more_refs")
    assert code == 2 and "-r more_refs" in err


def test_numbers_and_punctuated_words_are_still_sentences(tmp_path, capsys, monkeypatch):
    """``-c 3.14`` is a sentence (not a missing file with extension ``.14``), as are punctuated one-word sentences;
    a bare word next to a real sentence is a sentence too (bert-score compatibility)."""
    monkeypatch.chdir(tmp_path)
    for cand, ref in (("3.14", "2.71"), ("Hello.", "Hi."), ("cat", "A cat sat on the mat.")):
        code, out, err = run(capsys, "score", "-c", cand, "-r", ref, "-l", "4", "--json")
        assert code == 0, err
        want = Scorer(layer=4).score([cand], [ref]).f1
        np.testing.assert_allclose(json.loads(out)["f1"], want, atol=1e-7)
    (tmp_path / "hyps").write_text("The cat sat.\n", encoding="utf-8")
    (tmp_path / "refs").write_text("A cat sat.\n", encoding="utf-8")
    code, out, err = run(capsys, "score", "-c", "hyps", "-r", "refs", "-l", "4", "--json")
    assert code == 0 and json.loads(out)["f1"] == pytest.approx(list(Scorer(layer=4).score(["The cat sat."],
                                                                                          ["A cat sat."]).f1))
