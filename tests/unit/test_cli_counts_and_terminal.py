"""Issue 46, the class behind the third sweep's instances: every number the command line takes goes through one
door (``cli.parser.count`` / ``amount``: a named bound, stated in --help, refused while parsing with one line and
exit 2, before any input is read or model loaded); text a user controls (file names, system names, ids, language
pairs) never reaches the terminal raw (``fileio.terminal_safe`` / ``terminal_json``); the layer table's TSV header
keeps its columns whatever the language pairs' names hold."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math

import pytest

from bertscore_viz.cli import parser as cli_parser
from bertscore_viz.cli.entry import main
from bertscore_viz.evaluation.layer_tuning import LayerTable, parse_layer_tsv
from bertscore_viz.files.fileio import read_tsv_field, terminal_json, terminal_safe, tsv_field

RAW = ("\x1b", "\x07", "\x00", "\r", "\x9b", "\u202e", "\u2066", "\ufeff")


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def _number_actions():
    """Every option of every command that takes a number: (command, option strings, action)."""
    top = cli_parser.build_parser()
    sub = next(a for a in top._actions if isinstance(a, argparse._SubParsersAction))
    for name, p in sub.choices.items():
        for action in p._actions:
            if action.type in (int, float):
                yield name, action.option_strings, action


def test_every_number_of_the_command_line_has_a_bound_stated_in_its_help():
    found = list(_number_actions())
    assert len(found) > 30
    unbounded = [(c, o) for c, o, a in found if not hasattr(a, "bound") and o != ["--nthreads"]]
    assert not unbounded, unbounded  # --nthreads: bert-score's, hidden, accepted and ignored
    for command, options, action in found:
        if options != ["--nthreads"]:
            assert action.bound in action.help, (command, options, action.help)


@pytest.mark.parametrize("argv, message", [
    (["score", "-c", "a", "-r", "b", "-b", "0"], "-b takes a number of sentences: 1 to 8,192, got 0."),
    (["score", "-c", "a", "-r", "b", "--batch_size", "100000000000"], "--batch_size takes a number of sentences"),
    (["score", "-c", "a", "-r", "b", "-l", "-1"], "-l takes a layer: 0 to 1,000, got -1."),
    (["score", "--ray", "--input", "x", "--output", "y", "--workers", "0"], "--workers takes a number of workers"),
    (["score", "--ray", "--input", "x", "--output", "y", "--block-segments", "-5"], "--block-segments takes"),
    (["score", "--ray", "--input", "x", "--output", "y", "--cpus-per-worker", "0"], "--cpus-per-worker takes"),
    (["baseline", "--corpus", "c", "-o", "o.tsv", "--block-pairs", "0"], "--block-pairs takes a number of pairs"),
    (["baseline", "--corpus", "c", "-o", "o.tsv", "--seed", str(2**32)], "--seed takes a seed: 0 to 4,294,967,295"),
    (["tune-layers", "--data", "d", "-b", "-3"], "-b takes a number of sentences"),
    (["correlate", "--example", "wmt16", "--disagreements", "1001"], "--disagreements takes a number of outputs"),
    (["correlate", "--example", "wmt16", "--resamples", "99"], "--resamples takes a number of resamples: 0 or 100"),
    (["audit", "-c", "a", "-r", "b", "--seed", "-1"], "--seed takes a seed"),
    (["mbr", "--samples", "s.txt", "--group-size", "-2"], "--group-size takes a number of samples: 1 to 1,024"),
    (["mtme", "--data", "d", "--lp", "de-en", "--ref", "refA", "-b", "0"], "-b takes a number of sentences"),
    (["compare", "-r", "r", "-s", "a", "b", "--paired-bs-n", "0"], "--paired-bs-n takes a number of resamples: 100"),
    (["compare", "-r", "r", "-s", "a", "b", "--paired-ar-n", "10000000"], "--paired-ar-n takes a number of trials"),
    (["compare", "-r", "r", "-s", "a", "b", "--report-segments", "-1"], "--report-segments takes"),
    (["compare", "-r", "r", "-s", "a", "b", "--report-max-mb", "inf"], "--report-max-mb takes MiB: 0.1 to 1,024"),
    (["compare", "-r", "r", "-s", "a", "b", "--report-max-mb", "nan"], "got nan."),
    (["compare", "-r", "r", "-s", "a", "b", "--report-max-mb", "0"], "--report-max-mb takes MiB"),
])
def test_a_number_out_of_its_bound_is_one_line_and_exit_2_before_any_work(argv, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # none of the files exists: refused before any is looked at
    import importlib

    real = importlib.import_module

    def no_command(name, *a, **k):  # the command's module (and any model) is never loaded
        assert not name.startswith("bertscore_viz.cli."), name
        return real(name, *a, **k)

    monkeypatch.setattr(importlib, "import_module", no_command)
    code, out, err = run(*argv)
    assert code == 2 and out == "" and message in err, err
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err, err


@pytest.mark.parametrize("argv", [
    ["correlate", "--example", "wmt16", "--resamples", "0"], ["correlate", "--example", "wmt16", "--resamples", "100"],
    ["mbr", "--samples", "s", "--group-size", "1"], ["compare", "--report-segments", "0", "--report-max-mb", "0.5"],
    ["score", "-l", "0", "-b", "8192"], ["baseline", "--corpus", "c", "-o", "o", "--pairs", "1000000", "--seed", "0"],
])
def test_the_bounds_keep_what_docs_and_tests_use(argv):
    cli_parser.build_parser().parse_args(argv)


def test_the_bounds_that_repeat_an_engines_are_equal_to_it():
    from bertscore_viz.evaluation.significance import MAX_SAMPLES
    from bertscore_viz.figures.report import MAX_SEGMENTS
    from bertscore_viz.rescaling.baseline_compute import MAX_DEFAULT_PAIRS, MAX_PAIRS

    assert cli_parser.MAX_BASELINE_PAIRS == MAX_PAIRS >= MAX_DEFAULT_PAIRS
    assert cli_parser.MAX_BOOTSTRAP == MAX_SAMPLES
    assert cli_parser.MAX_REPORT_SEGMENTS == MAX_SEGMENTS


# --- the terminal ----------------------------------------------------------------------------------------------------
def test_terminal_safe_escapes_what_a_terminal_acts_on_and_keeps_the_rest():
    for c in RAW + ("\t", "\n", "\x7f", "\u2028", "\U000e0001", "\udcff"):
        shown = terminal_safe(f"a{c}b")
        assert shown.isprintable() and c not in shown and shown.startswith("a\\") and shown.endswith("b"), shown
    assert terminal_safe("sys\x1b[31m") == "sys\\x1b[31m"
    assert terminal_safe("\u202e") == "\\u202e" and terminal_safe("\U000e0001") == "\\U000e0001"
    for kept in ("Müller–Straße 北京 😀", "\u0928\u094d\u200d\u0928", "a\\b"):  # a ZWJ joins Indic letters
        assert terminal_safe(kept) == kept
    assert terminal_safe("a\tb\nc\x1b", keep="\t\n") == "a\tb\nc\\x1b"


def test_terminal_json_is_the_same_value_with_nothing_raw():
    value = {"id\x1b": ["x\x9by\u202ez", "\U000e0001", "\udcff", "é 北京 😀", "a\nb", "\x7f"]}
    text = terminal_json(json.dumps(value, ensure_ascii=False, indent=1))
    assert json.loads(text) == value
    assert all(c == "\n" or c.isprintable() for c in text) and "é 北京 😀" in text


def test_tsv_fields_read_back():
    for value in ("de-en", "a\tb", "x\ny\rz", "back\\slash", "\\x41", "sep\u2028\x0b", "trailing\\"):
        assert read_tsv_field(tsv_field(value)) == value


def _table(lps):
    rows = {0: 0.1, 1: 0.5}
    return LayerTable(model="m", lps=list(lps), idf=False,
                      pearson={k: {lp: v + i / 100 for i, lp in enumerate(lps)} for k, v in rows.items()},
                      kendall={k: {lp: v / 2 for lp in lps} for k, v in rows.items()})


def test_layer_table_headers_from_file_names_keep_their_columns():
    lps = ["de-en", "a\tb", "c\nd", "e\x1bf|g"]
    table = _table(lps)
    tsv = table.to_tsv()
    lines = tsv.splitlines()
    assert len(lines) == 3 and {len(line.split("\t")) for line in lines} == {1 + 2 * (len(lps) + 1)}
    rows = parse_layer_tsv(tsv)
    assert [r["layer"] for r in rows] == [0, 1]
    assert rows[1]["pearson_a\tb"] == pytest.approx(0.51) and rows[1]["pearson_c\nd"] == pytest.approx(0.52)
    assert math.isclose(rows[0]["pearson_e\x1bf|g"], 0.13, abs_tol=1e-4)
    md = table.to_markdown()
    assert "\x1b" not in md and "\t" not in md and len(md.splitlines()) == 4
    assert "r e\\x1bf\\|g" in md and all(line.count(" | ") == len(lps) + 2 for line in md.splitlines()[:1])


def test_a_system_file_named_with_esc_reaches_the_terminal_escaped(tmp_path):
    refs = tmp_path / "refs.txt"
    refs.write_text("The cat sat on the mat.\nIt is cold today.\n", encoding="utf-8")
    a = tmp_path / "sys\x1b[31mA\u202e.txt"
    b = tmp_path / "plain.txt"
    a.write_text("The cat sat on a mat.\nIt is cold.\n", encoding="utf-8")
    b.write_text("A dog ran.\nToday it is warm.\n", encoding="utf-8")
    common = ["compare", "-r", str(refs), "-s", str(a), str(b), "-q", "--paired-bs-n", "100"]
    code, out, err = run(*common)
    assert code == 0, err
    for c in RAW:
        assert c not in out and c not in err
    assert "sys\\x1b[31mA\\u202e" in out
    code, out, err = run(*common, "--json")
    assert code == 0, err
    assert not any(c in out for c in RAW)
    assert "sys\x1b[31mA\u202e" in json.loads(out)["input"]["systems"]


def test_an_error_naming_a_file_with_esc_is_escaped(tmp_path):
    bad = tmp_path / "bad\x1b]0;title\x07.txt"
    code, out, err = run("score", "-c", str(bad), "-r", "x.txt")
    assert code == 2 and "\x1b" not in err and "\x07" not in err and "bad\\x1b]0;title\\x07.txt" in err, err
