"""Output into a pipe whose reader went away (``bertscore-viz score ... --json | head -1``, ``compare ... | head``):
the command ends as a tool killed by SIGPIPE does, with exit status 141, no traceback and nothing on stderr.

Each test runs the real command line in a subprocess (``python -m bertscore_viz``) with the real bundled model.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENV = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
REFS = ["The cat sat on the mat.", "Heavy rain caused flooding near the river.", "She finished the marathon."]
HYPS = ["A cat sat on the mat.", "Rain flooded the villages by the river.", "She ran the whole marathon."]
OTHER = ["The mat sat on the cat.", "Flooding near the river.", "The marathon finished her."]


def _write(path: Path, lines: list[str]) -> str:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def _into_closed_pipe(*argv: str) -> tuple[int, str]:
    """Run ``bertscore-viz argv`` with its standard output a pipe already closed at the reading end: every write
    fails (EPIPE), as when ``head`` has exited. Returns the exit status and stderr."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run([sys.executable, "-m", "bertscore_viz", *argv], cwd=ROOT, env=ENV, stdout=write_end,
                              stderr=subprocess.PIPE, text=True, timeout=300)
    finally:
        os.close(write_end)
    return proc.returncode, proc.stderr


def _into_head(*argv: str) -> tuple[int, str, str]:
    """``bertscore-viz argv | head -1``: the exit status of bertscore-viz, its stderr and what head printed."""
    cli = subprocess.Popen([sys.executable, "-m", "bertscore_viz", *argv], cwd=ROOT, env=ENV,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    head = subprocess.Popen(["head", "-1"], stdin=cli.stdout, stdout=subprocess.PIPE)
    cli.stdout.close()  # head alone reads the pipe: when it exits, the pipe has no reader
    first, _ = head.communicate(timeout=300)
    err = cli.stderr.read().decode("utf-8")
    cli.stderr.close()
    return cli.wait(timeout=300), err, first.decode("utf-8")


@pytest.mark.slow  # a model pass in a subprocess (8-15 s on 2 cores)
def test_score_json_into_a_closed_pipe_exits_141_silently(tmp_path):
    code, err = _into_closed_pipe("score", "-c", _write(tmp_path / "hyps.txt", HYPS),
                                  "-r", _write(tmp_path / "refs.txt", REFS), "--json")
    assert (code, err) == (141, "")


@pytest.mark.slow  # a model pass and the bootstrap in a subprocess
def test_compare_into_a_closed_pipe_exits_141_silently(tmp_path):
    code, err = _into_closed_pipe("compare", "-q", "-r", _write(tmp_path / "refs.txt", REFS),
                                  "-s", _write(tmp_path / "sysA.txt", HYPS), _write(tmp_path / "sysB.txt", OTHER))
    assert (code, err) == (141, "")


@pytest.mark.slow  # a model pass over 6,000 candidates in a subprocess
def test_score_per_candidate_lines_into_head(tmp_path):
    """Much more output than a pipe holds (6,000 lines of 27 bytes; a pipe holds 64 KiB): head prints the first
    line and exits while the command still writes."""
    n = 6000
    hyps = _write(tmp_path / "hyps.txt", [HYPS[i % 3] for i in range(n)])
    refs = _write(tmp_path / "refs.txt", [REFS[i % 3] for i in range(n)])
    code, err, first = _into_head("score", "-c", hyps, "-r", refs, "-s")
    assert (code, err) == (141, "")
    assert " P: " in first and " F1: " in first  # the corpus line, as bert-score prints it


def test_a_command_that_ends_normally_still_exits_0(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "bertscore_viz", "--help"], cwd=ROOT, env=ENV,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.startswith("usage:") and proc.stderr == ""
