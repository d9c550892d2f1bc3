"""Ray is optional: the engine, the CLI, the results-file reader, the app and its pages import and run without it,
and asking for --ray without Ray installed is a message saying how to install it, before anything is written.

Also here, without a cluster (a real one cannot run in a unit test, so a fake ``ray`` module stands in): which
address ``connect`` hands to ``ray.init``, how ``plan_resources`` lays out the actor pool on a cluster's resources,
and what Ctrl-C says for each command.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from bertscore_viz.distributed import jobs as distributed
from bertscore_viz.distributed import pool
from bertscore_viz.errors import InputError
from bertscore_viz.files import upload

ROOT = Path(__file__).resolve().parents[2]

BLOCK_RAY = textwrap.dedent(
    """
    import importlib.abc, sys

    class BlockRay(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "ray" or name.startswith("ray."):
                raise ImportError("ray is blocked in this test")
            return None

    sys.meta_path.insert(0, BlockRay())
    """
)

SCRIPT = BLOCK_RAY + textwrap.dedent(
    """
    import os
    import bertscore_viz.distributed.jobs as d, bertscore_viz.files.results.table, bertscore_viz.cli.entry as cli
    assert "ray" not in sys.modules
    cli.build_parser().parse_args(["score", "--ray", "--input", "x.csv", "--output", "out"])
    open("in.csv", "w").write("reference,sys\\nThe cat sat.,A cat sat.\\n")
    code = cli.main(["score", "--ray", "--input", "in.csv", "--output", "out"])
    print("EXIT", code, "OUT", os.path.exists("out"))
    code = cli.main(["baseline", "--corpus", "in.csv", "--ray", "-o", "base.tsv"])
    print("BASELINE", code, os.path.exists("base.tsv"))
    """
)


def _run(script: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=cwd, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_engine_and_cli_import_without_ray_and_explain_how_to_install_it(tmp_path):
    proc = _run(SCRIPT, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "EXIT 2 OUT False" in proc.stdout  # refused before _job.json / problems.json were written
    assert "BASELINE 2 False" in proc.stdout
    assert "requirements-ray.txt" in proc.stderr and "Traceback" not in proc.stderr


def _results_parquet(path: Path) -> Path:
    """A small results file written without Ray or a model (numbers made up): what `score --ray` writes."""
    import pyarrow.parquet as pq

    from bertscore_viz.engine.results import Signature
    from bertscore_viz.files.results import format as results_format

    ds = upload.parse_upload(b"segment_id,reference,sys_a,sys_b\n1,The cat sat.,A cat sat.,Cats.\n"
                             b"2,A dog ran.,The dog ran.,Dog.\n3,It rains.,It is raining.,Rain.\n", "x.csv")
    names = list(ds.systems)
    raw = np.array([[0.9, 0.8, 0.85], [0.5, 0.4, 0.45]] * 3, dtype=np.float64)
    meta = results_format.metadata(Signature("all-MiniLM-L6-v2", 4, False), None, names, ds.n_segments, {"job": "x"})
    table = distributed._block_table(ds, names, 0, ds.n_segments, raw, np.zeros(6, dtype=np.int64), [""] * 6, None,
                                     False, meta)
    pq.write_table(table, path)
    return path


@pytest.mark.slow
def test_app_and_pages_run_without_ray(tmp_path):
    """The app, every page, and the Compare page reading a results file: no exception, Ray never imported."""
    scores = _results_parquet(tmp_path / "scores.parquet")
    script = BLOCK_RAY + textwrap.dedent(
        f"""
        from pathlib import Path
        from streamlit.testing.v1 import AppTest
        root = Path({str(ROOT)!r})
        at = AppTest.from_file(str(root / "app.py"), default_timeout=300)
        at.run()
        assert not at.exception, at.exception
        for page in ("inspect.py", "baselines.py", "compare.py"):
            at.switch_page(str(root / "bertscore_viz" / "app" / "app_pages" / page.removesuffix(".py") / "page.py"))
            if page == "compare.py":
                at.session_state["compare_input"] = {{"name": "scores.parquet",
                                                     "data": Path({str(scores)!r}).read_bytes()}}
            at.run()
            assert not at.exception, (page, at.exception)
        texts = "\\n".join(str(e.value) for e in at.info)
        assert "Precomputed scores (3 segments x 2 systems)" in texts, texts
        assert "ray" not in sys.modules
        print("PAGES OK")
        """
    )
    proc = _run(script, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "PAGES OK" in proc.stdout


# --- connect: which address reaches ray.init ------------------------------------------------------------------
class FakeRay:
    """Stands in for the ``ray`` module: records ``init``'s arguments; ``fail`` makes it raise."""

    def __init__(self, fail: BaseException | None = None, resources: dict | None = None, nodes: list | None = None):
        self.calls: list[dict] = []
        self.fail = fail
        self.initialized = False
        self.resources = resources or {}
        self._nodes = nodes

    def is_initialized(self) -> bool:
        return self.initialized

    def init(self, **kwargs):
        self.calls.append(kwargs)
        if self.fail is not None:
            raise self.fail
        self.initialized = True

    def cluster_resources(self) -> dict:
        return dict(self.resources)

    def nodes(self) -> list:
        if self._nodes is not None:
            return self._nodes
        return [{"Alive": True, "Resources": dict(self.resources)}]


@pytest.fixture
def fake_ray(monkeypatch):
    def make(**kwargs) -> FakeRay:
        fake = FakeRay(**kwargs)
        monkeypatch.setattr(pool, "import_ray", lambda: fake)
        return fake

    return make


@pytest.mark.parametrize("address", [None, "", "local"])
def test_no_address_starts_a_new_local_instance_not_a_running_cluster(fake_ray, monkeypatch, address):
    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.9:6379")  # what a bare ray.init() would join
    fake = fake_ray()
    assert distributed.connect(address, num_cpus=3) is fake
    (call,) = fake.calls
    assert call["address"] == "local" and call["num_cpus"] == 3 and call["include_dashboard"] is False


@pytest.mark.parametrize("address", ["auto", "ray://head.example:10001", "10.0.0.9:6379"])
def test_cluster_addresses_are_passed_on(fake_ray, address):
    fake = fake_ray()
    distributed.connect(address)
    (call,) = fake.calls
    assert call["address"] == address and "num_cpus" not in call


def test_an_existing_session_is_reused(fake_ray):
    fake = fake_ray()
    fake.initialized = True
    distributed.connect("auto")
    assert fake.calls == []


def test_an_unreachable_cluster_is_a_message_with_the_address(fake_ray):
    fake_ray(fail=ConnectionError("Could not find any running Ray instance.\nmore detail"))
    with pytest.raises(InputError, match=r"ray://head:10001.*Could not find any running Ray instance"):
        distributed.connect("ray://head:10001")


def test_ray_client_without_its_extra_says_how_to_install_it(fake_ray):
    fake_ray(fail=ModuleNotFoundError("No module named 'grpc'"))
    with pytest.raises(pool.RayNotInstalled, match=r"Ray Client.*requirements-ray\.txt"):
        distributed.connect("ray://head:10001")


# --- plan_resources: a pool that can always be scheduled ------------------------------------------------------
def test_one_gpu_actor_per_gpu_with_num_gpus_1(fake_ray):
    fake = fake_ray(resources={"CPU": 16, "GPU": 2})
    res = distributed.plan_resources(fake)
    assert (res.workers, res.cpus, res.gpus, res.note) == (2, 1, 1, "")
    opts = res.actor_options()
    assert opts["num_gpus"] == 1 and opts["num_cpus"] == 1 and opts["max_restarts"] == -1


def test_more_workers_than_gpus_are_capped_with_a_note(fake_ray):
    fake = fake_ray(resources={"CPU": 16, "GPU": 2})
    res = distributed.plan_resources(fake, workers=5)
    assert (res.workers, res.gpus) == (2, 1)
    assert "5 workers asked for" in res.note and "2 GPU" in res.note


def test_cpu_device_on_a_gpu_cluster_gives_cpu_actors(fake_ray):
    fake = fake_ray(resources={"CPU": 8, "GPU": 2})
    res = distributed.plan_resources(fake, device="cpu")
    assert (res.workers, res.cpus, res.gpus) == (8, 1, 0)
    assert "num_gpus" not in res.actor_options()


def test_cpu_actors_fill_the_cpus(fake_ray):
    fake = fake_ray(resources={"CPU": 8})
    assert distributed.plan_resources(fake) == distributed.Resources(8, 1, 0)
    assert distributed.plan_resources(fake, workers=2) == distributed.Resources(2, 4, 0)
    assert distributed.plan_resources(fake, cpus_per_worker=3) == distributed.Resources(2, 3, 0)


def test_workers_times_cpus_beyond_the_cluster_are_capped_with_a_note(fake_ray):
    fake = fake_ray(resources={"CPU": 8})
    res = distributed.plan_resources(fake, workers=4, cpus_per_worker=4)
    assert (res.workers, res.cpus) == (2, 4)
    assert "do not fit" in res.note and "using 2" in res.note


def test_an_actor_must_fit_on_one_node(fake_ray):
    nodes = [{"Alive": True, "Resources": {"CPU": 4}}, {"Alive": True, "Resources": {"CPU": 4}},
             {"Alive": False, "Resources": {"CPU": 64}}]
    fake = fake_ray(resources={"CPU": 8}, nodes=nodes)
    res = distributed.plan_resources(fake, workers=3, cpus_per_worker=3)
    assert (res.workers, res.cpus) == (2, 3)  # one 3-CPU actor per 4-CPU node, not 8 // 3
    with pytest.raises(InputError, match="more than any node"):
        distributed.plan_resources(fake, cpus_per_worker=6)


def test_bad_pool_requests_are_refused(fake_ray):
    fake = fake_ray(resources={"CPU": 4})
    with pytest.raises(InputError, match="at least 1"):
        distributed.plan_resources(fake, workers=0)
    with pytest.raises(InputError, match="at least 1"):
        distributed.plan_resources(fake, cpus_per_worker=0)
    with pytest.raises(InputError, match="has none"):
        distributed.plan_resources(fake, device="cuda")


# --- Ctrl-C: the message is true for each command -------------------------------------------------------------
def test_ctrl_c_during_score_ray_says_the_finished_blocks_are_kept(monkeypatch, capsys):
    from bertscore_viz.cli.entry import main

    def interrupted(_args):
        raise KeyboardInterrupt

    from bertscore_viz.cli import ray as ray_cli

    monkeypatch.setattr(ray_cli, "run", interrupted)
    assert main(["score", "--ray", "--input", "x.csv", "--output", "results"]) == 130
    err = capsys.readouterr().err
    assert "kept in results/parts" in err and "run the same command again" in err
    assert "no output file was written" not in err


def test_ctrl_c_elsewhere_says_nothing_was_written(monkeypatch, capsys):
    from bertscore_viz.cli import baseline as baseline_cli
    from bertscore_viz.cli.entry import main

    def interrupted(_args):
        raise KeyboardInterrupt

    monkeypatch.setattr(baseline_cli, "run", interrupted)
    assert main(["baseline", "--corpus", "c.txt", "--ray", "-o", "b.tsv"]) == 130
    assert "no output file was written or changed" in capsys.readouterr().err
