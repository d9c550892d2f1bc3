"""The results Parquet file of a distributed (or any batch) scoring run: its schema, writing, and reading it back
into what the Compare page consumes (pure; pyarrow only, no Ray, no Streamlit).

One row per (segment, system):

===================== =============== ==============================================================================
column                type            meaning
===================== =============== ==============================================================================
segment_index         int64           position of the segment among the input's scored segments (0-based)
segment_id            string          the ``segment_id`` column, else the input row number
row                   int64           row of the input the segment came from (header = row 1, files counted on)
system                string          system name (the column name in the wide layout)
candidate             string          the system's output
references            list<string>    the segment's reference(s)
source                string          the source sentence, or null without a source column
precision/recall/f1   float64         the reported numbers: rescaled when the signature says ``-rescaled``
raw_precision ...     float64         before rescaling
rescaled_precision... float64         rescaled with the baseline in the metadata; null when no baseline exists
best_reference        int64           index of the reference that gave F1 (several references)
notes                 string          soft problems of this row (empty, truncated, degenerate idf), "" when none
===================== =============== ==============================================================================

The file's key-value metadata holds ``bertscore_viz.signature`` (the text of the signature), ``bertscore_viz`` (JSON:
format version, signature fields, baseline values, baseline language and file name, systems, segment count, input
description, job id) and, with idf, ``bertscore_viz.engine.idf`` (JSON: the number of reference sentences and the
document frequency of every token id, from which the app's drill-down reproduces the file's idf weights without the
corpus).

The results-file format lives in this package: this module (schema, metadata written and checked, the signature,
the upload limit, the file's settings against the app's), :mod:`~bertscore_viz.files.results.table` (reading a file
into a :class:`~bertscore_viz.files.results.table.ResultsTable`), :mod:`~bertscore_viz.files.results.values` (every
value checked at load) and :mod:`~bertscore_viz.files.results.layout` (the names in a results directory). The app
reads a file once per upload (:func:`~bertscore_viz.files.results.table.read_results`) and builds the comparison per
rescaling choice (:func:`bertscore_viz.evaluation.precomputed.results_at`: systems ranked best first as
:func:`bertscore_viz.evaluation.compare.results_for` ranks them, the numbers the signature names by default).
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from bertscore_viz.engine.baseline import check_values
from bertscore_viz.engine.idf import IdfWeights, idf_from_counts
from bertscore_viz.engine.results import Signature
from bertscore_viz.errors import InputError
from bertscore_viz.files import limits
from bertscore_viz.models.spec import resolve_model
from bertscore_viz.versions import __version__, package_version

__all__ = ["MAX_UPLOAD_BYTES", "UPLOAD_ENV", "FORMAT", "FORMAT_VERSION", "META_KEY", "SIGNATURE_KEY", "IDF_KEY",
           "SCORE_COLUMNS", "REQUIRED_COLUMNS", "schema", "max_upload_bytes", "metadata", "read_idf", "read_metadata",
           "parse_metadata", "signature_from", "is_results_file", "version_notes", "settings_mismatch",
           "app_settings"]

#: Largest results file the app reads by default (bytes): about 700,000 rows of short segments. An operator changes
#: it with :data:`UPLOAD_ENV`; Streamlit's ``server.maxUploadSize`` caps every upload as well (docs/RAY.md).
MAX_UPLOAD_BYTES = 200 * 2**20
UPLOAD_ENV = "BERTSCORE_VIZ_RESULTS_UPLOAD_MB"
FORMAT = "bertscore-viz-results"
FORMAT_VERSION = 2  # 2: idf document frequencies, baseline language and file
META_KEY = b"bertscore_viz"
SIGNATURE_KEY = b"bertscore_viz.signature"
IDF_KEY = b"bertscore_viz.engine.idf"
SCORE_COLUMNS = ("precision", "recall", "f1", "raw_precision", "raw_recall", "raw_f1",
                 "rescaled_precision", "rescaled_recall", "rescaled_f1")
REQUIRED_COLUMNS = ("segment_index", "segment_id", "row", "system", "candidate", "references", "raw_precision",
                    "raw_recall", "raw_f1", "rescaled_precision", "rescaled_recall", "rescaled_f1")


def schema():
    """The Arrow schema of a results file (without metadata)."""

    fields = [("segment_index", pa.int64()), ("segment_id", pa.string()), ("row", pa.int64()),
              ("system", pa.string()), ("candidate", pa.string()), ("references", pa.list_(pa.string())),
              ("source", pa.string())]
    fields += [(c, pa.float64()) for c in SCORE_COLUMNS]
    fields += [("best_reference", pa.int64()), ("notes", pa.string())]
    return pa.schema(fields)


def max_upload_bytes(env: Mapping[str, str] | None = None) -> int:
    """The largest results file the app reads: ``BERTSCORE_VIZ_RESULTS_UPLOAD_MB`` (MB) when set, else
    :data:`MAX_UPLOAD_BYTES`. Streamlit's ``server.maxUploadSize`` must be at least as large for a file to arrive.

    Raises:
        InputError: a value that is not a positive number (for the operator: named in the message).
    """
    value = (os.environ if env is None else env).get(UPLOAD_ENV, "").strip()
    if not value:
        return MAX_UPLOAD_BYTES
    try:
        mb = float(value)
    except ValueError:
        mb = -1.0
    if not mb > 0:
        raise InputError(f"{UPLOAD_ENV}={value!r} is not a positive number of MB.")
    return int(mb * 2**20)


def metadata(signature: Signature, baseline, systems, n_segments: int, extra: dict | None = None,
             document_frequencies: tuple[Mapping[int, int], int] | None = None) -> dict:
    """The key-value metadata written into every results file.

    Args:
        document_frequencies: with idf, ``(token id -> number of reference sentences it occurs in, number of
            reference sentences)``: written under :data:`IDF_KEY` so that a reader reproduces the idf weights.
    """
    info = {"format": FORMAT, "format_version": FORMAT_VERSION, "signature": str(signature),
            "settings": signature.as_dict(),
            "baseline": None if baseline is None else [float(x) for x in np.asarray(baseline, dtype=np.float64)],
            "systems": list(systems), "n_segments": int(n_segments)}
    info.update(extra or {})
    meta = {META_KEY: json.dumps(info, ensure_ascii=False).encode("utf-8"),
            SIGNATURE_KEY: str(signature).encode("utf-8")}
    if document_frequencies is not None:
        counts, documents = document_frequencies
        ids = sorted(int(t) for t in counts)
        meta[IDF_KEY] = json.dumps({"num_documents": int(documents), "ids": ids,
                                    "counts": [int(counts[t]) for t in ids]}, separators=(",", ":")).encode("utf-8")
    return meta


def read_idf(meta) -> IdfWeights | None:
    """The idf weights of a results file, from the document frequencies in its metadata (None without them: idf
    off, or a file written before format version 2)."""
    raw = (meta or {}).get(IDF_KEY)
    if raw is None:
        return None
    try:
        data = limits.loads(raw.decode("utf-8"), "The idf metadata")
        return idf_from_counts(dict(zip(data["ids"], data["counts"])), int(data["num_documents"]))
    except (UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError):
        raise InputError("The idf document frequencies in the results file's metadata are damaged.") from None


def read_metadata(source) -> dict:
    """The ``bertscore_viz`` metadata of a results file (a path or bytes).

    Raises:
        InputError: not Parquet, or a Parquet file without the metadata (not written by bertscore-viz).
    """

    try:
        meta = pq.read_schema(io.BytesIO(source) if isinstance(source, (bytes, bytearray)) else source).metadata
    except Exception as exc:  # pyarrow raises ArrowInvalid / OSError with its own text
        raise InputError(f"The file cannot be read as Parquet: {str(exc).splitlines()[0][:200]}.") from None
    return parse_metadata(meta)


def parse_metadata(meta) -> dict:
    """The checked ``bertscore_viz`` metadata from a Parquet schema's key-value metadata (see :func:`read_metadata`)."""
    raw = (meta or {}).get(META_KEY)
    if raw is None:
        raise InputError("This Parquet file has no bertscore-viz signature in its metadata, so it is not the output "
                         "of `python -m bertscore_viz score --ray`. Upload that output (scores.parquet), or a CSV / "
                         "JSON Lines file of system outputs to score here.")
    try:
        info = limits.loads(raw.decode("utf-8"), "The bertscore-viz metadata of this Parquet file")
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise InputError("The bertscore-viz metadata of this Parquet file is damaged (not JSON).") from None
    if not isinstance(info, dict) or info.get("format") != FORMAT:
        got = info.get("format") if isinstance(info, dict) else type(info).__name__
        raise InputError(f"The Parquet metadata names format {got!r}, expected {FORMAT!r}.")
    version = info.get("format_version", 0)
    if not isinstance(version, int) or isinstance(version, bool):
        raise InputError(f"The results file's format version is {version!r}, not a whole number: it was edited.")
    if version > FORMAT_VERSION:
        raise InputError(f"The results file has format version {info['format_version']}; this bertscore-viz reads "
                         f"up to {FORMAT_VERSION}. Upgrade bertscore-viz.")
    _check_info(info)
    return info


def _check_info(info: dict) -> None:
    """The metadata's fields have the types this reader relies on, and its baseline is a usable one (finite, below
    1: the same check as every baseline's, :class:`~bertscore_viz.engine.baseline.BaselineTable`)."""
    settings = info.get("settings")
    ok = (isinstance(settings, dict) and isinstance(settings.get("model"), str)
          and isinstance(settings.get("layer"), int) and not isinstance(settings.get("layer"), bool)
          and settings.get("layer") >= 0 and isinstance(settings.get("idf"), bool)
          and isinstance(settings.get("rescaled", False), bool)
          and isinstance(info.get("systems", []), list) and all(isinstance(x, str) for x in info.get("systems", []))
          and isinstance(info.get("n_segments", 0), int) and not isinstance(info.get("n_segments", 0), bool)
          and info.get("n_segments", 0) >= 0 and isinstance(info.get("signature", ""), str))
    if not ok:
        raise InputError("The bertscore-viz metadata of this results file has fields of the wrong type (settings, "
                         "systems or n_segments): it was edited or damaged. Rerun the command that wrote it.")
    _check_signature_fields(settings, info.get("systems", []))
    if info.get("baseline") is not None:
        check_values([info["baseline"]] if isinstance(info["baseline"], list) else info["baseline"],
                     "of the results file", (settings["layer"],))


#: Values each optional signature field may take (absent: its default).
_SIGNATURE_CHOICES = {"precision": ("fp32", "fp16", "bf16"), "long_texts": ("truncate", "window")}


def _check_signature_fields(settings: dict, systems: list) -> None:
    """The signature's optional fields hold values a signature can have, and the systems are distinct."""
    for name, choices in _SIGNATURE_CHOICES.items():
        if name in settings and settings[name] not in choices:
            raise InputError(f"The results file's signature gives {name} = {settings[name]!r:.40}; it must be one of "
                             f"{', '.join(choices)}. The metadata was edited.")
    for name in ("custom_baseline",):
        if name in settings and not isinstance(settings[name], bool):
            raise InputError(f"The results file's signature gives {name} = {settings[name]!r:.40}; it must be true "
                             "or false. The metadata was edited.")
    for name in ("transformers_version", "version", "idf_source", "text"):
        if settings.get(name) is not None and not isinstance(settings[name], str):
            raise InputError(f"The results file's signature gives {name} = {settings[name]!r:.40}; it must be text. "
                             "The metadata was edited.")
    if len(set(systems)) != len(systems):
        twice = next(x for x in systems if systems.count(x) > 1)
        raise InputError(f"The results file's metadata lists system {twice!r} twice: it was edited.")


def signature_from(settings: dict, rescaled: bool | None = None) -> Signature:
    """A :class:`Signature` from the ``settings`` dict of the metadata (optionally with another rescaling flag)."""
    try:
        return Signature(settings["model"], int(settings["layer"]), bool(settings["idf"]),
                         bool(settings["rescaled"] if rescaled is None else rescaled),
                         bool(settings.get("custom_baseline", False)), settings.get("precision", "fp32"),
                         settings.get("transformers_version", ""), settings.get("version", ""),
                         idf_source=str(settings.get("idf_source") or "") if settings.get("idf_source") not in (
                             None, "references") else "",
                         long_texts="window" if settings.get("long_texts") == "window" else "truncate")
    except (KeyError, TypeError, ValueError):
        raise InputError("The signature in the results file's metadata is incomplete (model, layer, idf and "
                         "rescaled are needed).") from None


def is_results_file(name: str | None, data: bytes) -> bool:
    """A Parquet upload (by name or by its magic bytes): the Compare page reads it as precomputed scores."""
    return (name or "").lower().endswith((".parquet", ".pq")) or data[:4] == b"PAR1"



def version_notes(settings: dict) -> list[str]:
    """Differences between the versions that wrote a file and this installation (numbers may differ slightly)."""

    installed = package_version("transformers")
    out = []
    if settings.get("version") and settings["version"] != __version__:
        out.append(f"The scores were computed by bertscore-viz {settings['version']}; this is {__version__}.")
    if settings.get("transformers_version") and settings["transformers_version"] != installed:
        out.append(f"The scores were computed with transformers {settings['transformers_version']}; this "
                   f"installation has {installed}. A drill-down recomputes with the latter.")
    return out


def _triple(values) -> str:
    return "/".join(f"{float(x):.4f}" for x in values)


def settings_mismatch(info: dict, model: str, layer: int, idf: bool, rescale: bool | None = None,
                      baseline=None, shown_rescaled: bool | None = None, precision: str | None = None) -> str | None:
    """A plain sentence when the app's sidebar differs from the file's setting, saying what is shown instead.

    Args:
        info: the file's metadata.
        model, layer, idf, rescale: the sidebar's (``rescale`` None: not compared).
        baseline: the P/R/F baseline the sidebar's settings give for the file's model and layer (None: none, or
            rescaling off there); compared with the file's values when both rescale.
        shown_rescaled: whether the page shows rescaled numbers (default: as the file's signature says).
        precision: the sidebar's (None: not compared).

    Returns:
        None when nothing differs.
    """
    s = info["settings"]
    written = bool(s.get("rescaled"))
    shown = written if shown_rescaled is None else bool(shown_rescaled)
    diff = []
    if s["model"] != model:
        diff.append(f"model {s['model']} (sidebar: {model})")
    if int(s["layer"]) != int(layer):
        diff.append(f"layer {s['layer']} (sidebar: {layer})")
    if bool(s["idf"]) != bool(idf):
        diff.append(f"idf {'on' if s['idf'] else 'off'} (sidebar: {'on' if idf else 'off'})")
    if precision is not None and s.get("precision", "fp32") != precision:
        diff.append(f"precision {s.get('precision', 'fp32')} (sidebar: {precision})")
    if rescale is not None and bool(rescale) != written:
        diff.append(f"{'rescaled with a baseline' if written else 'not rescaled'} (sidebar: rescaling "
                    f"{'on' if rescale else 'off'})")
    file_baseline = info.get("baseline")
    if (rescale and written and baseline is not None and file_baseline is not None and s["model"] == model
            and not np.allclose(np.asarray(baseline, dtype=np.float64), np.asarray(file_baseline), rtol=0,
                                atol=1e-9)):
        source = f"{info.get('lang')} baseline" if info.get("lang") else "baseline"
        diff.append(f"P/R/F {source} {_triple(file_baseline)} (the sidebar's gives {_triple(baseline)})")
    if not diff:
        return None
    what = "rescaled" if shown else "raw"
    return ("This file was scored with other settings than the sidebar's: " + "; ".join(diff) + f". Shown: the "
            f"file's own {what} numbers, with the signature below. The sidebar does not change a results file; to "
            "score at the sidebar's settings, upload the system outputs (CSV or JSON Lines) instead.")



def app_settings(info: dict) -> dict:
    """The file's model, layer and idf as fields of the app's settings (for the drill-down's one-segment pass).
    The model is its source (a local directory) when that exists here, else its name."""

    s = info["settings"]
    model = s["model"]
    source = info.get("model_path", info.get("model_source"))  # files before model_path kept the path here
    if isinstance(source, str) and source and Path(source).is_dir():
        try:
            same = resolve_model(model).source == source
        except Exception:  # an unknown name: the directory it came from decides
            same = False
        if not same:
            model = source
    return {"model": model, "layer": int(s["layer"]), "idf": bool(s["idf"]), "precision": s.get("precision", "fp32")}
