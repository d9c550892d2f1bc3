"""Deployment settings: reading them, the model allow-list, the model pool, the job queue, saved baselines, and
atomic output files."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from bertscore_viz.engine.baseline import BaselineTable, read_baseline
from bertscore_viz.errors import ModelError
from bertscore_viz.files import fileio
from bertscore_viz.models.spec import BUNDLED_MODEL_NAME, bundled_model_path
from bertscore_viz.serving import baseline_store, job_queue, model_access
from bertscore_viz.serving.config import DeployConfigError, Policy, load_policy
from bertscore_viz.serving.job_queue import JobQueue
from bertscore_viz.serving.model_access import ModelNotAllowed
from bertscore_viz.serving.model_pool import ModelPool

ROOT = Path(__file__).resolve().parents[2]


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


def test_every_setting_is_read_from_the_environment_and_documented(tmp_path, monkeypatch):
    """Each setting: its variable changes the policy (a whole number or an amount, not the default), and both
    docs/DEPLOY.md (the operator's table) and, for the bounds on a request's work, docs/BOUNDARIES.md name it."""
    from bertscore_viz.serving.config import SETTINGS, setting_name

    monkeypatch.chdir(tmp_path)
    deploy = (ROOT / "docs" / "DEPLOY.md").read_text(encoding="utf-8")
    boundaries = (ROOT / "docs" / "BOUNDARIES.md").read_text(encoding="utf-8")
    for name, (kind, default) in SETTINGS.items():
        var = setting_name(name)
        assert f"`{var.removeprefix('BERTSCORE_VIZ_')}`" in deploy, f"{var} is not in docs/DEPLOY.md's table"
        if kind in (int, float) and name not in ("max_models", "max_jobs", "small_job", "kept_mb", "kept_hours",
                                                  "share_hours"):
            assert var.removeprefix("BERTSCORE_VIZ_") in boundaries, f"{var} is not in docs/BOUNDARIES.md"
            other = kind(default) + 1 if kind is int else float(default) / 2
            assert getattr(load_policy({var: str(other)}), name) == other != default


def test_sizes_may_be_fractions_of_a_megabyte_and_small_job_may_be_zero(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    pol = load_policy({"BERTSCORE_VIZ_UPLOAD_MB": "0.5", "BERTSCORE_VIZ_SESSION_UPLOAD_MB": "1.5",
                       "BERTSCORE_VIZ_SMALL_JOB": "0"})
    assert pol.upload_bytes == 2**19 and pol.session_upload_bytes == 3 * 2**19 and pol.small_job == 0


@pytest.mark.parametrize("env, words", [
    ({"BERTSCORE_VIZ_MAX_JOBS": "0"}, "BERTSCORE_VIZ_MAX_JOBS must be at least 1"),
    ({"BERTSCORE_VIZ_UPLOAD_MB": "0"}, "BERTSCORE_VIZ_UPLOAD_MB must be a positive number of MB"),
    ({"BERTSCORE_VIZ_SESSION_UPLOAD_MB": "-3"}, "must be a positive number of MB"),
    ({"BERTSCORE_VIZ_UPLOAD_MB": "nan"}, "must be a positive number of MB"),
    ({"BERTSCORE_VIZ_UPLOAD_MB": "inf"}, "must be a positive number of MB"),
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
    from bertscore_viz.models import catalog

    monkeypatch.setenv("BERTSCORE_VIZ_HOME", str(tmp_path))
    assert "all-mpnet-base-v2" not in model_access.offered_models(Policy())
    target = tmp_path / "all-mpnet-base-v2"
    target.mkdir()
    (target / "config.json").write_text("{}")
    assert "all-mpnet-base-v2" not in model_access.offered_models(Policy())  # no install marker: half-finished
    (target / catalog.INSTALLED_MARKER).write_text("{}")
    offered = model_access.offered_models(Policy())
    assert "all-mpnet-base-v2" in offered and BUNDLED_MODEL_NAME in offered
    # an operator's explicit list wins over what is installed
    assert "all-mpnet-base-v2" not in model_access.offered_models(Policy(models=(BUNDLED_MODEL_NAME,)))


@pytest.mark.parametrize("typed", [None, "", "minilm", "all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"])
def test_the_bundled_model_is_always_offered(typed):
    spec = model_access.check_model(typed, Policy())
    assert spec.bundled and spec.name == BUNDLED_MODEL_NAME


@pytest.mark.parametrize("typed", ["/etc", "../../", "~/.ssh", "roberta-large", "baselines/en",
                                   str(bundled_model_path()), "x" * 500])
def test_anything_else_is_refused_without_naming_a_server_path(typed):
    with pytest.raises(ModelNotAllowed) as info:
        model_access.check_model(typed, Policy())
    msg = str(info.value)
    assert "not offered on this server" in msg and f"Choose one of: {BUNDLED_MODEL_NAME}" in msg
    assert str(bundled_model_path().parent) not in msg.replace(typed, "")  # only what the user typed is echoed
    assert len(msg) < 400 and "Traceback" not in msg


def test_an_operator_list_with_a_label_for_a_directory():
    path = str(bundled_model_path())
    pol = Policy(models=("mini=" + path, "roberta-large"))
    assert list(model_access.offered_models(pol)) == ["mini", "roberta-large"]
    spec = model_access.check_model("mini", pol)
    assert spec.source == path and spec.bundled  # the bundled weights, under the operator's label
    with pytest.raises(ModelNotAllowed, match="Choose one of: mini, roberta-large"):
        model_access.check_model(path, pol)  # the path itself is not on the list
    with pytest.raises(ModelNotAllowed):
        model_access.check_model(BUNDLED_MODEL_NAME, pol)  # an explicit list replaces the default


def test_a_labelled_model_keeps_its_real_name_default_layer_and_baselines():
    """docs/DEPLOY.md's example ``mpnet=/path/all-mpnet-base-v2``: the label is what users pick; signatures,
    baseline files and the default layer follow the model (the catalog entry of the directory's name)."""
    from bertscore_viz import Scorer
    from bertscore_viz.engine.baseline import find_baseline
    from bertscore_viz.models import catalog

    installed = catalog.installed_path(catalog.get_entry("all-mpnet-base-v2"))
    assert installed is not None, "the offline catalog model all-mpnet-base-v2 is installed in this environment"
    pol = Policy(models=(f"mpnet={installed}", BUNDLED_MODEL_NAME))
    spec = model_access.check_model("mpnet", pol)
    assert (spec.name, spec.default_layer, spec.source) == ("all-mpnet-base-v2", 7, str(installed))
    np.testing.assert_array_equal(find_baseline(spec.name, "en").values,
                                  read_baseline(ROOT / "bertscore_viz" / "baselines" / "en"
                                                / "all-mpnet-base-v2.tsv").values)
    sc = Scorer(model=spec, rescale_with_baseline=True, lang="en")  # no model pass: the signature and baseline
    assert sc.layer == 7 and str(sc.signature).startswith("all-mpnet-base-v2_L7_no-idf_")
    assert str(sc.signature).endswith("-rescaled") and "mpnet_" not in str(sc.signature)


def test_a_directory_outside_the_catalog_is_named_after_itself(tmp_path):
    for name, layer in (("my-finetuned-bert", None), ("roberta-large", 17)):
        d = tmp_path / name
        d.mkdir()
        (d / "config.json").write_text("{}")
        spec = model_access.check_model("label", Policy(models=(f"label={d}",)))
        assert (spec.name, spec.default_layer, spec.local) == (name, layer, True)
    snapshot = tmp_path / "hub" / "models--someorg--some-model" / "snapshots" / ("a" * 40)
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}")
    assert model_access.check_model("x", Policy(models=(f"x={snapshot}",))).name == "someorg/some-model"


@pytest.mark.parametrize("target", ["/srv/nope/model", "multilingual-e5-small"])
def test_an_offered_model_that_cannot_be_used_names_only_its_label(target, tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("BERTSCORE_VIZ_HOME", str(tmp_path))  # nothing installed here
    pol = Policy(models=(f"broken={target}", BUNDLED_MODEL_NAME))
    with caplog.at_level(logging.ERROR, logger="bertscore_viz.app"), pytest.raises(ModelError) as info:
        model_access.check_model("broken", pol)
    msg = str(info.value)
    assert "'broken' cannot be used on this server" in msg and "the reason in its log" in msg
    assert "/srv" not in msg and str(tmp_path) not in msg and target not in msg
    assert target in caplog.text  # the reason is in the server's log


@pytest.mark.parametrize("typed, words", [
    ("~", "'~' is not expanded"),
    ("~/.ssh", "'~' is not expanded"),
    ("/srv/nope", "'/srv/nope' does not exist on this server"),
    ("./no/such/dir", "does not exist on this server"),
    ("multilingual-e5-small", "cannot be used on this server"),  # not installed: the engine names its path
])
def test_free_text_messages_echo_only_what_was_typed(typed, words, tmp_path, monkeypatch):
    monkeypatch.setenv("BERTSCORE_VIZ_HOME", str(tmp_path))
    with pytest.raises(ModelError) as info:
        model_access.check_model(typed, Policy(allow_custom_models=True))
    msg = str(info.value)
    assert words in msg
    for server_path in (str(Path.home()), str(tmp_path), str(ROOT)):
        assert server_path not in msg.replace(typed, "")


def test_a_typed_directory_without_a_model_is_named_as_typed(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelError) as info:
        model_access.check_model("empty", Policy(allow_custom_models=True))  # relative to the server's directory
    assert "The directory 'empty' holds no config.json" in str(info.value)
    assert str(tmp_path) not in str(info.value)


def test_free_text_when_allowed_and_hub_names_need_downloads_or_the_cache(tmp_path):
    pol = Policy(allow_custom_models=True)
    spec = model_access.check_model(str(bundled_model_path()), pol)
    assert spec.local
    with pytest.raises(ModelNotAllowed, match="not on this server, and downloads are turned off"):
        model_access.check_model("someone/not-a-cached-model-xyz", pol)
    spec = model_access.check_model("someone/not-a-cached-model-xyz", Policy(allow_custom_models=True,
                                                                       allow_downloads=True))
    assert spec.name == "someone/not-a-cached-model-xyz" and not spec.local  # resolved only; loading downloads


@pytest.fixture
def hub_cache(tmp_path, monkeypatch):
    """A Hugging Face cache holding ``someorg/tiny-minilm`` (the bundled weights), and no other model."""
    import huggingface_hub.constants

    repo = tmp_path / "hub" / "models--someorg--tiny-minilm"
    snapshot = repo / "snapshots" / ("0" * 40)
    snapshot.mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("0" * 40)
    for f in bundled_model_path().iterdir():
        if f.is_file():
            (snapshot / f.name).symlink_to(f)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    return "someorg/tiny-minilm"


def test_listed_hub_names_obey_downloads_off_and_load_from_the_cache_only(hub_cache, monkeypatch):
    import socket

    import huggingface_hub.constants

    from bertscore_viz.engine.encoder import get_encoder, release_encoder

    pol = Policy(models=(hub_cache, "big=someorg/not-cached-xyz"))
    with pytest.raises(ModelNotAllowed, match="'big' is not on this server, and downloads are turned off"):
        model_access.check_model("big", pol)  # listed by the operator, but not here and no downloads: refused
    assert model_access.check_model("big", Policy(models=pol.models, allow_downloads=True)).source == \
        "someorg/not-cached-xyz"
    spec = model_access.check_model(hub_cache, pol)
    assert (spec.name, spec.source, spec.local) == (hub_cache, hub_cache, True)  # local: local_files_only
    assert not model_access.check_model(hub_cache, Policy(models=pol.models, allow_downloads=True)).local
    # loads with the process not in offline mode and any connection refused: from the cache, no network
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)

    def no_network(*args, **kwargs):
        raise AssertionError("a connection was attempted")

    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket.socket, "connect", no_network)
    enc = get_encoder(spec)
    try:
        assert enc.num_layers == 6
    finally:
        release_encoder(enc)


# --- the model pool -----------------------------------------------------------------------------------------------
class Model:
    """A stand-in loaded model (weakly referable, as real encoders are)."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"Model({self.name})"


def test_pool_keeps_at_most_max_models_and_drops_the_least_recently_used():
    dropped, loads = [], []
    pool = ModelPool(2, on_evict=lambda m: dropped.append(m.name))

    def loader(name):
        return lambda: loads.append(name) or Model(name)

    assert pool.get("a", loader("a")).name == "a"
    pool.get("b", loader("b"))
    pool.get("a", loader("a"))  # a is now the most recently used
    pool.get("c", loader("c"))
    assert pool.keys() == ["a", "c"] and dropped == ["b"] and loads == ["a", "b", "c"]
    pool.get("b", loader("b"))
    assert pool.keys() == ["c", "b"] and dropped == ["b", "a"] and pool.evictions == 2


def test_pool_makes_room_before_it_loads():
    pool = ModelPool(2)
    pool.get("a", lambda: Model("a"))
    pool.get("b", lambda: Model("b"))
    held_while_loading = []
    pool.get("c", lambda: held_while_loading.append(pool.keys()) or Model("c"))
    assert held_while_loading == [["b"]] and pool.keys() == ["b", "c"]


class _CountingLock:
    """The pool's load lock, counting the requests that have asked for it (waiting or holding), so that a test's
    loader can wait, by condition and not by sleeping, until every request has reached it."""

    def __init__(self):
        self._lock = threading.Lock()
        self.changed = threading.Condition()
        self.asked = 0

    def __enter__(self):
        with self.changed:
            self.asked += 1
            self.changed.notify_all()
        self._lock.acquire()
        return self

    def __exit__(self, *exc):
        self._lock.release()
        return False

    def wait_for_asked(self, n: int, timeout: float = 10) -> bool:
        with self.changed:
            return self.changed.wait_for(lambda: self.asked >= n, timeout)


def test_pool_loads_a_model_once_however_many_ask_at_once():
    pool = ModelPool(2)
    pool._load_lock = counting = _CountingLock()
    loads, all_asked = [], []

    def load_while_all_wait():
        loads.append(1)
        all_asked.append(counting.wait_for_asked(6))  # the 5 others are at the load lock while this one loads
        return Model("a")

    got = []
    threads = [threading.Thread(target=lambda: got.append(pool.get("a", load_while_all_wait))) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    assert all_asked == [True]
    assert len(loads) == 1 and len(got) == 6 and all(g is got[0] for g in got)


def test_pool_loads_one_model_at_a_time():
    pool = ModelPool(3)
    pool._load_lock = counting = _CountingLock()
    active, most, all_asked = [0], [0], []
    lock = threading.Lock()

    def load(name):
        def run():
            with lock:
                active[0] += 1
                most[0] = max(most[0], active[0])
            all_asked.append(counting.wait_for_asked(3))  # the three loads have been asked for: they could overlap
            with lock:
                active[0] -= 1
            return Model(name)
        return run

    threads = [threading.Thread(target=pool.get, args=(k, load(k))) for k in "abc"]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    assert all_asked == [True, True, True]
    assert most[0] == 1 and sorted(pool.keys()) == ["a", "b", "c"]


def test_a_dropped_model_still_in_use_is_taken_back_not_loaded_twice():
    import gc

    pool = ModelPool(1)
    loads = []

    def loader(name):
        return lambda: loads.append(name) or Model(name)

    in_use = pool.get("a", loader("a"))  # a running job holds it
    pool.get("b", loader("b"))  # drops a from the pool; the job keeps it
    assert pool.keys() == ["b"]
    again = pool.get("a", loader("a"))
    assert again is in_use and loads == ["a", "b"] and pool.adopted == 1  # one copy of a, ever
    del in_use, again
    pool.get("b", loader("b"))  # a is dropped again, and now nobody uses it
    gc.collect()
    pool.get("a", loader("a"))
    assert loads == ["a", "b", "b", "a"]  # freed, so loaded anew


def test_pool_with_real_encoders_releases_the_dropped_one(tmp_path):
    from bertscore_viz.engine.encoder import get_encoder, loaded_encoders, release_encoder

    dirs = []
    for name in ("mini-a", "mini-b"):  # the bundled weights under two names: two models to the registry
        d = tmp_path / name
        d.mkdir()
        for f in bundled_model_path().iterdir():
            (d / f.name).symlink_to(f)
        dirs.append(d)
    pol = Policy(models=(f"one={dirs[0]}", f"two={dirs[1]}"))
    one, two = model_access.check_model("one", pol), model_access.check_model("two", pol)
    assert (one.name, two.name) == ("mini-a", "mini-b") and not one.bundled
    pool = ModelPool(1, on_evict=release_encoder)
    first = pool.get((one.name, one.source), lambda: get_encoder(one))
    assert first in loaded_encoders()
    second = pool.get((two.name, two.source), lambda: get_encoder(two))
    assert first is not second and pool.keys() == [("mini-b", str(dirs[1]))]
    assert first not in loaded_encoders() and second in loaded_encoders()
    release_encoder(second)


# --- the job queue ------------------------------------------------------------------------------------------------
def _wait_for(changed: threading.Condition, predicate, timeout: float = 10) -> None:
    """Wait until ``predicate()`` holds; the threads that change what it reads notify ``changed``."""
    with changed:
        assert changed.wait_for(predicate, timeout), "timed out waiting for the other threads"


def test_queue_runs_at_most_max_jobs_in_arrival_order_and_says_what_is_ahead():
    queue = JobQueue(1, poll=0.02)
    order, seen = [], {}
    gate, changed = threading.Event(), threading.Condition()

    def job(name, hold):
        def waiting(running, before):
            with changed:
                seen.setdefault(name, []).append((running, before))
                changed.notify_all()
        with queue.slot(waiting):
            with changed:
                order.append(name)
                changed.notify_all()
            if hold:
                gate.wait(10)

    first = threading.Thread(target=job, args=("first", True))
    first.start()
    _wait_for(changed, lambda: order == ["first"])
    threads = []
    for name in ("second", "third"):
        t = threading.Thread(target=job, args=(name, False))
        t.start()
        threads.append(t)
        _wait_for(changed, lambda name=name: name in seen)  # queued and told where it stands, before the next one comes
    assert queue.running == 1 and queue.waiting == 2
    assert seen["second"][-1] == (1, 0) and seen["third"][-1] == (1, 1)
    gate.set()
    for t in [first] + threads:
        t.join(10)
    assert order == ["first", "second", "third"] and queue.max_running == 1 and queue.running == 0


def test_with_two_slots_one_ending_job_is_enough_and_the_message_says_so():
    queue = JobQueue(2, poll=0.02)
    gates, entered = [threading.Event(), threading.Event()], [threading.Event(), threading.Event()]
    seen, started = [], []

    def long_job(k):
        with queue.slot():
            entered[k].set()
            gates[k].wait(10)

    runners = [threading.Thread(target=long_job, args=(k,)) for k in range(2)]
    for t in runners:
        t.start()
    assert all(e.wait(10) for e in entered) and queue.running == 2
    told = threading.Event()
    waiter = threading.Thread(target=lambda: queue.acquire(lambda r, b: seen.append((r, b)) or told.set())
                              or started.append(1) or queue.release())
    waiter.start()
    assert told.wait(10), "the waiting job was never told where it stands"
    assert seen[-1] == (2, 0)
    msg = job_queue.wait_message(*seen[-1], queue.max_jobs)
    assert "2 job(s) running, 0 waiting before yours" in msg and "when 1 more job ends" in msg
    gates[0].set()  # one of the two running jobs ends: the waiter starts while the other still runs
    waiter.join(10)
    assert started == [1] and queue.running == 1
    gates[1].set()
    for t in runners:
        t.join(10)
    assert "3 job(s) running, 2 waiting before yours" in job_queue.wait_message(3, 2, 2)
    assert "when 4 more jobs end" in job_queue.wait_message(3, 2, 2)


def test_a_job_that_fails_inside_its_slot_frees_it():
    queue = JobQueue(1, poll=0.02)
    with pytest.raises(RuntimeError, match="the job failed"), queue.slot():
        assert queue.running == 1
        raise RuntimeError("the job failed")
    assert queue.running == 0 and queue.waiting == 0
    done = []
    t = threading.Thread(target=lambda: queue.acquire() or done.append(1) or queue.release())
    t.start()
    t.join(5)
    assert done == [1]  # the next job got the slot at once


def test_queue_allows_nested_slots_and_drops_a_waiter_that_gives_up():
    queue = JobQueue(1, poll=0.02)
    with queue.slot():
        with queue.slot():  # the same job again (e.g. score -> match): no deadlock
            assert queue.running == 1
        errors = []

        def impatient():
            def leave(running, before):
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
TABLE = BaselineTable(np.array([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]]), "computed")


def test_saved_baselines_round_trip_under_safe_names(tmp_path):
    assert baseline_store.saved_baseline(tmp_path, "en", "org/model") is None
    path = baseline_store.save_baseline(tmp_path, "en", "org/model", TABLE, '{"pairs": 5}')
    assert path.parent == tmp_path / "en" and path.name.startswith("org__model~")
    assert path.with_suffix(".provenance.json").read_text() == '{"pairs": 5}'
    got = baseline_store.saved_baseline(tmp_path, "en", "org/model")
    np.testing.assert_array_equal(got.values, TABLE.values)
    assert got.source.startswith("saved on this server")
    assert baseline_store.saved_baseline_path(tmp_path, "en", "roberta-large") == tmp_path / "en" / "roberta-large.tsv"
    evil = baseline_store.saved_baseline_path(tmp_path, "../..", "../../etc/passwd")
    assert evil.resolve().is_relative_to(tmp_path.resolve())
    (tmp_path / "en" / "broken.tsv").write_text("nonsense")
    assert baseline_store.saved_baseline(tmp_path, "en", "broken") is None  # ignored (and logged), not a crash


@pytest.mark.parametrize("names", [("org/model", "org__model"), ("a b", "a_b"), ("x.y", ".x.y"), ("é", "_"),
                                   ("m" * 130, "m" * 131), ("A/B", "A__B~0")])
def test_saved_baseline_names_are_one_to_one(names, tmp_path):
    first, second = names
    path = baseline_store.saved_baseline_path
    assert path(tmp_path, "en", first) != path(tmp_path, "en", second)
    other = BaselineTable(TABLE.values + 0.1, "other")
    baseline_store.save_baseline(tmp_path, "en", first, TABLE)
    baseline_store.save_baseline(tmp_path, "en", second, other)
    np.testing.assert_array_equal(baseline_store.saved_baseline(tmp_path, "en", first).values, TABLE.values)
    np.testing.assert_array_equal(baseline_store.saved_baseline(tmp_path, "en", second).values, other.values)
    assert all(len(p.name) < 200 for p in (tmp_path / "en").iterdir())


def test_saving_over_a_baseline_replaces_or_removes_its_provenance(tmp_path):
    path = baseline_store.save_baseline(tmp_path, "fr", "m", TABLE, '{"computed": true}')
    prov = path.with_suffix(".provenance.json")
    assert prov.read_text() == '{"computed": true}'
    baseline_store.save_baseline(tmp_path, "fr", "m", BaselineTable(TABLE.values * 0.5, "uploaded"))
    assert not prov.exists()  # an uploaded table never sits beside the computed one's provenance
    baseline_store.save_baseline(tmp_path, "fr", "m", TABLE, '{"computed": "again"}')
    assert prov.read_text() == '{"computed": "again"}'
    assert sorted(p.name for p in (tmp_path / "fr").iterdir()) == ["m.provenance.json", "m.tsv"]


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
    def write_then_fail(name):
        with open(name, "wb") as f:
            f.write(b"x")
        raise RuntimeError()

    with pytest.raises(RuntimeError):
        fileio.atomic_write_via(tmp_path / "fig.png", write_then_fail)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.tsv"]


def test_writes_are_flushed_to_disk_file_then_directory(tmp_path, monkeypatch):
    """fsync of the temporary file before the rename, of the directory after it (a spy: the real fsync runs)."""
    calls = []
    real_fsync, real_replace = os.fsync, os.replace

    def spy_fsync(fd):
        calls.append(("fsync", os.path.realpath(f"/proc/self/fd/{fd}")))
        return real_fsync(fd)

    def spy_replace(src, dst):
        calls.append(("replace", os.path.basename(dst)))
        return real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", spy_fsync)
    monkeypatch.setattr(os, "replace", spy_replace)
    fileio.atomic_write_text(tmp_path / "out.tsv", "x\n")
    fileio.atomic_write_via(tmp_path / "fig.svg", lambda name: Path(name).write_text("<svg/>"))
    for target in ("out.tsv", "fig.svg"):
        i = calls.index(("replace", target))
        assert calls[i - 1][0] == "fsync" and os.path.basename(calls[i - 1][1]).startswith(fileio.TEMP_PREFIX)
        assert calls[i + 1] == ("fsync", str(tmp_path.resolve()))


def test_stale_temporary_files_of_a_killed_writer_are_removed_by_the_next_write(tmp_path):
    stale = tmp_path / f"{fileio.TEMP_PREFIX}dead.tsv"
    fresh = tmp_path / f"{fileio.TEMP_PREFIX}writing-now.tsv"
    other = tmp_path / ".tmp-someone-else.tsv"
    for f in (stale, fresh, other):
        f.write_text("partial")
    old = time.time() - fileio.STALE_SECONDS - 60
    os.utime(stale, (old, old))
    os.utime(other, (old, old))
    fileio.atomic_write_text(tmp_path / "out.tsv", "x\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([fresh.name, other.name, "out.tsv"])


def test_a_write_the_file_system_refuses_is_a_clear_error_and_changes_nothing(tmp_path):
    out = tmp_path / "out.tsv"
    out.write_text("old\n")

    def refuse(fh):
        fh.write(b"partial")
        raise OSError(28, "No space left on device")

    with pytest.raises(fileio.OutputError) as info:
        fileio.atomic_write(out, refuse)
    msg = str(info.value)
    assert f"Could not write {out}" in msg and "the disk is full" in msg and "Nothing was written or changed" in msg
    assert out.read_text() == "old\n" and sorted(p.name for p in tmp_path.iterdir()) == ["out.tsv"]


# --- the operator's check ----------------------------------------------------------------------------------------
def _deploy_exec(env: dict) -> subprocess.CompletedProcess:
    show = "import os; print('CAP=' + os.environ.get('STREAMLIT_SERVER_MAX_UPLOAD_SIZE', 'unset'))"
    env = {k: v for k, v in os.environ.items() if k != "STREAMLIT_SERVER_MAX_UPLOAD_SIZE"} | env
    return subprocess.run([sys.executable, "-m", "bertscore_viz", "check-deploy", "--exec", sys.executable, "-c", show],
                          capture_output=True, text=True, cwd=ROOT, timeout=120, env=env)


def test_streamlits_upload_cap_follows_the_per_file_limit_unless_the_operator_set_it():
    run = _deploy_exec({"BERTSCORE_VIZ_UPLOAD_MB": "120.5"})
    assert run.returncode == 0 and run.stdout.rstrip().endswith("CAP=121"), run.stderr
    run = _deploy_exec({"BERTSCORE_VIZ_UPLOAD_MB": "120", "STREAMLIT_SERVER_MAX_UPLOAD_SIZE": "50"})
    assert run.returncode == 0 and run.stdout.rstrip().endswith("CAP=50")
    assert "STREAMLIT_SERVER_MAX_UPLOAD_SIZE=50 is below BERTSCORE_VIZ_UPLOAD_MB=120" in run.stderr
    run = _deploy_exec({"STREAMLIT_SERVER_MAX_UPLOAD_SIZE": "lots"})
    assert run.returncode == 2 and "must be a whole number of MB" in run.stderr
