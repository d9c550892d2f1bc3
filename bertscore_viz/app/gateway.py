"""The app's gateway to the server's shared resources (not a Streamlit cache): every page reaches the model pool,
the job queue, scorers, uploads and kept baselines through here, so this is where the deployment policy
(``bertscore_viz/serving/``) applies. What it holds is process-wide, shared by every browser session:

- the engine's embedding cache bound, set once at import (:data:`APP_CACHE_BYTES` unless ``BERTSCORE_VIZ_CACHE_MB``);
- every model a browser user chooses passes :func:`resolve_model` (the allow-list; nothing outside it is looked up
  on the server's disk, and the message names no server path);
- loaded models live in one process-wide pool of at most ``max_models`` (the least recently used is dropped);
  loading one takes a job slot, and loads run one at a time;
- a scorer made here waits for a free job slot before a large model pass, showing its place in the queue;
- every upload is counted by :func:`count_upload` (per file, and a per-session total), and uploaders take their
  size limit from :func:`upload_limit_bytes`;
- baselines computed or uploaded in a session live in that session, or, when the operator configured a baseline
  directory, can be saved there for every later session.

The engine's embedding cache (thread-safe, shared by every browser session of the process) means a changed layer,
idf or rescaling setting costs no model pass.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import logging
import os
import re

import streamlit as st

from bertscore_viz.app.shared.bounded_store import BoundedStore
from bertscore_viz.app.shared.messages import progress_callback
from bertscore_viz.engine.baseline import BaselineTable
from bertscore_viz.engine.cache import CACHE
from bertscore_viz.engine.encoder import get_encoder, release_encoder
from bertscore_viz.engine.options import ScoringOptions
from bertscore_viz.engine.scorer import Scorer
from bertscore_viz.engine.store import STORE_ENV, default_store, set_default_store_dir
from bertscore_viz.errors import BertScoreVizError, ModelError
from bertscore_viz.files import upload
from bertscore_viz.models.spec import ModelSpec
from bertscore_viz.serving import baseline_store, config, isolated, job_queue, model_access, model_pool

__all__ = ["APP_CACHE_BYTES", "EXAMPLE_F1_KEPT", "resolve_model", "offered_models", "model_info", "job_slot",
           "options", "scorer", "example_f1", "rescaling_possible", "signature_text", "upload_limit_bytes",
           "upload_widget_mb",
           "upload_help", "count_upload", "upload_limits", "read_upload", "build_upload", "public_provenance",
           "custom_baseline", "set_custom_baseline", "keep_baseline", "policy", "local_server", "store_status"]

log = logging.getLogger("bertscore_viz.app")
policy = config.policy
#: The embedding cache's bound in the app unless ``BERTSCORE_VIZ_CACHE_MB`` sets one: a server's memory is shared by
#: its users, and the cache serves a small working set there (Inspect pairs and drill-downs: every layer of a few
#: texts), not a corpus (Compare keeps each pair's scores, not vectors; a pass embeds each reference once anyway).
APP_CACHE_BYTES = 128 * 2**20
if not os.environ.get("BERTSCORE_VIZ_CACHE_MB"):
    CACHE.max_bytes = min(CACHE.max_bytes, APP_CACHE_BYTES)
#: Addresses a server bound to is reachable from this machine only: a local, single-user app.
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


def local_server() -> bool:
    """Whether this server listens on this machine only (``bertscore-viz app``'s default), not for others."""
    return str(st.get_option("server.address") or "") in LOOPBACK


# The persistent embedding store (docs/STORE.md): a local app uses the user's store; a server others reach keeps it
# off unless its operator set BERTSCORE_VIZ_STORE (a store shared by users is the operator's decision).
if STORE_ENV not in os.environ and not local_server():
    set_default_store_dir(None)
_POOL = model_pool.ModelPool(policy().max_models, on_evict=release_encoder)
_JOBS = job_queue.JobQueue(policy().max_jobs)


# --- models -------------------------------------------------------------------------------------------------------
def resolve_model(model: str | None) -> ModelSpec:
    """:func:`bertscore_viz.models.spec.resolve_model` for what a browser user chose, within the deployment's list.

    Raises:
        ModelNotAllowed: the model is not offered here (a clear message, no server path).
        ModelError: an allowed model that cannot be used (the message names only what the user chose).
    """
    return model_access.check_model(model, policy())


def offered_models() -> list[str]:
    """Names of the models this server offers (for a model picker)."""
    return list(model_access.offered_models(policy()))


def _encoder(spec: ModelSpec, label: str | None = None, precision: str = "fp32"):
    """The pooled encoder of a checked spec in a precision (fp32 and bf16 are two encoders: their weights differ).
    Loading waits for a job slot (it is as heavy as a job); a model that fails to load is reported by what the user
    chose (``label``: the operator's label, not the directory it points to), the reason (which may name server
    paths) goes to the server log."""
    key = (spec.name, spec.source, precision)
    shown = label if label else spec.name

    def load():
        try:
            return get_encoder(spec, precision=precision)
        except Exception as exc:  # noqa: BLE001  ModelError, OSError, out of memory: the log says which
            log.error("loading the model %s from %s failed: %r", spec.name, spec.source, exc)
            hub = "" if spec.local else " (a hub model needs the Hugging Face hub, or a copy in this server's cache)"
            raise ModelError(f"The model {shown!r} could not be loaded on this server{hub}. Choose another "
                             "model; whoever runs the server finds the reason in its log.") from None

    if key in _POOL:
        return _POOL.get(key, load)
    with st.spinner(f"Loading the model {shown}…"), job_slot():
        return _POOL.get(key, load)


def model_info(model: ModelSpec | str | None, label: str | None = None) -> dict:
    """Load (once) and describe a model: number of layers, maximum length. ``model`` is a spec from
    :func:`resolve_model`, or what the user chose (checked here); ``label``: how messages name it (default: what
    the user chose, else the spec's name)."""
    spec = model if isinstance(model, ModelSpec) else resolve_model(model)
    enc = _encoder(spec, label if label is not None or isinstance(model, ModelSpec) else model)
    return {"num_layers": enc.num_layers, "max_length": enc.max_length, "name": enc.spec.name}


# --- the job queue ------------------------------------------------------------------------------------------------
@contextlib.contextmanager
def job_slot():
    """Wait (visibly, in order) for one of the deployment's ``max_jobs`` slots, and hold it."""
    box = st.empty()

    def waiting(running: int, before: int) -> None:
        box.info(job_queue.wait_message(running, before, _JOBS.max_jobs), icon=":material/hourglass_top:")

    try:
        with _JOBS.slot(waiting):
            box.empty()
            yield
    finally:
        box.empty()


def _queued(n_sentences: int):
    """The guard of the app's scorers: a model pass over more than ``small_job`` sentences waits for a job slot
    first; small passes (an Inspect pair, a drill-down) never wait."""
    return contextlib.nullcontext() if n_sentences <= policy().small_job else job_slot()


def options(settings, rescale: bool | None = None) -> ScoringOptions:
    """The scoring options of the sidebar's settings, resolved once under the deployment policy: the model within
    the server's list (:func:`resolve_model`), the layer chosen or the model's tuned one (0 for a model with none),
    rescaling as chosen unless ``rescale`` says otherwise.

    Raises:
        ModelNotAllowed, ModelError: as :func:`resolve_model`.
    """
    spec = resolve_model(settings.model)
    return ScoringOptions(model=spec, layer=settings.layer, idf=bool(settings.idf),
                          rescale_with_baseline=bool(settings.rescale if rescale is None else rescale),
                          lang=settings.lang, precision=settings.precision,
                          long_texts=settings.long_texts, context=int(getattr(settings, "context", 0)),
                          context_source=getattr(settings, "context_source", "ref")).for_every_layer()


def scorer(settings, rescale: bool | None = None, idf_sentences: list[str] | None = None) -> Scorer:
    """A Scorer for the settings (cheap: the model is shared). Raises the engine's errors (e.g. no baseline).

    ``idf_sentences``: with idf on, the corpus idf comes from (instead of each call's references).
    """
    opts = options(settings, rescale)
    enc = _encoder(opts.spec, settings.model, settings.precision)
    return opts.replace(precision=enc.precision).scorer(
        idf_sentences=idf_sentences if opts.idf else None, baseline_table=custom_baseline(settings), guard=_queued,
        encoder=enc if opts.layer_or() <= enc.num_layers else None)  # the pooled one, not a reload


#: Most model settings whose example F1 (:func:`example_f1`) the process keeps at once.
EXAMPLE_F1_KEPT = 32
_EXAMPLE_F1: BoundedStore[tuple, object] = BoundedStore(EXAMPLE_F1_KEPT)


def example_f1(settings, candidates: list[str], references: list[str]):
    """Raw F1 of the example pairs at the settings' model, layer and idf, computed once per process (every session
    shares it: the Baselines page's first visit waited about 10 s for it in each session)."""
    key = (options(settings, rescale=False).cache_key(), len(candidates))
    hit = _EXAMPLE_F1.get(key)
    if hit is None:
        progress = None
        try:
            progress = progress_callback("Scoring the example pairs")
            hit = scorer(settings, rescale=False).score(candidates, references, progress=progress).raw_f1
        finally:
            if progress is not None:
                progress.bar.empty()
        _EXAMPLE_F1.put(key, hit)
    return hit


def rescaling_possible(settings) -> bool:
    """A baseline exists for the settings' model, language and layer (a session's own, or a file)."""
    if custom_baseline(settings) is not None:
        return True
    try:
        options(settings, rescale=True).scorer()
    except BertScoreVizError:
        return False
    return True


def signature_text(settings) -> str:
    """The signature of the numbers the pages show: without ``-rescaled`` when rescaling was asked for but no
    baseline exists (the pages then show raw numbers)."""

    rescaled = bool(settings.rescale) and rescaling_possible(settings)
    return str(options(settings, rescale=rescaled).signature(custom_baseline=custom_baseline(settings) is not None))


# --- uploads ------------------------------------------------------------------------------------------------------
def _streamlit_cap_bytes() -> int:
    """Streamlit's own cap on every upload (``server.maxUploadSize``): it refuses larger files before the app."""
    try:
        return int(float(st.get_option("server.maxUploadSize")) * 2**20)
    except (RuntimeError, TypeError, ValueError):  # pragma: no cover - the option always exists
        return policy().upload_bytes


def upload_limit_bytes(own_limit: int | None = None) -> int:
    """The largest file an uploader accepts on this server: the operator's per-file limit, the uploader's own
    (e.g. 1 MB for a baseline file) and Streamlit's cap, whichever is smallest."""
    limits = [policy().upload_bytes, _streamlit_cap_bytes()] + ([own_limit] if own_limit else [])
    return max(1, min(limits))


def upload_widget_mb(own_limit: int | None = None) -> int:
    """``max_upload_size`` (whole MB, at least 1) for ``st.file_uploader``: the number the operator set (50 for
    ``UPLOAD_MB=50``), so that the uploader states the limit the help and the messages state. Streamlit's browser
    side counts that MB as 10^6 bytes and shows it so (``ceil`` of the limit in 10^6 bytes showed "53MB" under a
    50 MB setting); the browser then refuses a file a little smaller than the server's limit in 2^20-byte MB, never
    a larger one, and :func:`count_upload` enforces the exact limit."""
    return max(1, upload_limit_bytes(own_limit) // 2**20)


def upload_help(own_limit: int | None = None, rows: bool = False) -> str:
    """The limits an uploader states, as this server applies them."""

    pol = policy()
    text = f"At most {upload.describe_size(upload_limit_bytes(own_limit))} per file"
    if rows:
        text += (f", {pol.upload_rows:,} rows, {pol.upload_columns:,} columns, {pol.upload_cell_chars:,} characters "
                 "per cell")
    return text + f"; {upload.describe_size(pol.session_upload_bytes)} per session in total."


def count_upload(data: bytes, name: str, own_limit: int | None = None) -> str | None:
    """Check one uploaded file against this server's limits and count it towards the session's total (each
    distinct file counts once, on whichever page it was uploaded). Returns why it is refused, or None."""

    pol = policy()
    limit = upload_limit_bytes(own_limit)
    if len(data) > limit:
        return (f"The file {name} is {upload.describe_size(len(data))}; this server accepts at most "
                f"{upload.describe_size(limit)} per file here. Use a smaller file (or the command line).")
    key = upload.content_key(data)
    seen = st.session_state.setdefault("_uploaded_bytes", {})
    total = sum(seen.values()) + (0 if key in seen else len(data))
    if total > pol.session_upload_bytes:
        return (f"This session has uploaded {upload.describe_size(total)} with this file; this server accepts "
                f"{upload.describe_size(pol.session_upload_bytes)} per session. Reload the page to start a new "
                "session.")
    seen[key] = len(data)
    return None


def upload_limits() -> dict:
    """The deployment's upload limits as keyword arguments of the readers of :mod:`bertscore_viz.serving.isolated`."""
    pol = policy()
    return {"max_bytes": upload_limit_bytes(), "max_rows": pol.upload_rows, "max_columns": pol.upload_columns,
            "max_cells": pol.upload_cells, "max_seconds": pol.upload_seconds,
            "max_memory_bytes": pol.upload_memory_bytes}


def read_upload(data: bytes, name: str):
    """The file read as a table within the deployment's limits (:func:`count_upload`; rows, columns and cells), in a
    worker process of its own under a time and memory limit, so that no file holds the server for the other
    sessions. Returns ``(table or None, problems)``."""
    refused = count_upload(data, name)
    if refused is not None:
        return None, [upload.Problem(None, None, refused)]
    return isolated.read_table(data, name, **upload_limits())


def build_upload(data: bytes, name: str, mapping, empty):
    """The dataset for a column mapping, read and built in a worker process (bytes are cheap to send; a table is
    not), within the deployment's limits on systems, pairs and cells."""
    pol = policy()
    return isolated.parse_upload(data, name, mapping, empty, max_cell_chars=pol.upload_cell_chars,
                                 max_systems=pol.upload_systems, max_pairs=pol.upload_pairs, **upload_limits())


# --- downloads ----------------------------------------------------------------------------------------------------
_ABSOLUTE_PATH = re.compile(r"(?:(?<=[\s(\"'=])|^)(?:~|/)[^\s\"']*")


def public_provenance(provenance_json: str | None) -> str | None:
    """A provenance JSON as a browser user may download it: every absolute path in it (a model directory or a
    corpus file of the server, as a value or inside a description) is replaced by its last component, marked as
    on the server. (The engine records none for what the app computes; this holds whatever it records.)"""
    if provenance_json is None:
        return None

    def on_server(match: re.Match) -> str:
        return f"(on the server) {os.path.basename(match.group(0).rstrip('/')) or '/'}"

    def clean(x):
        if isinstance(x, dict):
            return {k: clean(v) for k, v in x.items()}
        if isinstance(x, list):
            return [clean(v) for v in x]
        if isinstance(x, str):
            return _ABSOLUTE_PATH.sub(on_server, x)
        return x

    try:
        data = json.loads(provenance_json)
    except ValueError:
        return None
    return json.dumps(clean(data), indent=1, ensure_ascii=False)


# --- baselines ----------------------------------------------------------------------------------------------------
def custom_baseline(settings) -> BaselineTable | None:
    """The baseline computed or uploaded in this browser session for the current model and language, else one
    saved on this server by an earlier session (when the deployment keeps them), else None."""
    name = resolve_model(settings.model).name
    table = st.session_state.get("custom_baselines", {}).get((settings.lang, name))
    if table is None and policy().baseline_dir:
        table = baseline_store.saved_baseline(policy().baseline_dir, settings.lang, name)
    return table


def set_custom_baseline(lang: str, model: str, table: BaselineTable) -> None:
    """Use ``table`` for (lang, model) on every page of this browser session."""
    st.session_state.setdefault("custom_baselines", {})[(lang, model)] = table


def _upload_provenance(lang: str, model: str, table: BaselineTable) -> str:
    """The provenance saved beside a baseline that came without one (an uploaded file)."""
    return json.dumps({"description": f"baseline of {model} ({lang}), {table.source}", "model": model,
                       "lang": lang, "source": table.source, "layers": len(table.values),
                       "saved": dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat()}, indent=1)


def keep_baseline(lang: str, model: str, table: BaselineTable, provenance_json: str | None, key: str) -> None:
    """Say plainly where this session's baseline lives, and offer to save it for later sessions when the
    deployment keeps baselines (``baseline_dir``); otherwise it lives only in this session (download it)."""
    directory = policy().baseline_dir
    if not directory:
        st.info("This baseline lives only in this browser session: it is gone when the session ends. Download it "
                "to keep it (and upload it again later, or pass it to the command line with --baseline_path).",
                icon=":material/info:")
        return
    saved = st.session_state.get("_baseline_saved")
    if saved == (lang, model, table.values.tobytes()):
        st.success(f"Saved on this server: later sessions use it for {model} ({lang}) when rescaling.",
                   icon=":material/cloud_done:")
        return
    st.caption("This baseline lives in this browser session. Save it on this server so that later sessions (of "
               "every user) use it for this model and language; the signature marks it as custom.")
    if st.button("Save for later sessions", key=key, icon=":material/save:"):
        try:
            baseline_store.save_baseline(directory, lang, model, table,
                                 provenance_json or _upload_provenance(lang, model, table))
        except (OSError, BertScoreVizError) as exc:
            log.error("saving a baseline failed: %s", exc)
            st.error("The baseline could not be saved on this server (see the server log). Download it instead.",
                     icon=":material/error:")
            return
        st.session_state["_baseline_saved"] = (lang, model, table.values.tobytes())
        st.rerun()


def store_status() -> str:
    """The sidebar's line on the persistent embedding store. A local app says how much this server reused; a shared
    server says only that the store is on and its size: what one user's request reused would tell them what others
    scored."""
    store = default_store()
    if store is None:
        how = f" Set {STORE_ENV} to a folder to keep embeddings between runs." if local_server() else ""
        return "Embedding store: off; texts are embedded afresh after a restart." + how
    info = store.info()
    if not info.enabled:
        return "Embedding store: not usable on this server; scoring goes on without it."
    size = f"{info.bytes / 2**20:,.0f} of {info.max_bytes / 2**20:,.0f} MB"
    if not local_server():
        return f"Embedding store: on ({size}, kept by this server)."
    asked = info.hits + info.misses
    reused = (f"{info.hits:,} of {asked:,} sentence-layers reused since the app started" if asked
              else "nothing asked yet")
    return f"Embedding store: {reused} · {size}."
