"""chrF, BLEU and TER of a Compare upload computed in the background, after BERTScore's results are on the page.

sacrebleu is pure Python and TER's shift search grows with about the cube of a text's length: 16 systems x 100
summaries of 60-80 words cost TER about ten minutes of one core, while BERTScore's pass over the same pairs takes
about a minute. Run in the page's script, that work held the results back for minutes (issue 40). Here it is a job:

* **after BERTScore**: the page shows BERTScore's answer, table and tabs at once and draws this job's progress (counts
  of outputs scored, the metric at work) above them; each metric joins the table when it is complete;
* **in worker processes** (:func:`bertscore_viz.serving.isolated.run_isolated`, a chunk of about
  :data:`CHUNK_SECONDS` of work per call, at a lower CPU priority), so that the server's interpreter only waits on a
  pipe: no other session waits for the GIL;
* **bounded**: :func:`bertscore_viz.evaluation.sacrebleu_metrics.plan` leaves out a metric whose estimated work is
  over the deployment's ``sentence_metrics_seconds`` (saying so, with the sacrebleu command that scores it), and a
  metric that runs past that bound in fact is stopped the same way;
* **owned by the page that asked**: a job nobody looked at for :data:`ABANDON_SECONDS` (the page polls it every
  second while it shows the progress) stops after its current chunk and keeps what it finished; the page resumes
  it when it is shown again. :meth:`SentenceMetricsJob.cancel` stops it at once (a new file, Forget).

No Streamlit here: the page (``app/app_pages/compare/metrics.py``) draws it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence

import numpy as np

from bertscore_viz.errors import BertScoreVizError
from bertscore_viz.evaluation import sacrebleu_metrics as sm
from bertscore_viz.files.limits import MAX_SECONDS
from bertscore_viz.serving import isolated

__all__ = ["ABANDON_SECONDS", "CHUNK_SECONDS", "INLINE_SECONDS", "group_calls", "plan_chunks", "SentenceMetricsJob",
           "Progress"]

#: Estimated seconds of work per worker call (the chunk of segments of one system grows until it reaches this).
CHUNK_SECONDS = 1.0
#: Most segments per worker call.
MAX_CHUNK_SEGMENTS = 500
#: A job estimated at most this many seconds runs in the page's own thread (:meth:`SentenceMetricsJob.run_inline`).
INLINE_SECONDS = 0.5
#: A job nobody polled for this long stops after its current chunk (the page resumes it when shown again).
ABANDON_SECONDS = 30.0


class Progress(tuple):
    """``(done, total, metric at work or None)`` in outputs (systems x segments, every metric counted)."""

    __slots__ = ()

    def __new__(cls, done: int, total: int, metric: str | None):
        return super().__new__(cls, (done, total, metric))

    @property
    def done(self) -> int:
        return self[0]

    @property
    def total(self) -> int:
        return self[1]

    @property
    def metric(self) -> str | None:
        return self[2]


def plan_chunks(metric: str, hypotheses: Sequence[str], references: Sequence[Sequence[str]]
            ) -> list[tuple[int, int, float]]:
    """``(start, stop, estimated seconds)`` chunks of one system's segments, each about :data:`CHUNK_SECONDS` of
    estimated work (at most :data:`MAX_CHUNK_SEGMENTS` segments)."""
    cost = sm.COST_PER_OUTPUT[metric]
    out, start, acc = [], 0, 0.0
    for i, (h, refs) in enumerate(zip(hypotheses, references)):
        words = (len(h.split()) + sum(len(r.split()) for r in refs) / max(1, len(refs))) / 2.0
        acc += cost(words) * max(1, len(refs))
        if acc >= CHUNK_SECONDS or i + 1 - start >= MAX_CHUNK_SEGMENTS:
            out.append((start, i + 1, acc))
            start, acc = i + 1, 0.0
    if start < len(hypotheses):
        out.append((start, len(hypotheses), acc))
    return out


def group_calls(pieces: list[tuple[str, int, int, float]]) -> list[list[tuple[str, int, int, float]]]:
    """Pieces ``(system, start, stop, estimate)`` grouped into worker calls of about :data:`CHUNK_SECONDS` each: a
    cheap metric (chrF of 16 systems of 100 summaries: about a second in all) is one call, not one per system
    (a worker's start costs more than such a piece)."""
    calls: list[list[tuple[str, int, int, float]]] = []
    acc = CHUNK_SECONDS
    for piece in pieces:
        if acc >= CHUNK_SECONDS:
            calls.append([])
            acc = 0.0
        calls[-1].append(piece)
        acc += piece[3]
    return calls


class SentenceMetricsJob:
    """sacrebleu's chrF, BLEU and TER of every system of one dataset, computed by a background thread through worker
    processes, readable at any time.

    Args:
        systems: ``{name: (n,) outputs}``; references: ``(n,)`` lists of references.
        max_seconds: the most estimated (and then actual) seconds of one core a metric may take; a metric over it
            is left out with the reason (``bound_name`` names the bound in it).
        max_outputs: most outputs per metric (default :data:`~bertscore_viz.evaluation.sacrebleu_metrics.
            MAX_OUTPUTS`).
        worker_seconds, worker_memory_bytes: the limits of one worker call.
    """

    def __init__(self, systems: Mapping[str, Sequence[str]], references: Sequence[Sequence[str]],
                 max_seconds: float | None = None, max_outputs: Mapping[str, int] | None = None,
                 bound_name: str = "this page's", worker_seconds: float = MAX_SECONDS,
                 worker_memory_bytes: int | None = None):
        self.systems = {name: list(outputs) for name, outputs in systems.items()}
        self.references = [list(r) for r in references]
        self.max_seconds = max_seconds
        self.bound_name = bound_name
        self.worker_seconds = worker_seconds
        self.worker_memory_bytes = worker_memory_bytes
        todo, skipped, cost = sm.plan(self.systems, self.references, sm.METRICS, max_outputs, max_seconds, bound_name)
        self.todo: list[str] = todo
        self.estimate: dict[str, float] = cost
        self._skipped: dict[str, str] = dict(skipped)
        self._n = len(self.references)
        self._identical = sm.identical_pairs(self.systems)
        self._streams = sm.reference_streams(self.references)
        self._parts: dict[str, dict[str, tuple[list, np.ndarray]]] = {m: {} for m in todo}
        self._scored: dict[str, sm.MetricScores] = {}
        self._done: dict[str, int] = {m: 0 for m in todo}
        self._metric: str | None = None
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._cancel = threading.Event()
        self._last_seen = time.monotonic()
        self._spent: dict[str, float] = {}
        self.error: str | None = None
        self._surface: tuple[int, sm.SurfaceScores | None] = (-1, None)
        self._version = 0  # changes when a metric is scored or left out
        self._inline = False

    # --- a copy (a kept session, a read-only link) --------------------------------------------------------------
    def __getstate__(self) -> dict:
        """What a copy keeps: the work finished so far, not the thread or the lock (a copy resumes on its own when
        its page is shown: :meth:`ensure_running`)."""
        with self._lock:
            state = dict(self.__dict__)
        state["_parts"] = {m: dict(p) for m, p in state["_parts"].items()}
        for name in ("_lock", "_thread", "_cancel"):
            state.pop(name)
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()
        self._thread = None
        self._cancel = threading.Event()
        self._last_seen = time.monotonic()

    def __deepcopy__(self, memo) -> SentenceMetricsJob:
        import copy

        new = SentenceMetricsJob.__new__(SentenceMetricsJob)
        memo[id(self)] = new
        new.__setstate__(copy.deepcopy(self.__getstate__(), memo))
        return new

    # --- reading -------------------------------------------------------------------------------------------------
    @property
    def total(self) -> int:
        return self._n * len(self.systems) * len(self.todo)

    def progress(self) -> Progress:
        with self._lock:
            return Progress(sum(self._done.values()), self.total, self._metric)

    @property
    def finished(self) -> bool:
        """Every metric scored or left out (with its reason)."""
        with self._lock:
            return all(m in self._scored or m in self._skipped for m in self.todo)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def completed(self) -> tuple[str, ...]:
        """The metrics available so far (scored or left out), in :data:`METRICS` order."""
        with self._lock:
            return tuple(m for m in sm.METRICS if m in self._scored or m in self._skipped)

    def surface(self) -> sm.SurfaceScores | None:
        """The metrics scored so far with the reasons of those left out; None while nothing is available.
        The same object until a metric is scored or left out (the page keeps its bootstrap by it)."""
        with self._lock:
            if self._surface[0] == self._version:
                return self._surface[1]
            value = None
            if self._scored or self._skipped:
                value = sm.SurfaceScores({m: self._scored[m] for m in sm.METRICS if m in self._scored},
                                         {m: self._skipped[m] for m in sm.METRICS if m in self._skipped},
                                         self._n, self._identical)
            self._surface = (self._version, value)
            return value

    def pending(self) -> tuple[str, ...]:
        with self._lock:
            return tuple(m for m in self.todo if m not in self._scored and m not in self._skipped)

    # --- control -------------------------------------------------------------------------------------------------
    def touch(self) -> None:
        """Someone is looking: the job keeps going (see :data:`ABANDON_SECONDS`)."""
        self._last_seen = time.monotonic()

    def ensure_running(self) -> None:
        """Start (or resume, keeping what was finished) the background thread unless finished or running."""
        self.touch()
        if self.finished or self.running or self._cancel.is_set():
            return
        self._thread = threading.Thread(target=self._run, name="bertscore-viz-sentence-metrics", daemon=True)
        self._thread.start()

    @property
    def estimated_seconds(self) -> float:
        """Estimated seconds of one core for the metrics to score."""
        return float(sum(self.estimate[m] for m in self.todo))

    def run_inline(self) -> None:
        """Do the work in the calling thread, without worker processes: for a small job (a fraction of a second,
        :data:`INLINE_SECONDS`), where starting a worker would cost more than the work."""
        self._inline = True
        self._run()

    def cancel(self) -> None:
        self._cancel.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the thread (at most ``timeout`` seconds); True when the job is finished."""
        if self._thread is not None:
            self._thread.join(timeout)
        return self.finished

    # --- work ----------------------------------------------------------------------------------------------------
    def _stop_asked(self) -> bool:
        return self._cancel.is_set() or time.monotonic() - self._last_seen > ABANDON_SECONDS

    def _skip(self, metric: str, why: str) -> None:
        with self._lock:
            self._skipped[metric] = why
            self._version += 1
            self._parts[metric] = {}
            self._done[metric] = self._n * len(self.systems)  # the metric's outputs count as handled

    def _run(self) -> None:
        try:
            for metric in self.todo:
                if metric in self._scored or metric in self._skipped:
                    continue
                with self._lock:
                    self._metric = metric
                if not self._run_metric(metric):
                    return
        except Exception as exc:  # a bug: said on the page, never a hang
            self.error = f"{type(exc).__name__}: {str(exc)[:300]}"
            with self._lock:
                for m in self.todo:
                    if m not in self._scored and m not in self._skipped:
                        self._skipped[m] = f"{m} could not be computed ({self.error}). This is a bug of bertscore-viz."
                self._version += 1
        finally:
            with self._lock:
                self._metric = None

    def _run_metric(self, metric: str) -> bool:
        """Score one metric, a worker call at a time; False when asked to stop (the finished systems are kept)."""
        parts = self._parts[metric]
        with self._lock:  # resumed: the systems kept count, a system stopped half-way starts again
            self._done[metric] = self._n * len(parts)
        pieces = [(system, start, stop, est) for system, hyps in self.systems.items() if system not in parts
                  for start, stop, est in plan_chunks(metric, hyps, self.references)]
        partial: dict[str, tuple[list, list[np.ndarray]]] = {}
        for call in group_calls(pieces):
            if self._stop_asked():
                return False
            began = time.monotonic()
            work = [(self.systems[system][start:stop], [st[start:stop] for st in self._streams])
                    for system, start, stop, _ in call]
            names = sorted({system for system, *_ in call})
            try:
                if self._inline:
                    results = sm.chunks_statistics(metric, work)
                else:
                    results = isolated.run_isolated(sm.chunks_statistics, metric, work,
                                                    max_seconds=self.worker_seconds,
                                                    max_memory_bytes=self.worker_memory_bytes,
                                                    what=f"{metric} of {', '.join(names[:3])}"
                                                         + (" ..." if len(names) > 3 else ""))
            except BertScoreVizError as exc:
                self._skip(metric, f"{metric} was not computed: {exc}")
                return True
            spent = self._spent[metric] = self._spent.get(metric, 0.0) + time.monotonic() - began
            for (system, _start, stop, _), (s, x) in zip(call, results):
                stats, scores = partial.setdefault(system, ([], []))
                stats.extend(s)
                scores.append(x)
                if stop == self._n:  # the system's last chunk: it is complete
                    with self._lock:
                        parts[system] = (stats, np.concatenate(scores))
            with self._lock:
                self._done[metric] += sum(stop - start for _, start, stop, _ in call)
            if self.max_seconds is not None and spent > self.max_seconds:
                self._skip(metric, f"{metric} was stopped after {sm.duration(spent)} of work, over "
                                   f"{self.bound_name} {sm.duration(self.max_seconds)} (estimated "
                                   f"{sm.duration(self.estimate.get(metric, 0.0))}). sacrebleu scores them on "
                                   "the command line: `sacrebleu REFERENCE -i SYSTEM.txt ... -m "
                                   f"{metric.lower()}`.")
                return True
        if self._n == 0:
            parts.update({system: ([], np.zeros(0)) for system in self.systems})
        value = sm.metric_scores(metric, parts, self.references)
        with self._lock:
            self._scored[metric] = value
            self._version += 1
            self._parts[metric] = {}
        return True
