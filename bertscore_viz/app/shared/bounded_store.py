"""The one implementation of the app's process-wide stores (shared by every browser session of the server): a
thread-safe mapping that keeps its least recently used entries out of a named bound.

Each store says what its bound counts (``weigh``: one per entry by default, or e.g. an entry's bytes), what the bound
is (a number, or a callable read at every eviction, for a deployment setting), and optionally when an entry is stale
whatever the room (``stale``: e.g. past its age). Built from it: the Baselines page's example F1 per model setting
(:data:`bertscore_viz.app.gateway.EXAMPLE_F1_KEPT` entries), the calibration data's lengths
(:data:`bertscore_viz.app.shared.calibration_lengths.LENGTHS_KEPT` entries), and the sessions' kept work and read-only
snapshots (:mod:`bertscore_viz.app.shared.persist`: ``KEPT_MB`` in all, ``KEPT_HOURS`` / ``SHARE_HOURS`` each).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from typing import Generic, TypeVar

__all__ = ["BoundedStore"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class BoundedStore(Generic[K, V]):
    """A thread-safe LRU mapping bounded by ``bound`` (the total of its entries' ``weigh``).

    :meth:`put` makes an entry the most recently used and then evicts: stale entries first, then the least recently
    used until the total fits. :meth:`get` makes a hit the most recently used unless ``touch=False``. A series of
    calls that must not interleave with another thread's runs under ``with store.locked():`` (the lock is
    reentrant, so the store's own methods may be called inside).
    """

    def __init__(self, bound: int | Callable[[], int], weigh: Callable[[V], int] | None = None,
                 stale: Callable[[V, float], bool] | None = None):
        self._bound = bound
        self._weigh = weigh
        self._stale = stale
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.RLock()

    @property
    def bound(self) -> int:
        """The bound now (a callable bound is read again every time: a deployment setting)."""
        return int(self._bound() if callable(self._bound) else self._bound)

    def _weight(self, value: V) -> int:
        return 1 if self._weigh is None else int(self._weigh(value))

    @contextmanager
    def locked(self) -> Iterator[BoundedStore[K, V]]:
        """Hold the store's lock for a series of calls."""
        with self._lock:
            yield self

    def get(self, key: K, default: V | None = None, touch: bool = True) -> V | None:
        with self._lock:
            if key not in self._items:
                return default
            if touch:
                self._items.move_to_end(key)
            return self._items[key]

    def put(self, key: K, value: V, now: float | None = None) -> None:
        """Keep ``value`` as the most recently used, then evict what no longer fits."""
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            self.evict(now)

    def pop(self, key: K, default: V | None = None) -> V | None:
        with self._lock:
            return self._items.pop(key, default)

    def evict(self, now: float | None = None) -> None:
        """Drop the stale entries, then the least recently used until the total is within the bound."""
        with self._lock:
            if self._stale is not None:
                now = time.time() if now is None else now
                for key in [k for k, v in self._items.items() if self._stale(v, now)]:
                    del self._items[key]
            bound = self.bound
            total = sum(self._weight(v) for v in self._items.values())
            while self._items and total > bound:
                _, value = self._items.popitem(last=False)
                total -= self._weight(value)

    def items(self) -> list[tuple[K, V]]:
        """A snapshot of the entries, least recently used first."""
        with self._lock:
            return list(self._items.items())

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._items

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)
