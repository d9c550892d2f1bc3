"""Where the app makes scorers, and so where the deployment policy (``bertscore_viz/deploy.py``) applies:

- every model a browser user chooses passes :func:`resolve_model` (the allow-list; nothing outside it is looked up
  on the server's disk, and the message names no server path);
- loaded models live in one process-wide pool of at most ``max_models`` (the least recently used is dropped);
- a scorer made here waits for a free job slot before a large model pass, showing its place in the queue;
- uploads are read through :func:`read_upload` (size, rows, and a per-session total);
- baselines computed or uploaded in a session live in that session, or, when the operator configured a baseline
  directory, can be saved there for every later session.

The engine keeps its own thread-safe embedding cache (shared by every browser session of the process), so a
changed layer, idf or rescaling setting costs no model pass.
"""

from __future__ import annotations

import contextlib
import logging

import streamlit as st

from .. import deploy
from ..baseline import BaselineTable
from ..encoder import get_encoder, release_encoder
from ..errors import InputError, ModelError
from ..models import ModelSpec
from ..results import Signature
from ..scorer import Scorer

log = logging.getLogger("bertscore_viz.app")
policy = deploy.policy
_POOL = deploy.ModelPool(policy().max_models, on_evict=release_encoder)
_JOBS = deploy.JobQueue(policy().max_jobs)


# --- models -------------------------------------------------------------------------------------------------------
def resolve_model(model: str | None) -> ModelSpec:
    """:func:`bertscore_viz.models.resolve_model` for what a browser user chose, within the deployment's list.

    Raises:
        ModelNotAllowed: the model is not offered here (a clear message, no server path).
    """
    return deploy.check_model(model, policy())


def offered_models() -> list[str]:
    """Names of the models this server offers (for a model picker)."""
    return list(deploy.offered_models(policy()))


def _encoder(spec: ModelSpec):
    key = (spec.name, spec.source)

    def load():
        try:
            return get_encoder(spec)
        except ModelError as exc:
            if spec.name not in deploy.offered_models(policy()):
                raise  # free text the user typed: the engine's message echoes only that
            log.error("loading offered model %s failed: %s", spec.name, exc)
            raise ModelError(f"The model {spec.name!r} could not be loaded on this server. Choose another model; "
                             "whoever runs the server finds the reason in its log.") from None

    if key in _POOL:
        return _POOL.get(key, load)
    with st.spinner(f"Loading the model {spec.name}…"):
        return _POOL.get(key, load)


def model_info(name: str, source: str | None = None) -> dict:
    """Load (once) and describe a model: number of layers, maximum length. ``source`` is not used: the model is
    found again from its name, through the deployment's list."""
    enc = _encoder(resolve_model(name))
    return {"num_layers": enc.num_layers, "max_length": enc.max_length, "name": enc.spec.name}


# --- the job queue ------------------------------------------------------------------------------------------------
@contextlib.contextmanager
def job_slot():
    """Wait (visibly, in order) for one of the deployment's ``max_jobs`` slots, and hold it."""
    box = st.empty()

    def waiting(n_ahead: int) -> None:
        box.info(deploy.wait_message(n_ahead, _JOBS.max_jobs), icon=":material/hourglass_top:")

    try:
        with _JOBS.slot(waiting):
            box.empty()
            yield
    finally:
        box.empty()


class _QueuedScorer(Scorer):
    """A Scorer whose model passes over more than ``small_job`` sentences wait for a job slot first."""

    def match(self, candidates, references, layers=None, progress=None):
        n = len(candidates) + sum(1 if isinstance(r, str) else len(r) for r in references)
        if n <= policy().small_job:
            return super().match(candidates, references, layers=layers, progress=progress)
        with job_slot():
            return super().match(candidates, references, layers=layers, progress=progress)


def scorer(settings, rescale: bool | None = None, idf_sentences: list[str] | None = None) -> Scorer:
    """A Scorer for the settings (cheap: the model is shared). Raises the engine's errors (e.g. no baseline).

    ``idf_sentences``: with idf on, the corpus idf comes from (instead of each call's references).
    """
    spec = resolve_model(settings.model)
    enc = _encoder(spec)
    sc = _QueuedScorer(model=spec, layer=settings.resolved_layer(), idf=settings.idf,
                       idf_sentences=idf_sentences if settings.idf else None,
                       rescale_with_baseline=settings.rescale if rescale is None else rescale, lang=settings.lang,
                       baseline_table=custom_baseline(settings))
    sc._encoder = enc if settings.resolved_layer() <= enc.num_layers else None  # the pooled one, not a reload
    return sc


def rescaling_possible(settings) -> bool:
    """A baseline exists for the settings' model, language and layer (a session's own, or a file)."""
    from ..errors import BaselineError, BertScoreVizError

    if custom_baseline(settings) is not None:
        return True
    try:
        Scorer(model=resolve_model(settings.model), layer=settings.resolved_layer(), rescale_with_baseline=True,
               lang=settings.lang)
    except BaselineError:
        return False
    except BertScoreVizError:
        return False
    return True


def signature_text(settings) -> str:
    """The signature of the numbers the pages show: without ``-rescaled`` when rescaling was asked for but no
    baseline exists (the pages then show raw numbers)."""
    spec = resolve_model(settings.model)
    import transformers

    custom = custom_baseline(settings) is not None
    rescaled = bool(settings.rescale) and rescaling_possible(settings)
    return str(Signature(spec.name, settings.resolved_layer(), settings.idf, rescaled, custom, "fp32",
                         transformers.__version__))


# --- uploads ------------------------------------------------------------------------------------------------------
def read_upload(data: bytes, name: str):
    """:func:`bertscore_viz.upload.read_table` within the deployment's limits: per file, and per session in total
    (each distinct file counts once). Returns ``(table or None, problems)``."""
    from .. import upload

    pol = policy()
    key = upload.content_key(data)
    seen = st.session_state.setdefault("_uploaded_bytes", {})
    total = sum(seen.values()) + (0 if key in seen else len(data))
    if total > pol.session_upload_bytes:
        return None, [upload.Problem(None, None, f"This session has uploaded {total / 2**20:.1f} MB with this file; "
                                                 f"this server accepts {pol.session_upload_mb:g} MB per session. "
                                                 "Reload the page to start a new session.")]
    seen[key] = len(data)
    return upload.read_table(data, name, max_bytes=pol.upload_bytes, max_rows=pol.upload_rows)


# --- baselines ----------------------------------------------------------------------------------------------------
def custom_baseline(settings) -> BaselineTable | None:
    """The baseline computed or uploaded in this browser session for the current model and language, else one
    saved on this server by an earlier session (when the deployment keeps them), else None."""
    name = resolve_model(settings.model).name
    table = st.session_state.get("custom_baselines", {}).get((settings.lang, name))
    if table is None and policy().baseline_dir:
        table = deploy.saved_baseline(policy().baseline_dir, settings.lang, name)
    return table


def set_custom_baseline(lang: str, model: str, table: BaselineTable) -> None:
    """Use ``table`` for (lang, model) on every page of this browser session."""
    st.session_state.setdefault("custom_baselines", {})[(lang, model)] = table


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
            deploy.save_baseline(directory, lang, model, table, provenance_json)
        except (OSError, InputError) as exc:
            log.error("saving a baseline failed: %s", exc)
            st.error("The baseline could not be saved on this server (see the server log). Download it instead.",
                     icon=":material/error:")
            return
        st.session_state["_baseline_saved"] = (lang, model, table.values.tobytes())
        st.rerun()
