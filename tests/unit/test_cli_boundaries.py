"""Issue 19, classes 4, 6 and 7 on the command line: files and paths, and writes.

Before: ``-c adir/ -r adir/`` was scored as a sentence (F1 1.0, exit 0) and ``-c adir`` said the file "does not
exist"; CR-only line ends read as one line; two empty files printed ``P: nan R: nan F1: nan``; a UTF-16 file got
advice to convert from latin1; ``baseline -o`` wrote the provenance before the table (a failed table left a new
provenance beside the old table while the message said nothing changed), and an unwritable output was found only
after the whole computation.
"""

from __future__ import annotations

import os
import sys

import pytest

from bertscore_viz.cli.entry import main
from bertscore_viz.files import fileio
from bertscore_viz.files.textfile import read_text_lines


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def files(tmp_path):
    (tmp_path / "adir").mkdir()
    out = {"adir": str(tmp_path / "adir")}
    for name, data in {"cands": b"The cat sat.\rIt is cold.\rHe left.\r", "refs": b"A cat sat.\r\nIt's cold.\nHe went.",
                       "empty": b"", "blank": b"\n\n\n", "utf16": "The cat sat.\nIt is cold.\n".encode("utf-16"),
                       "utf16le": "The cat sat.\nIt is cold.\n".encode("utf-16-le"),
                       "cp1252": "Caf\u00e9 au lait.\n".encode("cp1252")}.items():
        (tmp_path / f"{name}.txt").write_bytes(data)
        out[name] = str(tmp_path / f"{name}.txt")
    out["root"] = str(tmp_path)
    return out


@pytest.mark.parametrize("value", ["adir", "adir/"])
def test_a_directory_is_refused_as_a_directory(files, capsys, value):
    path = files["adir"] + ("/" if value.endswith("/") else "")
    code, out, err = run(capsys, "score", "-c", path, "-r", path)
    assert code == 2 and "is a directory" in err and "does not exist" not in err and not out


def test_cr_only_line_ends_are_lines_as_bert_score_reads_them(files, capsys):
    assert read_text_lines(files["cands"], "candidate file") == ["The cat sat.", "It is cold.", "He left."]
    assert read_text_lines(files["refs"], "reference file") == ["A cat sat.", "It's cold.", "He went."]
    code, out, _ = run(capsys, "score", "-c", files["cands"], "-r", files["refs"], "-s")
    assert code == 0 and len(out.strip().splitlines()) == 1 + 3


def test_empty_files_are_an_error_never_nan(files, capsys):
    code, out, err = run(capsys, "score", "-c", files["empty"], "-r", files["empty"])
    assert code == 2 and "is empty: it has no lines" in err and "nan" not in out + err


def test_blank_lines_are_scored_as_empty_sentences_as_bert_score_does(files, capsys):
    code, out, err = run(capsys, "score", "-c", files["blank"], "-r", files["blank"], "-s")
    assert code == 0 and "nan" not in out and "3 empty candidate(s)" in err


@pytest.mark.parametrize("name, encoding", [("utf16", "UTF-16"), ("utf16le", "UTF-16")])
def test_utf16_is_named_as_such(files, capsys, name, encoding):
    code, _, err = run(capsys, "score", "-c", files[name], "-r", files["refs"])
    assert code == 2 and f"is {encoding} text" in err and f"iconv -f {encoding} -t UTF-8" in err
    assert "latin1" not in err


def test_another_8_bit_encoding_gets_the_offset_and_no_guess(files, capsys):
    code, _, err = run(capsys, "score", "-c", files["cp1252"], "-r", files["cp1252"])
    assert code == 2 and "is not UTF-8: byte 3 (line 1)" in err and "latin1" not in err


@pytest.mark.parametrize("target", ["missing_parent", "is_dir", "parent_is_file"])
def test_an_unwritable_output_is_found_before_any_work(files, capsys, monkeypatch, target):
    import bertscore_viz.cli.baseline as baseline_cli
    import bertscore_viz.cli.tune_layers as tune_layers_cli

    def no_work(*a, **k):
        raise AssertionError("the computation started")

    monkeypatch.setattr(baseline_cli, "compute_baseline", no_work)
    monkeypatch.setattr(tune_layers_cli, "tune_layers", no_work)
    out = {"missing_parent": os.path.join(files["cands"], "x", "o.tsv"), "is_dir": files["adir"],
           "parent_is_file": os.path.join(files["cands"], "o.tsv")}[target]
    for argv in (["baseline", "--corpus", files["refs"], "-o", out],
                 ["tune-layers", "--data", files["adir"], "-o", out],
                 ["show", "-c", "A cat.", "-r", "The cat.", "-o", out + ".png" if target != "is_dir" else out]):
        code, _, err = run(capsys, *argv)
        assert code == 2 and "Cannot write" in err, (argv, err)


def test_a_failed_table_write_leaves_table_and_provenance_as_they_were(tmp_path, monkeypatch):
    from bertscore_viz.rescaling import baseline_compute as bc

    out = tmp_path / "b.tsv"
    prov = bc.provenance_path(out)
    out.write_text("old table")
    prov.write_text("old provenance")

    class Result:
        def tsv(self):
            return "LAYER,P,R,F\n0,0.5,0.5,0.5\n"

        def provenance_json(self):
            return '{"new": true}'

    real_replace = os.replace

    def failing_replace(src, dst):
        if str(dst) == str(out):
            raise OSError(28, "No space left on device")
        return real_replace(src, dst)

    monkeypatch.setattr(fileio.os, "replace", failing_replace)
    with pytest.raises(fileio.OutputError, match="Nothing was written or changed"):
        bc.write_baseline(Result(), out)
    assert out.read_text() == "old table" and prov.read_text() == "old provenance"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.provenance.json", "b.tsv"]  # no temporaries left
    monkeypatch.setattr(fileio.os, "replace", real_replace)
    bc.write_baseline(Result(), out)
    assert out.read_text().startswith("LAYER") and prov.read_text() == '{"new": true}'


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_check_writable_names_the_problem(tmp_path):
    with pytest.raises(fileio.OutputError, match="is a directory"):
        fileio.check_writable(tmp_path)
    fileio.check_writable(tmp_path / "new" / "deeper" / "x.tsv")  # missing folders are created when writing
    assert not (tmp_path / "new").exists()  # ...but not by the check


@pytest.mark.parametrize("argv, message", [
    (["--seed", "-1"], "--seed takes a seed: 0 to 4,294,967,295, got -1."),  # numpy's traceback before
    # a job of days before
    (["--pairs", "99999999999"], "--pairs takes a number of pairs: 1 to 1,000,000, got 99,999,999,999."),
    (["--max-words", "0"], "--max-words takes a number of words: 1 to 1,000, got 0."),
])
def test_baseline_numbers_are_checked_before_any_work(files, capsys, monkeypatch, argv, message):
    from bertscore_viz.engine.options import ScoringOptions

    monkeypatch.setattr(ScoringOptions, "scorer", lambda *a, **k: (_ for _ in ()).throw(AssertionError("loaded")))
    code, _, err = run(capsys, "baseline", "--corpus", files["refs"], "-o", os.path.join(files["root"], "o.tsv"),
                       *argv)
    assert code == 2 and message in err, err


def test_tune_layers_on_a_file_says_it_is_a_file(files, capsys):
    code, _, err = run(capsys, "tune-layers", "--data", files["refs"])
    assert code == 2 and "is a file, not a directory" in err


# --- the second sweep (issue 31): pipes and devices, outputs checked before the work, plain warnings ---------------
def test_a_pipe_or_a_device_is_named_as_such_never_read_for_ever(files, capsys, tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for value in (str(fifo), "/dev/zero"):
        code, out, err = run(capsys, "score", "-c", value, "-r", files["refs"])
        assert code == 2 and not out and f"The candidate {value} is not a regular file" in err
    from bertscore_viz.errors import InputError
    from bertscore_viz.files.textfile import read_bytes
    with pytest.raises(InputError, match="not a regular file"):
        read_bytes("/dev/zero", "corpus file")  # every reader of files (mbr, compare --input, baseline corpora)


def _mtme_folder(root):
    ts = root / "wmt"
    lines = {"sources/en-de.txt": ["Die Katze sass.", "Es ist kalt."],
             "references/en-de.refA.txt": ["The cat sat.", "It is cold."],
             "system-outputs/en-de/sysA.txt": ["A cat sat.", ""],
             "system-outputs/en-de/sysB.txt": ["The cat sits.", "It's cold."]}
    for rel, text in lines.items():
        (ts / rel).parent.mkdir(parents=True, exist_ok=True)
        (ts / rel).write_text("".join(f"{x}\n" for x in text), encoding="utf-8")
    return ts


def test_mtme_checks_its_output_before_scoring_and_prints_plain_warnings(tmp_path, capsys, monkeypatch):
    """A file in the way of -o, or files already written without --overwrite, are refused before the model is
    loaded (they used to fail with a traceback after every system was scored); a warning is one line."""
    from bertscore_viz.engine.options import ScoringOptions

    ts = _mtme_folder(tmp_path)
    blocker = tmp_path / "afile"
    blocker.write_text("x")

    def no_scorer(*a, **k):
        raise AssertionError("the model was loaded before the output was checked")

    monkeypatch.setattr(ScoringOptions, "scorer", no_scorer)
    code, _, err = run(capsys, "mtme", "--data", str(ts), "--lp", "en-de", "--ref", "refA", "-o", str(blocker))
    assert code == 2 and "afile is a file, not a folder" in err and "Traceback" not in err
    monkeypatch.undo()
    code, out, err = run(capsys, "mtme", "--data", str(ts), "--lp", "en-de", "--ref", "refA")
    assert code == 0 and out.count("metric-scores") == 2
    assert "Warning: 1 empty candidate(s)" in err and "BertScoreWarning" not in err and ".py:" not in err
    monkeypatch.setattr(ScoringOptions, "scorer", no_scorer)
    code, _, err = run(capsys, "mtme", "--data", str(ts), "--lp", "en-de", "--ref", "refA")
    assert code == 2 and "add --overwrite to replace them" in err


def test_compare_refuses_one_file_given_twice_under_two_spellings(files, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "compare", "-r", files["refs"], "-s", "cands.txt", "./cands.txt")
    assert code == 2 and "The same system file is given twice: cands.txt, ./cands.txt" in err


@pytest.mark.slow
def test_a_ray_output_that_cannot_be_a_folder_is_refused_before_ray_starts(tmp_path, capsys):
    (tmp_path / "in.csv").write_text("candidate,reference\nThe cat sat.,A cat sat.\n", encoding="utf-8")
    (tmp_path / "afile").write_text("x")
    code, _, err = run(capsys, "score", "--ray", "--input", str(tmp_path / "in.csv"), "--output",
                       str(tmp_path / "afile"), "--workers", "1")
    assert code == 2 and "afile is a file, not a folder" in err and "Traceback" not in err
