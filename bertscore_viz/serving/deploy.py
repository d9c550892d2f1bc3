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

import gc
import hashlib
import logging
import math
import os
import re
import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Mapping

from bertscore_viz.errors import ModelError
from bertscore_viz.models.spec import BUNDLED_ALIASES, BUNDLED_MODEL_NAME, ModelSpec, resolve_model

log = logging.getLogger("bertscore_viz.app")
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
    "kept_mb": (float, 1024.0),
    "kept_hours": (float, 8.0),
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
        kept_mb, kept_hours: the work of browser sessions kept in memory for a refresh or a second tab with the
            same link (ui/persist.py): at most this many MB in all, each for this many hours after its last use.
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
    kept_mb: float = 1024.0
    kept_hours: float = 8.0

    @property
    def kept_bytes(self) -> int:
        return int(self.kept_mb * 2**20)

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
    if kind is float and not 0 < out < float("inf"):  # sizes in MB: any positive amount (0.5 = 512 kB)
        unit = "hours" if name.lower().endswith("hours") else "MB"
        raise DeployConfigError(f"{name} must be a positive number of {unit}, got {value!r}.")
    least = 0 if name.lower().endswith("small_job") else 1
    if kind is int and out < least:
        raise DeployConfigError(f"{name} must be at least {least}, got {value!r}.")
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
    from bertscore_viz.models import catalog

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
    """The hub model's config is in this server's Hugging Face cache (then it loads with ``local_files_only``)."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # pragma: no cover - a transformers dependency
        return False
    try:
        found = try_to_load_from_cache(name, "config.json")
    except Exception:  # noqa: BLE001  an invalid repo id: not something this server holds
        return False
    return isinstance(found, str)


def _shown(text: str) -> str:
    """What the user typed, shortened for a message (the only text of theirs a message echoes)."""
    return text if len(text) <= 60 else text[:57] + "..."


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:  # a name too long for the file system, a permission error: not a usable directory
        return False


def _real_name(spec: ModelSpec) -> ModelSpec:
    """A local model under the name its weights have, not the path or label it was reached by: the catalog entry
    whose name is the directory's (its default layer too), a Hugging Face cache snapshot's hub name, else the
    directory's name. Signatures and baseline files (``baselines/<lang>/<name>.tsv``) use this name."""
    from bertscore_viz.models.catalog import get_entry
    from bertscore_viz.models.spec import MODEL_LAYERS

    if spec.bundled or not spec.local:
        return spec
    path = Path(spec.source)
    name = path.name
    if path.parent.name == "snapshots" and path.parent.parent.name.startswith("models--"):
        name = path.parent.parent.name[len("models--"):].replace("--", "/")
    entry = get_entry(name)
    if entry is not None:
        layer = entry.default_layer if entry.default_layer is not None else spec.default_layer
        return replace(spec, name=entry.name, default_layer=layer)
    layer = MODEL_LAYERS.get(name, spec.default_layer)
    return replace(spec, name=name or spec.name, default_layer=layer)


def _hub_spec(spec: ModelSpec, pol: Policy, shown: str, listing: str) -> ModelSpec:
    """A hub name as this server may load it: with downloads off, only from its Hugging Face cache and with
    ``local_files_only`` (``local=True``: the encoder then never opens a connection, whatever HF_HUB_OFFLINE
    says); with downloads on, by name (transformers downloads it on first use)."""
    if pol.allow_downloads:
        return spec
    if not _hub_cached(spec.source):
        raise ModelNotAllowed(f"The hub model {shown!r} is not on this server, and downloads are turned off here. "
                              f"Choose one of: {listing}, or a model already on this server.")
    return replace(spec, local=True)


def _unusable(label: str, what: str, exc: Exception) -> ModelError:
    """A plain message for a model that cannot be used; the engine's (which may name server paths) goes to the
    server log."""
    log.error("model %r (%s) cannot be used: %s", label, what, exc)
    return ModelError(f"The model {_shown(label)!r} cannot be used on this server. Choose another model; whoever "
                      "runs the server finds the reason in its log.")


def check_model(text: str | None, pol: Policy) -> ModelSpec:
    """The :class:`ModelSpec` of what a browser user chose, if this server offers it.

    A name on the list resolves to its operator-given source, under the model's real name (catalog entry or
    directory name: signatures, baselines and the default layer follow it; the operator's label is for display
    only). Anything else is free text (a directory of the server or a hub name), allowed only with
    ``allow_custom_models``; ``~`` is not expanded and a relative path is relative to the server's working
    directory. A hub name (listed or typed) not already in this server's Hugging Face cache needs
    ``allow_downloads``; with downloads off it loads with ``local_files_only``. Nothing is looked up on disk for a
    name that is not allowed.

    Raises:
        ModelNotAllowed: naming what was asked for (shortened) and what is offered, never a server path.
        ModelError: a model that is allowed but cannot be used, naming only what the user chose (the reason goes
            to the server log).
    """
    typed = "" if text is None else str(text).strip()
    if not typed or typed in BUNDLED_ALIASES:
        typed = BUNDLED_MODEL_NAME
    offered = offered_models(pol)
    shown = _shown(typed)
    listing = ", ".join(offered) or "none"
    if typed in offered:
        try:
            spec = resolve_model(offered[typed])  # the operator's own text: their paths, their home directory
        except ModelError as exc:
            raise _unusable(typed, f"offered as {offered[typed]!r}", exc) from None
        return _real_name(spec) if spec.local else _hub_spec(spec, pol, shown, listing)
    if not pol.allow_custom_models:
        raise ModelNotAllowed(f"The model {shown!r} is not offered on this server. Choose one of: {listing}. "
                              "Other models (a directory or a hub name) are turned off here; whoever runs the "
                              "server can allow them (docs/DEPLOY.md).")
    if typed.startswith("~"):
        raise ModelError(f"{shown!r}: give the full path of a model directory on this server; '~' is not "
                         "expanded here.")
    path = Path(typed)
    if _is_dir(path):
        try:
            has_config = (path / "config.json").is_file()
        except OSError:
            has_config = False
        if not has_config:
            raise ModelError(f"The directory {shown!r} holds no config.json, so it is not a Hugging Face model "
                             "directory. Point to the folder that contains config.json and the weights.")
    elif _looks_like_path(typed):
        raise ModelError(f"The model directory {shown!r} does not exist on this server. Check the path, or give "
                         "a hub name.")
    try:
        spec = resolve_model(typed)
    except ModelError as exc:  # e.g. a catalog model that is not installed: the message names its install path
        raise _unusable(typed, "typed by a user", exc) from None
    return _real_name(spec) if spec.local else _hub_spec(spec, pol, shown, listing)


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
            try:
                self._dropped[old_key] = old
            except TypeError:  # a value that cannot be referenced weakly (tests' strings): not tracked
                pass
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

    class _Slot:
        def __init__(self, queue: "JobQueue", on_wait):
            self.queue, self.on_wait = queue, on_wait

        def __enter__(self):
            self.queue.acquire(self.on_wait)
            return self

        def __exit__(self, *exc):
            self.queue.release()
            return False

    def slot(self, on_wait: Callable[[int, int], None] | None = None) -> "JobQueue._Slot":
        return JobQueue._Slot(self, on_wait)


def wait_message(running: int, before: int, max_jobs: int) -> str:
    """What a waiting user reads: what is true now (jobs running, jobs queued before theirs) and how many jobs
    must end before theirs starts (first come, first served)."""
    ends = max(1, running + before - max_jobs + 1)
    return (f"Waiting for a free slot: {running} job(s) running, {before} waiting before yours. This server scores "
            f"at most {max_jobs} large job(s) at once; yours starts when "
            + ("1 more job ends." if ends == 1 else f"{ends} more jobs end."))


# --- baselines kept for later sessions ----------------------------------------------------------------------------
_SAFE = re.compile(r"[^A-Za-z0-9._-]")


def _safe_name(name: str) -> str:
    """A file name for a model or language name, one-to-one: a name of only ``A-Z a-z 0-9 . _ -`` (not starting
    with a dot) is kept as it is; any other gets its characters replaced and ``~`` plus a hash of the original
    added, a character a kept name cannot hold (``org/model`` -> ``org__model~<hash>``, ``org__model`` stays)."""
    if name and not name.startswith(".") and not _SAFE.search(name) and len(name) <= 120:
        return name
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    base = _SAFE.sub("_", name.replace("/", "__")).lstrip(".")[:100] or "model"
    return f"{base}~{digest}"


def saved_baseline_path(directory: str | Path, lang: str, model: str) -> Path:
    """``<directory>/<lang>/<model>.tsv`` with the names made safe (and one-to-one) as file names."""
    return Path(directory) / _safe_name(lang) / f"{_safe_name(model)}.tsv"


def save_baseline(directory: str | Path, lang: str, model: str, table, provenance_json: str | None = None) -> Path:
    """Keep a baseline (bert-score's format) for later sessions, written atomically, provenance beside it.

    With a provenance, the table and the provenance are written as one (a failure leaves both as they were);
    without, the provenance of an earlier baseline of the same model and language is removed first, then the table
    is written: a table never stands beside another baseline's provenance.
    """
    from bertscore_viz.engine.baseline import format_baseline
    from bertscore_viz.files.fileio import atomic_write_many, atomic_write_text

    path = saved_baseline_path(directory, lang, model)
    provenance = path.with_suffix(".provenance.json")
    if provenance_json is not None:
        atomic_write_many([(path, format_baseline(table.values).encode("utf-8")),
                           (provenance, provenance_json.encode("utf-8"))])
        return path
    provenance.unlink(missing_ok=True)
    atomic_write_text(path, format_baseline(table.values))
    return path


def saved_baseline(directory: str | Path, lang: str, model: str):
    """The baseline saved for (lang, model), or None. A saved file that cannot be read is ignored (and logged)."""
    import datetime as dt

    from bertscore_viz.engine.baseline import BaselineTable, read_baseline
    from bertscore_viz.errors import BaselineError

    path = saved_baseline_path(directory, lang, model)
    try:
        stamp = path.stat().st_mtime
        table = read_baseline(path)
    except FileNotFoundError:
        return None
    except (OSError, BaselineError) as exc:
        log.error("ignoring the saved baseline %s: %s", path, exc)
        return None
    when = dt.datetime.fromtimestamp(stamp, dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return BaselineTable(table.values, f"saved on this server {when}")


#: Streamlit's own cap on every upload (``server.maxUploadSize``, MB); the app's per-widget limits cannot exceed it.
STREAMLIT_UPLOAD_VAR = "STREAMLIT_SERVER_MAX_UPLOAD_SIZE"


def streamlit_upload_mb(pol: Policy) -> int:
    """The ``server.maxUploadSize`` (whole MB) that lets through every file this policy accepts, and no more."""
    return max(1, math.ceil(pol.upload_mb))


def describe(pol: Policy) -> str:
    """The effective settings, one per line, as an operator checks them (``python -m bertscore_viz.serving.deploy``)."""
    lines = [f"{ENV_PREFIX}{name.upper()} = {getattr(pol, name)!r}" for name in SETTINGS]
    lines.append(f"offered models: {', '.join(offered_models(pol))}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Check the deployment settings and print them; exit code 2 with the reason when one is unusable.

    ``python -m bertscore_viz.serving.deploy --exec CMD ...`` then replaces itself with CMD (the image's entry point),
    so that a container with a bad setting stops at once instead of serving an app that fails later.
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
    cap = env_cap = os.environ.get(STREAMLIT_UPLOAD_VAR)
    if env_cap is None:  # Streamlit's cap follows the policy (it reads this variable when it starts)
        cap = os.environ[STREAMLIT_UPLOAD_VAR] = str(streamlit_upload_mb(pol))
    print(describe(pol), flush=True)
    print(f"{STREAMLIT_UPLOAD_VAR} = {cap!r}" + ("" if env_cap is None else " (set by the operator)"), flush=True)
    try:
        too_low = env_cap is not None and float(env_cap) < pol.upload_mb
    except ValueError:
        print(f"error: {STREAMLIT_UPLOAD_VAR} must be a whole number of MB, got {env_cap!r}.", file=sys.stderr)
        return 2
    if too_low:
        print(f"warning: {STREAMLIT_UPLOAD_VAR}={env_cap} is below {ENV_PREFIX}UPLOAD_MB={pol.upload_mb:g}: "
              f"Streamlit refuses larger files itself, and the app states {env_cap} MB as the limit. Leave "
              f"{STREAMLIT_UPLOAD_VAR} unset to follow {ENV_PREFIX}UPLOAD_MB.", file=sys.stderr, flush=True)
    if command:
        os.execvp(command[0], command)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
