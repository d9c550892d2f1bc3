"""The operator's settings for a shared server: which models a browser user may choose, how many are held at once,
how many heavy scoring jobs run at once, upload limits, where baselines saved in the app are kept, and how long a
session's work is kept.

Read from environment variables, else from a ``[bertscore_viz]`` table of a TOML file (``BERTSCORE_VIZ_CONFIG``,
else ``.streamlit/secrets.toml`` in the working directory), else the defaults; see docs/DEPLOY.md. The engine
itself (API, CLI) ignores these settings: they restrict what the *app* lets a browser user do.
"""

from __future__ import annotations

import logging
import math
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: settings from the environment only
    tomllib = None

__all__ = ["ENV_PREFIX", "SETTINGS", "Policy", "DeployConfigError", "load_policy", "policy",
           "STREAMLIT_UPLOAD_VAR", "streamlit_upload_mb", "setting_name"]

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
    "share_hours": (float, 24.0),
    "upload_columns": (int, 500),
    "upload_cells": (int, 5_000_000),
    "upload_systems": (int, 100),
    "upload_pairs": (int, 1_000_000),
    "upload_cell_chars": (int, 20_000),
    "upload_seconds": (float, 60.0),
    "upload_memory_mb": (float, 2048.0),
    "inspect_references": (int, 8),
    "idf_corpus_mb": (float, 5.0),
    "idf_corpus_lines": (int, 50_000),
    "figure_tokens": (int, 200),
    "download_figure_tokens": (int, 1_100),
    "walkthrough_pairs": (int, 16),
    "audit_pairs": (int, 500),
    "baseline_pairs": (int, 20_000),
    "baseline_corpus_mb": (float, 5.0),
    "samples_inputs": (int, 500),
    "samples_per_input": (int, 64),
    "samples_total": (int, 2_000),
    "samples_chars": (int, 1_000_000),
    "samples_references": (int, 16),
    "sentence_metrics_seconds": (float, 300.0),
    "runs_dir": (str, ""),
}
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


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
            same link (shared/persist.py): at most this many MB in all, each for this many hours after its last use.
        share_hours: how long a read-only link a user makes of their work keeps working (shared/persist.py).
        upload_columns, upload_cells, upload_systems, upload_pairs, upload_cell_chars: the most columns and cells
            a file may have, the most systems and pairs (systems x segments) a Compare upload may score, the
            longest cell (docs/INPUTS.md).
        upload_seconds, upload_memory_mb: the most time and memory a file may take to read, in a worker process
            of its own (serving/isolated.py), so that no upload holds the server for the other sessions.
        inspect_references: the most references of one Inspect pair.
        idf_corpus_mb, idf_corpus_lines: the largest corpus pasted or uploaded for idf (Inspect, the walkthrough).
        figure_tokens: the most tokens a side a heatmap on a page draws whole; a longer pair opens on an overview
            of the whole matrix with a region of at most this many tokens a side drawn whole.
        download_figure_tokens: the most tokens a side of a figure drawn as PNG, SVG or PDF.
        walkthrough_pairs: the most pairs of the walkthrough's batch (it prints every tensor).
        audit_pairs: the most pairs of one stress test (each is perturbed nine ways, every layer scored).
        baseline_pairs, baseline_corpus_mb: the most random pairs of a baseline computed on the Baselines page,
            and its largest corpus.
        samples_inputs, samples_per_input, samples_total, samples_chars, samples_references: the Many samples
            page's bounds: inputs, samples of one input (its matrix is N x N), samples in all, characters of all
            texts, references of one input.
        sentence_metrics_seconds: the most seconds of one core that sacrebleu's chrF, BLEU or TER of one Compare
            upload may take (estimated before, and stopped when run past); it runs in the background, after
            BERTScore's results are shown. TER's cost grows with the cube of the texts' length.
        runs_dir: the operator's runs folder (docs/RUNS.md): the Compare page saves runs there and offers them to
            every user of the server ("" = no runs on a shared server; a local app uses $BERTSCORE_VIZ_RUNS or
            ~/.cache/bertscore-viz/runs).
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
    share_hours: float = 24.0
    upload_columns: int = 500
    upload_cells: int = 5_000_000
    upload_systems: int = 100
    upload_pairs: int = 1_000_000
    upload_cell_chars: int = 20_000
    upload_seconds: float = 60.0
    upload_memory_mb: float = 2048.0
    inspect_references: int = 8
    idf_corpus_mb: float = 5.0
    idf_corpus_lines: int = 50_000
    figure_tokens: int = 200
    download_figure_tokens: int = 1_100
    walkthrough_pairs: int = 16
    audit_pairs: int = 500
    baseline_pairs: int = 20_000
    baseline_corpus_mb: float = 5.0
    samples_inputs: int = 500
    samples_per_input: int = 64
    samples_total: int = 2_000
    samples_chars: int = 1_000_000
    samples_references: int = 16
    sentence_metrics_seconds: float = 300.0
    runs_dir: str = ""

    @property
    def kept_bytes(self) -> int:
        return int(self.kept_mb * 2**20)

    @property
    def upload_bytes(self) -> int:
        return int(self.upload_mb * 2**20)

    @property
    def session_upload_bytes(self) -> int:
        return int(self.session_upload_mb * 2**20)

    @property
    def upload_memory_bytes(self) -> int:
        return int(self.upload_memory_mb * 2**20)

    @property
    def idf_corpus_bytes(self) -> int:
        return int(self.idf_corpus_mb * 2**20)

    @property
    def baseline_corpus_bytes(self) -> int:
        return int(self.baseline_corpus_mb * 2**20)


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
        unit = "hours" if name.lower().endswith("hours") else "seconds" if name.lower().endswith("seconds") else "MB"
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
    if tomllib is None:
        raise DeployConfigError(f"Reading the deployment config {candidate} needs Python 3.11 or later (tomllib); "
                                "give the settings as environment variables instead.")
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


def setting_name(name: str) -> str:
    """The environment variable of a setting: ``"figure_tokens"`` -> ``"BERTSCORE_VIZ_FIGURE_TOKENS"``."""
    if name not in SETTINGS:
        raise KeyError(name)
    return ENV_PREFIX + name.upper()


#: Streamlit's own cap on every upload (``server.maxUploadSize``, MB); the app's per-widget limits cannot exceed it.
STREAMLIT_UPLOAD_VAR = "STREAMLIT_SERVER_MAX_UPLOAD_SIZE"


def streamlit_upload_mb(pol: Policy) -> int:
    """The ``server.maxUploadSize`` (whole MB) that lets through every file this policy accepts, and no more."""
    return max(1, math.ceil(pol.upload_mb))
