"""Deployment settings for a shared server: which models a browser user may choose, how many are held at once,
how many heavy scoring jobs run at once (the others wait their turn in order), upload limits, and where baselines
saved in the app are kept.

Read from environment variables, else from a ``[bertscore_viz]`` table of a TOML file (``BERTSCORE_VIZ_CONFIG``,
else ``.streamlit/secrets.toml`` in the working directory), else the defaults; see docs/DEPLOY.md. The engine
itself (API, CLI) ignores these settings: they restrict what the *app* lets a browser user do.

No Streamlit here: :class:`ModelPool` and :class:`JobQueue` are thread-safe and process-wide by use, not by
import; ``bertscore_viz/ui/cache.py`` applies them.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Mapping

from .errors import ModelError
from .models import BUNDLED_ALIASES, BUNDLED_MODEL_NAME, ModelSpec, resolve_model

ENV_PREFIX = "BERTSCORE_VIZ_"
#: Setting name -> (type, default). Environment variable: ``BERTSCORE_VIZ_`` + name in upper case.
SETTINGS: dict[str, tuple[type, object]] = {
    "models": (list, []),
    "allow_custom_models": (bool, False),
    "allow_downloads": (bool, False),
    "max_models": (int, 2),
    "max_jobs": (int, 2),
    "small_job": (int, 64),
    "upload_mb": (float, 50.0),
    "upload_rows": (int, 200_000),
    "session_upload_mb": (float, 500.0),
    "baseline_dir": (str, ""),
}
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


class ModelNotAllowed(ModelError):
    """A model that this deployment does not offer. The message names no server path."""


class DeployConfigError(ValueError):
    """A deployment setting with a value that cannot be used (raised at start-up, for the operator)."""


@dataclass(frozen=True)
class Policy:
    """What a browser user may do on this server.

    Attributes:
        models: the models offered, as ``name`` or ``label=name-or-path`` entries; empty = the bundled model and
            the catalog models installed on this server.
        allow_custom_models: users may also type any local directory or hub name (free text).
        allow_downloads: hub names may be downloaded; otherwise only models already on this server load.
        max_models: most models held in memory at once; loading another evicts the least recently used.
        max_jobs: most heavy scoring jobs at once; later ones wait in a queue, in arrival order.
        small_job: jobs of at most this many sentences (one pair on Inspect) never wait.
        upload_mb, upload_rows: largest upload per file (MB) and most data rows read from it.
        session_upload_mb: most MB one browser session may upload in total.
        baseline_dir: where baselines saved in the app are kept for later sessions ("" = not kept).
    """

    models: tuple[str, ...] = ()
    allow_custom_models: bool = False
    allow_downloads: bool = False
    max_models: int = 2
    max_jobs: int = 2
    small_job: int = 64
    upload_mb: float = 50.0
    upload_rows: int = 200_000
    session_upload_mb: float = 500.0
    baseline_dir: str = ""

    @property
    def upload_bytes(self) -> int:
        return int(self.upload_mb * 2**20)

    @property
    def session_upload_bytes(self) -> int:
        return int(self.session_upload_mb * 2**20)


def _convert(name: str, kind: type, value: object) -> object:
    if kind is list:
        if isinstance(value, str):
            return tuple(v.strip() for v in value.split(",") if v.strip())
        if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
            return tuple(v.strip() for v in value if v.strip())
        raise DeployConfigError(f"{name} must be a comma-separated list of model names, got {value!r}.")
    if kind is bool:
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in _TRUE or text in _FALSE:
            return text in _TRUE
        raise DeployConfigError(f"{name} must be 1/0, true/false, yes/no or on/off, got {value!r}.")
    try:
        out = kind(value)
    except (TypeError, ValueError):
        what = "a whole number" if kind is int else "a number"
        raise DeployConfigError(f"{name} must be {what}, got {value!r}.") from None
    if kind in (int, float) and out < (0 if name == "small_job" else 1):
        raise DeployConfigError(f"{name} must be at least {0 if name == 'small_job' else 1}, got {value!r}.")
    return out


def _config_file(env: Mapping[str, str]) -> dict:
    path = env.get(ENV_PREFIX + "CONFIG")
    candidate = Path(path) if path else Path.cwd() / ".streamlit" / "secrets.toml"
    if not candidate.is_file():
        if path:
            raise DeployConfigError(f"{ENV_PREFIX}CONFIG names {path}, which does not exist.")
        return {}
    import tomllib

    try:
        data = tomllib.loads(candidate.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise DeployConfigError(f"The deployment config {candidate} is not valid TOML: {exc}") from None
    table = data.get("bertscore_viz", {})
    if not isinstance(table, dict):
        raise DeployConfigError(f"[bertscore_viz] in {candidate} must be a table.")
    unknown = sorted(set(table) - set(SETTINGS))
    if unknown:
        raise DeployConfigError(f"Unknown setting(s) {unknown} in [bertscore_viz] of {candidate}; known: "
                                f"{sorted(SETTINGS)}.")
    return table


def load_policy(env: Mapping[str, str] | None = None) -> Policy:
    """The policy from environment variables (first), the config file, then the defaults.

    Raises:
        DeployConfigError: a value that cannot be used, naming the setting.
    """
    env = os.environ if env is None else env
    file_values = _config_file(env)
    values = {}
    for name, (kind, default) in SETTINGS.items():
        var = ENV_PREFIX + name.upper()
        if var in env:
            values[name] = _convert(var, kind, env[var])
        elif name in file_values:
            values[name] = _convert(name, kind, file_values[name])
        else:
            values[name] = _convert(name, kind, default)
    return Policy(**values)


_POLICY: Policy | None = None
_POLICY_LOCK = threading.Lock()


def policy() -> Policy:
    """The process-wide policy, read once."""
    global _POLICY
    with _POLICY_LOCK:
        if _POLICY is None:
            _POLICY = load_policy()
        return _POLICY


# --- models -------------------------------------------------------------------------------------------------------
def _installed_catalog() -> list[str]:
    """Names of the offline catalog models installed on this server (``models install NAME``)."""
    from . import catalog

    try:
        return [e.name for e in catalog.catalog() if e.kind == "offline" and catalog.installed_path(e)]
    except (OSError, ModelError):
        return []


def offered_models(pol: Policy) -> dict[str, str]:
    """``{label shown to users: what resolve_model receives}`` for the models this server offers."""
    out: dict[str, str] = {}
    if not pol.models:
        out[BUNDLED_MODEL_NAME] = BUNDLED_MODEL_NAME
        for name in _installed_catalog():
            out.setdefault(str(name), str(name))
        return out
    for entry in pol.models:
        label, sep, target = entry.partition("=")
        label, target = label.strip(), (target.strip() if sep else label.strip())
        if label in BUNDLED_ALIASES:
            label = BUNDLED_MODEL_NAME
        out.setdefault(label, target)
    return out


def _looks_like_path(text: str) -> bool:
    return text.startswith((".", "/", "~", "\\")) or text.count("/") > 1 or "\\" in text or ":" in text


def _hub_cached(name: str) -> bool:
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # pragma: no cover - a transformers dependency
        return False
    try:
        found = try_to_load_from_cache(name, "config.json")
    except Exception:  # an invalid repo id: not something this server holds
        return False
    return isinstance(found, str)


def check_model(text: str | None, pol: Policy) -> ModelSpec:
    """The :class:`ModelSpec` of what a browser user chose, if this server offers it.

    A name on the list resolves to its operator-given source; anything else is free text (a directory of the
    server or a hub name), allowed only with ``allow_custom_models``, and a hub name not yet on this server only
    with ``allow_downloads``. Nothing is looked up on disk for a name that is not allowed.

    Raises:
        ModelNotAllowed: naming what was asked for (shortened) and what is offered, never a server path.
        ModelError: the registry's own errors for allowed free text (they echo only what the user typed).
    """
    typed = "" if text is None else str(text).strip()
    if not typed or typed in BUNDLED_ALIASES:
        typed = BUNDLED_MODEL_NAME
    offered = offered_models(pol)
    if typed in offered:
        spec = resolve_model(offered[typed])
        return spec if spec.bundled or spec.name == typed else replace(spec, name=typed)
    shown = typed if len(typed) <= 60 else typed[:57] + "..."
    listing = ", ".join(offered) or "none"
    if not pol.allow_custom_models:
        raise ModelNotAllowed(f"The model {shown!r} is not offered on this server. Choose one of: {listing}. "
                              "Other models (a directory or a hub name) are turned off here; whoever runs the "
                              "server can allow them (docs/DEPLOY.md).")
    if not _looks_like_path(typed) and not Path(typed).expanduser().is_dir() and not pol.allow_downloads \
            and not _hub_cached(typed):
        raise ModelNotAllowed(f"The hub model {shown!r} is not on this server, and downloads are turned off here. "
                              f"Choose one of: {listing}, or a model already on this server.")
    return resolve_model(typed)


class ModelPool:
    """At most ``max_models`` loaded models; loading one more drops the least recently used.

    Thread-safe. ``load(key)`` runs outside the lock (loading takes seconds); ``on_evict(value)`` is called for
    each dropped value, so that the registry that holds it lets it go. A job still using a dropped model keeps
    it until it ends.
    """

    def __init__(self, max_models: int, on_evict: Callable[[object], None] | None = None):
        if max_models < 1:
            raise ValueError(f"max_models must be at least 1, got {max_models}")
        self.max_models = int(max_models)
        self.on_evict = on_evict
        self._items: OrderedDict[object, object] = OrderedDict()
        self._lock = threading.Lock()
        self.evictions = 0

    def get(self, key, load: Callable[[], object]):
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        value = load()
        dropped = []
        with self._lock:
            value = self._items.setdefault(key, value)
            self._items.move_to_end(key)
            while len(self._items) > self.max_models:
                dropped.append(self._items.popitem(last=False)[1])
                self.evictions += 1
        for old in dropped:
            if self.on_evict is not None:
                self.on_evict(old)
        return value

    def __contains__(self, key) -> bool:
        with self._lock:
            return key in self._items

    def keys(self) -> list:
        with self._lock:
            return list(self._items)


class JobQueue:
    """At most ``max_jobs`` jobs at once; the others wait in arrival order (first come, first served).

    ``slot(on_wait)`` is a context manager; while waiting, ``on_wait(n_ahead)`` is called about every
    ``poll`` seconds with the number of jobs that will start before this one (running jobs count when no slot is
    free). An exception raised by ``on_wait`` (e.g. the user left the page) takes the job out of the queue. A
    thread that already holds a slot enters again without waiting (nested calls of one job).
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

    def _ahead(self, ticket) -> int:
        pos = self._waiting.index(ticket)
        free = self.max_jobs - self._running
        return pos if free > pos else pos + self._running

    def acquire(self, on_wait: Callable[[int], None] | None = None) -> None:
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
                        n = self._ahead(ticket)
                        self._cond.release()
                        try:
                            on_wait(n)
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

    class _Slot:
        def __init__(self, queue: "JobQueue", on_wait):
            self.queue, self.on_wait = queue, on_wait

        def __enter__(self):
            self.queue.acquire(self.on_wait)
            return self

        def __exit__(self, *exc):
            self.queue.release()
            return False

    def slot(self, on_wait: Callable[[int], None] | None = None) -> "JobQueue._Slot":
        return JobQueue._Slot(self, on_wait)


def wait_message(n_ahead: int, max_jobs: int) -> str:
    """What a waiting user reads."""
    return (f"Waiting for a free slot, {n_ahead} ahead. This server scores at most {max_jobs} large job(s) at "
            "once; yours starts as soon as one ends.")


# --- baselines kept for later sessions ----------------------------------------------------------------------------
def _safe_name(model: str) -> str:
    import re

    return re.sub(r"[^A-Za-z0-9._-]", "_", model.replace("/", "__")).lstrip(".") or "model"


def saved_baseline_path(directory: str | Path, lang: str, model: str) -> Path:
    """``<directory>/<lang>/<model>.tsv`` with the names made safe as file names."""
    return Path(directory) / _safe_name(lang) / f"{_safe_name(model)}.tsv"


def save_baseline(directory: str | Path, lang: str, model: str, table, provenance_json: str | None = None) -> Path:
    """Keep a baseline (bert-score's format) for later sessions, written atomically, provenance beside it."""
    from .baseline import format_baseline
    from .fileio import atomic_write_text

    path = saved_baseline_path(directory, lang, model)
    if provenance_json is not None:
        atomic_write_text(path.with_suffix(".provenance.json"), provenance_json)
    atomic_write_text(path, format_baseline(table.values))
    return path


def saved_baseline(directory: str | Path, lang: str, model: str):
    """The baseline saved for (lang, model), or None. A saved file that cannot be read is ignored (and logged)."""
    import datetime as dt
    import logging

    from .baseline import BaselineTable, read_baseline
    from .errors import BaselineError

    path = saved_baseline_path(directory, lang, model)
    try:
        stamp = path.stat().st_mtime
        table = read_baseline(path)
    except FileNotFoundError:
        return None
    except (OSError, BaselineError) as exc:
        logging.getLogger("bertscore_viz.app").error("ignoring the saved baseline %s: %s", path, exc)
        return None
    when = dt.datetime.fromtimestamp(stamp, dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return BaselineTable(table.values, f"saved on this server {when}")


def describe(pol: Policy) -> str:
    """The effective settings, one per line, as an operator checks them (``python -m bertscore_viz.deploy``)."""
    lines = [f"{ENV_PREFIX}{name.upper()} = {getattr(pol, name)!r}" for name in SETTINGS]
    lines.append(f"offered models: {', '.join(offered_models(pol))}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Check the deployment settings and print them; exit code 2 with the reason when one is unusable.

    ``python -m bertscore_viz.deploy --exec CMD ...`` then replaces itself with CMD (the image's entry point), so
    that a container with a bad setting stops at once instead of serving an app that fails later.
    """
    import sys

    argv = sys.argv[1:] if argv is None else argv
    command = argv[argv.index("--exec") + 1:] if "--exec" in argv else []
    try:
        pol = load_policy()
    except DeployConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if pol.baseline_dir:
        directory = Path(pol.baseline_dir)
        try:
            directory.mkdir(parents=True, exist_ok=True)
            probe = directory / ".write-test"
            probe.write_text("")
            probe.unlink()
        except OSError as exc:
            print(f"error: {ENV_PREFIX}BASELINE_DIR {directory} is not writable: {exc.strerror}", file=sys.stderr)
            return 2
    print(describe(pol), flush=True)
    if command:
        os.execvp(command[0], command)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
