"""The embedding cache: token vectors by (model, layer, token ids), bounded by bytes (per device too), shared by the
encoders of a process; and giving freed memory back to the operating system after a long pass."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Literal

__all__ = ["MIN_CACHE_BYTES", "MAX_CACHE_BYTES", "PHYSICAL_MEMORY_SHARE", "ASSUMED_PHYSICAL_BYTES",
           "CUDA_MEMORY_SHARE", "default_cache_bytes", "DEFAULT_CACHE_BYTES", "EmbeddingCache", "CACHE",
           "release_free_memory"]

#: Bytes in a MiB (``BERTSCORE_VIZ_CACHE_MB`` counts in them).
MIB = 2**20
#: The default bound's floor and ceiling.
MIN_CACHE_BYTES = 2**30
MAX_CACHE_BYTES = 4 * 2**30
#: The default bound is 1 / this of physical memory (between the floor and the ceiling).
PHYSICAL_MEMORY_SHARE = 6
#: Physical memory taken where the platform does not tell it.
ASSUMED_PHYSICAL_BYTES = 8 * 2**30
#: Unless ``BERTSCORE_VIZ_CACHE_MB`` is set, the entries on a CUDA device are kept to 1 / this of its memory.
CUDA_MEMORY_SHARE = 4


def default_cache_bytes() -> int:
    """The embedding cache's bound: ``BERTSCORE_VIZ_CACHE_MB`` when set, else a sixth of physical memory, between
    1 and 4 GiB; the entries a CUDA encoder keeps on its device are also bounded by a quarter of the device's
    memory (:meth:`EmbeddingCache.limit_device`), without lowering this bound for CPU entries. A sentence costs
    tokens x hidden x 4 bytes per layer kept: 123 kB for 30 tokens at layer 17 of roberta-large (one layer), about
    230 kB at layer 4 of the bundled model (layers 0-4, as it is small): 4 GiB keeps tens of thousands."""
    env = os.environ.get("BERTSCORE_VIZ_CACHE_MB")
    if env:
        return int(float(env) * MIB)
    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # not available on this platform
        physical = ASSUMED_PHYSICAL_BYTES
    return int(min(MAX_CACHE_BYTES, max(MIN_CACHE_BYTES, physical // PHYSICAL_MEMORY_SHARE)))


DEFAULT_CACHE_BYTES = default_cache_bytes()


class EmbeddingCache:
    """Thread-safe LRU cache bounded by bytes, shared by every encoder of the process.

    Keys are ``(encoder key, layer, token ids as bytes)``: one entry per sentence **and layer**, so a request for
    layer 17 of a 24-layer model caches one layer, not 18. The model sees only the ids, so texts that tokenize
    alike (case variants under an uncased model, different outer whitespace) share one entry. Values are float32
    torch tensors ``(n_tokens, dim)`` of L2-normalised token vectors on the encoder's device (CUDA memory when
    the encoder runs there); numpy arrays are accepted too (only ``nbytes`` and ``device`` are used).

    Two bounds, both enforced at once when lowered (not at the next put): ``max_bytes`` over every entry, and an
    optional bound per device (:meth:`limit_device`) over the entries that live there, so that a CUDA encoder keeps
    its device-resident vectors to a share of the device's memory without shrinking what CPU encoders may cache.
    Eviction is least recently used, within the device for a device bound.
    """

    def __init__(self, max_bytes: int = DEFAULT_CACHE_BYTES):
        self._lock = threading.Lock()
        self._data: OrderedDict[tuple, tuple[object, str, int]] = OrderedDict()  # key -> (value, device, bytes)
        self._by_device: dict[str, OrderedDict[tuple, None]] = {}  # device -> its keys, least recently used first
        self._device_bytes: dict[str, int] = {}
        self._device_limits: dict[str, int] = {}
        self._bytes = 0
        self._max_bytes = int(max_bytes)
        self.hits = 0
        self.misses = 0

    @property
    def max_bytes(self) -> int:
        """The bound over every entry; setting a lower one evicts at once."""
        return self._max_bytes

    @max_bytes.setter
    def max_bytes(self, value: int) -> None:
        with self._lock:
            self._max_bytes = int(value)
            self._evict()

    def limit_device(self, device: str, max_bytes: int | None) -> None:
        """Bound the bytes of the entries on ``device`` (e.g. ``"cuda:0"``, as ``str(tensor.device)``); None removes
        the bound. Evicts that device's least recently used entries at once when over it."""
        with self._lock:
            if max_bytes is None:
                self._device_limits.pop(device, None)
            else:
                self._device_limits[device] = int(max_bytes)
            self._evict()

    def device_limit(self, device: str) -> int | None:
        """The bound of ``device``'s entries, None when only ``max_bytes`` applies."""
        return self._device_limits.get(device)

    @property
    def device_limits(self) -> dict[str, int]:
        return dict(self._device_limits)

    def device_nbytes(self, device: str) -> int:
        """Bytes held by the entries on ``device``."""
        return self._device_bytes.get(device, 0)

    def get(self, key: tuple):
        """The cached value, or None."""
        with self._lock:
            entry = self._data.get(key)
            if entry is None:
                self.misses += 1
                return None
            self._data.move_to_end(key)
            self._by_device[entry[1]].move_to_end(key)
            self.hits += 1
            return entry[0]

    def put(self, key: tuple, value) -> None:
        size = int(value.nbytes)
        device = _device_of(value)
        limit = self._device_limits.get(device)
        if size > self._max_bytes or (limit is not None and size > limit):
            return
        with self._lock:
            self._pop(key)
            self._data[key] = (value, device, size)
            self._by_device.setdefault(device, OrderedDict())[key] = None
            self._device_bytes[device] = self._device_bytes.get(device, 0) + size
            self._bytes += size
            self._evict()

    def remove_encoder(self, encoder_key: tuple) -> int:
        """Drop every entry of one encoder (keys ``(encoder_key, ...)``); the number of entries dropped."""
        with self._lock:
            keys = [k for k in self._data if k and k[0] == encoder_key]
            for k in keys:
                self._pop(k)
            return len(keys)

    def _pop(self, key: tuple) -> None:
        """Remove one entry if present (lock held)."""
        entry = self._data.pop(key, None)
        if entry is None:
            return
        _, device, size = entry
        del self._by_device[device][key]
        self._device_bytes[device] -= size
        self._bytes -= size

    def _evict(self) -> None:
        """Least recently used entries out until both bounds hold (lock held)."""
        for device, limit in self._device_limits.items():
            order = self._by_device.get(device)
            while order and self._device_bytes.get(device, 0) > limit:
                self._pop(next(iter(order)))
        while self._bytes > self._max_bytes and self._data:
            self._pop(next(iter(self._data)))

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self._by_device.clear()
            self._device_bytes.clear()
            self._bytes = 0
            self.hits = self.misses = 0

    @property
    def nbytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._data)


def _device_of(value) -> str:
    """Where a cached value lives: ``str(tensor.device)`` (``"cuda:0"``), ``"cpu"`` for numpy arrays."""
    device = getattr(value, "device", None)
    return "cpu" if device is None else str(device)


#: The process-wide embedding cache.
CACHE = EmbeddingCache()


_LIBC_TRIM: Callable[[int], int] | Literal[False] | None = None  # None: not looked up yet; False: this libc has none


def release_free_memory() -> None:
    """Give memory the process has freed back to the operating system (glibc's ``malloc_trim``; a no-op where the C
    library has none). A long pass frees many token-vector blocks of varying sizes, which glibc otherwise keeps
    with the process: scoring 16,000 sentences grew a process by about 1 GB more than its cache held."""
    global _LIBC_TRIM
    if _LIBC_TRIM is None:
        try:

            _LIBC_TRIM = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
        except (OSError, AttributeError, TypeError):
            _LIBC_TRIM = False
    if _LIBC_TRIM:
        _LIBC_TRIM(0)
