"""Experiment trackers (issue 42, part 4): a real ScoreResult of the bundled model and a real Comparison of two
systems, logged to MLflow (a SQLite store in a temporary directory) and to W&B (offline mode), and read back: the
metrics equal the engine's to 1e-6, the signature is a param and a tag, the tables' rows are the scores (CSV cells
neutralised for spreadsheets), the worst pairs' heatmaps are PNGs. W&B's offline run is read from its ``.wandb``
file (LevelDB-log records of W&B's protobuf ``Record``), no server is contacted."""

from __future__ import annotations

import csv
import io
import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bertscore_viz import Scorer, score
from bertscore_viz.engine.results import ScoreResult, Signature
from bertscore_viz.errors import InputError
from bertscore_viz.evaluation import compare
from bertscore_viz.figures import tables
from bertscore_viz.files.dataset import Dataset
from bertscore_viz.integrations.trackers import log_run, log_to_mlflow, log_to_wandb
from bertscore_viz.integrations.trackers.content import build_content, metric_key

ROOT = Path(__file__).resolve().parents[2]
PNG = b"\x89PNG\r\n\x1a\n"
TOL = 1e-6

CANDIDATES = ["=HYPERLINK(\"http://x\") the cat sat on the mat.", "A dog ran in the park.",
              "+1 people like foreign cars.", "The weather is nice today."]
REFERENCES = ["There is a cat sitting on the mat.", ["The dog runs in the park.", "A dog was running."],
              "Consumers prefer imported cars.", "Today the weather is lovely."]
REFS = [["The cat is on the mat.", "The dog runs in the park."], ["It rains today.", "He reads a book."],
        ["Consumers prefer imported cars.", "Stocks fell sharply."]]
SYSTEMS = {"sys/A": ["A cat sat on the mat.", "It is raining today.", "People like foreign cars."],
           "sys:B": ["Dogs.", "Books are read.", "The market went down."]}


@pytest.fixture(scope="module")
def scorer():
    return Scorer(idf=True)


@pytest.fixture(scope="module")
def result(scorer):
    return scorer.score(CANDIDATES, REFERENCES)


@pytest.fixture(scope="module")
def dataset():
    n = len(REFS)
    return Dataset({k: list(v) for k, v in SYSTEMS.items()}, [list(r) for r in REFS], None,
                   [str(i + 1) for i in range(n)], list(range(1, n + 1)), [], None)


@pytest.fixture(scope="module")
def plain_scorer():
    return Scorer()


@pytest.fixture(scope="module")
def comparison(plain_scorer, dataset):
    cstats = compare.score_dataset(plain_scorer, dataset)
    return compare.results_for(plain_scorer, cstats, plain_scorer.layer, False, False)


def _csv_rows(data: bytes) -> list[dict]:
    return list(csv.DictReader(io.StringIO(data.decode("utf-8-sig"), newline="")))


# --- MLflow ---------------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def mlflow_store(tmp_path_factory):
    """A SQLite tracking store and its artifacts in a temporary directory (the working directory, where MLflow puts
    the artifacts of a SQLite store's runs)."""
    import mlflow  # in requirements-dev.txt: a missing one fails here, it is not skipped
    folder = tmp_path_factory.mktemp("mlflow")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(folder)
        mp.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{folder / 'mlflow.db'}")
        mp.delenv("MLFLOW_EXPERIMENT_NAME", raising=False)
        mp.delenv("MLFLOW_RUN_ID", raising=False)
        yield mlflow, mlflow.MlflowClient(), folder
        while mlflow.active_run() is not None:
            mlflow.end_run()


def _artifact(client, run_id: str, path: str, folder: Path) -> bytes:
    return Path(client.download_artifacts(run_id, path, str(folder))).read_bytes()


def test_mlflow_score_result_reads_back_as_the_engine_scored(mlflow_store, result, scorer, tmp_path):
    mlflow, client, _ = mlflow_store
    logged = log_to_mlflow(result, candidates=CANDIDATES, references=REFERENCES, scorer=scorer, worst=2,
                           experiment="trackers-test", run_name="score")
    assert mlflow.active_run() is None  # the run started here is ended here
    run = client.get_run(logged.run_id)
    assert run.info.status == "FINISHED" and run.info.run_name == "score"
    assert client.get_experiment(run.info.experiment_id).name == "trackers-test"
    engine = score(CANDIDATES, REFERENCES, idf=True)  # independent of the scorer used
    for key, value in zip(("bertscore/P", "bertscore/R", "bertscore/F1"), engine.mean()):
        assert abs(run.data.metrics[key] - value) < TOL
    assert run.data.params["bertscore.signature"] == str(engine.signature)
    assert run.data.tags["bertscore.signature"] == str(engine.signature)
    assert run.data.params["bertscore.layer"] == str(engine.signature.layer)
    assert run.data.params["bertscore.idf"] == "True" and run.data.params["bertscore.segments"] == "4"

    rows = _csv_rows(_artifact(client, logged.run_id, "bertscore/segments.csv", tmp_path))
    assert [r["candidate"] for r in rows] == ["'" + CANDIDATES[0]] + CANDIDATES[1:2] + ["'" + CANDIDATES[2]] \
        + CANDIDATES[3:]
    assert rows[1]["reference"] == "The dog runs in the park. ‖ A dog was running."
    for col, attr in (("P", "precision"), ("R", "recall"), ("F1", "f1")):
        np.testing.assert_allclose([float(r[col]) for r in rows], getattr(engine, attr), atol=TOL)
    assert {r["signature"] for r in rows} == {str(engine.signature)}
    table = json.loads(_artifact(client, logged.run_id, "bertscore/segments.json", tmp_path))
    assert table["data"][0][1] == CANDIDATES[0]  # the JSON table keeps the text as it is
    np.testing.assert_allclose([row[table["columns"].index("F1")] for row in table["data"]], engine.f1, atol=TOL)

    worst = np.argsort(engine.f1)[:2] + 1
    names = sorted(Path(a.path).name for a in client.list_artifacts(logged.run_id, "bertscore/worst"))
    assert names == [f"{k:02d}_segment_{i}.png" for k, i in enumerate(worst, start=1)]
    assert _artifact(client, logged.run_id, f"bertscore/worst/{names[0]}", tmp_path).startswith(PNG)


def test_mlflow_comparison_reads_back_per_system(mlflow_store, comparison, dataset, plain_scorer, tmp_path):
    _, client, _ = mlflow_store
    sig = compare.significance(comparison)
    logged = log_to_mlflow(comparison, dataset=dataset, scorer=plain_scorer, worst=1, significance=sig)
    run = client.get_run(logged.run_id)
    for name, key in (("sys/A", "sys_A"), ("sys:B", "sys_B")):
        alone = score(SYSTEMS[name], REFS)  # each system scored on its own
        for metric, value in zip(("P", "R", "F1"), alone.mean()):
            assert abs(run.data.metrics[f"bertscore/{key}/{metric}"] - value) < TOL
        iv = sig.interval(name)
        assert abs(run.data.metrics[f"bertscore/{key}/F1_ci_low"] - iv.low) < TOL
        assert abs(run.data.metrics[f"bertscore/{key}/F1_ci_high"] - iv.high) < TOL
        assert run.data.metrics[f"bertscore/{key}/rank"] == sig.systems.index(name) + 1
    assert run.data.params["bertscore.best"] == sig.systems[0]
    assert run.data.params["bertscore.signature"] == comparison.signature == run.data.tags["bertscore.signature"]

    rows = _csv_rows(_artifact(client, logged.run_id, "bertscore/systems.csv", tmp_path))
    expected = tables.system_table(comparison, sig)
    assert [r["System"] for r in rows] == list(expected["System"])
    np.testing.assert_allclose([float(r["F1"]) for r in rows], expected["F1"], atol=TOL)
    np.testing.assert_allclose([float(r["F1 CI low"]) for r in rows], expected["F1 CI low"], atol=TOL)
    seg = _csv_rows(_artifact(client, logged.run_id, "bertscore/segments.csv", tmp_path))
    np.testing.assert_allclose([float(r["F1 · sys/A"]) for r in seg], score(SYSTEMS["sys/A"], REFS).f1, atol=TOL)
    assert [r["Output · sys:B"] for r in seg] == SYSTEMS["sys:B"]
    for key in ("sys_A", "sys_B"):
        pngs = client.list_artifacts(logged.run_id, f"bertscore/worst/{key}")
        assert len(pngs) == 1 and pngs[0].path.endswith(".png")


def test_mlflow_logs_into_the_active_run_and_leaves_it_open(mlflow_store, result, tmp_path):
    mlflow, client, _ = mlflow_store
    with mlflow.start_run() as run:
        logged = log_to_mlflow(result)  # no texts, no scorer: no heatmaps, a note says why
        assert logged.notes and logged.run_id == run.info.run_id and mlflow.active_run() is not None
        with pytest.raises(InputError, match="active"):
            log_to_mlflow(result, run_name="other", worst=0)
    data = client.get_run(run.info.run_id).data
    assert abs(data.metrics["bertscore/F1"] - result.mean()[2]) < TOL
    rows = _csv_rows(_artifact(client, run.info.run_id, "bertscore/segments.csv", tmp_path))
    assert list(rows[0]) == ["segment", "P", "R", "F1", "signature"]  # no texts given: the scores only
    assert "need the texts" in _artifact(client, run.info.run_id, "bertscore/notes.txt", tmp_path).decode()


def test_log_run_goes_to_the_named_tracker(mlflow_store, result):
    _, client, _ = mlflow_store
    logged = log_run("mlflow", result=result, worst=0, run_name="via-log-run")
    assert logged.tracker == "mlflow" and client.get_run(logged.run_id).info.run_name == "via-log-run"
    with pytest.raises(InputError, match="Unknown tracker"):
        log_run("neptune", result=result)
    with pytest.raises(InputError, match="one thing"):
        log_run("mlflow")


# --- W&B, offline ---------------------------------------------------------------------------------------------------
def _wandb_records(path: Path) -> list:
    """Every record of a ``.wandb`` file: W&B's LevelDB-log layout (a 7-byte header ``:W&B`` + magic + version, then
    32 KiB blocks of chunks, each with a 7-byte header: CRC, length, type FULL/FIRST/MIDDLE/LAST)."""
    from wandb.proto import wandb_internal_pb2

    data = path.read_bytes()
    assert data[:4] == b":W&B"
    block, pos, pending, out = 32768, 7, b"", []
    while pos + 7 <= len(data):
        if block - pos % block < 7:  # a block's tail too short for a header is padding
            pos += block - pos % block
            continue
        _, length, kind = struct.unpack("<IHB", data[pos:pos + 7])
        chunk, pos = data[pos + 7:pos + 7 + length], pos + 7 + length
        if kind in (1, 2):
            pending = chunk
        elif kind in (3, 4):
            pending += chunk
        if kind in (1, 4):
            record = wandb_internal_pb2.Record()
            record.ParseFromString(pending)
            out.append(record)
    return out


def _wandb_run(wandb, folder: Path, run_id: str) -> tuple[dict, dict, Path]:
    """``(summary, config, files folder)`` of the offline run ``run_id`` under ``folder``, read from its records
    once W&B's service has stopped (it writes the file on its own after ``finish()`` returns)."""
    wandb.teardown()
    (run_dir,) = (folder / "wandb").glob(f"offline-run-*-{run_id}")
    summary: dict = {}
    config: dict = {}
    records = _wandb_records(run_dir / f"run-{run_id}.wandb")
    assert records[-1].WhichOneof("record_type") == "exit"  # the whole run
    for record in records:
        kind = record.WhichOneof("record_type")
        if kind == "summary":
            for item in record.summary.update:
                summary["/".join(item.nested_key) if item.nested_key else item.key] = json.loads(item.value_json)
        elif kind in ("run", "config"):
            updates = record.run.config.update if kind == "run" else record.config.update
            config.update({item.key: json.loads(item.value_json) for item in updates})
    return summary, config, run_dir / "files"


@pytest.fixture()
def wandb_offline(tmp_path, monkeypatch):
    import wandb
    for name, value in (("WANDB_MODE", "offline"), ("WANDB_SILENT", "true"), ("WANDB_DIR", str(tmp_path)),
                        ("WANDB_CONFIG_DIR", str(tmp_path / "config")), ("WANDB_CACHE_DIR", str(tmp_path / "cache")),
                        ("WANDB_DATA_DIR", str(tmp_path / "data")), ("WANDB_PROJECT", "bertscore-test"),
                        ("WANDB_DISABLE_GIT", "true"), ("WANDB_DISABLE_CODE", "true"),
                        ("WANDB_CONSOLE", "off"), ("WANDB_INIT_TIMEOUT", "60")):
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    wandb.teardown()  # W&B reads its settings once per process: from these, and its service stops after the test
    yield wandb, tmp_path
    if wandb.run is not None:
        wandb.finish()
    wandb.teardown()


def test_wandb_score_result_reads_back_from_the_offline_run(wandb_offline, result, scorer):
    wandb, folder = wandb_offline
    logged = log_to_wandb(result, candidates=CANDIDATES, references=REFERENCES, scorer=scorer, worst=2,
                          run_name="score")
    assert logged.tracker == "wandb" and wandb.run is None
    summary, config, files = _wandb_run(wandb, folder, logged.run_id)
    engine = score(CANDIDATES, REFERENCES, idf=True)
    for key, value in zip(("bertscore/P", "bertscore/R", "bertscore/F1"), engine.mean()):
        assert abs(summary[key] - value) < TOL
    assert config["bertscore.signature"] == str(engine.signature) and config["bertscore.model"] == "all-MiniLM-L6-v2"

    rows = _csv_rows((files / "bertscore" / "segments.csv").read_bytes())
    assert rows[0]["candidate"] == "'" + CANDIDATES[0]
    np.testing.assert_allclose([float(r["F1"]) for r in rows], engine.f1, atol=TOL)
    table = json.loads((files / summary["bertscore/segments/path"]).read_text())
    assert table["columns"] == ["segment", "candidate", "reference", "P", "R", "F1"]
    np.testing.assert_allclose([row[5] for row in table["data"]], engine.f1, atol=TOL)
    worst = np.argsort(engine.f1)[:2] + 1
    for k, i in enumerate(worst, start=1):
        image = files / summary[f"bertscore/worst/{k:02d}_segment_{i}/path"]
        assert image.read_bytes().startswith(PNG)


def test_wandb_comparison_and_the_active_run(wandb_offline, comparison, dataset, plain_scorer):
    wandb, folder = wandb_offline
    run = wandb.init(name="mine")
    logged = log_to_wandb(comparison, dataset=dataset, scorer=plain_scorer, worst=1)
    assert logged.run_id == run.id and wandb.run is run  # the user's run stays open
    with pytest.raises(InputError, match="active"):
        log_to_wandb(comparison, project="other", worst=0)
    run.finish()
    summary, config, files = _wandb_run(wandb, folder, run.id)
    means = comparison.means("F1")
    assert abs(summary["bertscore/sys_A/F1"] - score(SYSTEMS["sys/A"], REFS).mean()[2]) < TOL
    assert abs(summary["bertscore/sys_B/F1"] - means["sys:B"]) < TOL
    assert config["bertscore.systems"] == "2"
    rows = _csv_rows((files / "bertscore" / "systems.csv").read_bytes())
    assert [r["System"] for r in rows] == list(comparison.results)
    assert (files / summary["bertscore/systems/path"]).is_file()
    assert sum(1 for key in summary if key.startswith("bertscore/worst/") and key.endswith("/path")) == 2


# --- what is logged, and refusals ----------------------------------------------------------------------------------
def test_keys_are_safe_and_distinct(comparison):
    assert metric_key("a/b:c#d") == "a_b_c_d" and metric_key("..") == "_" and metric_key("ONLINE-A.en") == "ONLINE-A.en"
    twins = compare.Comparison({"a/b": comparison.results["sys/A"], "a:b": comparison.results["sys:B"]},
                               comparison.layer, comparison.idf, comparison.rescaled)
    content = build_content(twins, worst=0)
    assert {k.split("/")[1] for k in content.metrics} == {"a_b", "a_b_2"}


def test_bad_input_is_said(result, scorer, comparison, dataset):
    with pytest.raises(InputError, match="4 scores but 3 candidates"):
        build_content(result, candidates=CANDIDATES[:3], references=REFERENCES[:3])
    with pytest.raises(InputError, match="both candidates= and references="):
        build_content(result, candidates=CANDIDATES)
    with pytest.raises(InputError, match="worst="):
        build_content(result, worst=-1)
    with pytest.raises(InputError, match="signature"):  # heatmaps of another layer would show other numbers
        build_content(result, candidates=CANDIDATES, references=REFERENCES, scorer=scorer.replace(layer=2), worst=1)
    with pytest.raises(InputError, match="dataset="):
        build_content(comparison, dataset=Dataset({"x": ["a"]}, [["b"]], None, ["1"], [1]), worst=0)
    with pytest.raises(InputError, match="ScoreResult"):
        build_content({"f1": [0.5]})


def test_a_missing_framework_names_the_package():
    """With mlflow and wandb blocked, the package still imports and each writer says what to install."""
    code = (
        "import sys\n"
        "sys.modules['mlflow'] = None\n"
        "sys.modules['wandb'] = None\n"
        "import numpy as np\n"
        "from bertscore_viz.engine.results import ScoreResult, Signature\n"
        "from bertscore_viz.integrations import MissingIntegrationError\n"
        "from bertscore_viz.integrations.trackers import log_to_mlflow, log_to_wandb\n"
        "a = np.array([0.5])\n"
        "res = ScoreResult(a, a, a, a, a, a, Signature('m', 1, False))\n"
        "for log, name in ((log_to_mlflow, 'mlflow'), (log_to_wandb, 'wandb')):\n"
        "    try:\n"
        "        log(res, worst=0)\n"
        "    except MissingIntegrationError as exc:\n"
        "        print(name, exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT,
                         env=os.environ | {"OMP_NUM_THREADS": "1"})
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("mlflow log_to_mlflow() needs the mlflow package") and "pip install mlflow" in lines[0]
    assert lines[1].startswith("wandb log_to_wandb() needs the wandb package") and "pip install wandb" in lines[1]


def test_the_core_install_has_neither_framework():
    import tomllib  # Python 3.11+ (the tests' Python), as test_packaging.py reads pyproject.toml

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = " ".join(project["dependencies"]).lower()
    assert "mlflow" not in core and "wandb" not in core


def test_a_constructed_result_without_texts_logs_its_scores():
    a = np.array([0.25, np.nan])
    res = ScoreResult(a, a, a, a, a, a, Signature("m", 1, False))
    content = build_content(res, worst=3)
    assert np.isnan(content.metrics["bertscore/F1"])  # as ScoreResult.mean() gives it
    frame = pd.read_csv(io.BytesIO(content.csv("segments")), encoding="utf-8-sig")
    assert frame["F1"].isna().tolist() == [False, True] and not content.figures and content.notes


# --- the command line: --log-to ---------------------------------------------------------------------------------------
def _cli(argv: list[str]) -> tuple[int, str, str]:
    import contextlib

    from bertscore_viz.cli.entry import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def _run_id(err: str, tracker: str) -> str:
    line = next(x for x in err.splitlines() if x.startswith(f"Logged to {tracker}: run "))
    return line.rsplit(" ", 1)[1]


def test_score_log_to_mlflow_keeps_json_on_stdout(mlflow_store, tmp_path):
    mlflow, client, _ = mlflow_store
    cands, refs = tmp_path / "c.txt", tmp_path / "r.txt"
    cands.write_text("\n".join(CANDIDATES[2:]) + "\n", encoding="utf-8")
    refs.write_text("Consumers prefer imported cars.\nToday the weather is lovely.\n", encoding="utf-8")
    code, out, err = _cli(["score", "-c", str(cands), "-r", str(refs), "--log-to", "mlflow", "--json"])
    assert code == 0, err
    printed = json.loads(out)  # the log's lines went to stderr
    run = client.get_run(_run_id(err, "mlflow"))
    engine = score(CANDIDATES[2:], ["Consumers prefer imported cars.", "Today the weather is lovely."])
    assert abs(run.data.metrics["bertscore/F1"] - engine.mean()[2]) < TOL
    assert abs(run.data.metrics["bertscore/F1"] - float(np.mean(printed["f1"]))) < TOL
    assert run.data.params["bertscore.signature"] == printed["signature"]


def test_compare_log_to_wandb_logs_each_system(wandb_offline, tmp_path):
    wandb, folder = wandb_offline
    paths = {}
    for name, lines in (("refs", [r[0] for r in REFS]), ("good", SYSTEMS["sys/A"]), ("bad", SYSTEMS["sys:B"])):
        paths[name] = tmp_path / f"{name}.txt"
        paths[name].write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out, err = _cli(["compare", "-r", str(paths["refs"]), "-s", str(paths["good"]), str(paths["bad"]), "-q",
                           "--json", "--no-segments", "--log-to", "wandb"])
    assert code == 0, err
    printed = {r["system"]: r for r in json.loads(out)["systems"]}
    summary, config, _ = _wandb_run(wandb, folder, _run_id(err, "wandb"))
    for name in ("good", "bad"):
        assert abs(summary[f"bertscore/{name}/F1"] - printed[name]["f1"]) < TOL
        assert abs(summary[f"bertscore/{name}/F1"] - score(SYSTEMS["sys/A" if name == "good" else "sys:B"],
                                                          [r[0] for r in REFS]).mean()[2]) < TOL
