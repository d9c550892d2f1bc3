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

The app reads these files (:func:`read_results` once per upload, :func:`results_at` per rescaling choice): systems
ranked best first as :func:`bertscore_viz.evaluation.compare.results_for` ranks them, the numbers the signature names by
default.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from bertscore_viz.engine.baseline import BaselineTable, check_values
from bertscore_viz.engine.idf import IdfWeights, idf_from_counts
from bertscore_viz.engine.results import ScoreResult, Signature
from bertscore_viz.engine.scorer import Scorer
from bertscore_viz.errors import BaselineError, InputError
from bertscore_viz.evaluation.compare import Comparison
from bertscore_viz.evaluation.significance import rank_order
from bertscore_viz.files import limits, results_values
from bertscore_viz.files.upload import Dataset
from bertscore_viz.models.spec import resolve_model
from bertscore_viz.versions import __version__, package_version

__all__ = ["MAX_UPLOAD_BYTES", "UPLOAD_ENV", "FORMAT", "FORMAT_VERSION", "META_KEY", "SIGNATURE_KEY", "IDF_KEY",
           "SCORE_COLUMNS", "REQUIRED_COLUMNS", "schema", "max_upload_bytes", "metadata", "read_idf", "read_metadata",
           "signature_from", "is_results_file", "ResultsTable", "LoadedResults", "read_results", "results_at",
           "load_results", "version_notes", "settings_mismatch", "file_scorer", "app_settings"]

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
    return _parse_meta(meta)


def _parse_meta(meta) -> dict:
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


@dataclass(frozen=True)
class ResultsTable:
    """A results file read and checked once (the app keeps it per upload; every rescaling choice is built from it).

    Attributes:
        dataset: systems' outputs, references, sources, segment ids and rows, as the Compare page's
            :class:`~bertscore_viz.files.upload.Dataset`.
        info: the file's metadata (signature, settings, baseline, input description).
        columns: ``{system: {column: array}}`` of the score columns and ``best_reference``, in segment order, plus
            ``"warnings"``: the rows' notes as ``segment ID: note``.
        has_rescaled: every row has rescaled numbers (a baseline existed for the model and layer).
        idf: the idf weights from the file's document frequencies (None: idf off, or a file of format 1).
    """

    dataset: object
    info: dict
    columns: dict
    has_rescaled: bool
    idf: IdfWeights | None = None

    @property
    def written_rescaled(self) -> bool:
        """The file's signature names rescaled numbers (``--rescale_with_baseline``)."""
        return bool(self.info["settings"].get("rescaled"))

    @property
    def references(self) -> list[str]:
        return [r for group in self.dataset.references for r in group]


@dataclass(frozen=True)
class LoadedResults:
    """A results file read back: the inputs as a :class:`~bertscore_viz.files.upload.Dataset` and one
    :class:`~bertscore_viz.engine.results.ScoreResult` per system at one rescaling choice.

    Attributes:
        dataset: systems' outputs, references, sources, segment ids and rows.
        comparison: :class:`~bertscore_viz.evaluation.compare.Comparison`, systems best first (rescaled when asked and
            available).
        info: the file's metadata (signature, settings, baseline, input description).
        notes: what the reader should know: rescaling not available, versions differ from this installation.
        table: the :class:`ResultsTable` it was built from.
    """

    dataset: object
    comparison: object
    info: dict
    notes: tuple[str, ...] = ()
    table: ResultsTable | None = None

    @property
    def signature(self) -> str:
        return self.comparison.signature


def _load_table(source, max_bytes: int | None, max_rows: int | None, max_chars: int | None):
    """The file's checked metadata and its Arrow table, read within the limits (see :func:`read_results`)."""

    if isinstance(source, (str, Path)):
        try:
            size = Path(source).stat().st_size
            if max_bytes is not None and size > max_bytes:
                raise InputError(f"The results file is {size / 2**20:.1f} MB; the limit here is "
                                 f"{max_bytes / 2**20:.0f} MB.")
            data = Path(source).read_bytes()
        except OSError as exc:
            raise InputError(f"The results file {source} cannot be read: {exc.strerror}.") from None
    else:
        data = source
    if max_bytes is not None and len(data) > max_bytes:
        raise InputError(f"The results file is {len(data) / 2**20:.1f} MB; the limit here is {max_bytes / 2**20:.0f} "
                         "MB. Whoever runs the server can raise it (docs/RAY.md, \"In the app\").")
    if max_chars is None and max_bytes is not None:
        max_chars = limits.expanded_chars_limit(max_bytes)
    try:
        pf = pq.ParquetFile(io.BytesIO(data))
        info = _parse_meta(pf.schema_arrow.metadata)  # what the file is, before reading any data
        results_values.check_parquet_footer(pf.metadata, max_rows, "The results file")
        counter = results_values.ExpansionCounter(max_rows, max_chars, "The results file")
        batches = []
        for batch in pf.iter_batches(batch_size=8192):
            counter.add_batch(batch)
            batches.append(batch)
        table = pa.Table.from_batches(batches, schema=pf.schema_arrow)
        del batches
    except InputError:
        raise
    except Exception as exc:
        raise InputError(f"The file cannot be read as Parquet: {str(exc).splitlines()[0][:200]}.") from None
    del data
    missing = [c for c in REQUIRED_COLUMNS if c not in table.column_names]
    if missing:
        raise InputError(f"The results file lacks the column(s) {', '.join(missing)}; it was not written by this "
                         "version of bertscore-viz, or was edited.")
    if table.num_rows == 0:
        raise InputError("The results file has no rows.")
    return info, table


def read_results(source, max_bytes: int | None = None, max_rows: int | None = None,
                 max_chars: int | None = None) -> ResultsTable:
    """Read and check a results file (path or bytes), no model pass.

    Args:
        source: a path or the file's bytes.
        max_bytes: refuse larger files (the app's limit for results files, :func:`max_upload_bytes`).
        max_rows: refuse a file of more rows (systems x segments): from its footer before reading, and counted
            while reading (the app: the deployment's rows per upload).
        max_chars: refuse a file whose text expands to more characters once decompressed (default with
            ``max_bytes``: :func:`bertscore_viz.files.limits.expanded_chars_limit`).

    Raises:
        InputError: too large (in bytes, or in what it expands to), not a results file, incomplete (a system misses
            segments: the run did not finish), or empty.
    """

    info, table = _load_table(source, max_bytes, max_rows, max_chars)
    idf = read_idf(table.schema.metadata)
    results_values.check_values(table, info)  # every value, before anything is built from them
    frame = table.to_pandas()
    del table
    systems = list(info.get("systems") or dict.fromkeys(frame["system"]))
    n = int(info.get("n_segments") or frame["segment_index"].nunique())
    frame = frame.sort_values(["segment_index", "system"], kind="stable")
    groups = dict(tuple(frame.groupby("system", sort=False)))
    per_system = {}
    for name in systems:
        part = groups.get(name, frame.iloc[:0])
        idx = part["segment_index"].to_numpy()
        if len(part) != n or not np.array_equal(idx, np.arange(n)):
            raise InputError(f"System {name!r} has {part['segment_index'].nunique()} of {n} segments in the results "
                             "file: the run did not finish. Rerun the same command into the same output directory; it "
                             "completes the missing blocks.")
        per_system[name] = part
    del frame, groups
    first = per_system[systems[0]]
    has_rescaled = info.get("baseline") is not None and all(
        bool(part["rescaled_f1"].notna().all()) for part in per_system.values())
    columns = {}
    for name, part in per_system.items():
        cols = {c: part[c].to_numpy(dtype=np.float64) for c in REQUIRED_COLUMNS if c.startswith(("raw_", "rescaled_"))}
        cols["best_reference"] = (part["best_reference"].to_numpy(dtype=np.int64) if "best_reference" in part
                                  else None)
        cols["warnings"] = tuple(f"segment {sid}: {note}" for sid, note
                                 in zip(part["segment_id"], part["notes"].fillna("")) if note)
        columns[name] = cols
    sources = None
    if "source" in first and first["source"].notna().any():
        sources = [s if isinstance(s, str) else "" for s in first["source"]]
    dataset = Dataset({name: [str(c) for c in part["candidate"]] for name, part in per_system.items()},
                      [[str(r) for r in refs] for refs in first["references"]], sources,
                      [str(s) for s in first["segment_id"]], [int(r) for r in first["row"]], [], None)
    return ResultsTable(dataset, info, columns, has_rescaled, idf)


def results_at(table: ResultsTable, rescale: bool | None = None) -> LoadedResults:
    """The file's numbers as a :class:`~bertscore_viz.evaluation.compare.Comparison`, systems ranked best first by mean
    F1 as :func:`bertscore_viz.evaluation.compare.results_for` ranks them (ties in natural name order).

    Args:
        rescale: True = rescaled numbers (when the file has them), False = raw, None = as the signature says.
    """

    info = table.info
    settings = info["settings"]
    want = table.written_rescaled if rescale is None else bool(rescale)
    notes = []
    if want and not table.has_rescaled:
        notes.append(f"No rescaling baseline exists for {settings.get('model')} layer {settings.get('layer')} in the "
                     "results file; showing raw numbers.")
    rescaled = want and table.has_rescaled
    sig = signature_from(settings, rescaled=rescaled)
    baseline = np.asarray(info["baseline"], dtype=np.float64) if rescaled else None
    prefix = "rescaled_" if rescaled else "raw_"
    results = {}
    for name, cols in table.columns.items():
        best = cols["best_reference"]
        results[name] = ScoreResult(
            cols[prefix + "precision"], cols[prefix + "recall"], cols[prefix + "f1"], cols["raw_precision"],
            cols["raw_recall"], cols["raw_f1"], sig, baseline,
            None if best is None else np.repeat(best[:, None], 3, axis=1), cols["warnings"])
    means = {k: float(np.mean(np.nan_to_num(v.f1, nan=0.0))) for k, v in results.items()}
    results = {k: results[k] for k in rank_order(means)}
    notes.extend(version_notes(settings))
    comparison = Comparison(results, int(settings["layer"]), bool(settings["idf"]), rescaled,
                            notes[0] if want and not table.has_rescaled else None)
    return LoadedResults(table.dataset, comparison, info, tuple(notes), table)


def load_results(source, rescale: bool | None = None, max_bytes: int | None = None) -> LoadedResults:
    """Read a results file (path or bytes) into the Compare page's dataset and comparison, no model pass:
    :func:`read_results` then :func:`results_at`.

    Raises:
        InputError: see :func:`read_results`.
    """
    return results_at(read_results(source, max_bytes), rescale)


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


def file_scorer(table: ResultsTable, rescaled: bool, model=None, encoder=None) -> Scorer:
    """A Scorer that reproduces a results file's numbers for one segment (the Compare page's drill-down): the file's
    model and layer, the idf weights of the file's document frequencies (not recomputed from the references at
    hand; files without them, format 1, take idf from the file's references) and the file's baseline values (not
    looked up again in this installation), with the file's custom-baseline flag in the signature.

    Args:
        table: the file, read.
        rescaled: report rescaled numbers (the file's baseline; the file must have it).
        model: the model to load instead of the file's name (e.g. the app's resolved spec).
        encoder: an encoder already loaded for that model (the app's pooled one), else loaded on first use.
    """
    s = table.info["settings"]
    idf = bool(s["idf"])
    layer = int(s["layer"])
    baseline = None
    if rescaled:
        if not table.has_rescaled:
            raise BaselineError("This results file has no rescaled numbers (no baseline existed for its model and "
                                "layer).")
        baseline = BaselineTable(np.asarray([table.info["baseline"]], dtype=np.float64), "the results file",
                                 layers=(layer,))
    precision = s.get("precision", "fp32")
    if encoder is not None and encoder.precision != precision:
        encoder = None  # the file's numbers come from its own precision: its drill-down too
    return Scorer(model=model if model is not None else s["model"], layer=layer, idf=idf,
                  idf_sentences=table.references if idf and table.idf is None else None,
                  idf_weights=table.idf if idf else None, precision=precision,
                  rescale_with_baseline=rescaled, baseline_table=baseline,
                  custom_baseline=bool(s.get("custom_baseline", False)), encoder=encoder)


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
