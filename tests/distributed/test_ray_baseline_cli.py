"""Baselines on Ray equal the single-process file; the command line runs score --ray and baseline --ray."""

from __future__ import annotations

import contextlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bertscore_viz.cli.entry import main
from bertscore_viz.distributed import jobs as distributed
from bertscore_viz.engine.scorer import Scorer
from bertscore_viz.rescaling import baseline_compute as bc

from . import faults
from .conftest import ROOT, wide_rows

NEWSTEST = ROOT / "data" / "newstest2017-english"


@contextlib.contextmanager
def torch_threads(n: int):
    """Run the in-process side with the threads of one Ray actor (2 actors on 2 CPUs: one thread each).

    Equality to the last digit holds for the same threads per process: on some CPUs (Intel's MKL) a matrix product
    sums in another order with another thread count, which moves a mean by a float32 step (docs/RAY.md)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@pytest.fixture(scope="module")
def corpus():
    lines = (NEWSTEST / "newstest2017-deen-ref.en").read_text(encoding="utf-8").splitlines()[:900]
    return bc.corpus_from_lines(lines, "newstest2017-deen-ref.en[:900]")


def test_distributed_baseline_file_equals_single_process(ray_session, corpus, tmp_path, monkeypatch):
    # 1,500 pairs in 3 blocks of 500, every layer; a worker dies once on block 1 and its block is retried
    with torch_threads(1):
        local = bc.compute_baseline(corpus, n_pairs=1500, seed=11, block_pairs=500)
    marker = tmp_path / "fail_once"
    marker.write_text("1")
    faults.inject(monkeypatch, marker)
    seen = []
    stats: dict = {}
    ray_result = bc.compute_baseline(corpus, n_pairs=1500, seed=11, block_pairs=500,
                                     run_blocks=distributed.ray_block_runner(workers=2, stats=stats),
                                     progress=lambda d, t: seen.append((d, t)))
    assert stats["resources"].cpus == 1  # the threads the in-process side used
    assert not marker.exists()
    assert ray_result.n_layers == local.n_layers == 7
    assert ray_result.tsv() == local.tsv()
    np.testing.assert_allclose(ray_result.means, local.means, rtol=0, atol=1e-9)
    np.testing.assert_allclose(ray_result.stderr, local.stderr, rtol=0, atol=1e-9)
    assert seen[-1] == (1500, 1500)
    # the means are those of the pairs: the reduction of per-block moments is the plain mean
    pairs = np.concatenate(bc.plan_pairs(len(corpus.sentences), 1500, 11, 500))
    stats = Scorer(layer=0).match([corpus.sentences[i] for i in pairs[:, 0]],
                                  [corpus.sentences[j] for j in pairs[:, 1]], layers=[4])
    assert abs(stats.pair_scores(4)[0].mean(axis=0) - ray_result.means[4]).max() < 1e-6


def test_cli_baseline_with_ray(ray_session, corpus, tmp_path, capsys):
    src = tmp_path / "corpus.txt"
    src.write_text("\n".join(corpus.sentences[:200]) + "\n", encoding="utf-8")
    out = tmp_path / "base.tsv"
    assert main(["baseline", "--corpus", str(src), "--pairs", "120", "--seed", "2", "--ray", "--workers", "2",
                 "-o", str(out)]) == 0
    with torch_threads(1):
        local = bc.compute_baseline(bc.read_corpus(src), n_pairs=120, seed=2)
    assert out.read_text(encoding="utf-8") == local.tsv()
    err = capsys.readouterr().err
    assert "scoring pairs" in err and "120/120 pairs" in err


def test_cli_score_with_ray_plain_columns(ray_session, tmp_path, capsys):
    rows = wide_rows(60, 2000)
    frame = pd.DataFrame({"reference": rows["reference"], "candidate": rows["sys_mt"]})
    src = tmp_path / "plain.jsonl"
    frame.to_json(src, orient="records", lines=True, force_ascii=False)
    out = tmp_path / "out"
    code = main(["score", "--ray", "--input", str(src), "--output", str(out), "-l", "5", "--rescale_with_baseline",
                 "--block-segments", "25", "--workers", "1"])
    assert code == 0
    io = capsys.readouterr()
    want = Scorer(layer=5, rescale_with_baseline=True).score(rows["sys_mt"], rows["reference"])
    assert io.out.strip() == f"signature: {want.signature}"
    assert "scoring pairs" in io.err and "60/60" in io.err and "3 block(s) scored" in io.err
    got = pd.read_parquet(Path(out) / "scores.parquet")
    assert got["system"].unique().tolist() == ["candidate"]
    assert np.abs(got["f1"].to_numpy() - want.f1).max() < 1e-6
    # a missing input is an error message and exit code 2, not a traceback
    assert main(["score", "--ray", "--input", str(tmp_path / "nope.csv"), "--output", str(out)]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_cli_score_with_ray_long_texts_window_equals_single_process(ray_session, tmp_path, capsys):
    """Documents past the model's maximum, scored whole on Ray: the same numbers as one process's window mode,
    idf counted over whole references, the mode in the signature (issue 21)."""
    from tests.conftest import DATA

    lines = (DATA / "newstest2017-english" / "newstest2017-deen-ref.en").read_text(encoding="utf-8").splitlines()
    other = (DATA / "newstest2017-english" / "newstest2017-zhen-ref.en").read_text(encoding="utf-8").splitlines()
    refs = [" ".join(lines[s:s + 44]) for s in range(0, 44 * 4, 44)] + lines[500:504]
    cands = [" ".join(lines[s:s + 32] + other[s:s + 12]) for s in range(0, 44 * 4, 44)] + other[500:504]
    src = tmp_path / "docs.jsonl"
    pd.DataFrame({"reference": refs, "candidate": cands}).to_json(src, orient="records", lines=True,
                                                                  force_ascii=False)
    out = tmp_path / "out"
    code = main(["score", "--ray", "--input", str(src), "--output", str(out), "--idf", "--long_texts", "window",
                 "--block-segments", "3", "--workers", "2"])
    assert code == 0
    io = capsys.readouterr()
    want = Scorer(idf=True, long_texts="window").score(cands, refs)
    assert io.out.strip() == f"signature: {want.signature}" and str(want.signature).endswith("_window")
    got = pd.read_parquet(Path(out) / "scores.parquet").sort_values("segment_index")
    assert np.abs(got["f1"].to_numpy() - want.f1).max() < 1e-6
    truncated = Scorer(idf=True).score(cands, refs)
    assert np.abs(got["f1"].to_numpy()[:4] - truncated.f1[:4]).min() > 0.01  # the tails counted
