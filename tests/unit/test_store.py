"""The persistent embedding store (issue 43): exact, bounded, safe with several processes and threads, discarding what
is damaged, degrading to no store when its folder cannot be used; on the real bundled model and real processes.

Process tests run ``tests/unit/store_worker.py`` in fresh interpreters against one store folder, as two CLI runs or
two app servers would, and compare the bits of their P/R/F1 with a run that has no store.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

from bertscore_viz import Scorer
from bertscore_viz.engine.store import DB_NAME, EmbeddingStore, StoreWarning, default_store, default_store_dir

pytestmark = pytest.mark.slow

WORKER = Path(__file__).with_name("store_worker.py")
ROOT = Path(__file__).resolve().parents[2]


def _arrays(n: int, rows: int = 7, dim: int = 16, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((rows, dim)).astype(np.float32) for _ in range(n)]


def _keys(n: int, tag: bytes = b"k") -> list[bytes]:
    return [EmbeddingStore.key(b"prefix", 4, tag + str(i).encode()) for i in range(n)]


# --- the store alone -------------------------------------------------------------------------------------------------
def test_what_is_put_comes_back_bit_for_bit(tmp_path):
    store = EmbeddingStore(tmp_path)
    keys, arrays = _keys(50), _arrays(50)
    store.put_many(zip(keys, arrays))
    got = EmbeddingStore(tmp_path).get_many(keys + [b"absent"])  # another connection, as another process would
    assert set(got) == set(keys)
    for k, a in zip(keys, arrays):
        assert got[k].dtype == np.float32 and got[k].tobytes() == a.tobytes()


def test_the_key_names_prefix_layer_and_ids():
    k = EmbeddingStore.key(b"model-a|fp32", 4, b"\x01\x02")
    assert k != EmbeddingStore.key(b"model-b|fp32", 4, b"\x01\x02")
    assert k != EmbeddingStore.key(b"model-a|bf16", 4, b"\x01\x02")
    assert k != EmbeddingStore.key(b"model-a|fp32", 5, b"\x01\x02")
    assert k != EmbeddingStore.key(b"model-a|fp32", 4, b"\x01\x03")


def test_a_damaged_entry_is_discarded_never_returned(tmp_path):
    store = EmbeddingStore(tmp_path)
    keys, arrays = _keys(3), _arrays(3)
    store.put_many(zip(keys, arrays))
    con = sqlite3.connect(tmp_path / DB_NAME)
    data = bytearray(con.execute("SELECT data FROM entries WHERE key = ?", (keys[0],)).fetchone()[0])
    data[5] ^= 0x01  # one bit of one float
    con.execute("UPDATE entries SET data = ? WHERE key = ?", (bytes(data), keys[0]))
    con.execute("UPDATE entries SET data = substr(data, 1, 20) WHERE key = ?", (keys[1],))  # truncated
    con.commit()
    con.close()
    reader = EmbeddingStore(tmp_path)
    got = reader.get_many(keys)
    assert set(got) == {keys[2]} and reader.discarded == 2
    assert reader.info().entries == 1  # deleted, to be recomputed


def test_the_bound_holds_after_every_write_least_recently_used_first(tmp_path):
    size = 7 * 16 * 4
    store = EmbeddingStore(tmp_path, max_bytes=10 * size)
    keys, arrays = _keys(40), _arrays(40)
    store.put_many(zip(keys[:8], arrays[:8]))
    time.sleep(0.01)
    store.get_many(keys[:2])  # the two oldest are now the most recently used
    for i in range(8, 40, 3):
        time.sleep(0.01)
        store.put_many(zip(keys[i:i + 3], arrays[i:i + 3]))
        assert store.info().bytes <= 10 * size
    kept = store.get_many(keys)
    assert keys[0] not in kept or keys[2] not in kept  # something old went ...
    assert keys[37] in kept and keys[39] in kept  # ... and the newest stayed


def test_recently_read_entries_survive_an_eviction(tmp_path):
    size = 7 * 16 * 4
    store = EmbeddingStore(tmp_path, max_bytes=4 * size)
    keys, arrays = _keys(6), _arrays(6)
    store.put_many(zip(keys[:4], arrays[:4]))
    time.sleep(0.01)
    store.get_many([keys[0]])
    time.sleep(0.01)
    store.put_many([(keys[4], arrays[4])])
    kept = store.get_many(keys[:5])
    assert keys[0] in kept and keys[1] not in kept and keys[4] in kept


def test_an_unusable_folder_means_no_store_and_one_warning(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    store = EmbeddingStore(blocker / "store")
    with pytest.warns(StoreWarning, match="cannot be used"):
        store.put_many(zip(_keys(2), _arrays(2)))
    assert not store.enabled
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # said once: no second warning
        assert store.get_many(_keys(2)) == {}
        store.put_many(zip(_keys(2), _arrays(2)))


def test_a_damaged_database_file_is_moved_aside_and_a_new_one_started(tmp_path):
    store = EmbeddingStore(tmp_path)
    store.put_many(zip(_keys(3), _arrays(3)))
    store._close()
    (tmp_path / DB_NAME).write_bytes(b"this is not a database" * 100)
    for extra in ("-wal", "-shm"):
        Path(str(tmp_path / DB_NAME) + extra).unlink(missing_ok=True)
    fresh = EmbeddingStore(tmp_path)
    with pytest.warns(StoreWarning, match="moved aside"):
        assert fresh.get_many(_keys(3)) == {}
    fresh.put_many(zip(_keys(3), _arrays(3)))
    assert fresh.enabled and len(fresh.get_many(_keys(3))) == 3
    assert list(tmp_path.glob(DB_NAME + ".damaged-*"))


def test_threads_read_and_write_one_store_at_once(tmp_path):
    store = EmbeddingStore(tmp_path)
    arrays = _arrays(20)
    errors = []

    def work(t: int) -> None:
        try:
            keys = _keys(20, f"t{t}-".encode())
            for _ in range(5):
                store.put_many(zip(keys, arrays))
                got = store.get_many(keys)
                assert all(got[k].tobytes() == a.tobytes() for k, a in zip(keys, arrays))
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors and store.info().entries == 120


def test_the_folder_setting(monkeypatch, tmp_path):
    monkeypatch.setenv("BERTSCORE_VIZ_STORE", "off")
    assert default_store_dir() is None and default_store() is None
    monkeypatch.setenv("BERTSCORE_VIZ_STORE", str(tmp_path / "s"))
    monkeypatch.setenv("BERTSCORE_VIZ_STORE_MB", "3")
    store = default_store()
    assert store is not None and store.folder == tmp_path / "s" and store.max_bytes == 3 * 2**20
    monkeypatch.delenv("BERTSCORE_VIZ_STORE")
    assert default_store_dir() == Path.home() / ".cache" / "bertscore-viz" / "embeddings"


# --- the engine with a store -----------------------------------------------------------------------------------------
CANDS = ["The cat sat on the mat.", "A quick brown fox jumps over the lazy dog.",
         "Prices rose sharply after the harvest."]
REFS = ["A cat was sitting on the mat.", "The fast brown fox leapt over a lazy dog.",
        "The harvest failed, and prices rose."]


@pytest.fixture
def scorer_with(tmp_path):
    made = []

    def make(store, **kwargs) -> Scorer:
        sc = Scorer(**kwargs)
        sc.encoder.store = store
        sc.encoder.cache.clear()  # the memory cache would answer first
        made.append(sc)
        return sc

    yield make
    for sc in made:
        sc.encoder.store = None
        sc.encoder.cache.clear()


def test_scores_through_the_store_equal_those_without(scorer_with, tmp_path):
    store = EmbeddingStore(tmp_path)
    cold = scorer_with(False).score(CANDS, REFS)
    first = scorer_with(store).score(CANDS, REFS)
    assert store.written == 6 and store.hits == 0  # one layer (4), six sentences
    warm = scorer_with(store).score(CANDS, REFS)
    assert store.hits == 6
    for a, b, c in ((cold.f1, first.f1, warm.f1), (cold.precision, first.precision, warm.precision)):
        assert a.tobytes() == b.tobytes() == c.tobytes()


def test_another_layer_or_precision_is_another_entry(scorer_with, tmp_path):
    store = EmbeddingStore(tmp_path)
    scorer_with(store).score(CANDS, REFS)
    scorer_with(store, layer=5).score(CANDS, REFS)
    assert store.hits == 0 and store.info().entries == 12
    scorer_with(store, precision="bf16").score(CANDS, REFS)
    assert store.hits == 0 and store.info().entries == 18


def test_a_changed_model_file_is_another_model(tmp_path):
    import shutil

    from bertscore_viz.models.spec import bundled_model_path

    copy = tmp_path / "model"
    shutil.copytree(bundled_model_path(), copy)
    store = EmbeddingStore(tmp_path / "store")
    first = store.model_digest(copy)
    assert store.model_digest(copy) == first
    with open(copy / "config.json", "a", encoding="utf-8") as fh:
        fh.write("\n")
    assert store.model_digest(copy) != first


def test_a_private_cache_never_reads_the_store(scorer_with, tmp_path):
    """Blocks of a Ray job embed in a private cache so their bits do not depend on what was embedded before; the
    store, which holds other runs' bits, stays out of it."""
    store = EmbeddingStore(tmp_path)
    sc = scorer_with(store)
    sc.score(CANDS, REFS)
    before = (store.hits, store.misses)
    with sc.encoder.private_cache():
        sc.score(CANDS, REFS)
    assert (store.hits, store.misses) == before


# --- real processes --------------------------------------------------------------------------------------------------
def _worker(store: Path | str, out: Path, *args: str, wait: bool = True, env_extra=None):
    env = dict(os.environ, BERTSCORE_VIZ_STORE=str(store), HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1",
               **(env_extra or {}))
    cmd = [sys.executable, str(WORKER), str(out), *args]
    if not wait:
        return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def test_a_new_process_reads_what_another_wrote_bit_for_bit(tmp_path):
    store = tmp_path / "store"
    _worker("off", tmp_path / "off.npy", "0", "300")
    cold = _worker(store, tmp_path / "cold.npy", "0", "300")
    warm = _worker(store, tmp_path / "warm.npy", "0", "300")
    off, a, b = (np.load(tmp_path / f"{n}.npy") for n in ("off", "cold", "warm"))
    assert off.tobytes() == a.tobytes() == b.tobytes()
    assert "hits=0" in cold.stdout and "misses=0" in warm.stdout and "written=0" in warm.stdout
    # a run the store answers whole loads no weights and imports no model code; the cold one did both
    assert "model_loaded=True model_code_imported=True" in cold.stdout
    assert "model_loaded=False model_code_imported=False" in warm.stdout
    off_run = _worker("off", tmp_path / "off2.npy", "0", "10")
    assert "model_loaded=True" in off_run.stdout  # without a store the model loads with the encoder, as before


def _check_against_a_run_without_store(tmp_path: Path, store: Path, count: str) -> None:
    """The store's file is sound; the numbers through it equal a run without a store to 1e-6 and a second run
    through it bit for bit. (Vectors that other processes computed in other batches differ from this run's batches
    by float rounding, a few 1e-8 on a vector: a sentence's bits depend on the batch it was padded in. The store
    keeps one run's bits exactly; it cannot make two batchings agree.)"""
    _worker("off", tmp_path / "off.npy", "0", count)
    _worker(store, tmp_path / "after.npy", "0", count)
    again = _worker(store, tmp_path / "again.npy", "0", count)
    off, after, second = (np.load(tmp_path / f"{n}.npy") for n in ("off", "after", "again"))
    np.testing.assert_allclose(after, off, rtol=0, atol=1e-6)
    assert after.tobytes() == second.tobytes() and "misses=0" in again.stdout
    con = sqlite3.connect(store / DB_NAME)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    con.close()


def test_two_processes_writing_at_once_leave_only_correct_numbers(tmp_path):
    store = tmp_path / "store"
    procs = [_worker(store, tmp_path / f"p{i}.npy", str(start), "250", wait=False) for i, start in enumerate((0, 150))]
    for p in procs:
        _, err = p.communicate(timeout=900)
        assert p.returncode == 0, err[-3000:]
    _check_against_a_run_without_store(tmp_path, store, "400")


def test_a_killed_writer_leaves_a_store_that_gives_only_correct_numbers(tmp_path):
    store = tmp_path / "store"
    proc = _worker(store, tmp_path / "killed.npy", "0", "1200", "--batch", "8", wait=False)
    deadline = time.monotonic() + 600
    db = store / DB_NAME
    while time.monotonic() < deadline:  # kill it once it has committed some batches, in the middle of its pass
        try:
            with sqlite3.connect(db, timeout=5) as con:
                n = con.execute("SELECT COUNT(*) FROM entries").fetchone()[0]
        except sqlite3.Error:
            n = 0
        if n >= 40:
            break
        assert proc.poll() is None, proc.stderr.read()[-3000:] if proc.stderr else ""
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    _check_against_a_run_without_store(tmp_path, store, "1200")
