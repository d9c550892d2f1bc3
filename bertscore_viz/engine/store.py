"""The persistent embedding store: token vectors kept on disk between processes, so that the same sentence under the
same model is embedded once, not once per run (issue 43; docs/STORE.md).

What is kept is exactly what the in-memory cache (:mod:`bertscore_viz.engine.cache`) holds: one ``(n_tokens, dim)``
float32 array of unit token vectors per sequence of token ids and layer, the bits the forward pass produced. Numbers
from the store are therefore bit-identical to the run that computed them. The key names everything that changes
those bits: the model's files (a content digest of every file of the model's folder: weights, configuration and
tokenizer), the precision, the device kind, the torch and transformers versions, the layer and the token ids (which
carry the text, its truncation and, in window mode, the window).

**Why SQLite.** It ships with Python (the core install gains no dependency), is the most widely deployed embedded
database, and gives what a shared store needs: transactions that a killed writer cannot leave half-done, many
readers beside one writer (write-ahead logging), and locking between processes and threads on one machine. LMDB
and diskcache would need a package; home-made files would need their own locking and atomicity.

**Safe.** Every entry carries a digest of its bytes and shape; an entry that does not match is discarded and
recomputed, never used. A database that cannot be opened or read (corrupted, truncated) is moved aside once and a
new one started; a read-only folder or a full disk turns the store off for the process with one warning, and
scoring goes on without it.

**Bounded.** At most ``max_bytes`` of vectors (``BERTSCORE_VIZ_STORE_MB``, default 2 GiB); each write evicts the
least recently used entries in the same transaction, so the bound holds after every commit.

**Where.** ``$BERTSCORE_VIZ_STORE`` (a folder, or ``off``), else ``~/.cache/bertscore-viz/embeddings``. A shared
app server keeps it off unless its operator sets the folder (docs/DEPLOY.md).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import threading
import time
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["STORE_ENV", "STORE_MB_ENV", "DEFAULT_STORE_BYTES", "OFF_WORDS", "StoreWarning", "StoreInfo",
           "EmbeddingStore", "default_store_dir", "set_default_store_dir", "default_store", "files_digest",
           "model_folder", "fetch", "keep", "pass_store", "encoder_prefix", "read_into", "write_from"]

STORE_ENV = "BERTSCORE_VIZ_STORE"
STORE_MB_ENV = "BERTSCORE_VIZ_STORE_MB"
#: The default bound: 2 GiB, about 45,000 sentences of 30 tokens at one layer of a 384-wide model (the bundled
#: one), 15,000 of a 1,024-wide model (roberta-large).
DEFAULT_STORE_BYTES = 2 * 2**30
#: Values of ``BERTSCORE_VIZ_STORE`` that turn the store off.
OFF_WORDS = frozenset({"off", "0", "no", "false", "none"})
#: The store's file inside its folder; the layout's version (a new layout starts a new file).
DB_NAME = "embeddings-v1.sqlite3"
#: Rows read per query (SQLite's limit on host parameters is 32,766 in current builds; 500 keeps queries small).
_CHUNK = 500
#: A writer waits at most this long for another's transaction before giving up on the store for that write.
BUSY_SECONDS = 30.0
#: Entries evicted beyond the bound, as a share of it: an eviction makes room for the next few writes.
EVICT_SLACK = 0.05


class StoreWarning(RuntimeWarning):
    """The store cannot be used (read-only folder, full disk, a database moved aside): scoring goes on without it."""


@dataclass(frozen=True)
class StoreInfo:
    """What ``bertscore-viz cache info`` prints: the folder, the entries and their bytes, the bound, the file's
    size on disk, and this process's reads (hits, misses), writes and discarded entries."""

    path: str
    enabled: bool
    entries: int
    bytes: int
    max_bytes: int
    file_bytes: int
    hits: int
    misses: int
    written: int
    discarded: int
    reason: str = ""


#: The process's own choice of folder (:func:`set_default_store_dir`), before the environment's.
_CHOSEN: list[Path | None] = []


def set_default_store_dir(folder: str | Path | None) -> None:
    """The folder of this process's store, whatever the environment says (None: no store); the app uses it to keep
    a shared server's store off unless its operator set one."""
    _CHOSEN[:] = [None if folder is None else Path(folder).expanduser()]


def default_store_dir() -> Path | None:
    """The folder chosen by :func:`set_default_store_dir`, else ``$BERTSCORE_VIZ_STORE`` (None when it says
    ``off``), else ``~/.cache/bertscore-viz/embeddings``."""
    if _CHOSEN:
        return _CHOSEN[0]
    env = os.environ.get(STORE_ENV)
    if env is not None:
        return None if env.strip().lower() in OFF_WORDS or not env.strip() else Path(env).expanduser()
    return Path.home() / ".cache" / "bertscore-viz" / "embeddings"


def _default_bytes() -> int:
    env = os.environ.get(STORE_MB_ENV)
    return int(float(env) * 2**20) if env else DEFAULT_STORE_BYTES


def _entry_digest(data: bytes, rows: int, dim: int) -> bytes:
    h = hashlib.blake2b(digest_size=16)
    h.update(f"{rows}x{dim}|".encode())
    h.update(data)
    return h.digest()


def _listing(folder: Path) -> list[tuple[str, int, int]]:
    out = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.startswith("."):
                continue
            path = Path(root) / name
            st = path.stat()
            out.append((str(path.relative_to(folder)), st.st_size, st.st_mtime_ns))
    return out


class EmbeddingStore:
    """A bounded, process- and thread-safe store of token vectors in one SQLite file.

    Keys are bytes (:meth:`key`); values float32 arrays ``(n_tokens, dim)``. Reads and writes take many entries at
    once (one query per 500), as the encoder asks for every sequence of a pass together.
    """

    def __init__(self, folder: str | Path, max_bytes: int | None = None):
        self.folder = Path(folder).expanduser()
        self.path = self.folder / DB_NAME
        self.max_bytes = int(_default_bytes() if max_bytes is None else max_bytes)
        self._local = threading.local()
        self._lock = threading.Lock()
        self._reason = ""  # why the store is off, "" while it works
        self._moved_aside = False
        self.hits = self.misses = self.written = self.discarded = 0

    # --- connection -----------------------------------------------------------------------------------------------
    @property
    def enabled(self) -> bool:
        return not self._reason

    def _connection(self) -> sqlite3.Connection:
        con = getattr(self._local, "con", None)
        if con is None:
            self.folder.mkdir(parents=True, exist_ok=True)
            con = sqlite3.connect(self.path, timeout=BUSY_SECONDS, isolation_level=None, check_same_thread=False)
            con.execute("PRAGMA journal_mode=WAL")
            con.execute("PRAGMA synchronous=NORMAL")
            con.executescript(
                "CREATE TABLE IF NOT EXISTS entries (key BLOB PRIMARY KEY, rows INTEGER NOT NULL, dim INTEGER NOT NULL,"
                " size INTEGER NOT NULL, digest BLOB NOT NULL, used REAL NOT NULL, data BLOB NOT NULL);"
                "CREATE INDEX IF NOT EXISTS entries_used ON entries (used);"
                "CREATE TABLE IF NOT EXISTS digests (listing BLOB PRIMARY KEY, digest TEXT NOT NULL);")
            self._local.con = con
        return con

    def _close(self) -> None:
        con = getattr(self._local, "con", None)
        if con is not None:
            self._local.con = None
            with contextlib.suppress(sqlite3.Error):
                con.close()

    def _failed(self, exc: Exception, doing: str) -> None:
        """A database error: a damaged file is moved aside once and a new one started; anything else (read-only,
        full disk, a lock held too long) turns the store off for this process with one warning."""
        self._close()
        damaged = isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.OperationalError)
        damaged = damaged or "malformed" in str(exc) or "not a database" in str(exc)
        with self._lock:
            if damaged and not self._moved_aside and self.path.exists():
                self._moved_aside = True
                aside = self.path.with_name(f"{self.path.name}.damaged-{int(time.time())}")
                try:
                    os.replace(self.path, aside)
                    for extra in ("-wal", "-shm"):
                        Path(str(self.path) + extra).unlink(missing_ok=True)
                except OSError:
                    pass
                else:
                    warnings.warn(f"The embedding store {self.path} could not be read while {doing} ({exc}); it was "
                                  f"moved aside to {aside.name} and a new store started.", StoreWarning, stacklevel=3)
                    return
            if not self._reason:
                self._reason = f"{doing}: {exc}"
                warnings.warn(f"The embedding store at {self.folder} cannot be used ({doing}: {exc}); scoring goes on "
                              f"without it. Set {STORE_ENV} to a writable folder, or to 'off'.", StoreWarning,
                              stacklevel=3)

    # --- entries --------------------------------------------------------------------------------------------------
    @staticmethod
    def key(prefix: bytes, layer: int, ids: bytes) -> bytes:
        """The key of one sequence's vectors at one layer under an encoder's ``prefix`` (its model, precision,
        device kind and versions)."""
        return hashlib.blake2b(prefix + b"|" + str(int(layer)).encode() + b"|" + ids, digest_size=24).digest()

    def get_many(self, keys: Sequence[bytes]) -> dict[bytes, np.ndarray]:
        """The entries found, checked; a damaged entry is deleted and left out (to be recomputed)."""
        if not self.enabled or not keys:
            return {}
        try:
            return self._get_many(list(dict.fromkeys(keys)))
        except (sqlite3.Error, OSError) as exc:
            self._failed(exc, "reading")
            return {}

    def _get_many(self, keys: list[bytes]) -> dict[bytes, np.ndarray]:
        con = self._connection()
        found: dict[bytes, np.ndarray] = {}
        bad: list[bytes] = []
        for start in range(0, len(keys), _CHUNK):
            chunk = keys[start:start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            for key, rows, dim, digest, data in con.execute(
                    f"SELECT key, rows, dim, digest, data FROM entries WHERE key IN ({marks})", chunk):
                data = bytes(data)
                if len(data) != rows * dim * 4 or _entry_digest(data, rows, dim) != digest:
                    bad.append(key)
                    continue
                found[bytes(key)] = np.frombuffer(data, dtype=np.float32).reshape(rows, dim)
        now = time.time()
        if bad or found:
            con.execute("BEGIN IMMEDIATE")
            try:
                _delete(con, bad)
                hit = list(found)
                for start in range(0, len(hit), _CHUNK):
                    chunk = hit[start:start + _CHUNK]
                    con.execute(f"UPDATE entries SET used = ? WHERE key IN ({','.join('?' * len(chunk))})",
                                [now, *chunk])
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise
        with self._lock:
            self.hits += len(found)
            self.misses += len(keys) - len(found)
            self.discarded += len(bad)
        return found

    def put_many(self, items: Iterable[tuple[bytes, np.ndarray]]) -> None:
        """Keep the entries (float32 arrays, any device's tensors brought to the host first), then evict the least
        recently used beyond the bound, in one transaction."""
        rows = []
        now = time.time()
        for key, value in items:
            arr = np.ascontiguousarray(value, dtype=np.float32)
            if arr.ndim != 2 or arr.nbytes > self.max_bytes:
                continue
            data = arr.tobytes()
            rows.append((key, arr.shape[0], arr.shape[1], len(data), _entry_digest(data, *arr.shape), now, data))
        if not self.enabled or not rows:
            return
        try:
            self._put_rows(rows)
        except (sqlite3.Error, OSError) as exc:
            self._failed(exc, "writing")

    def _put_rows(self, rows: list[tuple]) -> None:
        con = self._connection()
        con.execute("BEGIN IMMEDIATE")
        try:
            con.executemany("INSERT OR REPLACE INTO entries (key, rows, dim, size, digest, used, data) "
                            "VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
            total = con.execute("SELECT COALESCE(SUM(size), 0) FROM entries").fetchone()[0]
            if total > self.max_bytes:
                self._evict(con, total - int(self.max_bytes * (1 - EVICT_SLACK)))
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        with self._lock:
            self.written += len(rows)

    @staticmethod
    def _evict(con: sqlite3.Connection, excess: int) -> None:
        """Delete the least recently used entries until ``excess`` bytes are gone (inside the caller's
        transaction)."""
        doomed, freed = [], 0
        for key, size in con.execute("SELECT key, size FROM entries ORDER BY used ASC"):
            doomed.append(key)
            freed += size
            if freed >= excess:
                break
        _delete(con, doomed)

    # --- the model's identity ---------------------------------------------------------------------------------------
    def model_digest(self, folder: str | Path) -> str:
        """:func:`files_digest` of a model folder, remembered in the store by the folder's listing (names, sizes,
        modification times), so that a large model is read for its digest once, not once per process."""
        folder = Path(folder)
        listing = repr(_listing(folder)).encode()
        listing_key = hashlib.blake2b(str(folder.resolve()).encode() + b"|" + listing, digest_size=24).digest()
        if self.enabled:
            try:
                row = self._connection().execute("SELECT digest FROM digests WHERE listing = ?",
                                                  (listing_key,)).fetchone()
                if row:
                    return str(row[0])
            except (sqlite3.Error, OSError) as exc:
                self._failed(exc, "reading")
        digest = files_digest(folder)
        if self.enabled:
            try:
                self._connection().execute("INSERT OR REPLACE INTO digests (listing, digest) VALUES (?, ?)",
                                           (listing_key, digest))
            except (sqlite3.Error, OSError) as exc:
                self._failed(exc, "writing")
        return digest

    # --- what the commands show -------------------------------------------------------------------------------------
    def info(self) -> StoreInfo:
        entries = stored = 0
        if self.enabled and self.path.exists():
            try:
                entries, stored = self._connection().execute(
                    "SELECT COUNT(*), COALESCE(SUM(size), 0) FROM entries").fetchone()
            except (sqlite3.Error, OSError) as exc:
                self._failed(exc, "reading")
        on_disk = sum(p.stat().st_size for p in self.folder.glob(DB_NAME + "*") if p.is_file()) \
            if self.folder.is_dir() else 0
        return StoreInfo(str(self.path), self.enabled, int(entries), int(stored), self.max_bytes, on_disk,
                         self.hits, self.misses, self.written, self.discarded, self._reason)

    def clear(self) -> int:
        """Delete every entry (and compact the file); the number deleted."""
        if not self.path.exists():
            return 0
        con = self._connection()
        n = con.execute("SELECT COUNT(*) FROM entries").fetchone()[0]
        con.execute("DELETE FROM entries")
        con.execute("VACUUM")
        return int(n)

    def reset_counts(self) -> None:
        with self._lock:
            self.hits = self.misses = self.written = self.discarded = 0


def _delete(con: sqlite3.Connection, keys: list) -> None:
    """Delete the entries of ``keys``, a query per :data:`_CHUNK` (inside the caller's transaction)."""
    for start in range(0, len(keys), _CHUNK):
        chunk = keys[start:start + _CHUNK]
        con.execute(f"DELETE FROM entries WHERE key IN ({','.join('?' * len(chunk))})", chunk)


def files_digest(folder: str | Path) -> str:
    """A content digest (BLAKE2b) of every file of a folder, by relative name: a model's weights, configuration and
    tokenizer, so that a changed file is a new model."""
    folder = Path(folder)
    h = hashlib.blake2b(digest_size=20)
    for name, size, _ in _listing(folder):
        h.update(f"{name}|{size}|".encode())
        with open(folder / name, "rb") as fh:
            for block in iter(lambda: fh.read(2**20), b""):
                h.update(block)
    return h.hexdigest()


_DEFAULT: dict[tuple, EmbeddingStore] = {}
_DEFAULT_LOCK = threading.Lock()


def default_store() -> EmbeddingStore | None:
    """The process's store at :func:`default_store_dir` with the default bound (None when off); one per folder and
    bound, so that the settings read at each call take effect."""
    folder = default_store_dir()
    if folder is None:
        return None
    key = (str(folder), _default_bytes())
    with _DEFAULT_LOCK:
        store = _DEFAULT.get(key)
        if store is None:
            store = _DEFAULT[key] = EmbeddingStore(folder, key[1])
        return store


def model_folder(spec) -> Path | None:
    """The folder a model (a :class:`~bertscore_viz.models.spec.ModelSpec`) loads from: its local directory, or a
    hub model's snapshot in the local Hugging Face cache; None when neither is on this machine (then nothing of the
    model is stored)."""
    if spec.local:
        return Path(spec.source)
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(spec.source, local_files_only=True))
    except Exception:  # noqa: BLE001 - whatever keeps it from being found locally means: not stored
        return None


def fetch(store: EmbeddingStore, prefix: bytes, sequences: Sequence[bytes], layers: Sequence[int]
          ) -> dict[bytes, list[np.ndarray]]:
    """The sequences (token ids as bytes) the store has at every one of ``layers``: per sequence, one array per
    layer in the order of ``layers``."""
    keys = {(seq, layer): EmbeddingStore.key(prefix, layer, seq) for seq in sequences for layer in layers}
    found = store.get_many(list(keys.values()))
    out: dict[bytes, list[np.ndarray]] = {}
    for seq in sequences:
        arrays = [found[keys[seq, layer]] for layer in layers if keys[seq, layer] in found]
        if len(arrays) == len(layers):
            out[seq] = arrays
    return out


def keep(store: EmbeddingStore, prefix: bytes, sequences: Sequence[bytes], computed: Sequence[Sequence[np.ndarray]],
         layers: Sequence[int]) -> None:
    """Write each sequence's arrays (one per layer, in the order of ``layers``) in one transaction."""
    store.put_many((EmbeddingStore.key(prefix, layer, seq), arrays[j])
                   for seq, arrays in zip(sequences, computed) for j, layer in enumerate(layers))


# --- the encoder's side (engine/encoder.py calls these: an encoder duck-typed, to keep that module to its pass; torch
# is imported in them, so that `bertscore-viz cache info` loads none) ------------------------------------------------
def pass_store(encoder) -> EmbeddingStore | None:
    """The store of one pass of ``encoder``: its own (``encoder.store``: None = :func:`default_store`, False =
    none); none inside a private cache (a block's numbers must not depend on what was embedded before, here or in
    another process), none for a model whose files cannot be named."""
    if encoder.in_private_cache or encoder.store is False:
        return None
    store = default_store() if encoder.store is None else encoder.store
    if not isinstance(store, EmbeddingStore) or not store.enabled:
        return None
    return store if encoder_prefix(encoder, store) is not None else None


def encoder_prefix(encoder, store: EmbeddingStore) -> bytes | None:
    """What every key of ``encoder`` in ``store`` starts from: the model's files (content digest), the precision,
    the device kind, torch's and transformers' versions; remembered on the encoder. None when the model's folder
    cannot be found (a hub model not in the local cache): such a model is not stored."""
    known = encoder.store_prefixes
    name = str(store.path)
    if name not in known:
        import torch

        folder = model_folder(encoder.spec)
        device = encoder.device
        if device.startswith("cuda"):
            device = f"cuda:{torch.cuda.get_device_name(torch.device(device))}"
        known[name] = None if folder is None else "|".join(
            [store.model_digest(folder), encoder.precision, device, f"torch={torch.__version__}",
             f"transformers={encoder.transformers_version}"]).encode()
    return known[name]


def read_into(encoder, store: EmbeddingStore, missing: list[bytes], layers: Sequence[int],
              vectors: dict[bytes, list]) -> list[bytes]:
    """Fill ``vectors`` (and the encoder's memory cache) with the sequences the store has at every layer asked, as
    tensors on the encoder's device; the sequences still missing."""
    import torch

    found = fetch(store, encoder_prefix(encoder, store) or b"", missing, layers)
    for seq, arrays in found.items():
        vectors[seq] = [torch.from_numpy(a.copy()).to(encoder.device) for a in arrays]
        for layer, t in zip(layers, vectors[seq]):
            encoder.cache.put((encoder.key, layer, seq), t)
    return [seq for seq in missing if seq not in found]


def write_from(encoder, store: EmbeddingStore, sequences: list[bytes], computed: list[list],
               layers: Sequence[int]) -> None:
    """Keep one batch's vectors (per sequence, a tensor per layer of ``layers``) in one transaction."""
    keep(store, encoder_prefix(encoder, store) or b"", sequences,
         [[t.detach().cpu().numpy() for t in vecs] for vecs in computed], layers)
