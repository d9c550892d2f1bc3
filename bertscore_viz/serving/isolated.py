"""Reading a file in a worker process, under a time limit and a memory limit, so that one upload cannot hold the
server's interpreter (and every other session) or its memory.

Parsing is CPU-bound pure Python (csv, json, building the dataset): run in the server process it holds the GIL, and
a pathological file stalled every user (a 120 KB CSV kept ``csv.Sniffer`` busy for 58 s while health checks took
31-39 s). Here the work runs in a child process: the server's thread only waits on a pipe (the GIL released), and

* **time**: the child is killed after ``max_seconds`` of work (its start-up not counted), and the call raises
  :class:`~bertscore_viz.files.limits.LimitExceeded` naming the limit and its setting; the child also has a CPU-time
  limit (``RLIMIT_CPU``) a little above it, so that it ends even if the server is gone;
* **memory**: the child may grow its resident memory by at most ``max_memory_bytes`` over what it starts with: the
  waiting thread reads the child's resident size every :data:`POLL_SECONDS` (Linux ``/proc``) and kills it above
  that; as a backstop its address space is limited (``RLIMIT_AS``) to twice as much more, so that one huge
  allocation fails at once with ``MemoryError``. Either is reported as LimitExceeded. (An address-space limit alone
  was not enough: near it, every allocation first tries and fails to map a new arena, and the read crawled on for
  minutes instead of failing.) Without ``/proc`` only the backstop applies, without ``resource`` (Windows) neither;
* **concurrency**: at most :data:`MAX_WORKERS` children at once; later calls wait for a slot.

Children come from the ``forkserver`` start method where it exists (Linux: a single-threaded server process,
started once, with the readers imported in advance, forks each child: safe from a multithreaded server, and fast),
else ``spawn`` (a fresh interpreter per call). Plain ``fork`` is never used: it copies a multithreaded process.

The functions run must be importable top-level functions and their results picklable; the wrappers below run the
readers of :mod:`bertscore_viz.files.upload`, :mod:`bertscore_viz.files.human_scores` and
:mod:`bertscore_viz.files.results.table` and turn a limit into the reader's own form of a problem.
"""

from __future__ import annotations

import atexit
import contextlib
import math
import multiprocessing
import os
import signal
import threading
import time

from bertscore_viz.errors import BertScoreVizError, InputError
from bertscore_viz.files import human_scores, mtme, tables, upload
from bertscore_viz.files.dataset import Dataset
from bertscore_viz.files.limits import (
    MAX_BYTES,
    MAX_CELL_CHARS,
    MAX_CELLS,
    MAX_COLUMNS,
    MAX_MEMORY_BYTES,
    MAX_PAIRS,
    MAX_ROWS,
    MAX_SECONDS,
    MAX_SYSTEMS,
    LimitExceeded,
    setting_note,
)
from bertscore_viz.files.results import table as results_table

try:  # POSIX only: without it the child runs without a memory and CPU limit (the wall-clock limit still holds)
    import resource
except ImportError:  # pragma: no cover - Windows
    resource = None

__all__ = ["MAX_WORKERS", "STARTUP_SECONDS", "POLL_SECONDS", "run_isolated", "stop_forkserver", "read_table",
           "parse_upload", "build_dataset", "parse_human_scores", "read_results", "mtme_catalogue", "read_mtme",
           "start_method"]

#: Most worker processes reading files at once (later calls wait for a slot).
MAX_WORKERS = max(1, min(4, os.cpu_count() or 1))
#: Longest a worker may take to start (import the readers) before the time limit starts counting.
STARTUP_SECONDS = 120.0
#: How often the waiting thread looks at the worker's memory.
POLL_SECONDS = 0.05
#: Modules the forkserver imports once, so that each child starts with them.
_PRELOAD = ["bertscore_viz.files.upload", "bertscore_viz.files.human_scores", "bertscore_viz.files.results.table",
            "bertscore_viz.files.mtme", "bertscore_viz.evaluation.sacrebleu_metrics"]
_SLOTS = threading.BoundedSemaphore(MAX_WORKERS)
_CONTEXT_LOCK = threading.Lock()
_CONTEXT: list = []


def start_method() -> str:
    """``"forkserver"`` where available, else ``"spawn"`` (never ``"fork"``)."""
    return "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"


def _context():
    with _CONTEXT_LOCK:
        if not _CONTEXT:
            ctx = multiprocessing.get_context(start_method())
            if start_method() == "forkserver":
                ctx.set_forkserver_preload(_PRELOAD)
                atexit.register(stop_forkserver)
            _CONTEXT.append(ctx)
        return _CONTEXT[0]


def stop_forkserver() -> None:
    """End the forkserver now (at the server's exit, atexit): left to itself it outlived a SIGTERM'd server by
    many seconds, tearing down the torch it preloaded (issue 40). It keeps no state, and no worker outlives the
    server's waiting thread, so it is killed, not asked."""
    from multiprocessing import forkserver

    server = getattr(forkserver, "_forkserver", None)
    pid = getattr(server, "_forkserver_pid", None)
    if not pid:
        return
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass
    try:
        server._stop_unlocked()  # closes its pipe and socket; waitpid of a reaped child fails
    except (OSError, ChildProcessError, TypeError):
        server._forkserver_pid = None


def _memory(pid: int | str = "self") -> tuple[int, int] | None:
    """``(address space, resident size)`` of a process in bytes (Linux), or None where it cannot be read."""
    try:
        with open(f"/proc/{pid}/statm", encoding="ascii") as f:
            fields = f.read().split()
        page = os.sysconf("SC_PAGE_SIZE")
        return int(fields[0]) * page, int(fields[1]) * page
    except (OSError, ValueError, IndexError):
        return None


#: How much lower a reader's CPU priority is than the server's (``nice``): on a busy machine the server's own
#: requests (health checks, other sessions' pages) are served first, and the reader takes the CPU left over.
READER_NICENESS = 10


def _apply_limits(max_memory_bytes: int | None, max_seconds: float) -> None:
    with contextlib.suppress(AttributeError, OSError):  # no nice() here: the reader runs at the server's priority
        os.nice(READER_NICENESS)
    if resource is None:
        return
    cpu = int(math.ceil(max_seconds)) + 2
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    now = _memory()
    if max_memory_bytes is not None and now is not None:
        limit = now[0] + 2 * int(max_memory_bytes)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _child(conn, func, args, kwargs, max_memory_bytes, max_seconds) -> None:
    """The worker: apply the limits, say it started (with its resident size), run, send ``(status, payload)``."""
    try:
        _apply_limits(max_memory_bytes, max_seconds)
        now = _memory()
        conn.send(("started", None if now is None else now[1]))
        payload = ("ok", func(*args, **kwargs))
    except MemoryError:
        payload = ("memory", None)
    except BertScoreVizError as exc:
        payload = ("error", exc)
    except Exception as exc:  # a bug in a reader: reported, never a hang
        payload = ("crash", f"{type(exc).__name__}: {str(exc)[:300]}")
    try:
        conn.send(payload)
    except MemoryError:
        conn.send(("memory", None))
    except (OSError, ValueError):  # the server went away
        pass
    finally:
        conn.close()


def _too_slow(what: str, max_seconds: float) -> LimitExceeded:
    return LimitExceeded(f"{what} took longer than {max_seconds:g} s to read, the most allowed here "
                         f"{setting_note('max_seconds')}; reading was stopped. Split it into smaller files, or read it "
                         "with the command line.")


def _too_big(what: str, max_memory_bytes: int | None) -> LimitExceeded:
    size = "the memory" if max_memory_bytes is None else tables.describe_size(max_memory_bytes)
    return LimitExceeded(f"{what} needs more than {size} of memory to read, the most allowed here "
                         f"{setting_note('max_memory_bytes')}; reading was stopped. Split it into smaller files.")


def _outcome(status: str, payload, what: str, max_memory_bytes: int | None):
    if status == "ok":
        return payload
    if status == "memory":
        raise _too_big(what, max_memory_bytes)
    if status == "error":
        raise payload
    raise InputError(f"{what} could not be read: the reader failed ({payload}). This is a bug of bertscore-viz; "
                     "please report it with the file.")


def _died(proc, what: str, max_seconds: float, max_memory_bytes: int | None) -> BertScoreVizError:
    """Why a worker ended without an answer (killed by its CPU limit or the system's out-of-memory killer)."""
    proc.join(5)
    code = proc.exitcode
    if code is not None and code < 0 and -code == getattr(signal, "SIGXCPU", None):
        return _too_slow(what, max_seconds)
    if code is not None and code < 0:
        return _too_big(what, max_memory_bytes)
    return InputError(f"{what} could not be read: the worker process ended (exit code {code}).")


def _wait(receiver, pid: int, resident: int | None, what: str, max_seconds: float,
          max_memory_bytes: int | None) -> None:
    """Until the worker answers: LimitExceeded past the time limit, or when its resident size grew by more than
    the memory limit."""
    deadline = time.monotonic() + max_seconds
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise _too_slow(what, max_seconds)
        if receiver.poll(min(POLL_SECONDS, remaining)):
            return
        if max_memory_bytes is not None and resident is not None:
            now = _memory(pid)
            if now is not None and now[1] - resident > max_memory_bytes:
                raise _too_big(what, max_memory_bytes)


def run_isolated(func, *args, max_seconds: float = MAX_SECONDS, max_memory_bytes: int | None = MAX_MEMORY_BYTES,
                 what: str = "The file", **kwargs):
    """``func(*args, **kwargs)`` in a worker process under a time and a memory limit.

    Args:
        func: an importable top-level function; its result must be picklable.
        max_seconds: wall-clock seconds of work (after the worker started) before it is killed.
        max_memory_bytes: resident memory the worker may add to what it starts with (None: no memory limit).
        what: how messages name the input (``"The file scores.csv"``).

    Returns:
        What ``func`` returned.

    Raises:
        LimitExceeded: the time or memory limit was reached (the message names the limit and its setting).
        BertScoreVizError: what ``func`` raised (an engine error), as raised.
        InputError: the worker failed otherwise.
    """
    ctx = _context()
    with _SLOTS:
        receiver, sender = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_child, args=(sender, func, args, kwargs, max_memory_bytes, max_seconds),
                           name="bertscore-viz-reader")
        try:
            proc.start()
        except OSError as exc:  # no process can be started (limits of the machine)
            receiver.close()
            sender.close()
            raise InputError(f"{what} could not be read: no reader process could be started ({exc}). Try again "
                             "later.") from None
        sender.close()
        try:
            if not receiver.poll(STARTUP_SECONDS):
                raise InputError(f"{what} could not be read: the reader process did not start within "
                                 f"{STARTUP_SECONDS:g} s (the server is overloaded). Try again.")
            _, resident = receiver.recv()  # "started": the time limit counts from here
            _wait(receiver, proc.pid, resident, what, max_seconds, max_memory_bytes)
            status, payload = receiver.recv()
        except EOFError:
            raise _died(proc, what, max_seconds, max_memory_bytes) from None
        finally:
            receiver.close()
            if proc.is_alive():
                proc.kill()
            proc.join()
    return _outcome(status, payload, what, max_memory_bytes)


# --- the readers, isolated ------------------------------------------------------------------------------------------
def _what(filename: str | None) -> str:
    return f"The file {filename}" if filename else "The file"


def read_table(data: bytes, filename: str | None = None, max_bytes: int = MAX_BYTES, max_rows: int = MAX_ROWS,
               max_columns: int = MAX_COLUMNS, max_cells: int = MAX_CELLS, max_seconds: float = MAX_SECONDS,
               max_memory_bytes: int | None = MAX_MEMORY_BYTES):
    """:func:`bertscore_viz.files.upload.read_table` in a worker; a limit reached is ``(None, [problem])``."""
    if len(data) > max_bytes:  # refused before a worker starts
        return tables.read_table(data, filename, max_bytes, max_rows, max_columns, max_cells)
    try:
        return run_isolated(tables.read_table, data, filename, max_bytes, max_rows, max_columns, max_cells,
                            max_seconds=max_seconds, max_memory_bytes=max_memory_bytes, what=_what(filename))
    except BertScoreVizError as exc:
        return None, [tables.Problem(None, None, str(exc))]


def parse_upload(data: bytes, filename: str | None = None, mapping=None, empty: str = upload.EMPTY_SCORE,
                 max_bytes: int = MAX_BYTES, max_rows: int = MAX_ROWS, max_cell_chars: int = MAX_CELL_CHARS,
                 max_columns: int = MAX_COLUMNS, max_cells: int = MAX_CELLS, max_systems: int = MAX_SYSTEMS,
                 max_pairs: int = MAX_PAIRS, max_seconds: float = MAX_SECONDS,
                 max_memory_bytes: int | None = MAX_MEMORY_BYTES) -> Dataset:
    """:func:`bertscore_viz.files.upload.parse_upload` in a worker; a limit reached is a dataset with that problem."""
    try:
        return run_isolated(upload.parse_upload, data, filename, mapping, empty, max_bytes, max_rows, max_cell_chars,
                            max_columns, max_cells, max_systems, max_pairs, max_seconds=max_seconds,
                            max_memory_bytes=max_memory_bytes, what=_what(filename))
    except BertScoreVizError as exc:
        return Dataset({}, [], None, [], [], [tables.Problem(None, None, str(exc))], mapping)


def build_dataset(table, mapping=None, empty: str = upload.EMPTY_SCORE, max_cell_chars: int = MAX_CELL_CHARS,
                  problems=None, max_systems: int = MAX_SYSTEMS, max_pairs: int = MAX_PAIRS,
                  max_seconds: float = MAX_SECONDS, max_memory_bytes: int | None = MAX_MEMORY_BYTES) -> Dataset:
    """:func:`bertscore_viz.files.upload.build_dataset` in a worker; a limit reached is a dataset with that
    problem (after the reading problems)."""
    try:
        return run_isolated(upload.build_dataset, table, mapping, empty, max_cell_chars, problems, max_systems,
                            max_pairs, max_seconds=max_seconds, max_memory_bytes=max_memory_bytes,
                            what="The table")
    except BertScoreVizError as exc:
        return Dataset({}, [], None, [], [], list(problems or []) + [tables.Problem(None, None, str(exc))],
                              mapping)


def parse_human_scores(data: bytes, filename: str | None = None, human_column: str | None = None,
                       max_bytes: int = MAX_BYTES, max_rows: int = MAX_ROWS, max_cell_chars: int = MAX_CELL_CHARS,
                       max_columns: int = MAX_COLUMNS, max_cells: int = MAX_CELLS, max_seconds: float = MAX_SECONDS,
                       max_memory_bytes: int | None = MAX_MEMORY_BYTES) -> human_scores.HumanScored:
    """:func:`bertscore_viz.files.human_scores.parse_human_scores` in a worker; a limit reached is an empty result
    with that problem."""
    try:
        return run_isolated(human_scores.parse_human_scores, data, filename, human_column, max_bytes, max_rows,
                            max_cell_chars, max_columns, max_cells, max_seconds=max_seconds,
                            max_memory_bytes=max_memory_bytes, what=_what(filename))
    except BertScoreVizError as exc:
        return human_scores.HumanScored([], [], [], None, None, [], [], [tables.Problem(None, None, str(exc))])


def read_results(source, max_bytes: int | None = None, max_rows: int | None = None, max_chars: int | None = None,
                 max_seconds: float = MAX_SECONDS, max_memory_bytes: int | None = MAX_MEMORY_BYTES):
    """:func:`bertscore_viz.files.results.table.read_results` in a worker.

    Raises:
        InputError: as :func:`~bertscore_viz.files.results.table.read_results`, or a limit reached
            (LimitExceeded).
    """
    if isinstance(source, (bytes, bytearray)) and max_bytes is not None and len(source) > max_bytes:
        return results_table.read_results(source, max_bytes, max_rows, max_chars)  # refused before a worker starts
    return run_isolated(results_table.read_results, source, max_bytes, max_rows, max_chars, max_seconds=max_seconds,
                        max_memory_bytes=max_memory_bytes, what="The results file")


def _catalogue(data: bytes, filename: str | None) -> tuple[str, dict[str, tuple[str, ...]]]:
    source = mtme.open_mtme(data, filename)
    return source.name, {ts: source.language_pairs(ts) for ts in source.test_sets}


def _evalset(data: bytes, filename: str | None, lp: str, test_set: str | None) -> mtme.EvalSet:
    return mtme.open_mtme(data, filename).read(lp, test_set, read_metric_scores=False)


def mtme_catalogue(data: bytes, filename: str | None = None, max_seconds: float = MAX_SECONDS,
                   max_memory_bytes: int | None = MAX_MEMORY_BYTES) -> tuple[str, dict[str, tuple[str, ...]]]:
    """The name of an uploaded mt-metrics-eval zip and ``{test set: language pairs}`` in it, read in a worker (a
    zip's listing and members are decompressed there, never in the server's interpreter).

    Raises:
        InputError: as :func:`~bertscore_viz.files.mtme.open_mtme`, or a limit reached (LimitExceeded).
    """
    return run_isolated(_catalogue, data, filename, max_seconds=max_seconds, max_memory_bytes=max_memory_bytes,
                        what=f"The zip {filename}" if filename else "The zip")


def read_mtme(data: bytes, filename: str | None, lp: str, test_set: str | None = None,
              max_seconds: float = MAX_SECONDS, max_memory_bytes: int | None = MAX_MEMORY_BYTES) -> mtme.EvalSet:
    """One language pair of an uploaded mt-metrics-eval zip (its metric scores not read), read in a worker.

    Raises:
        InputError: a missing or malformed file (naming it), or a limit reached (LimitExceeded).
    """
    return run_isolated(_evalset, data, filename, lp, test_set, max_seconds=max_seconds,
                        max_memory_bytes=max_memory_bytes, what=f"The zip {filename}" if filename else "The zip")
