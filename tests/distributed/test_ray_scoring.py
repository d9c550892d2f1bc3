"""Scoring on Ray (local, num_cpus=2) gives the single-process Scorer's numbers, survives a dead worker, resumes a
partial output directory, and refuses bad input before any worker starts. Real WMT16 data, the bundled model."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bertscore_viz import distributed, results_file
from bertscore_viz.errors import InputError
from bertscore_viz.scorer import Scorer

from .conftest import wide_rows, write_long_csv

TOL = 1e-6


def _by_system(path):
    frame = pd.read_parquet(path)
    return {s: part.sort_values("segment_index").reset_index(drop=True) for s, part in frame.groupby("system")}


def _assert_unique_and_complete(path, n_segments, systems):
    frame = pd.read_parquet(path)
    assert len(frame) == n_segments * len(systems)
    assert not frame.duplicated(["segment_index", "system"]).any()
    assert sorted(frame["system"].unique()) == sorted(systems)
    for _, part in frame.groupby("system"):
        assert sorted(part["segment_index"]) == list(range(n_segments))


@pytest.fixture(scope="module")
def long_run(ray_session, tmp_path_factory):
    """2,000 real WMT16 candidates (2 systems x 1,000 segments, long layout, 2 references each), idf on, rescaled."""
    tmp = tmp_path_factory.mktemp("long")
    src = write_long_csv(tmp / "wmt16_long.csv", 1000)
    run = distributed.score_files(src, tmp / "out", idf=True, rescale_with_baseline=True, block_segments=250,
                                  workers=2)
    return src, run


def test_long_layout_idf_rescaled_two_references_equal_single_process(long_run):
    src, run = long_run
    assert run.blocks == 4 and run.blocks_run == 4 and run.rows == 2000
    _assert_unique_and_complete(run.scores, 1000, ["A", "B"])
    ds = distributed.read_input(src)
    assert all(len(r) == 2 for r in ds.references)
    scorer = Scorer(idf=True, rescale_with_baseline=True)
    got = _by_system(run.scores)
    for name in ("A", "B"):
        ref = scorer.score(ds.systems[name], ds.references)
        part = got[name]
        assert part["candidate"].tolist() == ds.systems[name]
        assert part["references"].map(list).tolist() == ds.references
        for col, want in (("raw_precision", ref.raw_precision), ("raw_recall", ref.raw_recall),
                          ("raw_f1", ref.raw_f1), ("rescaled_precision", ref.precision),
                          ("rescaled_recall", ref.recall), ("rescaled_f1", ref.f1), ("f1", ref.f1)):
            assert np.max(np.abs(part[col].to_numpy() - want)) < TOL, (name, col)
        np.testing.assert_array_equal(part["best_reference"].to_numpy(), ref.best_reference[:, 2])
        # the second reference wins for system B most of the time: the multi-reference maximum is exercised
        if name == "B":
            assert (part["best_reference"] == 1).mean() > 0.8
    meta = pq.read_schema(run.scores).metadata
    assert meta[results_file.SIGNATURE_KEY].decode() == str(scorer.signature) == run.signature
    assert "_idf_" in run.signature and run.signature.endswith("-rescaled")
    info = json.loads(meta[results_file.META_KEY])
    assert info["systems"] == ["A", "B"] and info["n_segments"] == 1000
    np.testing.assert_array_equal(info["baseline"], scorer.baseline)


def test_distributed_idf_equals_single_process_idf(ray_session, long_run):
    src, _ = long_run
    ds = distributed.read_input(src)
    scorer = Scorer(idf=True)
    bounds = [(a, min(a + 300, ds.n_segments)) for a in range(0, ds.n_segments, 300)]
    res = distributed.Resources(2, 1, 0)
    got = distributed._distributed_idf(ray_session, ds, bounds, None, scorer, res)
    want = scorer.idf_weights([r for group in ds.references for r in group])
    assert got.num_documents == want.num_documents == 2000
    assert got.weights == want.weights and got.unseen == want.unseen


@pytest.fixture(scope="module")
def wide_parquet_dir(tmp_path_factory):
    """Wide layout as a directory of two Parquet files (300 segments in all), one reference, two systems."""
    d = tmp_path_factory.mktemp("wide") / "input"
    d.mkdir()
    pq.write_table(pa.table(wide_rows(180, 0)), d / "part-a.parquet")
    pq.write_table(pa.table(wide_rows(120, 180)), d / "part-b.parquet")
    return d


@pytest.fixture(scope="module")
def fault_run(ray_session, wide_parquet_dir, tmp_path_factory):
    """A worker process dies (os._exit) when it reaches block 2 for the first time; Ray restarts it."""
    tmp = tmp_path_factory.mktemp("fault")
    marker = tmp / "fail_once"
    marker.write_text("2")
    run = distributed.score_files(wide_parquet_dir, tmp / "out", block_segments=50, workers=2,
                                  fail_once=str(marker))
    assert not marker.exists(), "the fault was not injected: no worker reached block 2"
    return run


def test_dead_worker_loses_and_duplicates_no_rows(fault_run, wide_parquet_dir):
    run = fault_run
    assert run.blocks == 6 and run.blocks_run == 6
    _assert_unique_and_complete(run.scores, 300, ["sys_mt", "sys_other"])
    ds = distributed.read_input(wide_parquet_dir)
    assert ds.segment_ids[:2] == ["w0", "w1"] and ds.segment_ids[180] == "w180"  # both files, in name order
    scorer = Scorer()
    got = _by_system(run.scores)
    for name in ("sys_mt", "sys_other"):
        ref = scorer.score(ds.systems[name], ds.references)
        for col, want in (("raw_precision", ref.raw_precision), ("raw_recall", ref.raw_recall),
                          ("f1", ref.f1), ("raw_f1", ref.raw_f1)):
            assert np.max(np.abs(got[name][col].to_numpy() - want)) < TOL, (name, col)
        assert got[name]["rescaled_f1"].notna().all()  # a shipped baseline exists: rescaled columns filled
    assert "no-idf" in run.signature and "rescaled" not in run.signature


def test_rerun_completes_a_partial_output_directory(ray_session, fault_run, wide_parquet_dir, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(fault_run.output, out)
    before = pd.read_parquet(out / distributed.SCORES_FILE)
    (out / distributed.SCORES_FILE).unlink()
    for k in (1, 4):
        (out / distributed.PARTS_DIR / f"part-{k:06d}.parquet").unlink()
    # a half-written temporary file of an interrupted run, and a truncated part: both are redone
    (out / distributed.PARTS_DIR / ".part-000001.parquet.tmp-999").write_bytes(b"PAR1 half")
    (out / distributed.PARTS_DIR / "part-000005.parquet").write_bytes(b"PAR1 cut")
    run = distributed.score_files(wide_parquet_dir, out, block_segments=50, workers=2)
    assert run.blocks_run == 3
    after = pd.read_parquet(run.scores)
    pd.testing.assert_frame_equal(before, after, check_exact=False, rtol=0, atol=TOL)
    _assert_unique_and_complete(run.scores, 300, ["sys_mt", "sys_other"])
    # a second rerun has nothing left to do
    assert distributed.score_files(wide_parquet_dir, out, block_segments=50).blocks_run == 0
    # other settings into the same directory: refused, not mixed
    with pytest.raises(InputError, match="different job"):
        distributed.score_files(wide_parquet_dir, out, block_segments=50, idf=True)


# --- bad input: clear errors, before Ray or any worker starts ---------------------------------------------------
@pytest.fixture
def no_ray(monkeypatch):
    def refuse(*_a, **_k):
        raise AssertionError("Ray was started for input that should have been refused")

    monkeypatch.setattr(distributed, "connect", refuse)


def _csv(path, text):
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("make, message", [
    (lambda d: _csv(d / "x.csv", "system_a,system_b\nA cat.,The cat.\n"), "No reference column was found"),
    (lambda d: d / "missing.csv", "does not exist"),
    (lambda d: (d / "bad.csv").write_bytes(b"reference,sys\n\xe9t\xe9,ok\n") and d / "bad.csv", "not UTF-8"),
    (lambda d: (d / "bad.parquet").write_bytes(b"not parquet at all") and d / "bad.parquet", "cannot be read as Parquet"),
    (lambda d: _csv(d / "empty.csv", ""), "empty"),
    (lambda d: _csv(d / "header.csv", "reference,sys_a\n"), "no data rows"),
    (lambda d: (d / "emptydir").mkdir() or d / "emptydir", "holds no .parquet"),
    (lambda d: _csv(d / "x.xlsx", "a"), "Cannot tell the format"),
])
def test_bad_input_is_refused_before_any_worker(no_ray, tmp_path, make, message):
    path = make(tmp_path)
    with pytest.raises(InputError, match=message):
        distributed.score_files(path, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_missing_mapped_column_is_named(no_ray, tmp_path):
    path = _csv(tmp_path / "x.csv", "ref,hyp\nThe cat.,A cat.\n")
    mapping = distributed.mapping_from_args(["reference"], "hyp")
    with pytest.raises(InputError, match="'reference'"):
        distributed.score_files(path, tmp_path / "out", mapping=mapping)


def test_files_with_different_columns_are_refused(no_ray, tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    _csv(d / "a.csv", "reference,sys_a\nx,y\n")
    _csv(d / "b.csv", "reference,sys_b\nx,y\n")
    with pytest.raises(InputError, match="different columns"):
        distributed.score_files(d, tmp_path / "out")


def test_bad_rows_are_listed_and_the_good_rows_kept(no_ray, tmp_path):
    path = _csv(tmp_path / "x.csv", "reference,sys\nThe cat sat.,A cat sat.\n,nothing to compare\nA dog.,The dog.\n")
    ds = distributed.read_input(path)
    assert ds.n_segments == 3 and any(p.row == 3 for p in ds.problems)
    ds = distributed.read_input(path, empty="skip")
    assert ds.n_segments == 2 and ds.rows == [2, 4]


def test_an_unknown_layer_or_missing_baseline_is_refused_before_ray(no_ray, tmp_path):
    from bertscore_viz.errors import BaselineError, ModelError

    path = _csv(tmp_path / "x.csv", "reference,sys\nThe cat sat.,A cat sat.\n")
    with pytest.raises(ModelError, match="Layer 40 does not exist"):
        distributed.score_files(path, tmp_path / "out", layer=40)
    with pytest.raises(BaselineError):
        distributed.score_files(path, tmp_path / "out", rescale_with_baseline=True, lang="xx")
