"""Ray plumbing: connecting, planning actors for the cluster's CPUs and GPUs, a pool of actors fed by the driver
with a bounded number of blocks in flight, retries, and the worker processes' setup."""

from __future__ import annotations

import contextlib
import re
import resource
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import torch

from bertscore_viz.engine.cache import CACHE
from bertscore_viz.errors import BertScoreVizError, InputError

#: Blocks handed to one actor at a time: one being scored, one waiting, so an actor never idles between blocks.
IN_FLIGHT_PER_WORKER = 2


#: Calls of one block in all when the call raises (an actor that dies is restarted and its blocks retried apart
#: from this: up to :data:`ACTOR_TASK_RETRIES` times).
BLOCK_ATTEMPTS = 3


ACTOR_TASK_RETRIES = 3


class RayNotInstalled(BertScoreVizError):
    """Ray is needed for this and is not installed."""


class WorkerError(BertScoreVizError):
    """A Ray worker could not start, or a block failed on every attempt; the finished blocks are kept."""


def import_ray():
    try:  # inside the function: Ray is an optional extra ([ray]), and the message below names what installs it
        import ray
    except ImportError:
        raise RayNotInstalled("Distributed scoring needs Ray, which is not installed. Install it with `pip install "
                              "-r requirements-ray.txt` (or `pip install 'bertscore-viz[ray]'`).") from None
    return ray


def connect(address: str | None = None, num_cpus: int | None = None):
    """Ray, initialised: an existing session is reused; no address (or ``local``) starts a new local instance on this
    machine's cores (never joining ``RAY_ADDRESS`` or a ``ray start`` cluster by surprise); ``auto`` joins the cluster
    this machine belongs to; ``HOST:PORT`` a cluster's GCS; ``ray://host:10001`` connects through Ray Client.

    Raises:
        RayNotInstalled, InputError: Ray missing, Ray Client missing for ``ray://``, or the cluster cannot be reached
            (with the address).
    """
    ray = import_ray()
    if ray.is_initialized():
        return ray
    local = address in (None, "", "local")
    kwargs = {"logging_level": "ERROR", "log_to_driver": False}
    try:
        if local:
            ray.init(address="local", num_cpus=num_cpus, include_dashboard=False, **kwargs)
        else:
            ray.init(address=address, **kwargs)
    except ImportError as exc:  # ray:// without the client extra (grpcio)
        raise RayNotInstalled(f"Connecting to {address} needs Ray Client, which is not installed "
                              f"({str(exc).splitlines()[0][:120]}). Install it with `pip install -r "
                              "requirements-ray.txt` (it has `ray[data,client]`).") from None
    except (ConnectionError, RuntimeError, ValueError, TimeoutError, OSError) as exc:
        if local:
            raise InputError(f"Could not start a local Ray instance: {str(exc).splitlines()[0][:200]}.") from None
        raise InputError(f"Could not connect to the Ray cluster at {address!r}: {str(exc).splitlines()[0][:200]}. "
                         "Start one with `ray start --head` (then use --ray auto on that machine) or give the "
                         "client address ray://HEAD:10001.") from None
    return ray


# --- workers ------------------------------------------------------------------------------------------------------
def setup_worker(threads: int | None, cache_mb: float | None):

    if threads:
        torch.set_num_threads(int(threads))
    if cache_mb is not None:

        CACHE.max_bytes = int(cache_mb * 2**20)


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far, MB: Linux's ``VmHWM`` (of this program; ``ru_maxrss`` would keep
    the peak of a parent process across ``exec``), else ``ru_maxrss`` (macOS reports bytes, others kB)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 2**10
    except OSError:
        pass

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 2**10


# --- the pool -----------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Resources:
    """How the actor pool is laid out: ``workers`` actors, each with ``cpus`` CPUs (torch threads) and ``gpus``.
    ``note`` says what was changed from the request to fit the cluster ("" when nothing)."""

    workers: int
    cpus: int
    gpus: int
    note: str = ""

    def describe(self) -> str:
        kind = f"{self.gpus} GPU + {self.cpus} CPU" if self.gpus else f"{self.cpus} CPU thread(s)"
        return f"{self.workers} worker(s), {kind} each"

    def actor_options(self) -> dict:
        """Ray options of each actor: its resources, restarted when it dies, its calls retried then."""
        opts = {"num_cpus": self.cpus, "max_restarts": -1, "max_task_retries": ACTOR_TASK_RETRIES}
        if self.gpus:
            opts["num_gpus"] = self.gpus
        return opts


def plan_resources(ray, workers: int | None = None, cpus_per_worker: int | None = None,
                   device: str | None = None) -> Resources:
    """The actor pool for the cluster, one that can always be scheduled.

    One actor per GPU when the cluster has GPUs (and the device is not ``cpu``), never more than the GPUs; else CPU
    actors: by default one per CPU with one thread each, or ``workers`` actors sharing the CPUs. Actors that would
    not fit the nodes' CPUs are left out, with a ``note`` saying so.

    Raises:
        InputError: ``workers`` or ``cpus_per_worker`` below 1, more CPUs per worker than any node has, or a CUDA
            device asked for on a cluster without GPUs.
    """
    if workers is not None and workers < 1:
        raise InputError(f"--workers must be at least 1, got {workers}.")
    if cpus_per_worker is not None and cpus_per_worker < 1:
        raise InputError(f"--cpus-per-worker must be at least 1, got {cpus_per_worker}.")
    res = ray.cluster_resources()
    total_cpu = int(res.get("CPU", 0))
    gpus = int(res.get("GPU", 0))
    node_cpus = [int(n.get("Resources", {}).get("CPU", 0)) for n in ray.nodes() if n.get("Alive", True)]
    node_cpus = [c for c in node_cpus if c > 0] or ([total_cpu] if total_cpu else [])
    if not node_cpus:
        raise InputError("The Ray cluster has no CPU to run a worker on.")
    largest = max(node_cpus)
    if cpus_per_worker is not None and cpus_per_worker > largest:
        raise InputError(f"--cpus-per-worker {cpus_per_worker} is more than any node of the Ray cluster has (at most "
                         f"{largest} CPUs): no worker could start. Give at most {largest}.")
    use_gpu = gpus > 0 and (device is None or str(device).startswith("cuda"))
    if device is not None and str(device).startswith("cuda") and not gpus:
        raise InputError(f"--device {device} asks for a GPU, and the Ray cluster has none. Leave --device out (CPU "
                         "workers) or add GPU nodes.")
    if use_gpu:
        cpus = cpus_per_worker or 1
        fit = sum(c // cpus for c in node_cpus)
        want = workers or gpus
        n = max(1, min(want, gpus, fit))
        note = ""
        if n < want:
            note = (f"{want} workers asked for; the cluster has {gpus} GPU(s) and room for {fit} worker(s) of {cpus} "
                    f"CPU: using {n}.")
        return Resources(n, cpus, 1, note)
    if workers is None:
        cpus = cpus_per_worker or 1
        return Resources(max(1, sum(c // cpus for c in node_cpus)), cpus, 0)
    cpus = cpus_per_worker or max(1, min(largest, total_cpu // workers))
    fit = sum(c // cpus for c in node_cpus)
    n = max(1, min(workers, fit))
    note = ""
    if n < workers:
        note = (f"{workers} workers of {cpus} CPU(s) do not fit the cluster's {total_cpu} CPU(s) (largest node "
                f"{largest}): using {n}.")
    return Resources(n, cpus, 0, note)


class ActorPool:
    """Actors of one class, fed by the driver: each call goes to the actor with the fewest calls in flight."""

    def __init__(self, ray, cls, ctor_kwargs: dict, res: Resources):
        self.ray = ray
        remote_cls = ray.remote(**res.actor_options())(cls)
        self.actors = [remote_cls.remote(**ctor_kwargs) for _ in range(res.workers)]
        self.load = [0] * len(self.actors)
        self.capacity = IN_FLIGHT_PER_WORKER * len(self.actors)

    def submit(self, key, args: tuple):
        i = min(range(len(self.actors)), key=self.load.__getitem__)
        self.load[i] += 1
        return self.actors[i].score.remote(key, *args), i

    def release(self, slot) -> None:
        self.load[slot] -= 1

    def close(self) -> None:
        for actor in self.actors:
            with contextlib.suppress(Exception):  # already gone
                self.ray.kill(actor)
        self.actors = []


class TaskPool:
    """Ray tasks of one function (no actor): the idf pass."""

    def __init__(self, ray, fn, capacity: int, num_cpus: int = 1):
        self.remote = ray.remote(num_cpus=num_cpus, max_retries=ACTOR_TASK_RETRIES)(fn)
        self.capacity = max(1, capacity)

    def submit(self, key, args: tuple):
        return self.remote.remote(*args), None

    def release(self, slot) -> None:
        pass

    def close(self) -> None:
        pass


class BlockFailed(Exception):
    def __init__(self, key, attempts: int, cause: BaseException):
        super().__init__(key, attempts, cause)
        self.key, self.attempts, self.cause = key, attempts, cause


def stream(ray, pool, jobs: Iterable[tuple[int, Callable[[], tuple]]]) -> Iterator[tuple[int, object]]:
    """``(key, result)`` of every job, in the order they finish.

    ``jobs`` yields ``(key, make_args)``; ``make_args()`` builds a block's arguments only when the pool has room (at
    most ``pool.capacity`` calls in flight), so the blocks are never all in memory or in the object store at once. A
    call that raises is made again, up to :data:`BLOCK_ATTEMPTS` times in all.

    Raises:
        BlockFailed: a block raised on every attempt. Ray's own errors (an actor that cannot start) pass through.
    """
    jobs = iter(jobs)
    pending: dict = {}
    exhausted = False

    def submit(key, make, attempt):
        ref, slot = pool.submit(key, make())
        pending[ref] = (key, make, attempt, slot)

    try:
        while True:
            while not exhausted and len(pending) < pool.capacity:
                nxt = next(jobs, None)
                if nxt is None:
                    exhausted = True
                else:
                    submit(nxt[0], nxt[1], 1)
            if not pending:
                return
            done, _ = ray.wait(list(pending), num_returns=1)
            key, make, attempt, slot = pending.pop(done[0])
            pool.release(slot)
            try:
                result = ray.get(done[0])
            except ray.exceptions.RayTaskError as exc:  # raised by the block's code: once more, on any actor
                if attempt < BLOCK_ATTEMPTS:
                    submit(key, make, attempt + 1)
                    continue
                raise BlockFailed(key, attempt, getattr(exc, "cause", None) or exc) from None
            yield key, result
    finally:  # stopped early (an error, Ctrl-C): what is still queued is not run
        for ref in pending:
            with contextlib.suppress(Exception):  # already finished, or its actor is gone
                ray.cancel(ref)


def failure_reason(exc: BaseException) -> str:
    """What went wrong, in one line, from a Ray error (the original exception, not Ray's traceback)."""
    if isinstance(exc, BlockFailed):
        cause = exc.cause
        text = str(cause).strip().splitlines()
        return (f"block {exc.key} failed on all {exc.attempts} attempts: {type(cause).__name__}: "
                f"{(text[-1] if text else '')[:300]}")

    lines = [re.sub(r"\x1b\[[0-9;]*m", "", ln).strip() for ln in str(exc).splitlines()]
    lines = [ln for ln in lines if ln and not set(ln) <= set("^~ ")]
    if getattr(exc, "actor_init_failed", False):
        return f"a worker could not start ({lines[-1][:300] if lines else type(exc).__name__})"
    return f"{type(exc).__name__}: {(lines[-1] if lines else '')[:300]}"


def guarded(ray, say_failed: Callable[[str], str]):
    """Turns Ray's errors into a :class:`WorkerError` whose message ``say_failed(reason)`` writes."""

    @contextlib.contextmanager
    def guard():
        try:
            yield
        except BlockFailed as exc:
            raise WorkerError(say_failed(failure_reason(exc))) from None
        except ray.exceptions.RayError as exc:
            raise WorkerError(say_failed(failure_reason(exc))) from None

    return guard()
