"""Reading uploaded system outputs: CSV, TSV or JSON Lines, validated with a message per problem.

Pure functions over bytes (no Streamlit): :func:`parse_upload` turns a file into a :class:`Dataset` whose
``problems`` list every issue found, each with its row number, while every good row is kept.

Two layouts are understood, detected from the column names and correctable with a :class:`ColumnMapping`:

* **wide**: one row per segment; a ``reference`` column (or several: ``reference, reference_2`` /
  ``ref1, ref2``), one column per system, optional ``source`` and ``segment_id``.
* **long**: one row per (system, segment); columns ``system``, ``candidate``, ``reference`` (or several),
  optional ``segment_id`` and ``source``.

Row numbers are line numbers of the file: the header is row 1, the first data row is row 2, as a spreadsheet
shows them (a record whose quoted cell spans lines is numbered by its first line; for JSON Lines: the line).
Every row with data is either kept or named by a problem; a blank row (every cell empty or whitespace, or an empty
line) holds no data and is skipped without a problem.
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass, field, replace

from bertscore_viz.files import limits

#: Largest file accepted, in bytes.
MAX_BYTES = 50 * 1024 * 1024
#: Most data rows read; later rows are left out (and listed as a problem).
MAX_ROWS = 200_000
#: Longest cell, in characters; longer cells make their segment be left out.
MAX_CELL_CHARS = 20_000

EMPTY_SCORE = "score"  # empty cells are scored as empty text (0, with a warning)
EMPTY_SKIP = "skip"  # segments with an empty cell are left out for every system

_REF_RE = re.compile(r"^(references?|refs?|targets?|tgt|gold)([ _\-.]?\d+)?$", re.I)
_SRC_RE = re.compile(r"^(source|src|input)$", re.I)
_ID_RE = re.compile(r"^(segment[ _\-]?id|seg[ _\-]?id|id|segment|doc[ _\-]?id)$", re.I)
_SYS_RE = re.compile(r"^(system|system[ _\-]?name|model|sys)$", re.I)
_CAND_RE = re.compile(r"^(candidate|hypothesis|hyp|output|prediction|translation|summary|cand)$", re.I)
_ROW_RE = re.compile(r"^(row|index|unnamed: ?0)$", re.I)
#: Human scores (read by files/human_scores.py for correlation; never a system's outputs here).
HUMAN_RE = re.compile(r"^(human|human[ _\-].+|.+[ _\-]human|z[ _\-]?scores?|raw[ _\-]?da|rating|mqm|"
                      r"judge?ments?)$", re.I)


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the input.

    Attributes:
        row: spreadsheet row number (header = 1) or JSON Lines line number; None for the whole file.
        column: the column concerned, or None.
        problem: what is wrong and what happens to the row, in words.
        severity: ``"error"`` (nothing can be scored, or the row is left out) or ``"warning"`` (kept).
    """

    row: int | None
    column: str | None
    problem: str
    severity: str = "error"

    def as_dict(self) -> dict:
        return {"row": self.row, "column": self.column, "problem": self.problem, "severity": self.severity}


@dataclass(frozen=True)
class Table:
    """A file read into cells: ``columns`` (names as written) and ``rows`` of strings with their row numbers."""

    columns: tuple[str, ...]
    rows: tuple[tuple, ...]
    row_numbers: tuple[int, ...]
    kind: str  # "csv", "tsv", "jsonl", ...
    delimiter: str | None = None


@dataclass(frozen=True)
class ColumnMapping:
    """Which column is what.

    Attributes:
        layout: ``"wide"`` or ``"long"``.
        references: reference column(s), several = several references per segment.
        systems: (wide) one column per system, named after its column.
        system, candidate: (long) the column naming the system and the one holding its output.
        source, segment_id: optional columns.
    """

    layout: str
    references: tuple[str, ...] = ()
    systems: tuple[str, ...] = ()
    system: str | None = None
    candidate: str | None = None
    source: str | None = None
    segment_id: str | None = None

    def as_dict(self) -> dict:
        return {"layout": self.layout, "references": list(self.references), "systems": list(self.systems),
                "system": self.system, "candidate": self.candidate, "source": self.source,
                "segment_id": self.segment_id}


@dataclass(frozen=True)
class Dataset:
    """Segments ready to score: every system's output for the same segments, against the same references.

    Attributes:
        systems: ``{name: [output per segment]}`` in file order.
        references: one list of reference strings per segment.
        sources: one source per segment, or None without a source column.
        segment_ids: one id per segment (the ``segment_id`` column, else the row number).
        rows: the row number each segment came from (wide) or of its first row (long).
        problems: everything found wrong, errors and warnings.
        mapping: the column mapping used (None when the file could not be read).
    """

    systems: dict[str, list[str]]
    references: list[list[str]]
    sources: list[str] | None
    segment_ids: list[str]
    rows: list[int]
    problems: list[Problem] = field(default_factory=list)
    mapping: ColumnMapping | None = None

    @property
    def n_segments(self) -> int:
        return len(self.references)

    @property
    def system_names(self) -> list[str]:
        return list(self.systems)

    @property
    def ok(self) -> bool:
        """Something can be scored: at least one system and one segment."""
        return bool(self.systems) and self.n_segments > 0

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "warning"]


def _empty_dataset(problems: list[Problem], mapping: ColumnMapping | None = None) -> Dataset:
    return Dataset({}, [], None, [], [], list(problems), mapping)


# --- reading ----------------------------------------------------------------------------------------------------
def decode(data: bytes) -> tuple[str | None, list[Problem]]:
    """UTF-8 text (a byte-order mark is dropped) or a problem saying where the bad bytes are."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return None, [Problem(None, None, "The file is UTF-16 (it starts with a UTF-16 byte-order mark). Save it as "
                                          "UTF-8 (in Excel: 'CSV UTF-8'; in an editor: encoding UTF-8) and upload "
                                          "it again.")]
    try:
        return data.decode("utf-8-sig"), []
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        bad = data[exc.start: exc.start + 4]
        return None, [Problem(line, None, f"The file is not UTF-8: byte {exc.start} (line {line}) is {bad!r}, which "
                                          "UTF-8 cannot decode. It is probably Latin-1 or Windows-1252. Save it as "
                                          "UTF-8 (with or without BOM) and upload it again.")]


def _looks_like_jsonl(text: str, filename: str | None) -> bool:
    name = (filename or "").lower()
    if name.endswith((".jsonl", ".json", ".ndjson")):
        return True
    if name.endswith((".csv", ".tsv", ".txt")):
        return False
    return text.lstrip().startswith("{")


def sniff_delimiter(text: str, filename: str | None = None) -> str:
    """The field delimiter: tab, comma, semicolon or pipe, from the header line (the extension breaks ties)."""
    first = next((ln for ln in text.splitlines() if ln.strip()), "")
    counts = {d: first.count(d) for d in ("\t", ",", ";", "|")}
    best = max(counts, key=lambda d: counts[d])
    if counts[best] == 0:
        return "\t" if (filename or "").lower().endswith(".tsv") else ","
    try:
        sample = "\n".join(text.splitlines()[:50])
        sniffed = csv.Sniffer().sniff(sample, delimiters="\t,;|").delimiter
        if counts.get(sniffed, 0) > 0:
            return sniffed
    except csv.Error:
        pass
    return best


def read_table(data: bytes, filename: str | None = None, max_bytes: int = MAX_BYTES,
               max_rows: int = MAX_ROWS) -> tuple[Table | None, list[Problem]]:
    """Read bytes into a :class:`Table`; rows that cannot be read are listed and left out.

    Returns:
        ``(table, problems)``; ``table`` is None when nothing could be read.
    """
    if len(data) > max_bytes:
        return None, [Problem(None, None, f"The file is {describe_size(len(data))}; the limit is "
                                          f"{describe_size(max_bytes)}. Split it into smaller files.")]
    if not data.strip():
        return None, [Problem(None, None, "The file is empty. Upload a CSV, TSV or JSON Lines file with a header "
                                          "row (e.g. reference,system_a,system_b).")]
    text, problems = decode(data)
    if text is None:
        return None, problems
    if _looks_like_jsonl(text, filename):
        return _read_jsonl(text, max_rows)
    return _read_delimited(text, filename, max_rows)


def _read_delimited(text: str, filename: str | None, max_rows: int) -> tuple[Table | None, list[Problem]]:
    delim = sniff_delimiter(text, filename)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delim)
    problems: list[Problem] = []
    try:
        header = next(reader)
    except (StopIteration, csv.Error) as exc:
        return None, [Problem(1, None, f"The header row cannot be read ({exc}).")]
    header = [h.strip() for h in header]
    raw_width = len(header)
    if not any(header):
        return None, [Problem(1, None, f"The header row (row 1) has {raw_width} cell(s) but no column names. The "
                                       "first row must name the columns, e.g. reference,system_a,system_b (wide) or "
                                       "system,candidate,reference (long).")]
    while header and header[-1] == "" and len(header) > 1:
        header.pop()  # a trailing delimiter on the header line
    width = len(header)
    trimmed = (f" named column(s) (its last {raw_width - width} cell(s) are empty)" if raw_width > width else "")
    rows: list[tuple] = []
    numbers: list[int] = []
    prev_line = reader.line_num
    try:
        for cells in reader:
            row = prev_line + 1  # the line on which this record starts
            prev_line = reader.line_num
            if not any(c.strip() for c in cells):
                continue
            if len(cells) > width and not any(c.strip() for c in cells[width:]):
                cells = cells[:width]
            if len(cells) != width:
                problems.append(Problem(row, None, f"Row {row} has {len(cells)} cells but the header has "
                                                   f"{width}{trimmed}; the row is left out. Check for an unquoted "
                                                   f"delimiter ({_delim_name(delim)}) inside a cell."))
                continue
            if len(rows) >= max_rows:
                problems.append(Problem(row, None, f"The file has more than {max_rows:,} data rows (the limit); "
                                                   f"rows from {row} on are left out."))
                break
            rows.append(tuple(cells))
            numbers.append(row)
    except csv.Error as exc:
        problems.append(Problem(reader.line_num, None, f"The file cannot be read past line {reader.line_num}: "
                                                       f"{exc}. Check the quoting there; later rows are left out."))
    kind = {"\t": "tsv"}.get(delim, "csv")
    return Table(tuple(header), tuple(rows), tuple(numbers), kind, delim), problems


def _delim_name(d: str) -> str:
    return {"\t": "tab", ",": "comma", ";": "semicolon", "|": "pipe"}.get(d, repr(d))


def _read_jsonl(text: str, max_rows: int) -> tuple[Table | None, list[Problem]]:
    problems: list[Problem] = []
    records: list[tuple[int, dict]] = []
    stripped = text.strip()
    if stripped.startswith("["):
        # A JSON array of objects is common enough to accept.
        try:
            arr = limits.loads(stripped, "The JSON array")
        except json.JSONDecodeError as exc:
            return None, [Problem(exc.lineno, None, f"The file is not valid JSON: {exc.msg} at line {exc.lineno}.")]
        except limits.LimitExceeded as exc:
            return None, [Problem(None, None, str(exc))]
        items = [(i + 1, x) for i, x in enumerate(arr)] if isinstance(arr, list) else []
    else:
        items = []
        for n, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                items.append((n, limits.loads(line, f"Line {n}")))
            except json.JSONDecodeError as exc:
                problems.append(Problem(n, None, f"Line {n} is not valid JSON ({exc.msg}, column {exc.colno}); "
                                                 "it is left out. JSON Lines needs one object per line."))
            except limits.LimitExceeded as exc:
                problems.append(Problem(n, None, f"{exc} The line is left out."))
    for n, obj in items:
        if not isinstance(obj, dict):
            problems.append(Problem(n, None, f"Line {n} is a JSON {type(obj).__name__}, not an object with named "
                                             "fields; it is left out."))
            continue
        if len(records) >= max_rows:
            problems.append(Problem(n, None, f"The file has more than {max_rows:,} records (the limit); lines from "
                                             f"{n} on are left out."))
            break
        records.append((n, obj))
    if not records:
        problems.append(Problem(None, None, "No JSON object could be read from the file."))
        return None, problems
    columns: dict[str, None] = {}
    for _, obj in records:
        for k in obj:
            columns.setdefault(str(k).strip(), None)
    cols = tuple(columns)
    rows = []
    for _, obj in records:
        norm = {str(k).strip(): v for k, v in obj.items()}
        rows.append(tuple(_json_cell(norm.get(c)) for c in cols))
    return Table(cols, tuple(rows), tuple(n for n, _ in records), "jsonl"), problems


def _json_cell(v):
    if v is None:
        return ""
    if isinstance(v, str):
        return v
    if isinstance(v, list) and all(isinstance(x, str) for x in v):
        return tuple(v)  # several references in one field
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, (int, float)):
        return str(v)
    return limits.dumps_safe(v)


# --- column detection -------------------------------------------------------------------------------------------
def _ref_order(name: str) -> tuple[int, str]:
    m = re.search(r"(\d+)$", name)
    return (int(m.group(1)) if m else 0, name)


def detect_mapping(columns) -> tuple[ColumnMapping | None, list[Problem]]:
    """Guess the layout and the role of each column from the names.

    Returns:
        ``(mapping, problems)``; mapping is None when no reference column (or no system) can be found.
    """
    cols = [c for c in dict.fromkeys(columns) if c]
    refs = sorted([c for c in cols if _REF_RE.match(c)], key=_ref_order)
    source = next((c for c in cols if _SRC_RE.match(c)), None)
    seg = next((c for c in cols if _ID_RE.match(c)), None)
    sys_col = next((c for c in cols if _SYS_RE.match(c)), None)
    cand_col = next((c for c in cols if _CAND_RE.match(c)), None)
    problems: list[Problem] = []
    if not refs:
        problems.append(Problem(1, None, f"No reference column was found among {_names(cols)}. Name the reference "
                                         "column 'reference' (several references: reference, reference_2, ...), or "
                                         "pick it in the column mapping."))
        return None, problems
    if sys_col and cand_col:
        return ColumnMapping("long", tuple(refs), (), sys_col, cand_col, source, seg), problems
    skip = set(refs) | {source, seg} | {c for c in cols if _ROW_RE.match(c) or HUMAN_RE.match(c)}
    systems = tuple(c for c in cols if c not in skip)
    if not systems:
        problems.append(Problem(1, None, f"No system column was found among {_names(cols)}. Add one column per "
                                         "system (named after the system) next to the reference column, or use the "
                                         "long layout with columns system, candidate, reference."))
        return None, problems
    return ColumnMapping("wide", tuple(refs), systems, None, None, source, seg), problems


def _names(cols) -> str:
    shown = ", ".join(repr(c) for c in list(cols)[:12])
    return f"[{shown}{', ...' if len(cols) > 12 else ''}]" if cols else "no named columns"


# --- validation and building --------------------------------------------------------------------------------------
def _check_mapping(mapping: ColumnMapping, columns: list[str]) -> list[Problem]:
    problems = []
    known = set(columns)
    named = list(mapping.references) + list(mapping.systems) + [
        c for c in (mapping.system, mapping.candidate, mapping.source, mapping.segment_id) if c]
    for c in named:
        if c not in known:
            problems.append(Problem(None, c, f"The mapping names column {c!r}, which the file does not have "
                                             f"(it has {_names(columns)})."))
    if not mapping.references:
        problems.append(Problem(None, None, "No reference column is selected. Pick the column holding the "
                                            "reference(s) in the column mapping."))
    if mapping.layout == "wide" and not mapping.systems:
        problems.append(Problem(None, None, "No system column is selected. Pick at least one column holding a "
                                            "system's outputs."))
    if mapping.layout == "long" and not (mapping.system and mapping.candidate):
        problems.append(Problem(None, None, "The long layout needs a column naming the system and a column with "
                                            "its output (candidate)."))
    clash = set(mapping.references) & (set(mapping.systems) | {mapping.candidate, mapping.system})
    for c in sorted(x for x in clash if x):
        problems.append(Problem(None, c, f"Column {c!r} is mapped both as a reference and as a system output."))
    return problems


def _header_problems(columns: tuple[str, ...]) -> tuple[list[str], list[int], list[Problem]]:
    """Usable column names and their positions; duplicate and unnamed columns reported (first kept)."""
    seen: dict[str, int] = {}
    names, positions, problems = [], [], []
    for i, c in enumerate(columns):
        if not c:
            problems.append(Problem(1, f"column {i + 1}", f"Column {i + 1} has no name in the header; it is ignored. "
                                                          "Give it a name (e.g. the system's name)."))
            continue
        if c in seen:
            problems.append(Problem(1, c, f"Column name {c!r} appears twice in the header (columns {seen[c] + 1} "
                                          f"and {i + 1}); only the first is used. Rename one of them."))
            continue
        seen[c] = i
        names.append(c)
        positions.append(i)
    lowered: dict[str, str] = {}
    for c in names:
        key = c.lower()
        if key in lowered:
            problems.append(Problem(1, c, f"Columns {lowered[key]!r} and {c!r} differ only in letter case; they are "
                                          "treated as different systems. Rename one if they are the same.",
                                    "warning"))
        lowered.setdefault(key, c)
    return names, positions, problems


def _text(v) -> str:
    return v if isinstance(v, str) else ""


def _refs_of(values: list) -> list[str]:
    out: list[str] = []
    for v in values:
        if isinstance(v, tuple):
            out.extend(str(x) for x in v)
        else:
            out.append(v)
    return out


def parse_upload(data: bytes, filename: str | None = None, mapping: ColumnMapping | None = None,
                 empty: str = EMPTY_SCORE, max_bytes: int = MAX_BYTES, max_rows: int = MAX_ROWS,
                 max_cell_chars: int = MAX_CELL_CHARS) -> Dataset:
    """Read, detect (unless ``mapping`` is given), validate and build the dataset.

    Args:
        data: the uploaded file's bytes.
        filename: used for the extension (``.tsv``, ``.jsonl``) when given.
        mapping: the column roles; None = detected from the header.
        empty: ``"score"`` (empty cells scored as empty text, listed as warnings) or ``"skip"`` (the segment is
            left out for every system, listed).

    Returns:
        A :class:`Dataset`; it is never an exception: ``dataset.problems`` says what was wrong and
        ``dataset.ok`` whether anything can be scored.
    """
    if empty not in (EMPTY_SCORE, EMPTY_SKIP):
        raise ValueError(f"empty must be {EMPTY_SCORE!r} or {EMPTY_SKIP!r}, got {empty!r}")
    table, problems = read_table(data, filename, max_bytes, max_rows)
    if table is None:
        return _empty_dataset(problems)
    return build_dataset(table, mapping, empty, max_cell_chars, problems)


def build_dataset(table: Table, mapping: ColumnMapping | None = None, empty: str = EMPTY_SCORE,
                  max_cell_chars: int = MAX_CELL_CHARS, problems: list[Problem] | None = None) -> Dataset:
    """Validate a :class:`Table` against a mapping (detected when None) and build the :class:`Dataset`."""
    problems = list(problems or [])
    names, positions, header_problems = _header_problems(table.columns)
    problems.extend(header_problems)
    if mapping is None:
        mapping, detect_problems = detect_mapping(names)
        problems.extend(detect_problems)
        if mapping is None:
            return _empty_dataset(problems)
    bad = _check_mapping(mapping, names)
    if bad:
        return _empty_dataset(problems + bad, mapping)
    if not table.rows:
        msg = ("No data row can be used: every row has a problem listed here." if any(p.row for p in problems)
               else "The file has a header but no data rows.")
        return _empty_dataset(problems + [Problem(None, None, msg)], mapping)
    index = dict(zip(names, positions))
    rows = [{c: row[index[c]] for c in names} for row in table.rows]
    if mapping.layout == "long":
        return _build_long(rows, list(table.row_numbers), mapping, empty, max_cell_chars, problems)
    return _build_wide(rows, list(table.row_numbers), mapping, empty, max_cell_chars, problems)


def _too_long(row: dict, cols, number: int, limit: int) -> Problem | None:
    for c in cols:
        v = row.get(c)
        n = sum(len(x) for x in v) if isinstance(v, tuple) else len(v or "")
        if n > limit:
            return Problem(number, c, f"The cell is {n:,} characters long; the limit is {limit:,}. The segment is "
                                      "left out. Shorten it (the model reads at most 512 tokens anyway).")
    return None


def _build_wide(rows, numbers, mapping: ColumnMapping, empty, max_cell, problems) -> Dataset:
    systems: dict[str, list[str]] = {s: [] for s in mapping.systems}
    references: list[list[str]] = []
    sources: list[str] | None = [] if mapping.source else None
    seg_ids: list[str] = []
    kept_rows: list[int] = []
    seen_ids: dict[str, int] = {}
    for row, number in zip(rows, numbers):
        text_cols = list(mapping.references) + list(mapping.systems)
        long = _too_long(row, text_cols, number, max_cell)
        if long:
            problems.append(long)
            continue
        seg = _text(row.get(mapping.segment_id, "")).strip() if mapping.segment_id else ""
        if mapping.segment_id:
            if not seg:
                problems.append(Problem(number, mapping.segment_id, "The segment id is empty; the row number is used "
                                                                    "instead.", "warning"))
            elif seg in seen_ids:
                problems.append(Problem(number, mapping.segment_id, f"Segment id {seg!r} was already used in row "
                                                                    f"{seen_ids[seg]}; this row is left out. Each row "
                                                                    "of the wide layout is one segment."))
                continue
            else:
                seen_ids[seg] = number
        refs_raw = _refs_of([row[c] for c in mapping.references])
        refs = [r for r in refs_raw if r.strip()]
        empty_cols = [c for c in mapping.references if not _refs_of([row[c]]) or
                      not any(r.strip() for r in _refs_of([row[c]]))]
        empty_sys = [s for s in mapping.systems if not _text(row[s]).strip()]
        if not refs:
            where = ", ".join(mapping.references)
            if empty == EMPTY_SKIP:
                problems.append(Problem(number, where, "The reference is empty; the segment is left out for every "
                                                       "system."))
                continue
            problems.append(Problem(number, where, "The reference is empty; every system scores 0 on this segment.",
                                    "warning"))
            refs = [""]
        elif empty_cols and len(mapping.references) > 1:
            problems.append(Problem(number, ", ".join(empty_cols), f"{len(empty_cols)} of "
                                    f"{len(mapping.references)} reference cells are empty; the segment is scored "
                                    "against the others.", "warning"))
        if empty_sys:
            if empty == EMPTY_SKIP:
                problems.append(Problem(number, ", ".join(empty_sys), "Empty system output; the segment is left out "
                                                                      "for every system."))
                continue
            for s in empty_sys:
                problems.append(Problem(number, s, "Empty system output; scored as empty text (0).", "warning"))
        for s in mapping.systems:
            systems[s].append(_text(row[s]))
        references.append(refs)
        if sources is not None:
            sources.append(_text(row.get(mapping.source, "")))
        seg_ids.append(seg or str(number))
        kept_rows.append(number)
    return _finish(Dataset(systems, references, sources, seg_ids, kept_rows, problems, mapping))


def _build_long(rows, numbers, mapping: ColumnMapping, empty, max_cell, problems) -> Dataset:
    per_system: dict[str, list[tuple[str, dict, int]]] = {}
    for row, number in zip(rows, numbers):
        name = _text(row[mapping.system]).strip()
        if not name:
            problems.append(Problem(number, mapping.system, "The system name is empty; the row is left out."))
            continue
        long = _too_long(row, list(mapping.references) + [mapping.candidate], number, max_cell)
        if long:
            problems.append(long)
            continue
        per_system.setdefault(name, []).append(("", row, number))
    if not per_system:
        return _empty_dataset(problems + [Problem(None, mapping.system, "No row names a system.")], mapping)
    # Segments: by segment id when given, else the i-th row of each system is segment i.
    keyed: dict[str, dict[str, tuple[dict, int]]] = {}
    order: list[str] = []
    for name, items in per_system.items():
        keyed[name] = {}
        for i, (_, row, number) in enumerate(items):
            if mapping.segment_id:
                seg = _text(row[mapping.segment_id]).strip()
                if not seg:
                    problems.append(Problem(number, mapping.segment_id, "The segment id is empty; the row is left "
                                                                        "out (in the long layout ids pair the "
                                                                        "systems' rows)."))
                    continue
            else:
                seg = str(i + 1)
            if seg in keyed[name]:
                first = keyed[name][seg][1]
                problems.append(Problem(number, mapping.segment_id or mapping.system,
                                        f"System {name!r} has segment {seg!r} twice (rows {first} and {number}); "
                                        f"row {number} is left out."))
                continue
            keyed[name][seg] = (row, number)
            if seg not in order and (name == next(iter(per_system)) or mapping.segment_id):
                order.append(seg)
    counts = {name: len(v) for name, v in keyed.items()}
    if len(set(counts.values())) > 1:
        listing = ", ".join(f"{n!r}: {c}" for n, c in counts.items())
        fix = ("only segments every system has are scored" if mapping.segment_id else
               "without a segment_id column the rows are paired by position, so only the first "
               f"{min(counts.values())} segments are scored; add a segment_id column to pair them exactly")
        problems.append(Problem(None, mapping.system, f"The systems have different numbers of segments ({listing}); "
                                                      f"{fix}."))
    common = [s for s in order if all(s in keyed[name] for name in keyed)]
    if mapping.segment_id:
        for seg in order:
            missing = [name for name in keyed if seg not in keyed[name]]
            if missing and len(missing) < len(keyed):
                have = next(keyed[n][seg][1] for n in keyed if seg in keyed[n])
                problems.append(Problem(have, mapping.segment_id, f"Segment {seg!r} is missing for "
                                        f"{', '.join(repr(m) for m in missing)}; it is left out for every system."))
    systems: dict[str, list[str]] = {name: [] for name in keyed}
    references: list[list[str]] = []
    sources: list[str] | None = [] if mapping.source else None
    seg_ids: list[str] = []
    kept_rows: list[int] = []
    for seg in common:
        entries = [(name, *keyed[name][seg]) for name in keyed]
        ref_sets = {}
        for name, row, number in entries:
            refs = tuple(r for r in _refs_of([row[c] for c in mapping.references]))
            ref_sets.setdefault(refs, []).append(number)
        first_row = min(number for _, _, number in entries)
        if len(ref_sets) > 1:
            # Empty reference cells on some rows are filled from the others; real disagreement leaves the segment out.
            nonempty = {k: v for k, v in ref_sets.items() if any(r.strip() for r in k)}
            if len(nonempty) > 1:
                desc = "; ".join(f"rows {', '.join(map(str, v[:5]))}: {_short(' | '.join(k))}"
                                 for k, v in list(nonempty.items())[:3])
                problems.append(Problem(first_row, ", ".join(mapping.references),
                                        f"Segment {seg!r} has different references on different rows ({desc}); it "
                                        "is left out. The systems must be scored against the same reference."))
                continue
        refs_all = next((k for k in ref_sets if any(r.strip() for r in k)), ())
        refs = [r for r in refs_all if r.strip()]
        if not refs:
            if empty == EMPTY_SKIP:
                problems.append(Problem(first_row, ", ".join(mapping.references), f"Segment {seg!r} has an empty "
                                        "reference; it is left out for every system."))
                continue
            problems.append(Problem(first_row, ", ".join(mapping.references), f"Segment {seg!r} has an empty "
                                    "reference; every system scores 0 on it.", "warning"))
            refs = [""]
        empty_out = [(name, number) for name, row, number in entries if not _text(row[mapping.candidate]).strip()]
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
            systems[name].append(_text(row[mapping.candidate]))
        references.append(refs)
        if sources is not None:
            sources.append(next((_text(row[mapping.source]) for _, row, _ in entries
                                 if _text(row[mapping.source]).strip()), ""))
        seg_ids.append(seg if mapping.segment_id else str(len(seg_ids) + 1))
        kept_rows.append(first_row)
    return _finish(Dataset(systems, references, sources, seg_ids, kept_rows, problems, mapping))


def _short(text: str, limit: int = 40) -> str:
    return repr(text) if len(text) <= limit else repr(text[: limit - 3] + "...")


def _finish(ds: Dataset) -> Dataset:
    if not ds.systems:
        return replace(ds, problems=ds.problems + [Problem(None, None, "No system outputs were found.")])
    if not ds.references:
        return replace(ds, problems=ds.problems + [Problem(None, None, "No segment can be scored: every row has a "
                                                                       "problem listed above.")])
    return ds


def describe_size(n_bytes: int | float) -> str:
    """A size as people read it, in binary units as the limits are set (1 MB = 2**20 bytes): ``50 MB``,
    ``1.5 MB``, ``12 kB``, ``100 bytes``."""
    n = float(n_bytes)
    for unit, scale in (("MB", 2**20), ("kB", 2**10)):
        if n >= scale:
            value = n / scale
            return f"{value:,.0f} {unit}" if value >= 100 or value == int(value) else f"{value:.1f} {unit}"
    return f"{int(n):,} bytes"


def content_key(data: bytes) -> str:
    """A short hash of the file's bytes, for caching results by content."""
    import hashlib

    return hashlib.sha256(data).hexdigest()[:16]
