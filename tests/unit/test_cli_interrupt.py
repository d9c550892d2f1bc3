"""Ctrl-C (SIGINT) to the command line while it computes a baseline: a clean exit, no traceback, no partial or
temporary file, and an earlier output file left as it was (outputs are written to a temporary file, then renamed)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "data" / "newstest2017-english" / "newstest2017-deen-ref.en"


def test_sigint_exits_cleanly_without_a_partial_file(tmp_path):
    out = tmp_path / "out.tsv"
    out.write_text("an earlier file\n")
    err_path = tmp_path / "stderr.txt"
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", PYTHONUNBUFFERED="1")
    with open(err_path, "w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "bertscore_viz", "baseline", "--corpus", str(CORPUS),
                                 "--pairs", "20000", "-o", str(out)], cwd=ROOT, env=env,
                                stdout=subprocess.DEVNULL, stderr=err)
        deadline = time.time() + 120
        try:
            while "scoring pairs" not in err_path.read_text() or err_path.read_text().endswith("pairs 0/20000"):
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
