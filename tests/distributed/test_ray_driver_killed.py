"""The driver itself dies mid-run (SIGKILL: no cleanup at all) after some blocks are written; the same command run
again completes the output directory without duplicating or losing rows, with the single-process numbers.

The killed command runs as a subprocess joined to this session's local Ray instance (its GCS address, never
``auto``: another Ray on this machine must not be picked up); Ray ends the dead driver's actors.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest

from bertscore_viz.distributed import jobs as distributed
from bertscore_viz.distributed.options import ScoreOptions
from bertscore_viz.engine.scorer import Scorer

from .conftest import ROOT, wide_rows

N_SEGMENTS, BLOCK = 240, 10


def _parts(out):
    d = out / distributed.PARTS_DIR
    return sorted(d.glob("part-*.parquet")) if d.exists() else []


def _wait_for_free_cpus(ray, want: float, timeout: float = 120.0) -> None:
    """The dead driver's actors are gone once the cluster's CPUs are free again."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if ray.available_resources().get("CPU", 0) >= want:
            return
        time.sleep(0.5)
    pytest.fail(f"the killed driver's workers still hold CPUs after {timeout:.0f} s")


def test_a_killed_driver_leaves_parts_that_a_rerun_completes(ray_session, tmp_path):
    src = tmp_path / "systems.csv"
    pd.DataFrame(wide_rows(N_SEGMENTS, 800)).to_csv(src, index=False)
    out = tmp_path / "out"
    address = ray_session.get_runtime_context().gcs_address
    cmd = [sys.executable, "-m", "bertscore_viz", "score", "--ray", address, "--input", str(src), "--output",
           str(out), "--block-segments", str(BLOCK), "--workers", "2"]
    proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        deadline = time.monotonic() + 600
        while len(_parts(out)) < 3 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proc.poll() is None, "the run ended before it could be killed: " + proc.stderr.read().decode()[-2000:]
        proc.kill()  # SIGKILL: the driver gets no chance to clean up
    finally:
        proc.kill()
        proc.wait(timeout=60)
        proc.stdout.close()
        proc.stderr.close()
    n_blocks = N_SEGMENTS // BLOCK
    left = len(_parts(out))
    assert 3 <= left < n_blocks, left
    assert not (out / distributed.SCORES_FILE).exists()
    _wait_for_free_cpus(ray_session, 2)

    run = distributed.score_files(src, out, ScoreOptions(block_segments=BLOCK, workers=2))
    assert run.blocks == n_blocks and run.blocks_run == n_blocks - left
    frame = pd.read_parquet(run.scores)
    assert len(frame) == 2 * N_SEGMENTS and not frame.duplicated(["segment_index", "system"]).any()
    ds = distributed.read_input(src)
    scorer = Scorer()
    for name in ("sys_mt", "sys_other"):
        part = frame[frame.system == name].sort_values("segment_index")
        assert part["segment_index"].tolist() == list(range(N_SEGMENTS))
        want = scorer.score(ds.systems[name], ds.references)
        assert np.abs(part["f1"].to_numpy() - want.f1).max() < 1e-6
