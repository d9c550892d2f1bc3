"""Scoring on Ray (local, num_cpus=2) gives the single-process Scorer's numbers, survives a dead worker and a block
that raises once, says what failed when a worker cannot start or a block keeps failing (keeping the finished blocks),
resumes a partial output directory (parts of the same job only), and refuses bad input before any worker starts. Real
WMT16 data, the bundled model."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bertscore_viz.cli import ray as ray_cli
from bertscore_viz.distributed import jobs as distributed
from bertscore_viz.distributed import pool
from bertscore_viz.distributed.options import ScoreOptions
from bertscore_viz.engine.idf import idf_from_counts
from bertscore_viz.engine.scorer import Scorer
from bertscore_viz.errors import InputError
from bertscore_viz.evaluation import precomputed
from bertscore_viz.files import upload
from bertscore_viz.files.columns import mapping_from_args
from bertscore_viz.files.results import format as results_format
from bertscore_viz.files.results import table as results_table

from . import faults
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
    run = distributed.score_files(src, tmp / "out", ScoreOptions(
        idf=True, rescale_with_baseline=True, block_segments=250, workers=2))
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
    assert meta[results_format.SIGNATURE_KEY].decode() == str(scorer.signature) == run.signature
    assert "_idf_" in run.signature and run.signature.endswith("-rescaled")
    info = json.loads(meta[results_format.META_KEY])
    assert info["systems"] == ["A", "B"] and info["n_segments"] == 1000
    np.testing.assert_array_equal(info["baseline"], scorer.baseline)


def test_distributed_idf_equals_single_process_idf(ray_session, long_run):
    src, _ = long_run
    ds = distributed.read_input(src)
    scorer = Scorer(idf=True)
    bounds = [(a, min(a + 300, ds.n_segments)) for a in range(0, ds.n_segments, 300)]
    res = distributed.Resources(2, 1, 0)
    got = idf_from_counts(*distributed.distributed_document_frequencies(ray_session, ds, bounds, None, res))
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
    with pytest.MonkeyPatch.context() as mp:
        faults.inject(mp, marker)
        run = distributed.score_files(wide_parquet_dir, tmp / "out", ScoreOptions(block_segments=50, workers=2))
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
    # a part of another job (other versions, say) with the right number of rows: redone, not mixed in
    other = out / distributed.PARTS_DIR / "part-000002.parquet"
    table = pq.read_table(other)
    info = json.loads(table.schema.metadata[results_format.META_KEY])
    info["job"] = "another-job"
    meta = {**table.schema.metadata, results_format.META_KEY: json.dumps(info).encode()}
    pq.write_table(table.replace_schema_metadata(meta).set_column(
        table.column_names.index("raw_f1"), "raw_f1", pa.array(np.zeros(table.num_rows))), other)
    run = distributed.score_files(wide_parquet_dir, out, ScoreOptions(block_segments=50, workers=2))
    assert run.blocks_run == 4
    after = pd.read_parquet(run.scores)
    pd.testing.assert_frame_equal(before, after, check_exact=False, rtol=0, atol=TOL)
    _assert_unique_and_complete(run.scores, 300, ["sys_mt", "sys_other"])
    # a second rerun has nothing left to do
    assert distributed.score_files(wide_parquet_dir, out, ScoreOptions(block_segments=50)).blocks_run == 0
    # other settings into the same directory: refused, not mixed
    with pytest.raises(InputError, match="different job"):
        distributed.score_files(wide_parquet_dir, out, ScoreOptions(block_segments=50, idf=True))


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
    (lambda d: (d / "bad.parquet").write_bytes(b"not parquet at all") and d / "bad.parquet",
     "cannot be read as Parquet"),
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
    mapping = mapping_from_args(["reference"], "hyp")
    with pytest.raises(InputError, match="'reference'"):
        distributed.score_files(path, tmp_path / "out", ScoreOptions(mapping=mapping))


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
        distributed.score_files(path, tmp_path / "out", ScoreOptions(layer=40))
    with pytest.raises(BaselineError):
        distributed.score_files(path, tmp_path / "out", ScoreOptions(rescale_with_baseline=True, lang="xx"))


# --- failures: retried once, or a message that says what failed and that finished blocks stay -----------------
@pytest.fixture(scope="module")
def small_csv(tmp_path_factory):
    """60 segments x 2 systems (wide), scored in 4 blocks of 15."""
    path = tmp_path_factory.mktemp("small") / "small.csv"
    pd.DataFrame(wide_rows(60, 400)).to_csv(path, index=False)
    return path


def _assert_single_process_numbers(scores, src):
    ds = distributed.read_input(src)
    got = _by_system(scores)
    scorer = Scorer()
    for name in ds.systems:
        want = scorer.score(ds.systems[name], ds.references)
        assert np.max(np.abs(got[name]["f1"].to_numpy() - want.f1)) < TOL, name


def test_a_block_that_raises_on_its_first_attempt_is_tried_again(ray_session, small_csv, tmp_path, monkeypatch):
    marker = tmp_path / "fail_once"
    marker.write_text("raise:2")
    faults.inject(monkeypatch, marker)
    run = distributed.score_files(small_csv, tmp_path / "out", ScoreOptions(block_segments=15, workers=2))
    assert not marker.exists(), "the fault was not injected: no call reached block 2"
    assert run.blocks == run.blocks_run == 4
    _assert_unique_and_complete(run.scores, 60, ["sys_mt", "sys_other"])
    _assert_single_process_numbers(run.scores, small_csv)


def test_a_block_failing_on_every_attempt_stops_the_job_keeping_the_finished_blocks(ray_session, small_csv,
                                                                                    tmp_path, monkeypatch):
    marker = tmp_path / "fail_always"
    marker.write_text("always:1")
    out = tmp_path / "out"
    faults.inject(monkeypatch, marker)
    with pytest.raises(distributed.WorkerError) as err:
        distributed.score_files(small_csv, out, ScoreOptions(block_segments=15, workers=2))
    msg = str(err.value)
    assert f"block 1 failed on all {pool.BLOCK_ATTEMPTS} attempts" in msg
    assert "RuntimeError: injected failure in block 1" in msg and "run the same command again" in msg
    assert "Traceback" not in msg
    kept = sorted(p.name for p in (out / distributed.PARTS_DIR).glob("part-*.parquet"))
    assert "part-000001.parquet" not in kept
    assert f"{len(kept)} of 4 block(s) are finished and kept" in msg
    assert not (out / distributed.SCORES_FILE).exists()
    marker.unlink()
    run = distributed.score_files(small_csv, out, ScoreOptions(block_segments=15, workers=2))
    assert run.blocks_run == 4 - len(kept)
    _assert_unique_and_complete(run.scores, 60, ["sys_mt", "sys_other"])
    _assert_single_process_numbers(run.scores, small_csv)


@pytest.fixture
def model_without_weights(tmp_path):
    """A model directory the driver can check (config.json) but no worker can load: as when a model is missing on
    a node of the cluster."""
    from bertscore_viz.models.spec import resolve_model

    d = tmp_path / "broken-model"
    d.mkdir()
    shutil.copy(Path(resolve_model(None).source) / "config.json", d / "config.json")
    return d


def test_a_worker_that_cannot_start_is_a_message_not_a_traceback(ray_session, small_csv, model_without_weights,
                                                                 tmp_path, capsys):
    from bertscore_viz.cli.entry import main

    out = tmp_path / "out"
    with pytest.raises(distributed.WorkerError, match=r"a worker could not start \(.*Could not load model"):
        distributed.score_files(small_csv, out, ScoreOptions(model=str(model_without_weights), layer=3, workers=1))
    code = main(["score", "--ray", "--input", str(small_csv), "--output", str(out), "-m", str(model_without_weights),
                 "-l", "3", "--workers", "1"])
    err = capsys.readouterr().err
    assert code == 2
    assert "error: The Ray job stopped: a worker could not start" in err and "0 of 1 block(s)" in err
    assert "Traceback" not in err


# --- resuming: only parts of the same job, software versions included -----------------------------------------
def test_the_job_id_covers_the_full_signature_and_torch(small_csv):
    ds = distributed.read_input(small_csv)
    settings = {"model": "m", "layer": 4, "signature": "m_L4_no-idf_version=bertscore-viz-0.1.0(hug_trans=5.23.0)",
                "torch": "2.13.0"}
    base = distributed._fingerprint(ds, settings, 15)
    assert base == distributed._fingerprint(ds, dict(settings), 15)
    for key, value in (("signature", settings["signature"].replace("5.23.0", "5.24.0")), ("torch", "2.14.0")):
        assert distributed._fingerprint(ds, {**settings, key: value}, 15) != base, key
    edited = upload.Dataset({k: list(v) for k, v in ds.systems.items()}, ds.references, ds.sources,
                            ds.segment_ids, ds.rows)
    edited.systems["sys_mt"][59] += "!"
    assert distributed._fingerprint(edited, settings, 15) != base


def test_the_job_file_records_the_signature_and_versions(ray_session, long_run):
    _, run = long_run
    job = json.loads((run.output / distributed.JOB_FILE).read_text())
    assert job["settings"]["signature"] == run.signature and job["settings"]["torch"]
    for part in (run.output / distributed.PARTS_DIR).glob("part-*.parquet"):
        info = json.loads(pq.read_schema(part).metadata[results_format.META_KEY])
        assert info["job"] == job["fingerprint"]


# --- the results file holds what the drill-down needs to reproduce a row ---------------------------------------
def test_the_file_scorer_reproduces_rows_with_the_files_idf_and_baseline(long_run):
    """2 references per segment, idf on, rescaled: the one-segment explanation equals the file's row, with idf from
    the file's document frequencies (not from the segment's references)."""
    _, run = long_run
    table = results_table.read_results(run.scores)
    assert table.idf is not None and table.idf.num_documents == 2000
    want_idf = Scorer(idf=True).idf_weights(table.references)
    assert table.idf.weights == want_idf.weights and table.idf.unseen == want_idf.unseen
    frame = pd.read_parquet(run.scores)
    sc = precomputed.file_scorer(table, rescaled=True)
    assert str(sc.signature) == run.signature
    for i in (0, 17, 999):
        row = frame[(frame.segment_index == i) & (frame.system == "B")].iloc[0]
        ex = sc.explain(row["candidate"], list(row["references"]))
        assert abs(ex.f1 - row["raw_f1"]) < TOL and abs(ex.precision - row["raw_precision"]) < TOL
        np.testing.assert_allclose(ex.rescaled, [row["precision"], row["recall"], row["f1"]], rtol=0, atol=TOL)
    raw = precomputed.file_scorer(table, rescaled=False)
    row = frame[(frame.segment_index == 5) & (frame.system == "A")].iloc[0]
    ex = raw.explain(row["candidate"], list(row["references"]))
    assert ex.rescaled is None and abs(ex.recall - row["raw_recall"]) < TOL


# --- input coverage ------------------------------------------------------------------------------------------
def test_a_partitioned_directory_is_read_recursively_with_its_partition_columns(no_ray, tmp_path):
    """Spark's ``partitionBy("system")`` output: system=NAME/ folders, _SUCCESS, hidden .crc files, an empty part."""
    rows = wide_rows(30, 600)
    root = tmp_path / "spark_out"
    for name, col in (("A", "sys_mt"), ("B", "sys_other")):
        d = root / f"system={name}"
        d.mkdir(parents=True)
        frame = pd.DataFrame({"segment_id": rows["segment_id"], "candidate": rows[col], "reference": rows["reference"]})
        pq.write_table(pa.Table.from_pandas(frame[:20], preserve_index=False), d / "part-00000-x.snappy.parquet")
        pq.write_table(pa.Table.from_pandas(frame[20:], preserve_index=False), d / "part-00001-x.snappy.parquet")
        pq.write_table(pa.Table.from_pandas(frame[:0], preserve_index=False), d / "part-00002-x.snappy.parquet")
        (d / ".part-00000-x.snappy.parquet.crc").write_bytes(b"crc")
    (root / "_SUCCESS").write_text("")
    (root / "_temporary").mkdir()
    (root / "_temporary" / "part-99.parquet").write_bytes(b"half-written")
    ds = distributed.read_input(root)
    assert sorted(ds.systems) == ["A", "B"] and ds.n_segments == 30
    assert ds.systems["A"] == rows["sys_mt"] and ds.systems["B"] == rows["sys_other"]
    assert [r[0] for r in ds.references] == rows["reference"]
    assert sum("has no rows; skipped" in p.problem for p in ds.problems) == 2


def test_json_lines_files_with_keys_in_another_order_are_one_table(no_ray, tmp_path):
    d = tmp_path / "jsonl"
    d.mkdir()
    (d / "a.jsonl").write_text('{"reference": "The cat sat.", "mt": "A cat sat."}\n', encoding="utf-8")
    (d / "b.jsonl").write_text('{"mt": "The dog.", "reference": "A dog."}\n', encoding="utf-8")
    ds = distributed.read_input(d)
    assert ds.systems["mt"] == ["A cat sat.", "The dog."] and ds.references == [["The cat sat."], ["A dog."]]


def test_a_parquet_file_with_zero_rows_is_a_clear_error(no_ray, tmp_path):
    path = tmp_path / "empty.parquet"
    pq.write_table(pa.table({"reference": pa.array([], pa.string()), "sys": pa.array([], pa.string())}), path)
    with pytest.raises(InputError, match="no data rows"):
        distributed.score_files(path, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_source_and_segment_id_columns_can_be_named_on_the_command_line(no_ray, tmp_path):
    from bertscore_viz.cli.entry import build_parser

    path = _csv(tmp_path / "x.csv", "key,src,gold,hyp_a,hyp_b\nk1,Die Katze.,The cat.,A cat.,Cat.\n"
                                    "k2,Der Hund.,The dog.,A dog.,Dog.\n")
    args = build_parser().parse_args(["score", "--ray", "--input", str(path), "--output", str(tmp_path / "out"),
                                      "--reference-column", "gold", "--system-columns", "hyp_a", "hyp_b",
                                      "--source-column", "src", "--segment-id-column", "key"])
    ds = distributed.read_input(path, ray_cli.mapping_from_cli(args))
    assert ds.segment_ids == ["k1", "k2"] and ds.sources == ["Die Katze.", "Der Hund."]
    assert list(ds.systems) == ["hyp_a", "hyp_b"]
