"""The models a shared server holds in memory: at most ``max_models``, loaded one at a time, never two copies."""

from __future__ import annotations

import contextlib
import gc
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable

__all__ = ["ModelPool"]


class ModelPool:
    """At most ``max_models`` loaded models in the pool, loaded one at a time, never two copies of one model.

    Thread-safe. ``get(key, load)`` returns the pooled value, or runs ``load()`` under the pool's load lock (one
    loader at a time; a second request for the same key waits and gets the first one's value). Before a load, the
    least recently used models are dropped to make room (``on_evict(value)`` is called for each, so that the
    registry that holds it lets it go), so loading never holds ``max_models + 1`` pooled models.

    A job still using a dropped model keeps it until it ends. The pool remembers it (weakly): asked for again while
    that job runs, the pool takes it back instead of loading a second copy. So the models in memory are at most
    ``max_models`` plus those dropped while a running request still uses them (each request uses one model), and
    never two copies of one model.
    """

    def __init__(self, max_models: int, on_evict: Callable[[object], None] | None = None):
        if max_models < 1:
            raise ValueError(f"max_models must be at least 1, got {max_models}")
        self.max_models = int(max_models)
        self.on_evict = on_evict
        self._items: OrderedDict[object, object] = OrderedDict()
        self._dropped: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
        self._lock = threading.Lock()
        self._load_lock = threading.Lock()
        self.evictions = 0
        self.loads = 0
        self.adopted = 0

    def _lookup(self, key) -> tuple[object | None, list]:
        """Under ``_lock``: the pooled value (or a dropped one still alive, taken back), and what that drops."""
        if key in self._items:
            self._items.move_to_end(key)
            return self._items[key], []
        alive = self._dropped.get(key)
        if alive is None:
            return None, []
        del self._dropped[key]
        self.adopted += 1
        return alive, self._admit(key, alive)

    def _admit(self, key, value) -> list:
        """Under ``_lock``: add ``value`` as the most recently used; returns the values dropped for it."""
        self._items[key] = value
        self._items.move_to_end(key)
        return self._trim(self.max_models)

    def _trim(self, keep: int) -> list:
        dropped = []
        while len(self._items) > keep:
            old_key, old = self._items.popitem(last=False)
            with contextlib.suppress(TypeError):  # a value that cannot be referenced weakly (tests' strings)
                self._dropped[old_key] = old
            dropped.append(old)
            self.evictions += 1
        return dropped

    def _evicted(self, dropped: list) -> None:
        """Outside ``_lock``: tell the registry, let go of the values (the list is emptied), free them now."""
        if not dropped:
            return
        if self.on_evict is not None:
            for old in dropped:
                self.on_evict(old)
        dropped.clear()
        gc.collect()  # a dropped model that no job uses is freed now (its cycles too), before the next one loads

    def get(self, key, load: Callable[[], object]):
        with self._lock:
            value, dropped = self._lookup(key)
        if value is not None:
            self._evicted(dropped)
            return value
        with self._load_lock:
            with self._lock:
                value, dropped = self._lookup(key)  # loaded (or taken back) while this request waited
                if value is None:
                    dropped = self._trim(self.max_models - 1)  # room first: at most max_models pooled
            self._evicted(dropped)
            if value is not None:
                return value
            value = load()
            self.loads += 1
            with self._lock:
                dropped = self._admit(key, value)
        self._evicted(dropped)
        return value

    def __contains__(self, key) -> bool:
        with self._lock:
            return key in self._items

    def keys(self) -> list:
        with self._lock:
            return list(self._items)
