"""Heavy scoring jobs on a shared server: at most ``max_jobs`` at once, the others wait in arrival order."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["JobQueue", "wait_message"]


class JobQueue:
    """At most ``max_jobs`` jobs at once; the others wait in arrival order (first come, first served).

    ``slot(on_wait)`` is a context manager; while waiting, ``on_wait(running, before)`` is called about every
    ``poll`` seconds with the number of jobs running and the number of jobs waiting before this one. An exception
    raised by ``on_wait`` (e.g. the user left the page) takes the job out of the queue; an exception raised by the
    job itself frees its slot. A thread that already holds a slot enters again without waiting (nested calls of
    one job).
    """

    def __init__(self, max_jobs: int, poll: float = 0.5):
        if max_jobs < 1:
            raise ValueError(f"max_jobs must be at least 1, got {max_jobs}")
        self.max_jobs = int(max_jobs)
        self.poll = poll
        self._cond = threading.Condition()
        self._waiting: list[object] = []
        self._running = 0
        self._local = threading.local()
        self.max_running = 0
        self.waited = 0

    @property
    def running(self) -> int:
        with self._cond:
            return self._running

    @property
    def waiting(self) -> int:
        with self._cond:
            return len(self._waiting)

    def acquire(self, on_wait: Callable[[int, int], None] | None = None) -> None:
        depth = getattr(self._local, "depth", 0)
        if depth:
            self._local.depth = depth + 1
            return
        ticket = object()
        with self._cond:
            self._waiting.append(ticket)
            try:
                announced = False
                while True:
                    pos = self._waiting.index(ticket)
                    if self._running + pos < self.max_jobs:
                        break
                    if on_wait is not None:
                        running = self._running
                        self._cond.release()
                        try:
                            on_wait(running, pos)
                        finally:
                            self._cond.acquire()
                        announced = True
                    self._cond.wait(self.poll)
                self._waiting.remove(ticket)
                self._running += 1
                self.max_running = max(self.max_running, self._running)
                self.waited += int(announced)
            except BaseException:
                if ticket in self._waiting:
                    self._waiting.remove(ticket)
                self._cond.notify_all()
                raise
        self._local.depth = 1

    def release(self) -> None:
        depth = getattr(self._local, "depth", 0)
        if depth > 1:
            self._local.depth = depth - 1
            return
        self._local.depth = 0
        with self._cond:
            self._running -= 1
            self._cond.notify_all()

    @contextmanager
    def slot(self, on_wait: Callable[[int, int], None] | None = None) -> Iterator[None]:
        """Hold a slot for the ``with`` block (waiting for one first)."""
        self.acquire(on_wait)
        try:
            yield
        finally:
            self.release()


def wait_message(running: int, before: int, max_jobs: int) -> str:
    """What a waiting user reads: what is true now (jobs running, jobs queued before theirs) and how many jobs
    must end before theirs starts (first come, first served)."""
    ends = max(1, running + before - max_jobs + 1)
    return (f"Waiting for a free slot: {running} job(s) running, {before} waiting before yours. This server scores "
            f"at most {max_jobs} large job(s) at once; yours starts when "
            + ("1 more job ends." if ends == 1 else f"{ends} more jobs end."))
