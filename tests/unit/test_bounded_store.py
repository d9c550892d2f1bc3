"""The app's one bounded store (bertscore_viz/app/shared/bounded_store.py): LRU, bounded by count or weight, stale
entries dropped first, thread-safe."""

from __future__ import annotations

import threading

from bertscore_viz.app.shared.bounded_store import BoundedStore


def test_the_least_recently_used_entry_goes_first():
    store: BoundedStore[str, int] = BoundedStore(2)
    store.put("a", 1)
    store.put("b", 2)
    assert store.get("a") == 1  # a is now the most recently used
    store.put("c", 3)
    assert "b" not in store and store.get("a") == 1 and store.get("c") == 3 and len(store) == 2


def test_a_get_without_touch_keeps_the_order():
    store: BoundedStore[str, int] = BoundedStore(2)
    store.put("a", 1)
    store.put("b", 2)
    store.get("a", touch=False)
    store.put("c", 3)
    assert "a" not in store and "b" in store


def test_a_weighed_bound_read_at_every_eviction_and_stale_entries_first():
    limit = [10]
    store: BoundedStore[str, dict] = BoundedStore(lambda: limit[0], weigh=lambda v: v["size"],
                                                  stale=lambda v, now: now > v["until"])
    store.put("old", {"size": 1, "until": 5.0}, now=0.0)
    store.put("x", {"size": 6, "until": 99.0}, now=1.0)
    store.put("y", {"size": 4, "until": 99.0}, now=10.0)  # "old" is stale: dropped, and x + y fit in 10
    assert [k for k, _ in store.items()] == ["x", "y"]
    limit[0] = 5
    store.evict(now=10.0)
    assert [k for k, _ in store.items()] == ["y"]


def test_threads_never_see_it_over_its_bound():
    store: BoundedStore[int, int] = BoundedStore(8)
    seen = []

    def work(base: int) -> None:
        for i in range(500):
            store.put(base + i, i)
            seen.append(len(store))

    threads = [threading.Thread(target=work, args=(k * 1000,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert max(seen) <= 8 and len(store) == 8
