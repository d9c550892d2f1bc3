"""Faults while the command line writes its output: Ctrl-C (SIGINT) while it computes a baseline, and a write that
runs out of space. Each ends cleanly (no traceback), leaves no partial or temporary file, and leaves an earlier output
file as it was (outputs are written to a temporary file, flushed, then renamed)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # each test runs the CLI in a subprocess (8-20 s on 2 cores)

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "data" / "newstest2017-english" / "newstest2017-deen-ref.en"


def _default_sigint() -> None:
    """In the child: SIGINT handled as in a terminal. A shell starts background jobs with SIGINT ignored, the
    ignoring is inherited, and a Python started that way never turns Ctrl-C into KeyboardInterrupt; a test suite
    run in the background (as CI may run it) would then see the CLI finish instead of being interrupted."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_sigint_exits_cleanly_without_a_partial_file(tmp_path):
    out = tmp_path / "out.tsv"
    out.write_text("an earlier file\n")
    err_path = tmp_path / "stderr.txt"
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", PYTHONUNBUFFERED="1")
    with open(err_path, "w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "bertscore_viz", "baseline", "--corpus", str(CORPUS),
                                 "--pairs", "20000", "-o", str(out)], cwd=ROOT, env=env,
                                stdout=subprocess.DEVNULL, stderr=err, preexec_fn=_default_sigint)
        deadline = time.time() + 120
        started = "0/20000 pairs (? pairs/s)"  # the bar before the first pair is scored
        try:
            while "scoring pairs" not in err_path.read_text() or err_path.read_text().endswith(started):
                assert proc.poll() is None, err_path.read_text()
                assert time.time() < deadline, "the CLI never started scoring"
                time.sleep(0.2)
            proc.send_signal(signal.SIGINT)
            code = proc.wait(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
    stderr = err_path.read_text()
    assert code == 130, stderr
    assert "interrupted: no output file was written or changed" in stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr
    assert out.read_text() == "an earlier file\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.tsv", "stderr.txt"]


def _limit_file_size(max_bytes: int):
    """In the child, before the CLI starts: files may not grow past ``max_bytes`` (RLIMIT_FSIZE), and the signal
    that would kill the process (SIGXFSZ) is ignored, so that a write past the limit fails with EFBIG, as a write to
    a full disk fails with ENOSPC: a real failing write, not a simulated one."""
    def limit() -> None:
        import resource

        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (max_bytes, max_bytes))
    return limit


def test_an_output_write_that_runs_out_of_space_leaves_the_old_file_and_a_clear_error(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(CORPUS.read_text(encoding="utf-8").splitlines()[:40]) + "\n", encoding="utf-8")
    out = tmp_path / "out.tsv"
    old = "an earlier file, " + "long enough to be over the size limit " * 20 + "\n"
    out.write_text(old)
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.run([sys.executable, "-m", "bertscore_viz", "baseline", "--corpus", str(corpus), "--pairs",
                           "20", "-o", str(out)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
                          preexec_fn=_limit_file_size(256))
    assert proc.returncode == 2, proc.stderr
    assert f"error: Could not write {tmp_path}" in proc.stderr and "File too large" in proc.stderr
    assert "the disk is full, or a file size limit was reached" in proc.stderr
    assert "Nothing was written or changed" in proc.stderr and "Traceback" not in proc.stderr
    assert out.read_text() == old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.txt", "out.tsv"]  # no temporary file left
    # the same command with room to write: the output is replaced by a complete baseline
    done = subprocess.run([sys.executable, "-m", "bertscore_viz", "baseline", "--corpus", str(corpus), "--pairs",
                           "20", "-o", str(out)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert out.read_text().startswith("LAYER,P,R,F\n0,") and len(out.read_text().splitlines()) == 8
