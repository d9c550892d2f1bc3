"""Issue 19, class 1: impossible baseline values are refused from every source, never rescaled to nan or -inf.

Before: a file whose rows were NaN or 1.0 rescaled every score to nan / -inf and the CLI exited 0; saved in the
app's baseline folder, it reached every later session ("F1 nan (rescaled; 95% CI 0.0000-0.0000)").
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from bertscore_viz import BaselineError, Scorer
from bertscore_viz.cli.entry import main
from bertscore_viz.engine.baseline import MAX_BASELINE_CHARS, BaselineTable, parse_baseline, read_baseline
from bertscore_viz.serving import baseline_store

GOOD = "LAYER,P,R,F\n" + "".join(f"{k},0.5,0.5,0.5\n" for k in range(7))


def _file_with(row4: str) -> str:
    lines = GOOD.splitlines()
    lines[5] = row4  # layer 4, the bundled model's default
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("row, what", [
    ("4,nan,0.5,0.5", "P = nan"),
    ("4,0.5,inf,0.5", "R = inf"),
    ("4,0.5,0.5,1.0", "F = 1.0"),
    ("4,0.5,0.5,1.5", "F = 1.5"),
    ("4,-2,0.5,0.5", "P = -2.0"),
    ("4,0.5,-inf,0.5", "R = -inf"),
])
def test_a_value_that_would_rescale_to_nan_inf_or_flip_signs_is_refused(row, what):
    with pytest.raises(BaselineError, match=f"gives {what} for layer 4"):
        parse_baseline(_file_with(row), "test.tsv")


def test_values_just_inside_the_bounds_are_kept():
    table = parse_baseline(_file_with("4,-1.0,0.9999,0.0"), "ok.tsv")
    assert table.values[4].tolist() == [-1.0, 0.9999, 0.0]


@pytest.mark.parametrize("row", ["nan,0.5,0.5,0.5", "inf,0.5,0.5,0.5", "4.5,0.5,0.5,0.5", "4,0.5,0.5"])
def test_a_layer_column_that_is_not_the_next_whole_number_is_refused(row):
    with pytest.raises(BaselineError, match="Line 6"):
        parse_baseline(_file_with(row), "test.tsv")


@pytest.mark.parametrize("values, layers", [
    (np.full((2, 3), np.nan), None),
    (np.ones((1, 3)), None),
    (np.zeros((2, 2)), None),
    (np.zeros((0, 3)), None),
    ([["a", "b", "c"]], None),
    (np.zeros((2, 3)), (4,)),
    (np.zeros((2, 3)), (4, 4)),
    (np.zeros((1, 3)), (-1,)),
])
def test_every_table_is_checked_whatever_built_it(values, layers):
    with pytest.raises(BaselineError):
        BaselineTable(values, "built", layers=layers)


def test_a_table_keeps_its_own_read_only_copy():
    values = np.full((2, 3), 0.25)
    table = BaselineTable(values, "x")
    values[0, 0] = 0.99
    assert table.values[0, 0] == 0.25
    with pytest.raises(ValueError):
        table.values[0, 0] = 0.5


def test_the_cli_exits_2_on_a_nan_baseline_instead_of_printing_nan(tmp_path, capsys):
    bad = tmp_path / "bad.tsv"
    bad.write_text(_file_with("4,nan,nan,nan"), encoding="utf-8")
    code = main(["score", "-c", "The cat sat.", "-r", "A cat sat.", "--rescale_with_baseline",
                 "--baseline_path", str(bad)])
    err = capsys.readouterr().err
    assert code == 2 and "gives P = nan for layer 4" in err and "Traceback" not in err


def test_the_scorer_refuses_it_before_any_work(tmp_path):
    bad = tmp_path / "one.tsv"
    bad.write_text(_file_with("4,0.5,0.5,1"), encoding="utf-8")
    with pytest.raises(BaselineError, match="F = 1.0 for layer 4"):
        Scorer(rescale_with_baseline=True, baseline_path=bad)


def test_a_bad_file_already_in_the_saved_folder_never_reaches_a_session(tmp_path):
    path = baseline_store.saved_baseline_path(tmp_path, "en", "all-MiniLM-L6-v2")
    path.parent.mkdir(parents=True)
    path.write_text(_file_with("4,0.5,nan,0.5"), encoding="utf-8")
    assert baseline_store.saved_baseline(tmp_path, "en", "all-MiniLM-L6-v2") is None
    path.write_text(GOOD, encoding="utf-8")
    assert baseline_store.saved_baseline(tmp_path, "en", "all-MiniLM-L6-v2").values.shape == (7, 3)


def test_a_huge_or_binary_file_is_not_a_baseline(tmp_path):
    big = tmp_path / "big.tsv"
    big.write_bytes(b"LAYER,P,R,F\n" + b"0,0.5,0.5,0.5\n" * (MAX_BASELINE_CHARS // 10))
    with pytest.raises(BaselineError, match="larger than"):
        read_baseline(big)
    with pytest.raises(BaselineError, match="NUL"):
        parse_baseline("LAYER,P,R,F\n0,0.5,0.5,0.5\x00\n", "nul.tsv")
    with pytest.raises(BaselineError, match="is a directory"):
        read_baseline(tmp_path)


def test_a_pipe_in_the_saved_folder_is_ignored_and_logged_never_read(tmp_path):
    """Issue 46: a FIFO in ``BASELINE_DIR`` was opened and read, which waits for a writer for ever (a directory or
    a symlink there was already ignored). Run in its own process so that a hang fails the test instead of the run."""
    path = baseline_store.saved_baseline_path(tmp_path, "en", "all-MiniLM-L6-v2")
    path.parent.mkdir(parents=True)
    os.mkfifo(path)
    code = ("import logging, sys; logging.basicConfig(); from bertscore_viz.serving import baseline_store; "
            "print(baseline_store.saved_baseline(sys.argv[1], 'en', 'all-MiniLM-L6-v2'))")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "None", done.stderr
    assert "ignoring the saved baseline" in done.stderr and "a pipe (FIFO), not a regular file" in done.stderr
    with pytest.raises(BaselineError, match="cannot be read: it is a device, not a regular file"):
        read_baseline("/dev/zero")  # --baseline_path /dev/zero: refused, not read up to the size limit


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_every_line_end_pandas_reads_is_read(newline):
    """bert-score reads baselines with pandas, which takes \\r-only line ends too (found by the fuzzer: csv raised
    its own Error on them)."""
    table = parse_baseline(GOOD.replace("\n", newline), "crlf.tsv")
    assert table.values.shape == (7, 3)
