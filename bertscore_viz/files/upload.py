"""Reading uploaded system outputs: CSV, TSV or JSON Lines, validated with a message per problem.

Pure functions over bytes (no Streamlit): :func:`parse_upload` turns a file into a :class:`Dataset` whose
``problems`` list every issue found, each with its row number, while every good row is kept. The pieces:
:mod:`bertscore_viz.files.tables` reads bytes into a :class:`Table` (what the file is, its encoding, delimiter and
rows), :mod:`bertscore_viz.files.columns` decides the column roles (:class:`ColumnMapping`, every guess said), and
this module builds the :class:`Dataset` (every value checked, every limit applied before the work it bounds).
:mod:`bertscore_viz.serving.isolated` runs the same functions in a worker process with a time and memory limit.

Two layouts are understood, detected from the column names and correctable with a :class:`ColumnMapping`:

* **wide**: one row per segment; a ``reference`` column (or several: ``reference, reference_2`` /
  ``ref1, ref2``), one column per system, optional ``source`` and ``segment_id``.
* **long**: one row per (system, segment); columns ``system``, ``candidate``, ``reference`` (or several),
  optional ``segment_id`` and ``source``.

Row numbers are line numbers of the file: the header is row 1, the first data row is row 2, as a spreadsheet
shows them (a record whose quoted cell spans lines is numbered by its first line; for JSON Lines: the line).
Every row with data is either kept or named by a problem; a blank row (every cell empty or whitespace, or an empty
line) holds no data and is skipped without a problem. docs/INPUTS.md lists the names, guesses and limits.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import replace

import numpy as np

from bertscore_viz.files.columns import (
    HUMAN_RE,
    ColumnMapping,
    Guess,
    check_mapping,
    detect_columns,
    detect_mapping,
    header_problems,
    human_score_columns,
    mapping_line,
)
from bertscore_viz.files.dataset import EMPTY_SCORE, EMPTY_SKIP, Dataset
from bertscore_viz.files.limits import (
    MAX_BYTES,
    MAX_CELL_CHARS,
    MAX_CELLS,
    MAX_COLUMNS,
    MAX_PAIRS,
    MAX_ROWS,
    MAX_SYSTEMS,
    setting_note,
)
from bertscore_viz.files.score_columns import ScoreColumns, parse_score, score_problem
from bertscore_viz.files.tables import JsonValue, Problem, Table, decode, describe_size, read_table, sniff_delimiter

__all__ = ["Dataset", "Problem", "Table", "JsonValue", "ColumnMapping", "Guess", "EMPTY_SCORE", "EMPTY_SKIP",
           "MAX_BYTES", "MAX_ROWS", "MAX_CELL_CHARS", "MAX_COLUMNS", "MAX_CELLS", "MAX_SYSTEMS", "MAX_PAIRS",
           "HUMAN_RE", "decode", "sniff_delimiter", "read_table", "detect_mapping", "detect_columns", "mapping_line",
           "human_score_columns", "parse_upload", "build_dataset", "describe_size", "content_key", "text_problem"]


def _empty_dataset(problems: list[Problem], mapping: ColumnMapping | None = None) -> Dataset:
    return Dataset({}, [], None, [], [], list(problems), mapping)


def parse_upload(data: bytes, filename: str | None = None, mapping: ColumnMapping | None = None,
                 empty: str = EMPTY_SCORE, max_bytes: int = MAX_BYTES, max_rows: int = MAX_ROWS,
                 max_cell_chars: int = MAX_CELL_CHARS, max_columns: int = MAX_COLUMNS, max_cells: int = MAX_CELLS,
                 max_systems: int = MAX_SYSTEMS, max_pairs: int = MAX_PAIRS) -> Dataset:
    """Read, detect (unless ``mapping`` is given), validate and build the dataset.

    Args:
        data: the uploaded file's bytes.
        filename: used for the extension (``.tsv``, ``.jsonl``) when given.
        mapping: the column roles; None = detected from the header (every guess listed as a warning).
        empty: ``"score"`` (empty cells scored as empty text, listed as warnings) or ``"skip"`` (the segment is
            left out for every system, listed).
        max_bytes, max_rows, max_columns, max_cells: limits of reading (:func:`read_table`).
        max_cell_chars, max_systems, max_pairs: limits of building (:func:`build_dataset`).

    Returns:
        A :class:`Dataset`; it is never an exception: ``dataset.problems`` says what was wrong and
        ``dataset.ok`` whether anything can be scored.

    Raises:
        ValueError: ``empty`` is neither ``"score"`` nor ``"skip"`` (a programming error, not bad input).
    """
    if empty not in (EMPTY_SCORE, EMPTY_SKIP):
        raise ValueError(f"empty must be {EMPTY_SCORE!r} or {EMPTY_SKIP!r}, got {empty!r}")
    table, problems = read_table(data, filename, max_bytes, max_rows, max_columns, max_cells)
    if table is None:
        return _empty_dataset(problems)
    return build_dataset(table, mapping, empty, max_cell_chars, problems, max_systems, max_pairs)


def build_dataset(table: Table, mapping: ColumnMapping | None = None, empty: str = EMPTY_SCORE,
                  max_cell_chars: int = MAX_CELL_CHARS, problems: list[Problem] | None = None,
                  max_systems: int = MAX_SYSTEMS, max_pairs: int = MAX_PAIRS) -> Dataset:
    """Validate a :class:`Table` against a mapping (detected when None) and build the :class:`Dataset`.

    Args:
        table: the table read.
        mapping: the column roles; None = detected, every guess added as a warning.
        empty: see :func:`parse_upload`.
        max_cell_chars: a longer text cell leaves its segment out (listed).
        problems: the problems found while reading, kept first.
        max_systems, max_pairs: more systems, or more (system, segment) pairs, refuse the dataset before it is
            built, naming the limit and its setting.

    Returns:
        A :class:`Dataset` (``ok`` False with the reasons in ``problems`` when nothing can be scored).
    """
    problems = list(problems or [])
    names, positions, found = header_problems(table.columns)
    problems.extend(found)
    if mapping is None:
        mapping, detect_problems = detect_mapping(names, table)
        problems.extend(detect_problems)
        if mapping is None:
            return _empty_dataset(problems)
    bad = check_mapping(mapping, names)
    if bad:
        return _empty_dataset(problems + bad, mapping)
    if not table.rows:
        msg = ("No data row can be used: every row has a problem listed here." if any(p.row for p in problems)
               else "The file has a header but no data rows.")
        return _empty_dataset(problems + [Problem(None, None, msg)], mapping)
    over = _over_limits(table, mapping, names, positions, max_systems, max_pairs)
    if over is not None:
        return _empty_dataset(problems + [over], mapping)
    index = dict(zip(names, positions))
    used = _used_columns(mapping)
    rows = [{c: row[index[c]] for c in used} for row in table.rows]
    if mapping.layout == "long":
        return _build_long(rows, list(table.row_numbers), mapping, empty, max_cell_chars, problems)
    return _build_wide(rows, list(table.row_numbers), mapping, empty, max_cell_chars, problems)


def _used_columns(mapping: ColumnMapping) -> list[str]:
    cols = list(mapping.references) + list(mapping.systems) + list(mapping.scores) + [
        c for c in (mapping.system, mapping.candidate, mapping.source, mapping.segment_id, mapping.document) if c]
    return list(dict.fromkeys(cols))


def _doc_id(value) -> str:
    """A document id cell as text ("" when empty or not text: the segment is scored without context)."""
    return value.strip() if isinstance(value, str) else ""


class _Scores:
    """The score columns' values of the segments kept, read as they are kept (:mod:`score_columns`)."""

    def __init__(self, mapping: ColumnMapping):
        self.columns = mapping.score_metrics()
        self.values: dict[str, dict[str, list[float]]] = {m: {} for m in self.columns}
        self.problems: list[Problem] = []

    def add(self, metric: str, system: str, value, segment: str, number: int, column: str) -> None:
        v = parse_score(value)
        if v is None:
            self.problems.append(score_problem(value, metric, system, segment, number, column))
        self.values[metric].setdefault(system, []).append(math.nan if v is None else v)

    def wide_row(self, row: dict, segment: str, number: int) -> None:
        for metric, by_system in self.columns.items():
            for system, column in by_system.items():
                self.add(metric, system, row[column], segment, number, column)

    def long_segment(self, entries, segment: str) -> None:
        for metric in self.columns:
            for name, row, number in entries:
                self.add(metric, name, row[metric], segment, number, metric)

    def finish(self, ds: Dataset, systems) -> Dataset:
        if not self.columns:
            return ds
        scores = {m: {s: np.asarray(v[s], dtype=np.float64) for s in systems if s in v}
                  for m, v in self.values.items()}
        origins = {m: "column " + ", ".join(repr(c) for c in cols.values()) for m, cols in self.columns.items()}
        return replace(ds, own_scores=ScoreColumns(scores, origins, tuple(self.problems)),
                       problems=ds.problems + self.problems)


def _over_limits(table: Table, mapping: ColumnMapping, names, positions, max_systems: int,
                 max_pairs: int) -> Problem | None:
    """The limit on systems or pairs the mapping exceeds, checked before any row is built (None: within)."""
    fix = ("Pick fewer system columns in the column mapping (command line: --system-columns), or split the file "
           "into groups of systems.")
    if mapping.layout == "wide":
        n_sys, n_rows = len(mapping.systems), len(table.rows)
        if n_sys > max_systems:
            return Problem(None, None, f"The mapping has {n_sys:,} system columns; at most {max_systems:,} systems "
                                       f"are compared at once {setting_note('max_systems')}. Nothing was scored. "
                                       + fix)
        if n_sys * n_rows > max_pairs:
            return Problem(None, None, f"The file holds {n_sys * n_rows:,} pairs to score ({n_sys:,} systems x "
                                       f"{n_rows:,} segments); at most {max_pairs:,} are scored from one file "
                                       f"{setting_note('max_pairs')}. Nothing was scored. {fix}")
        return None
    if len(table.rows) > max_pairs:
        return Problem(None, None, f"The file holds {len(table.rows):,} rows, each a pair to score; at most "
                                   f"{max_pairs:,} are scored from one file {setting_note('max_pairs')}. Nothing was "
                                   "scored. Split the file (e.g. by system).")
    i = positions[names.index(mapping.system)]
    n_sys = len({r[i].strip() for r in table.rows if isinstance(r[i], str) and r[i].strip()})
    if n_sys > max_systems:
        return Problem(None, mapping.system, f"The column {mapping.system!r} names {n_sys:,} systems; at most "
                                             f"{max_systems:,} are compared at once {setting_note('max_systems')}. "
                                             "Nothing was scored. Split the file by system.")
    return None


# --- cells --------------------------------------------------------------------------------------------------------
def _text(v) -> str:
    return v if isinstance(v, str) else ""


def _refs_of(values: list) -> list[str]:
    out: list[str] = []
    for v in values:
        if isinstance(v, tuple):
            out.extend(str(x) for x in v)
        elif isinstance(v, str):
            out.append(v)
    return out


def text_problem(value, column: str, number: int, role: str, list_ok: bool = False) -> Problem | None:
    """A problem when a cell read as text is not one: a JSON object, boolean or nested list (always), or a list
    of strings where one text is needed (``list_ok``: a reference column, where a list is several references).

    Args:
        value: the cell.
        column: its column; number: its row; role: how the message names it (``"system output"``).
    """
    if isinstance(value, str) or (list_ok and isinstance(value, tuple)):
        return None
    if isinstance(value, tuple):
        what = f"a list of {len(value)} strings"
        need = "one string; only a reference column may hold a list (several references)"
    elif isinstance(value, JsonValue):
        what, need = value.describe(), "a string (or a number, read as its text)"
    else:
        what, need = type(value).__name__, "a string"
    return Problem(number, column, f"The {role} is {what}; it must be {need}. The row is left out.")


class _RowCheck:
    """The checks every row of a mapping gets before it is used: cells read as text are text, texts within the
    length limit. Built once per dataset (the roles and columns do not change from row to row)."""

    def __init__(self, mapping: ColumnMapping, max_cell: int):
        roles = [(c, "reference", True) for c in mapping.references]
        roles += [(s, f"output of system {s!r}", False) for s in mapping.systems]
        roles += [(c, role, False) for c, role in ((mapping.system, "system name"), (mapping.candidate, "output"),
                                                    (mapping.source, "source"), (mapping.segment_id, "segment id"))
                  if c]
        self.roles = roles
        self.lengths = list(mapping.references) + (list(mapping.systems) if mapping.layout == "wide"
                                                   else [mapping.candidate])
        self.max_cell = max_cell

    def __call__(self, row: dict, number: int) -> Problem | None:
        """The first reason the row cannot be used at all (None: it can)."""
        for c, role, list_ok in self.roles:
            value = row[c]
            if not isinstance(value, str):
                found = text_problem(value, c, number, role, list_ok)
                if found is not None:
                    return found
        for c in self.lengths:
            v = row[c]
            n = sum(len(x) for x in v) if isinstance(v, tuple) else len(v)
            if n > self.max_cell:
                return Problem(number, c, f"The cell is {n:,} characters long; the limit is {self.max_cell:,} "
                                          f"{setting_note('max_cell_chars')}. The segment is left out. Shorten it "
                                          "(the model reads at most 512 tokens anyway).")
        return None


# --- wide -----------------------------------------------------------------------------------------------------------
def _wide_segment_id(row, number, mapping, seen_ids, problems) -> tuple[str | None, bool]:
    """The row's segment id ("" = the row number) and whether the row is kept."""
    if not mapping.segment_id:
        return "", True
    seg = _text(row.get(mapping.segment_id, "")).strip()
    if not seg:
        problems.append(Problem(number, mapping.segment_id, "The segment id is empty; the row number is used "
                                                            "instead.", "warning"))
    elif seg in seen_ids:
        problems.append(Problem(number, mapping.segment_id, f"Segment id {seg!r} was already used in row "
                                                            f"{seen_ids[seg]}; this row is left out. Each row of the "
                                                            "wide layout is one segment."))
        return seg, False
    else:
        seen_ids[seg] = number
    return seg, True


def _wide_empties(row, number, mapping, empty, problems) -> list[str] | None:
    """The row's references after the empty-cell rules (None: the row is left out)."""
    refs = [r for r in _refs_of([row[c] for c in mapping.references]) if r.strip()]
    empty_cols = [c for c in mapping.references if not any(r.strip() for r in _refs_of([row[c]]))]
    empty_sys = [s for s in mapping.systems if not _text(row[s]).strip()]
    if not refs:
        where = ", ".join(mapping.references)
        if empty == EMPTY_SKIP:
            problems.append(Problem(number, where, "The reference is empty; the segment is left out for every "
                                                   "system."))
            return None
        problems.append(Problem(number, where, "The reference is empty; every system scores 0 on this segment.",
                                "warning"))
        refs = [""]
    elif empty_cols and len(mapping.references) > 1:
        problems.append(Problem(number, ", ".join(empty_cols), f"{len(empty_cols)} of {len(mapping.references)} "
                                "reference cells are empty; the segment is scored against the others.", "warning"))
    if empty_sys:
        if empty == EMPTY_SKIP:
            problems.append(Problem(number, ", ".join(empty_sys), "Empty system output; the segment is left out "
                                                                  "for every system."))
            return None
        for s in empty_sys:
            problems.append(Problem(number, s, "Empty system output; scored as empty text (0).", "warning"))
    return refs


def _build_wide(rows, numbers, mapping: ColumnMapping, empty, max_cell, problems) -> Dataset:
    systems: dict[str, list[str]] = {s: [] for s in mapping.systems}
    references: list[list[str]] = []
    sources: list[str] | None = [] if mapping.source else None
    seg_ids: list[str] = []
    kept_rows: list[int] = []
    seen_ids: dict[str, int] = {}
    check = _RowCheck(mapping, max_cell)
    own = _Scores(mapping)
    docs: list[str] | None = [] if mapping.document else None
    for row, number in zip(rows, numbers):
        bad = check(row, number)
        if bad:
            problems.append(bad)
            continue
        seg, keep = _wide_segment_id(row, number, mapping, seen_ids, problems)
        if not keep:
            continue
        refs = _wide_empties(row, number, mapping, empty, problems)
        if refs is None:
            continue
        for s in mapping.systems:
            systems[s].append(row[s])
        references.append(refs)
        if sources is not None:
            sources.append(row.get(mapping.source, ""))
        seg_ids.append(seg or str(number))
        kept_rows.append(number)
        own.wide_row(row, seg_ids[-1], number)
        if docs is not None:
            docs.append(_doc_id(row[mapping.document]))
    ds = Dataset(systems, references, sources, seg_ids, kept_rows, problems, mapping, doc_ids=docs)
    return own.finish(_finish(ds), mapping.systems)


# --- long -----------------------------------------------------------------------------------------------------------
def _long_keyed(rows, numbers, mapping: ColumnMapping, max_cell, problems):
    """``{system: {segment: (row, number)}}`` and the segments in file order (ids, else positions)."""
    per_system: dict[str, list[tuple[dict, int]]] = {}
    check = _RowCheck(mapping, max_cell)
    for row, number in zip(rows, numbers):
        bad = check(row, number)
        if bad:
            problems.append(bad)
            continue
        name = row[mapping.system].strip()
        if not name:
            problems.append(Problem(number, mapping.system, "The system name is empty; the row is left out."))
            continue
        per_system.setdefault(name, []).append((row, number))
    keyed: dict[str, dict[str, tuple[dict, int]]] = {}
    order: dict[str, None] = {}
    first_system = next(iter(per_system), None)
    for name, items in per_system.items():
        keyed[name] = {}
        for i, (row, number) in enumerate(items):
            seg = row[mapping.segment_id].strip() if mapping.segment_id else str(i + 1)
            if not seg:
                problems.append(Problem(number, mapping.segment_id, "The segment id is empty; the row is left out (in "
                                                                    "the long layout ids pair the systems' rows)."))
                continue
            if seg in keyed[name]:
                first = keyed[name][seg][1]
                problems.append(Problem(number, mapping.segment_id or mapping.system,
                                        f"System {name!r} has segment {seg!r} twice (rows {first} and {number}); "
                                        f"row {number} is left out."))
                continue
            keyed[name][seg] = (row, number)
            if name == first_system or mapping.segment_id:
                order.setdefault(seg, None)
    return keyed, list(order)


def _long_coverage(keyed, order, mapping: ColumnMapping, problems) -> list[str]:
    """The segments every system has; unequal counts and missing segments listed."""
    counts = {name: len(v) for name, v in keyed.items()}
    if len(set(counts.values())) > 1:
        listing = ", ".join(f"{n!r}: {c}" for n, c in counts.items())
        fix = ("only segments every system has are scored" if mapping.segment_id else
               "without a segment_id column the rows are paired by position, so only the first "
               f"{min(counts.values())} segments are scored; add a segment_id column to pair them exactly")
        problems.append(Problem(None, mapping.system, f"The systems have different numbers of segments ({listing}); "
                                                      f"{fix}."))
    if mapping.segment_id:
        for seg in order:
            missing = [name for name in keyed if seg not in keyed[name]]
            if missing and len(missing) < len(keyed):
                have = next(keyed[n][seg][1] for n in keyed if seg in keyed[n])
                problems.append(Problem(have, mapping.segment_id, f"Segment {seg!r} is missing for "
                                        f"{', '.join(repr(m) for m in missing)}; it is left out for every system."))
    return [s for s in order if all(s in keyed[name] for name in keyed)]


def _long_references(seg, entries, mapping: ColumnMapping, empty, problems) -> list[str] | None:
    """The segment's references, the same on every system's row (None: the segment is left out)."""
    ref_sets: dict[tuple, list[int]] = {}
    for _, row, number in entries:
        ref_sets.setdefault(tuple(_refs_of([row[c] for c in mapping.references])), []).append(number)
    first_row = min(number for _, _, number in entries)
    where = ", ".join(mapping.references)
    nonempty = {k: v for k, v in ref_sets.items() if any(r.strip() for r in k)}
    if len(nonempty) > 1:  # empty reference cells on some rows are filled from the others; disagreement is not
        desc = "; ".join(f"rows {', '.join(map(str, v[:5]))}: {_short(' | '.join(k))}"
                         for k, v in list(nonempty.items())[:3])
        problems.append(Problem(first_row, where, f"Segment {seg!r} has different references on different rows "
                                                  f"({desc}); it is left out. The systems must be scored against the "
                                                  "same reference."))
        return None
    refs = [r for r in next(iter(nonempty), ()) if r.strip()]
    if not refs:
        if empty == EMPTY_SKIP:
            problems.append(Problem(first_row, where, f"Segment {seg!r} has an empty reference; it is left out for "
                                                      "every system."))
            return None
        problems.append(Problem(first_row, where, f"Segment {seg!r} has an empty reference; every system scores 0 "
                                                  "on it.", "warning"))
        refs = [""]
    return refs


def _build_long(rows, numbers, mapping: ColumnMapping, empty, max_cell, problems) -> Dataset:
    keyed, order = _long_keyed(rows, numbers, mapping, max_cell, problems)
    if not keyed:
        return _empty_dataset(problems + [Problem(None, mapping.system, "No row names a system.")], mapping)
    common = _long_coverage(keyed, order, mapping, problems)
    systems: dict[str, list[str]] = {name: [] for name in keyed}
    references: list[list[str]] = []
    sources: list[str] | None = [] if mapping.source else None
    seg_ids: list[str] = []
    kept_rows: list[int] = []
    own = _Scores(mapping)
    docs: list[str] | None = [] if mapping.document else None
    for seg in common:
        entries = [(name, *keyed[name][seg]) for name in keyed]
        refs = _long_references(seg, entries, mapping, empty, problems)
        if refs is None:
            continue
        empty_out = [(name, number) for name, row, number in entries if not row[mapping.candidate].strip()]
        if empty_out:
            if empty == EMPTY_SKIP:
                problems.append(Problem(empty_out[0][1], mapping.candidate, f"Segment {seg!r}: empty output of "
                                        f"{', '.join(repr(n) for n, _ in empty_out)}; the segment is left out for "
                                        "every system."))
                continue
            for name, number in empty_out:
                problems.append(Problem(number, mapping.candidate, f"Empty output of system {name!r}; scored as "
                                                                   "empty text (0).", "warning"))
        for name, row, _ in entries:
            systems[name].append(row[mapping.candidate])
        references.append(refs)
        if sources is not None:
            sources.append(next((row[mapping.source] for _, row, _ in entries if row[mapping.source].strip()), ""))
        seg_ids.append(seg if mapping.segment_id else str(len(seg_ids) + 1))
        kept_rows.append(min(number for _, _, number in entries))
        own.long_segment(entries, seg_ids[-1])
        if docs is not None:  # the segment's document: the first system's row that names one
            docs.append(next((_doc_id(row[mapping.document]) for _, row, _ in entries
                              if _doc_id(row[mapping.document])), ""))
    ds = Dataset(systems, references, sources, seg_ids, kept_rows, problems, mapping, doc_ids=docs)
    return own.finish(_finish(ds), list(systems))


def _short(text: str, limit: int = 40) -> str:
    return repr(text) if len(text) <= limit else repr(text[: limit - 3] + "...")


def _finish(ds: Dataset) -> Dataset:
    if not ds.systems:
        return replace(ds, problems=ds.problems + [Problem(None, None, "No system outputs were found.")])
    if not ds.references:
        return replace(ds, problems=ds.problems + [Problem(None, None, "No segment can be scored: every row has a "
                                                                       "problem listed above.")])
    return ds


def content_key(data: bytes) -> str:
    """A short hash of the file's bytes, for caching results by content."""
    return hashlib.sha256(data).hexdigest()[:16]
