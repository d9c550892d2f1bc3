"""Deployment settings: reading them, the model allow-list, the model pool, the job queue, saved baselines, and
atomic output files."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from bertscore_viz import deploy, fileio
from bertscore_viz.baseline import BaselineTable, read_baseline
from bertscore_viz.deploy import DeployConfigError, JobQueue, ModelNotAllowed, ModelPool, Policy, load_policy
from bertscore_viz.models import BUNDLED_MODEL_NAME, bundled_model_path


# --- reading the settings -----------------------------------------------------------------------------------------
def test_defaults_without_environment_or_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    pol = load_policy({})
    assert pol == Policy()
    assert pol.models == () and not pol.allow_custom_models and not pol.allow_downloads
    assert (pol.max_models, pol.max_jobs, pol.upload_rows, pol.baseline_dir) == (2, 2, 200_000, "")
    assert pol.upload_bytes == 50 * 2**20


def test_environment_overrides_the_config_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".streamlit").mkdir()
    (tmp_path / ".streamlit" / "secrets.toml").write_text(
        '[bertscore_viz]\nmodels = ["all-MiniLM-L6-v2", "mine=/srv/models/mine"]\nmax_jobs = 3\n'
        'allow_custom_models = true\nbaseline_dir = "/srv/baselines"\n')
    pol = load_policy({})
    assert pol.models == ("all-MiniLM-L6-v2", "mine=/srv/models/mine")
    assert pol.max_jobs == 3 and pol.allow_custom_models and pol.baseline_dir == "/srv/baselines"
    pol = load_policy({"BERTSCORE_VIZ_MAX_JOBS": "1", "BERTSCORE_VIZ_ALLOW_CUSTOM_MODELS": "no",
                       "BERTSCORE_VIZ_MODELS": "minilm, roberta-large", "BERTSCORE_VIZ_UPLOAD_MB": "5"})
    assert pol.max_jobs == 1 and not pol.allow_custom_models and pol.models == ("minilm", "roberta-large")
    assert pol.upload_bytes == 5 * 2**20 and pol.baseline_dir == "/srv/baselines"


@pytest.mark.parametrize("env, words", [
    ({"BERTSCORE_VIZ_MAX_JOBS": "0"}, "BERTSCORE_VIZ_MAX_JOBS must be at least 1"),
    ({"BERTSCORE_VIZ_MAX_MODELS": "two"}, "BERTSCORE_VIZ_MAX_MODELS must be a whole number"),
    ({"BERTSCORE_VIZ_ALLOW_DOWNLOADS": "maybe"}, "must be 1/0, true/false"),
    ({"BERTSCORE_VIZ_CONFIG": "/nonexistent/bsv.toml"}, "does not exist"),
])
def test_bad_settings_name_the_setting(env, words, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(DeployConfigError, match=words):
        load_policy(env)


def test_unknown_or_malformed_config_file(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text("[bertscore_viz]\nmax_job = 3\n")
    with pytest.raises(DeployConfigError, match=r"Unknown setting\(s\) \['max_job'\]"):
        load_policy({"BERTSCORE_VIZ_CONFIG": str(cfg)})
    cfg.write_text("[bertscore_viz\n")
    with pytest.raises(DeployConfigError, match="not valid TOML"):
        load_policy({"BERTSCORE_VIZ_CONFIG": str(cfg)})


# --- the model allow-list -----------------------------------------------------------------------------------------
def test_installed_catalog_models_are_offered_by_default_and_only_when_installed(tmp_path, monkeypatch):
    from bertscore_viz import catalog

    monkeypatch.setenv("BERTSCORE_VIZ_HOME", str(tmp_path))
    assert "all-mpnet-base-v2" not in deploy.offered_models(Policy())
    target = tmp_path / "all-mpnet-base-v2"
    target.mkdir()
    (target / "config.json").write_text("{}")
    assert "all-mpnet-base-v2" not in deploy.offered_models(Policy())  # no install marker: half-finished
    (target / catalog.INSTALLED_MARKER).write_text("{}")
    offered = deploy.offered_models(Policy())
    assert "all-mpnet-base-v2" in offered and BUNDLED_MODEL_NAME in offered
    # an operator's explicit list wins over what is installed
    assert "all-mpnet-base-v2" not in deploy.offered_models(Policy(models=(BUNDLED_MODEL_NAME,)))


@pytest.mark.parametrize("typed", [None, "", "minilm", "all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"])
def test_the_bundled_model_is_always_offered(typed):
    spec = deploy.check_model(typed, Policy())
    assert spec.bundled and spec.name == BUNDLED_MODEL_NAME


@pytest.mark.parametrize("typed", ["/etc", "../../", "~/.ssh", "roberta-large", "baselines/en",
                                   str(bundled_model_path()), "x" * 500])
def test_anything_else_is_refused_without_naming_a_server_path(typed):
    with pytest.raises(ModelNotAllowed) as info:
        deploy.check_model(typed, Policy())
    msg = str(info.value)
    assert "not offered on this server" in msg and f"Choose one of: {BUNDLED_MODEL_NAME}" in msg
    assert str(bundled_model_path().parent) not in msg.replace(typed, "")  # only what the user typed is echoed
    assert len(msg) < 400 and "Traceback" not in msg


def test_an_operator_list_with_a_label_for_a_directory():
    path = str(bundled_model_path())
    pol = Policy(models=("mini=" + path, "roberta-large"))
    assert list(deploy.offered_models(pol)) == ["mini", "roberta-large"]
    spec = deploy.check_model("mini", pol)
    assert spec.source == path and spec.bundled  # the bundled weights, under the operator's label
    with pytest.raises(ModelNotAllowed, match="Choose one of: mini, roberta-large"):
        deploy.check_model(path, pol)  # the path itself is not on the list
    with pytest.raises(ModelNotAllowed):
        deploy.check_model(BUNDLED_MODEL_NAME, pol)  # an explicit list replaces the default


def test_free_text_when_allowed_and_hub_names_need_downloads_or_the_cache(tmp_path):
    pol = Policy(allow_custom_models=True)
    spec = deploy.check_model(str(bundled_model_path()), pol)
    assert spec.local
    with pytest.raises(ModelNotAllowed, match="not on this server, and downloads are turned off"):
        deploy.check_model("someone/not-a-cached-model-xyz", pol)
    assert deploy.check_model("someone/not-a-cached-model-xyz", Policy(allow_custom_models=True,
                                                                        allow_downloads=True)).name \
        == "someone/not-a-cached-model-xyz"  # resolved only; loading would download


# --- the model pool -----------------------------------------------------------------------------------------------
def test_pool_keeps_at_most_max_models_and_drops_the_least_recently_used():
    dropped, loads = [], []
    pool = ModelPool(2, on_evict=dropped.append)

    def loader(name):
        return lambda: loads.append(name) or f"model {name}"

    assert pool.get("a", loader("a")) == "model a"
    pool.get("b", loader("b"))
    pool.get("a", loader("a"))  # a is now the most recently used
    pool.get("c", loader("c"))
    assert pool.keys() == ["a", "c"] and dropped == ["model b"] and loads == ["a", "b", "c"]
    pool.get("b", loader("b"))
    assert pool.keys() == ["c", "b"] and dropped == ["model b", "model a"] and pool.evictions == 2


def test_pool_with_real_encoders_releases_the_dropped_one(tmp_path):
    from bertscore_viz.encoder import get_encoder, loaded_encoders, release_encoder

    copy = tmp_path / "mini"  # the bundled weights under another directory: another model to the registry
    copy.mkdir()
    for f in bundled_model_path().iterdir():
        (copy / f.name).symlink_to(f)
    pol = Policy(models=("mini=" + str(copy), "mini2=" + str(copy)))
    one, two = deploy.check_model("mini", pol), deploy.check_model("mini2", pol)
    assert (one.name, two.name) == ("mini", "mini2") and not one.bundled
    pool = ModelPool(1, on_evict=release_encoder)
    first = pool.get(one.name, lambda: get_encoder(one))
    assert first in loaded_encoders()
    second = pool.get(two.name, lambda: get_encoder(two))
    assert first is not second and pool.keys() == ["mini2"]
    assert first not in loaded_encoders() and second in loaded_encoders()
    release_encoder(second)


# --- the job queue ------------------------------------------------------------------------------------------------
def test_queue_runs_at_most_max_jobs_in_arrival_order_and_says_how_many_are_ahead():
    queue = JobQueue(1, poll=0.02)
    order, seen = [], {}
    gate = threading.Event()

    def job(name, hold):
        def waiting(n):
            seen.setdefault(name, []).append(n)
        with queue.slot(waiting):
            order.append(name)
            if hold:
                gate.wait(10)

    first = threading.Thread(target=job, args=("first", True))
    first.start()
    while queue.running == 0:
        time.sleep(0.01)
    threads = []
    for name in ("second", "third"):
        t = threading.Thread(target=job, args=(name, False))
        t.start()
        threads.append(t)
        while queue.waiting < len(threads):
            time.sleep(0.01)
    time.sleep(0.1)
    assert queue.running == 1 and queue.waiting == 2
    assert seen["second"][-1] == 1 and seen["third"][-1] == 2  # the running job counts as ahead
    gate.set()
    for t in [first] + threads:
        t.join(10)
    assert order == ["first", "second", "third"] and queue.max_running == 1 and queue.running == 0


def test_queue_allows_nested_slots_and_drops_a_waiter_that_gives_up():
    queue = JobQueue(1, poll=0.02)
    with queue.slot():
        with queue.slot():  # the same job again (e.g. score -> match): no deadlock
            assert queue.running == 1
        errors = []

        def impatient():
            def leave(n):
                raise KeyboardInterrupt  # e.g. the user left the page while waiting

            try:
                with queue.slot(leave):
                    errors.append("ran")
            except KeyboardInterrupt:
                errors.append("left")

        t = threading.Thread(target=impatient)
        t.start()
        t.join(5)
        assert errors == ["left"] and queue.waiting == 0
    assert queue.running == 0
    with queue.slot():
        assert queue.running == 1


# --- baselines kept for later sessions ----------------------------------------------------------------------------
def test_saved_baselines_round_trip_under_safe_names(tmp_path):
    table = BaselineTable(np.array([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]]), "computed")
    assert deploy.saved_baseline(tmp_path, "en", "org/model") is None
    path = deploy.save_baseline(tmp_path, "en", "org/model", table, '{"pairs": 5}')
    assert path == tmp_path / "en" / "org__model.tsv"
    assert path.with_suffix(".provenance.json").read_text() == '{"pairs": 5}'
    got = deploy.saved_baseline(tmp_path, "en", "org/model")
    np.testing.assert_array_equal(got.values, table.values)
    assert got.source.startswith("saved on this server")
    evil = deploy.saved_baseline_path(tmp_path, "../..", "../../etc/passwd")
    assert evil.resolve().is_relative_to(tmp_path.resolve())
    (tmp_path / "en" / "broken.tsv").write_text("nonsense")
    assert deploy.saved_baseline(tmp_path, "en", "broken") is None  # ignored (and logged), not a crash


# --- atomic files -------------------------------------------------------------------------------------------------
def test_an_interrupted_write_leaves_the_old_file_and_no_temporary(tmp_path):
    out = tmp_path / "out.tsv"
    fileio.atomic_write_text(out, "old\n")

    def half_then_interrupt(fh):
        fh.write(b"LAYER,P,R,F\n0,0.1")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        fileio.atomic_write(out, half_then_interrupt)
    assert out.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.tsv"]
    fileio.atomic_write_text(out, "LAYER,P,R,F\n0,0.1,0.2,0.3\n")
    assert read_baseline(out).values.tolist() == [[0.1, 0.2, 0.3]]
    with pytest.raises(RuntimeError):
        fileio.atomic_write_via(tmp_path / "fig.png", lambda name: (open(name, "wb").write(b"x"),
                                                                     (_ for _ in ()).throw(RuntimeError())))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.tsv"]
