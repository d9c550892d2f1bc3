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

The file's key-value metadata holds ``bertscore_viz.signature`` (the text of the signature) and
``bertscore_viz`` (JSON: format version, signature fields, baseline, systems, segment count, input description).
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import InputError
from .results import ScoreResult, Signature

#: Largest results file the app reads (bytes): about 700,000 rows of short segments.
MAX_UPLOAD_BYTES = 200 * 2**20
FORMAT = "bertscore-viz-results"
FORMAT_VERSION = 1
META_KEY = b"bertscore_viz"
SIGNATURE_KEY = b"bertscore_viz.signature"
SCORE_COLUMNS = ("precision", "recall", "f1", "raw_precision", "raw_recall", "raw_f1",
                 "rescaled_precision", "rescaled_recall", "rescaled_f1")
REQUIRED_COLUMNS = ("segment_index", "segment_id", "row", "system", "candidate", "references", "raw_precision",
                    "raw_recall", "raw_f1", "rescaled_precision", "rescaled_recall", "rescaled_f1")


def schema():
    """The Arrow schema of a results file (without metadata)."""
    import pyarrow as pa

    fields = [("segment_index", pa.int64()), ("segment_id", pa.string()), ("row", pa.int64()),
              ("system", pa.string()), ("candidate", pa.string()), ("references", pa.list_(pa.string())),
              ("source", pa.string())]
    fields += [(c, pa.float64()) for c in SCORE_COLUMNS]
    fields += [("best_reference", pa.int64()), ("notes", pa.string())]
    return pa.schema(fields)


def metadata(signature: Signature, baseline, systems, n_segments: int, extra: dict | None = None) -> dict:
    """The key-value metadata written into every results file."""
    info = {"format": FORMAT, "format_version": FORMAT_VERSION, "signature": str(signature),
            "settings": signature.as_dict(),
            "baseline": None if baseline is None else [float(x) for x in np.asarray(baseline, dtype=np.float64)],
            "systems": list(systems), "n_segments": int(n_segments)}
    info.update(extra or {})
    return {META_KEY: json.dumps(info, ensure_ascii=False).encode("utf-8"),
            SIGNATURE_KEY: str(signature).encode("utf-8")}


def read_metadata(source) -> dict:
    """The ``bertscore_viz`` metadata of a results file (a path or bytes).

    Raises:
        InputError: not Parquet, or a Parquet file without the metadata (not written by bertscore-viz).
    """
    import pyarrow.parquet as pq

    try:
        meta = pq.read_schema(io.BytesIO(source) if isinstance(source, (bytes, bytearray)) else source).metadata
    except Exception as exc:  # pyarrow raises ArrowInvalid / OSError with its own text
        raise InputError(f"The file cannot be read as Parquet: {str(exc).splitlines()[0][:200]}.") from None
    return _parse_meta(meta)


def _parse_meta(meta) -> dict:
    raw = (meta or {}).get(META_KEY)
    if raw is None:
        raise InputError("This Parquet file has no bertscore-viz signature in its metadata, so it is not the output "
                         "of `python -m bertscore_viz score --ray`. Upload that output (scores.parquet), or a CSV / "
                         "JSON Lines file of system outputs to score here.")
    try:
        info = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise InputError("The bertscore-viz metadata of this Parquet file is damaged (not JSON).") from None
    if info.get("format") != FORMAT:
        raise InputError(f"The Parquet metadata names format {info.get('format')!r}, expected {FORMAT!r}.")
    if int(info.get("format_version", 0)) > FORMAT_VERSION:
        raise InputError(f"The results file has format version {info['format_version']}; this bertscore-viz reads "
                         f"up to {FORMAT_VERSION}. Upgrade bertscore-viz.")
    return info


def signature_from(settings: dict, rescaled: bool | None = None) -> Signature:
    """A :class:`Signature` from the ``settings`` dict of the metadata (optionally with another rescaling flag)."""
    try:
        return Signature(settings["model"], int(settings["layer"]), bool(settings["idf"]),
                         bool(settings["rescaled"] if rescaled is None else rescaled),
                         bool(settings.get("custom_baseline", False)), settings.get("precision", "fp32"),
                         settings.get("transformers_version", ""), settings.get("version", ""))
    except (KeyError, TypeError, ValueError):
        raise InputError("The signature in the results file's metadata is incomplete (model, layer, idf and "
                         "rescaled are needed).") from None


def is_results_file(name: str | None, data: bytes) -> bool:
    """A Parquet upload (by name or by its magic bytes): the Compare page reads it as precomputed scores."""
    return (name or "").lower().endswith((".parquet", ".pq")) or data[:4] == b"PAR1"


@dataclass(frozen=True)
class LoadedResults:
    """A results file read back: the inputs as a :class:`~bertscore_viz.upload.Dataset` and one
    :class:`~bertscore_viz.results.ScoreResult` per system at the file's setting.

    Attributes:
        dataset: systems' outputs, references, sources, segment ids and rows.
        comparison: :class:`~bertscore_viz.compare.Comparison` (rescaled when asked and available).
        info: the file's metadata (signature, settings, baseline, input description).
        notes: what the reader should know: rescaling not available, versions differ from this installation.
    """

    dataset: object
    comparison: object
    info: dict
    notes: tuple[str, ...] = ()

    @property
    def signature(self) -> str:
        return self.comparison.signature


def load_results(source, rescale: bool | None = None, max_bytes: int | None = None) -> LoadedResults:
    """Read a results file (path or bytes) into the Compare page's dataset and comparison, no model pass.

    Args:
        source: a path or the file's bytes.
        rescale: True = rescaled numbers (when the file has them), False = raw, None = as the signature says.
        max_bytes: refuse larger files (the app's upload limit).

    Raises:
        InputError: not a results file, incomplete (a system misses segments: the run did not finish), or empty.
    """
    import pyarrow.parquet as pq

    from .compare import Comparison
    from .upload import Dataset

    if isinstance(source, (str, Path)):
        try:
            data = Path(source).read_bytes()
        except OSError as exc:
            raise InputError(f"The results file {source} cannot be read: {exc.strerror}.") from None
    else:
        data = bytes(source)
    if max_bytes is not None and len(data) > max_bytes:
        raise InputError(f"The results file is {len(data) / 1e6:.1f} MB; the limit here is {max_bytes / 1e6:.0f} MB.")
    try:
        table = pq.read_table(io.BytesIO(data))
    except Exception as exc:
        raise InputError(f"The file cannot be read as Parquet: {str(exc).splitlines()[0][:200]}.") from None
    info = _parse_meta(table.schema.metadata)
    missing = [c for c in REQUIRED_COLUMNS if c not in table.column_names]
    if missing:
        raise InputError(f"The results file lacks the column(s) {', '.join(missing)}; it was not written by this "
                         "version of bertscore-viz, or was edited.")
    if table.num_rows == 0:
        raise InputError("The results file has no rows.")
    frame = table.to_pandas()
    systems = list(info.get("systems") or dict.fromkeys(frame["system"]))
    n = int(info.get("n_segments") or frame["segment_index"].nunique())
    frame = frame.sort_values(["segment_index", "system"], kind="stable")
    per_system = {}
    for name in systems:
        part = frame[frame["system"] == name]
        idx = part["segment_index"].to_numpy()
        if len(part) != n or not np.array_equal(idx, np.arange(n)):
            raise InputError(f"System {name!r} has {part['segment_index'].nunique()} of {n} segments in the results "
                             "file: the run did not finish. Rerun the same command into the same output directory; it "
                             "completes the missing blocks.")
        per_system[name] = part
    first = per_system[systems[0]]
    has_rescaled = bool(first["rescaled_f1"].notna().all())
    want = bool(info["settings"].get("rescaled")) if rescale is None else bool(rescale)
    notes = []
    if want and not has_rescaled:
        notes.append(f"No rescaling baseline exists for {info['settings'].get('model')} layer "
                     f"{info['settings'].get('layer')} in the results file; showing raw numbers.")
    rescaled = want and has_rescaled
    sig = signature_from(info["settings"], rescaled=rescaled)
    baseline = np.asarray(info["baseline"], dtype=np.float64) if rescaled and info.get("baseline") else None
    prefix = "rescaled_" if rescaled else "raw_"
    results = {}
    for name, part in per_system.items():
        warns = tuple(f"segment {sid}: {note}" for sid, note in zip(part["segment_id"], part["notes"].fillna(""))
                      if note)
        best = part["best_reference"].to_numpy(dtype=np.int64) if "best_reference" in part else None
        results[name] = ScoreResult(
            part[prefix + "precision"].to_numpy(dtype=np.float64), part[prefix + "recall"].to_numpy(dtype=np.float64),
            part[prefix + "f1"].to_numpy(dtype=np.float64), part["raw_precision"].to_numpy(dtype=np.float64),
            part["raw_recall"].to_numpy(dtype=np.float64), part["raw_f1"].to_numpy(dtype=np.float64), sig, baseline,
            None if best is None else np.repeat(best[:, None], 3, axis=1), warns)
    sources = None
    if "source" in first and first["source"].notna().any():
        sources = [s if isinstance(s, str) else "" for s in first["source"]]
    dataset = Dataset({name: [str(c) for c in part["candidate"]] for name, part in per_system.items()},
                      [[str(r) for r in refs] for refs in first["references"]], sources,
                      [str(s) for s in first["segment_id"]], [int(r) for r in first["row"]], [], None)
    settings = info["settings"]
    notes.extend(version_notes(settings))
    comparison = Comparison(results, int(settings["layer"]), bool(settings["idf"]), rescaled,
                            notes[0] if want and not has_rescaled else None)
    return LoadedResults(dataset, comparison, info, tuple(notes))


def version_notes(settings: dict) -> list[str]:
    """Differences between the versions that wrote a file and this installation (numbers may differ slightly)."""
    import transformers

    from . import __version__

    out = []
    if settings.get("version") and settings["version"] != __version__:
        out.append(f"The scores were computed by bertscore-viz {settings['version']}; this is {__version__}.")
    if settings.get("transformers_version") and settings["transformers_version"] != transformers.__version__:
        out.append(f"The scores were computed with transformers {settings['transformers_version']}; this "
                   f"installation has {transformers.__version__}. A drill-down recomputes with the latter.")
    return out


def settings_mismatch(info: dict, model: str, layer: int, idf: bool) -> str | None:
    """A sentence when the app's model/layer/idf differ from the file's (the file's setting is what is shown)."""
    s = info["settings"]
    diff = []
    if s["model"] != model:
        diff.append(f"model {s['model']} (sidebar: {model})")
    if int(s["layer"]) != int(layer):
        diff.append(f"layer {s['layer']} (sidebar: {layer})")
    if bool(s["idf"]) != bool(idf):
        diff.append(f"idf {'on' if s['idf'] else 'off'} (sidebar: {'on' if idf else 'off'})")
    if not diff:
        return None
    return ("These scores were computed with " + ", ".join(diff) + "; a results file is shown at its own setting "
            "(the drill-down uses it too). Rescaling can be switched in the sidebar.")


def app_settings(info: dict) -> dict:
    """The file's model, layer and idf as fields of the app's settings (for the drill-down's one-segment pass).
    The model is its source (a local directory) when that exists here, else its name."""
    from .models import resolve_model

    s = info["settings"]
    model = s["model"]
    source = info.get("model_source")
    if source and Path(source).is_dir():
        try:
            same = resolve_model(model).source == source
        except Exception:  # an unknown name: the directory it came from decides
            same = False
        if not same:
            model = source
    return {"model": model, "layer": int(s["layer"]), "idf": bool(s["idf"])}
