"""Every value of a results Parquet file checked at load (:func:`bertscore_viz.files.results.table.read_results`):
the type of every column, and each row's values, so that an edited or damaged file is refused with the row named
instead of giving a system mean of ``nan``, an F1 of 7.0 or the texts '0', '1', '2'.

Checked, for every row (the first bad row is named: its position in the file, segment and system):

* **types**: ``segment_index``, ``row``, ``best_reference`` integers; ``segment_id``, ``system``, ``candidate``,
  ``source``, ``notes`` strings; ``references`` a list of strings; the score columns floating point (a column of
  another type, e.g. integer candidates, is refused by its type);
* **required values**: no null segment index, row (at least 1), segment id, system, candidate or references (a
  list of at least one string); systems among those the metadata lists; every system's row of a segment with the
  same segment id, input row and references;
* **raw scores**: F1 finite; P and R finite, or NaN only with idf (a side whose idf weights sum to 0, as
  bert-score gives it, and then F1 = 0); each within [-1, 1] up to rounding (:data:`RAW_TOLERANCE` for the
  precision the file was computed in);
* **rescaled scores**: with a baseline in the metadata, equal to ``(raw - b) / (1 - b)`` (NaN where raw is NaN),
  or null throughout (no baseline existed); without a baseline, null;
* **reported scores** (``precision``, ``recall``, ``f1``, when present): the rescaled ones when the signature says
  rescaled, else the raw ones;
* **best reference**: null, or an index into the row's references.

pyarrow is the ``[app]`` extra: imported inside the functions, as in :mod:`bertscore_viz.files.limits`.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from bertscore_viz.errors import InputError
from bertscore_viz.files.limits import LimitExceeded

__all__ = ["RAW_TOLERANCE", "RESCALE_TOLERANCE", "EXPECTED_TYPES", "check_schema", "check_values",
           "check_parquet_footer", "ExpansionCounter"]

#: How far past [-1, 1] a raw score may lie from rounding, by the precision the scores were computed in.
RAW_TOLERANCE = {"fp32": 1e-4, "fp16": 0.05, "bf16": 0.05}
#: Largest difference between a rescaled score and ``(raw - b) / (1 - b)`` from the raw one.
RESCALE_TOLERANCE = 1e-6
_SCORES = ("precision", "recall", "f1", "raw_precision", "raw_recall", "raw_f1", "rescaled_precision",
           "rescaled_recall", "rescaled_f1")
#: Column -> the kind of Arrow type it must have.
EXPECTED_TYPES = {"segment_index": "integer", "row": "integer", "best_reference": "integer",
                  "segment_id": "string", "system": "string", "candidate": "string", "source": "string",
                  "notes": "string", "references": "list of strings", **{c: "floating point" for c in _SCORES}}


def _kind(t) -> str:
    """The kind of an Arrow type (dictionary-encoded columns by their values; a null column is any kind)."""

    if pa.types.is_dictionary(t):
        t = t.value_type
    if pa.types.is_null(t):
        return "null"
    if pa.types.is_integer(t):
        return "integer"
    if pa.types.is_floating(t):
        return "floating point"
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "string"
    if (pa.types.is_list(t) or pa.types.is_large_list(t)) and _kind(t.value_type) in ("string", "null"):
        return "list of strings"
    return str(t)


def _where(table, i: int) -> str:
    """How a message names row ``i`` (0-based) of the file."""
    seg = table.column("segment_index")[i].as_py() if "segment_index" in table.column_names else None
    system = table.column("system")[i].as_py() if "system" in table.column_names else None
    return f"row {i + 1} of the file (segment_index {seg}, system {system!r})"


def check_schema(table) -> None:
    """Every known column has its type (:data:`EXPECTED_TYPES`); a null-typed column only where nulls are allowed.

    Raises:
        InputError: the first column of another type, with its type, the expected one and its first value.
    """
    nullable = {"source", "notes", "best_reference", "rescaled_precision", "rescaled_recall", "rescaled_f1"}
    for name, expected in EXPECTED_TYPES.items():
        if name not in table.column_names:
            continue
        found = _kind(table.schema.field(name).type)
        if found == expected or (found == "null" and name in nullable):
            continue
        first = table.column(name)[0].as_py() if table.num_rows else None
        raise InputError(f"The results file's column {name!r} holds {table.schema.field(name).type} values (the "
                         f"first, in {_where(table, 0)}: {first!r:.60}); it must hold {expected} values. The file "
                         "was edited or not written by bertscore-viz: rerun the command that wrote it.")


def _num(x) -> str:
    return repr(float(x))


def _first(mask: np.ndarray) -> int | None:
    hits = np.flatnonzero(mask)
    return int(hits[0]) if hits.size else None


def _floats(table, name: str) -> np.ndarray:
    column = table.column(name)
    return np.asarray(column.to_numpy(zero_copy_only=False), dtype=np.float64) if column.null_count < len(column) \
        else np.full(len(column), np.nan)


def _check_required(table, info: dict) -> None:

    for name in ("segment_index", "row", "segment_id", "system", "candidate", "references"):
        bad = _first(np.asarray(table.column(name).is_null().to_numpy(zero_copy_only=False)))
        if bad is not None:
            raise InputError(f"The results file has no {name} in {_where(table, bad)}: every row needs one. The file "
                             "was edited or damaged; rerun the command that wrote it.")
    rows = np.asarray(table.column("row").to_numpy(zero_copy_only=False))
    index = np.asarray(table.column("segment_index").to_numpy(zero_copy_only=False))
    bad = _first((rows < 1) | (index < 0))
    if bad is not None:
        raise InputError(f"The results file gives row {int(rows[bad])} and segment_index {int(index[bad])} in "
                         f"{_where(table, bad)}; rows are numbered from 1 and segments from 0.")
    refs = table.column("references")
    sizes = np.asarray(pc.list_value_length(refs).to_numpy(zero_copy_only=False))
    bad = _first(sizes < 1)
    if bad is None and pc.list_flatten(refs).null_count:
        flat_nulls = np.asarray(pc.list_flatten(refs).is_null().to_numpy(zero_copy_only=False))
        bad = int(np.searchsorted(np.cumsum(sizes), _first(flat_nulls), side="right"))
    if bad is not None:
        raise InputError(f"The results file's references in {_where(table, bad)} are empty or hold a null: each row "
                         "needs a list of at least one reference string.")
    listed = info.get("systems")
    if listed:
        names = set(pc.unique(table.column("system")).to_pylist()) - set(listed)
        if names:
            stray = sorted(names)[0]
            i = _first(np.asarray(pc.equal(table.column("system"), stray).to_numpy(zero_copy_only=False)))
            raise InputError(f"The results file has system {stray!r} (first in {_where(table, i)}), which its "
                             f"metadata does not list ({', '.join(map(repr, listed[:10]))}): it was edited.")


_SEGMENT_FIELDS = ("segment id", "row", "references")


def _check_segments(table) -> None:
    """Every system's row of a segment has the segment's id, input row and references (the dataset takes them from
    one system's rows: scores against other references would be shown against the wrong ones)."""
    index = table.column("segment_index").to_pylist()
    keys = zip(table.column("segment_id").to_pylist(), table.column("row").to_pylist(),
               (tuple(r) for r in table.column("references").to_pylist()))
    first: dict[int, tuple[int, tuple]] = {}
    for i, (seg, key) in enumerate(zip(index, keys)):
        j, seen = first.setdefault(seg, (i, key))
        if seen != key:
            k = next(k for k in range(3) if seen[k] != key[k])
            raise InputError(f"The results file gives segment_index {seg} the {_SEGMENT_FIELDS[k]} {key[k]!r:.60} in "
                             f"{_where(table, i)}, but {seen[k]!r:.60} in {_where(table, j)}. Every system of a "
                             "segment is scored against the same references; the file was edited.")


def _check_raw(table, info: dict) -> dict:
    settings = info["settings"]
    tol = RAW_TOLERANCE.get(settings.get("precision", "fp32"), 0.05)
    raw = {c: _floats(table, f"raw_{c}") for c in ("precision", "recall", "f1")}
    for name, values in raw.items():
        nan_ok = name != "f1" and bool(settings.get("idf"))  # bert-score's degenerate idf: P or R is 0/0
        bad = _first(~np.isfinite(values) & ~(np.isnan(values) & nan_ok) | (np.abs(values) > 1 + tol))
        if bad is not None:
            nan_note = " (P or R may be NaN only with idf)" if name != "f1" else ""
            raise InputError(f"The results file gives raw_{name} = {_num(values[bad])} in {_where(table, bad)}; a "
                             f"raw BERTScore is a finite number from -1 to 1{nan_note}. The file was edited or "
                             "damaged: rerun the command that wrote it.")
    degenerate = np.isnan(raw["precision"]) | np.isnan(raw["recall"])
    bad = _first(degenerate & (raw["f1"] != 0))
    if bad is not None:
        raise InputError(f"The results file gives raw_f1 = {_num(raw['f1'][bad])} with an undefined P or R in "
                         f"{_where(table, bad)}; F1 is 0 there. The file was edited.")
    return raw


def _check_rescaled(table, info: dict, raw: dict) -> dict:
    baseline = info.get("baseline")
    out = {}
    for i, name in enumerate(("precision", "recall", "f1")):
        values = _floats(table, f"rescaled_{name}")
        column = table.column(f"rescaled_{name}")
        if column.null_count == len(column):
            out[name] = None
            continue
        if baseline is None:
            bad = _first(~np.isnan(values))
            raise InputError(f"The results file gives rescaled_{name} = {_num(values[bad])} in "
                             f"{_where(table, bad)}, but its metadata has no baseline to rescale with: it was edited.")
        b = float(np.asarray(baseline, dtype=np.float64).reshape(-1)[i])
        expected = (raw[name] - b) / (1.0 - b)
        wrong = np.abs(values - expected) > RESCALE_TOLERANCE * np.maximum(1.0, np.abs(expected))
        bad = _first((wrong & ~np.isnan(expected)) | (np.isnan(values) != np.isnan(expected)))
        if bad is not None:
            raise InputError(f"The results file gives rescaled_{name} = {_num(values[bad])} in "
                             f"{_where(table, bad)}; rescaling raw {_num(raw[name][bad])} with the file's baseline "
                             f"{b!r} gives {_num(expected[bad])}. The file was edited or damaged: rerun the command "
                             "that wrote it.")
        out[name] = values
    return out


def _check_reported(table, info: dict, raw: dict, rescaled: dict) -> None:
    written_rescaled = bool(info["settings"].get("rescaled"))
    for name in ("precision", "recall", "f1"):
        if name not in table.column_names or table.column(name).null_count == len(table.column(name)):
            continue
        values = _floats(table, name)
        if np.isnan(values).all():  # not written (a run without the numbers it reports): the reader ignores them
            continue
        expected = rescaled[name] if written_rescaled and rescaled[name] is not None else raw[name]
        differ = (np.abs(values - expected) > RESCALE_TOLERANCE) | (np.isnan(values) != np.isnan(expected))
        bad = _first(differ)
        if bad is not None:
            which = "rescaled" if written_rescaled else "raw"
            raise InputError(f"The results file reports {name} = {_num(values[bad])} in {_where(table, bad)}, but "
                             f"its {which} {name} is {_num(expected[bad])} (the signature reports {which} numbers). "
                             "The file was edited.")


def _check_best_reference(table) -> None:

    if "best_reference" not in table.column_names or table.column("best_reference").null_count == table.num_rows:
        return
    sizes = np.asarray(pc.list_value_length(table.column("references")).to_numpy(zero_copy_only=False))
    values = np.asarray(table.column("best_reference").fill_null(0).to_numpy(zero_copy_only=False))
    bad = _first((values < 0) | (values >= sizes))
    if bad is not None:
        raise InputError(f"The results file gives best_reference {int(values[bad])} in {_where(table, bad)}, which "
                         f"has {int(sizes[bad])} reference(s): it was edited.")


def check_values(table, info: dict) -> None:
    """Check every row of a results table (Arrow) against the metadata ``info`` (already checked for types).

    Args:
        table: the file's rows as a ``pyarrow.Table``.
        info: its ``bertscore_viz`` metadata, checked (:func:`bertscore_viz.files.results.format.read_metadata`).

    Raises:
        InputError: the first bad value, naming its row of the file, segment and system, what it is and what it
            must be.
    """
    check_schema(table)
    _check_required(table, info)
    _check_segments(table)
    raw = _check_raw(table, info)
    rescaled = _check_rescaled(table, info, raw)
    _check_reported(table, info, raw, rescaled)
    _check_best_reference(table)


def check_parquet_footer(metadata, max_rows: int | None, what: str = "The Parquet file") -> None:
    """Refuse a Parquet file whose footer states more rows than ``max_rows``, before any data is read."""
    if max_rows is not None and metadata.num_rows > max_rows:
        raise LimitExceeded(f"{what} holds {metadata.num_rows:,} rows; at most {max_rows:,} are read here. Split "
                            "it, or use the command line (`python -m bertscore_viz score --ray`) for larger data.")


class ExpansionCounter:
    """Counts rows and characters while a file is read in batches; raises :class:`LimitExceeded` above a limit."""

    def __init__(self, max_rows: int | None, max_chars: int | None, what: str = "The file"):
        self.max_rows, self.max_chars, self.what = max_rows, max_chars, what
        self.rows = self.chars = 0

    def add_rows(self, n: int) -> None:
        self.rows += n
        if self.max_rows is not None and self.rows > self.max_rows:
            raise LimitExceeded(f"{self.what} holds more than {self.max_rows:,} rows; at most {self.max_rows:,} "
                                "are read here.")

    def add_chars(self, n: int) -> None:
        self.chars += n
        if self.max_chars is not None and self.chars > self.max_chars:
            raise LimitExceeded(f"{self.what} expands to more than {self.max_chars:,} characters of text once "
                                f"decompressed; at most {self.max_chars:,} are read here. Split it into smaller "
                                "files.")

    def add_batch(self, batch) -> None:
        """A pyarrow RecordBatch: its rows, and the characters of its text columns (every row's value, also in
        dictionary-encoded columns)."""

        self.add_rows(batch.num_rows)
        for column in batch.columns:
            if pa.types.is_dictionary(column.type):
                column = column.dictionary_decode()
            if pa.types.is_list(column.type) or pa.types.is_large_list(column.type):
                column = pc.list_flatten(column)
            if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
                total = pc.sum(pc.utf8_length(column)).as_py()
                self.add_chars(int(total or 0))
