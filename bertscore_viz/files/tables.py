"""Reading uploaded bytes into a :class:`Table`: what the file is (text or a named binary format), its encoding,
its delimiter, and its rows (CSV, TSV or JSON Lines), with a :class:`Problem` for every row that cannot be read.

Everything here is linear in the input: the delimiter is chosen by parsing the first 64 kB once per candidate
delimiter with Python's C csv reader (``csv.Sniffer`` took 58 s on one 120 KB line of ``,"x``), JSON nesting is
checked by one scan, and no regular expression here has a super-linear worst case.

Row numbers are line numbers of the file: the header is row 1, the first data row is row 2, as a spreadsheet
shows them (a record whose quoted cell spans lines is numbered by its first line; for JSON Lines: the line). Every
row with data is either kept or named by a problem; a blank row (every cell empty or whitespace, or an empty line)
holds no data and is skipped without a problem.

Cells are strings; from JSON Lines also a tuple of strings (a list of strings: several references) or a
:class:`JsonValue` (an object, a boolean, or a list holding anything but strings and numbers), which the dataset
builder lists as a problem wherever a text is needed. JSON numbers are kept as written (``1.50`` stays ``"1.50"``).

Python's csv module refuses fields longer than its field limit (131,072 characters by default) and stops the
read there; the limit is raised (never lowered) to the length of the text being read, so that a long cell is read
whole and then listed by the dataset builder against ``max_cell_chars``, and the rows after it are kept.
"""

from __future__ import annotations

import csv
import io
import json
import re
import threading
from dataclasses import dataclass

from bertscore_viz.files import limits
from bertscore_viz.files.formats import identify_binary, looks_binary, wide_encoding
from bertscore_viz.files.limits import MAX_BYTES, MAX_CELLS, MAX_COLUMNS, MAX_ROWS, setting_note

__all__ = ["Problem", "Table", "JsonValue", "DELIMITERS", "SNIFF_CHARS", "decode", "sniff_delimiter",
           "read_table", "describe_size", "delimiter_name"]

#: Delimiters a delimited file may use, in the order that breaks ties.
DELIMITERS = (",", "\t", ";", "|")
#: Characters of the file (from its first line with data) parsed to choose the delimiter.
SNIFF_CHARS = 65536
_SNIFF_RECORDS = 50
_FIELD_LIMIT_LOCK = threading.Lock()
_NON_BLANK = re.compile(r"\S")


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the input.

    Attributes:
        row: spreadsheet row number (header = 1) or JSON Lines line number; None for the whole file.
        column: the column concerned, or None.
        problem: what is wrong and what happens to the row, in words.
        severity: ``"error"`` (nothing can be scored, or the row is left out) or ``"warning"`` (kept, or a guess
            said).
    """

    row: int | None
    column: str | None
    problem: str
    severity: str = "error"

    def as_dict(self) -> dict:
        return {"row": self.row, "column": self.column, "problem": self.problem, "severity": self.severity}


@dataclass(frozen=True)
class JsonValue:
    """A JSON value that is not a string, a number, null or a list of those: kept in the table so that the row is
    listed (with this description) wherever the column is read as text, never scored as empty text.

    Attributes:
        kind: ``"an object"``, ``"true"``/``"false"``, ``"a list of 2 values, not all strings"``.
        text: the value as JSON, shortened.
    """

    kind: str
    text: str

    def describe(self) -> str:
        return f"{self.kind} ({self.text})"


@dataclass(frozen=True)
class Table:
    """A file read into cells: ``columns`` (names as written) and ``rows`` of cells with their row numbers."""

    columns: tuple[str, ...]
    rows: tuple[tuple, ...]
    row_numbers: tuple[int, ...]
    kind: str  # "csv", "tsv", "jsonl", ...
    delimiter: str | None = None


def describe_size(n_bytes: int | float) -> str:
    """A size as people read it, in binary units as the limits are set (1 MB = 2**20 bytes): ``50 MB``,
    ``1.5 MB``, ``12 kB``, ``100 bytes``."""
    n = float(n_bytes)
    for unit, scale in (("MB", 2**20), ("kB", 2**10)):
        if n >= scale:
            value = n / scale
            return f"{value:,.0f} {unit}" if value >= 100 or value == int(value) else f"{value:.1f} {unit}"
    return f"{int(n):,} bytes"


def delimiter_name(d: str | None) -> str:
    return {"\t": "tab", ",": "comma", ";": "semicolon", "|": "pipe"}.get(d or "", repr(d))


# --- bytes to text --------------------------------------------------------------------------------------------------
def decode(data: bytes) -> tuple[str | None, list[Problem]]:
    """UTF-8 text (a byte-order mark is dropped), or a problem saying what the bytes are and what to do: a named
    binary format (gzip, zip, xlsx, PDF, ...), UTF-16/32, binary data, or text in an 8-bit encoding (with where the
    first bad byte is)."""
    found = identify_binary(data)
    if found is not None:
        return None, [Problem(None, None, found.sentence())]
    wide = wide_encoding(data)
    if wide is not None:
        return None, [Problem(None, None, f"The file is {wide} text. Save it as UTF-8 (in Excel: 'CSV UTF-8'; in an "
                                          f"editor: encoding UTF-8), or convert it: `iconv -f {wide} -t UTF-8 FILE "
                                          "> FILE.utf8`, and upload it again.")]
    try:
        return data.decode("utf-8-sig"), []
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        bad = data[exc.start: exc.start + 4]
        if looks_binary(data):
            return None, [Problem(None, None, f"The file is binary data, not text (zero bytes or control characters; "
                                              f"byte {exc.start} is {bad!r}). Upload a CSV, TSV or JSON Lines file "
                                              "saved as UTF-8 text.")]
        return None, [Problem(line, None, f"The file is not UTF-8: byte {exc.start} (line {line}) is {bad!r}, which "
                                          "UTF-8 cannot decode. It is text in an 8-bit encoding, probably Latin-1 or "
                                          "Windows-1252. Save it as UTF-8 (with or without BOM) and upload it "
                                          "again.")]


def _looks_like_jsonl(text: str, filename: str | None) -> bool:
    name = (filename or "").lower()
    if name.endswith((".jsonl", ".json", ".ndjson")):
        return True
    if name.endswith((".csv", ".tsv", ".txt")):
        return False
    return text.lstrip().startswith("{")


# --- the delimiter --------------------------------------------------------------------------------------------------
def _widths(sample: str, delimiter: str, cut: bool) -> list[int]:
    """The number of cells of each of the first records of ``sample`` with data (the last one dropped when the
    sample is cut from a longer text: it may be incomplete)."""
    widths: list[int] = []
    reader = csv.reader(io.StringIO(sample, newline=""), delimiter=delimiter)
    try:
        for cells in reader:
            if any(c.strip() for c in cells):
                widths.append(len(cells))
                if len(widths) > _SNIFF_RECORDS:
                    return widths
    except csv.Error:  # a field past the limit in the sample: judge on the records before it
        pass
    if cut and widths:
        widths.pop()
    return widths


def sniff_delimiter(text: str, filename: str | None = None) -> str:
    """The field delimiter: tab, comma, semicolon or pipe.

    Each candidate parses the first :data:`SNIFF_CHARS` characters from the first line with data: it must split the
    header into two or more cells; among those, the one whose later records most often have the header's width
    wins, then the extension (``.tsv``: tab), then the most header cells, then :data:`DELIMITERS` order. A header
    longer than the sample is judged by the count of each delimiter in it. Linear in the sample.
    """
    m = _NON_BLANK.search(text)
    start = 0 if m is None else text.rfind("\n", 0, m.start()) + 1
    sample = text[start: start + SNIFF_CHARS]
    cut = len(text) - start > len(sample)
    prefer = "\t" if (filename or "").lower().endswith(".tsv") else ","
    best, best_key = prefer, None
    for d in DELIMITERS:
        widths = _widths(sample, d, cut)
        if widths:
            header, rest = widths[0], widths[1:]
            consistency = sum(w == header for w in rest) / len(rest) if rest else 1.0
        else:  # no complete record in the sample: a very long header line
            header, consistency = sample.count(d) + 1, 0.0
        if header < 2:
            continue
        key = (consistency, d == prefer, header, -DELIMITERS.index(d))
        if best_key is None or key > best_key:
            best, best_key = d, key
    return best


# --- reading --------------------------------------------------------------------------------------------------------
def read_table(data: bytes, filename: str | None = None, max_bytes: int = MAX_BYTES, max_rows: int = MAX_ROWS,
               max_columns: int = MAX_COLUMNS, max_cells: int = MAX_CELLS) -> tuple[Table | None, list[Problem]]:
    """Read bytes into a :class:`Table`; rows that cannot be read are listed and left out.

    Args:
        data: the file's bytes.
        filename: its name, for the extension (``.tsv``, ``.jsonl``) when given.
        max_bytes: larger files are refused before anything is read.
        max_rows: data rows read; later rows are left out, listed.
        max_columns: a header with more columns is refused before any row is read.
        max_cells: data rows x columns read; rows past it are left out, listed.

    Returns:
        ``(table, problems)``; ``table`` is None when nothing could be read (the problems say why).
    """
    if len(data) > max_bytes:
        return None, [Problem(None, None, f"The file is {describe_size(len(data))}; the limit is "
                                          f"{describe_size(max_bytes)}. Split it into smaller files "
                                          f"{setting_note('max_bytes')}.")]
    if not data.strip():
        return None, [Problem(None, None, "The file is empty. Upload a CSV, TSV or JSON Lines file with a header "
                                          "row (e.g. reference,system_a,system_b).")]
    text, problems = decode(data)
    if text is None:
        return None, problems
    if _looks_like_jsonl(text, filename):
        return _read_jsonl(text, max_rows, max_columns, max_cells)
    return _read_delimited(text, filename, max_rows, max_columns, max_cells)


def _raise_field_limit(n: int) -> None:
    """Let csv read a field of ``n`` characters (the limit only ever goes up; a cell is never longer than the
    file, whose size is bounded)."""
    wanted = min(max(n, 1), 2**31 - 1)
    with _FIELD_LIMIT_LOCK:
        if csv.field_size_limit() < wanted:
            csv.field_size_limit(wanted)


def _too_many_columns(n: int, max_columns: int, what: str) -> Problem:
    return Problem(1, None, f"The {what} has {n:,} columns; at most {max_columns:,} are read "
                            f"{setting_note('max_columns')}. Nothing was read. Give fewer columns: a file per group "
                            "of systems, or the long layout (columns system, candidate, reference: one row per "
                            "system and segment).")


def _row_limit(width: int, max_rows: int, max_cells: int) -> tuple[int, str]:
    """The most data rows a table of ``width`` columns may have, and how a message says it is exceeded."""
    by_cells = max_cells // max(1, width)
    if by_cells < max_rows:
        return by_cells, (f"more than {by_cells:,} data rows of {width:,} columns, over {max_cells:,} cells, the "
                          f"most read here {setting_note('max_cells')}")
    return max_rows, f"more than {max_rows:,} data rows, the most read here {setting_note('max_rows')}"


def _header(reader, delim: str) -> tuple[list[str] | None, int, list[Problem]]:
    """The header's names (trailing empty cells dropped) and its raw width, or None and the problem."""
    try:
        header = next(reader)
    except (StopIteration, csv.Error) as exc:
        return None, 0, [Problem(1, None, f"The header row cannot be read ({exc}).")]
    header = [h.strip() for h in header]
    raw_width = len(header)
    if not any(header):
        return None, raw_width, [Problem(1, None, f"The header row (row 1) has {raw_width} cell(s) but no column "
                                                  "names. The first row must name the columns, e.g. "
                                                  "reference,system_a,system_b (wide) or system,candidate,reference "
                                                  "(long).")]
    while header and header[-1] == "" and len(header) > 1:
        header.pop()  # a trailing delimiter on the header line
    return header, raw_width, []


def _read_delimited(text: str, filename: str | None, max_rows: int, max_columns: int,
                    max_cells: int) -> tuple[Table | None, list[Problem]]:
    delim = sniff_delimiter(text, filename)
    _raise_field_limit(len(text))
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delim)
    header, raw_width, problems = _header(reader, delim)
    if header is None:
        return None, problems
    width = len(header)
    if width > max_columns:
        return None, [_too_many_columns(width, max_columns, f"header ({delimiter_name(delim)}-separated)")]
    limit, over = _row_limit(width, max_rows, max_cells)
    trimmed = (f" named column(s) (its last {raw_width - width} cell(s) are empty)" if raw_width > width else "")
    rows: list[tuple] = []
    numbers: list[int] = []
    spanning: list[int] = []
    for row, end, cells in _records(text, reader, delim, problems):
        if not any(c.strip() for c in cells):
            continue
        if len(cells) > width and not any(c.strip() for c in cells[width:]):
            cells = cells[:width]
        if len(cells) != width:
            lines = f" (lines {row}-{end}, joined by a quoted cell with line breaks)" if end > row else ""
            problems.append(Problem(row, None, f"Row {row}{lines} has {len(cells)} cells but the header has "
                                               f"{width}{trimmed}; the row is left out. Check for an unquoted "
                                               f"delimiter ({delimiter_name(delim)}) inside a cell"
                                               f"{' or a stray quote' if end > row else ''}."))
            continue
        if end > row:
            spanning.append(row)
        if len(rows) >= limit:
            problems.append(Problem(row, None, f"The file has {over}; rows from {row} on are left out."))
            break
        rows.append(tuple(cells))
        numbers.append(row)
    if spanning:
        problems.append(_spanning_note(spanning))
    kind = {"\t": "tsv"}.get(delim, "csv")
    return Table(tuple(header), tuple(rows), tuple(numbers), kind, delim), problems


#: Times the rest of a file is read again after a quote left open to its end (each read is linear in the file).
_REREADS = 3


def _records(text: str, reader, delim: str, problems: list[Problem]):
    """``(first line, last line, cells)`` of each record after the header. A record that cannot be parsed is
    listed and the read goes on with the next line. A quote opened and never closed would swallow the rest of the
    file as one cell: that record's row is listed and left out, and the lines after it are read again as rows."""
    offset = 0  # lines of the file before the text the reader reads
    rereads = 0
    while True:
        prev_line = reader.line_num
        last = None
        while True:
            try:
                cells = next(reader)
            except StopIteration:
                break
            except csv.Error as exc:  # only this record is lost
                problems.append(Problem(offset + prev_line + 1, None, f"Row {offset + prev_line + 1} cannot be read "
                                                                      f"({exc}); it is left out. Check the quoting "
                                                                      "there."))
                prev_line = reader.line_num
                continue
            if last is not None:
                yield last
            last = (offset + prev_line + 1, offset + reader.line_num, cells)
            prev_line = reader.line_num
        if last is None:
            return
        row, end, _ = last
        lines = list(io.StringIO(text, newline="")) if end > row else []  # split as the reader splits them
        if end == row or not _quote_left_open("".join(lines[row - offset - 1:]), delim):
            yield last
            return
        if rereads == _REREADS:
            problems.append(Problem(row, None, f"Row {row} opens a quoted cell (\") that is never closed; lines "
                                               f"{row}-{end} are left out. Close the quote, or double it (\"\") "
                                               "where it is part of the text."))
            return
        rereads += 1
        problems.append(Problem(row, None, f"Row {row} opens a quoted cell (\") that is never closed, which would "
                                           f"make lines {row}-{end} one cell; row {row} is left out and the lines "
                                           "after it are read as rows. Close the quote, or double it (\"\") where "
                                           "it is part of the text."))
        text = "".join(lines[row - offset:])
        offset = row
        reader = csv.reader(io.StringIO(text, newline=""), delimiter=delim)


def _quote_left_open(record: str, delim: str) -> bool:
    """Whether the raw text of one record ends inside a quoted cell (the strict reader says so; the lenient one the
    app reads with would take the rest of the file into the cell)."""
    try:
        for _ in csv.reader(io.StringIO(record, newline=""), delimiter=delim, strict=True):
            pass
    except csv.Error as exc:
        return "unexpected end of data" in str(exc)
    return False


def _spanning_note(rows: list[int]) -> Problem:
    shown = ", ".join(str(r) for r in rows[:5]) + (f" and {len(rows) - 5:,} more" if len(rows) > 5 else "")
    return Problem(rows[0], None, f"{len(rows):,} row(s) hold a quoted cell with line breaks, read as one cell "
                                  f"(row {shown}). If a stray quote joined lines that are rows of their own, close "
                                  "or double it (\"\").", severity="warning")


def _json_items(text: str) -> tuple[list[tuple[int, object]] | None, list[Problem]]:
    """``(line number, parsed value)`` of each line with data (or each element of one JSON array)."""
    problems: list[Problem] = []
    stripped = text.strip()
    if stripped.startswith("["):
        # A JSON array of objects is common enough to accept.
        try:
            arr = limits.loads(stripped, "The JSON array", numbers_as_text=True)
        except json.JSONDecodeError as exc:
            return None, [Problem(exc.lineno, None, f"The file is not valid JSON: {exc.msg} at line {exc.lineno}.")]
        except limits.LimitExceeded as exc:
            return None, [Problem(None, None, str(exc))]
        return ([(i + 1, x) for i, x in enumerate(arr)] if isinstance(arr, list) else []), problems
    items = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            items.append((n, limits.loads(line, f"Line {n}", numbers_as_text=True)))
        except json.JSONDecodeError as exc:
            problems.append(Problem(n, None, f"Line {n} is not valid JSON ({exc.msg}, column {exc.colno}); it is "
                                             "left out. JSON Lines needs one object per line."))
        except limits.LimitExceeded as exc:
            problems.append(Problem(n, None, f"{exc} The line is left out."))
    return items, problems


def _read_jsonl(text: str, max_rows: int, max_columns: int, max_cells: int) -> tuple[Table | None, list[Problem]]:
    items, problems = _json_items(text)
    if items is None:
        return None, problems
    records: list[tuple[int, dict]] = []
    columns: dict[str, None] = {}
    clashes: dict[tuple[str, str], list[int]] = {}  # (name, the later key as written) -> lines
    for n, obj in items:
        if not isinstance(obj, dict):
            problems.append(Problem(n, None, f"Line {n} is a JSON {_json_type(obj)}, not an object with named "
                                             "fields; it is left out."))
            continue
        if len(records) >= max_rows:
            problems.append(Problem(n, None, f"The file has more than {max_rows:,} records, the most read here "
                                             f"{setting_note('max_rows')}; lines from {n} on are left out."))
            break
        norm: dict[str, object] = {}
        for k, v in obj.items():
            name = str(k).strip()
            if name in norm:
                clashes.setdefault((name, str(k)), []).append(n)
                continue
            norm[name] = v
            columns.setdefault(name, None)
        if len(columns) > max_columns:
            return None, problems + [_too_many_columns(len(columns), max_columns, "file (counting the fields of its "
                                                       f"objects up to line {n})")]
        records.append((n, norm))
    for (name, key), lines in clashes.items():
        where = f"line {lines[0]}" + (f" and {len(lines) - 1:,} more" if len(lines) > 1 else "")
        problems.append(Problem(lines[0], name, f"The field {key!r} is {name!r} once the spaces around it are "
                                                f"dropped, a name the object already has ({where}); only the first is "
                                                "used. Rename one of them."))
    if not records:
        problems.append(Problem(None, None, "No JSON object could be read from the file."))
        return None, problems
    cols = tuple(columns)
    limit, over = _row_limit(len(cols), max_rows, max_cells)
    if len(records) > limit:
        first_out = records[limit][0]
        problems.append(Problem(first_out, None, f"The file has {over.replace('data rows', 'records')}; lines from "
                                                 f"{first_out} on are left out."))
        records = records[:limit]
    rows = []
    for _, norm in records:
        rows.append(tuple(_json_cell(norm.get(c)) for c in cols))
    return Table(cols, tuple(rows), tuple(n for n, _ in records), "jsonl"), problems


def _json_type(v) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean"}.get(type(v), "number" if v is not None
                                                                                else "null")


def _json_cell(v):
    """A parsed JSON value (numbers as their text) as a table cell: a string, a tuple of strings (a list of
    strings or numbers), or a :class:`JsonValue` for what is neither (listed where a text is needed)."""
    if v is None:
        return ""
    if isinstance(v, str):
        return v
    if isinstance(v, list) and all(isinstance(x, str) for x in v):
        return tuple(v)  # several references in one field (numbers were parsed as their text)
    if isinstance(v, bool):
        return JsonValue("true" if v else "false", str(v).lower())
    text = limits.dumps_safe(v)
    text = text if len(text) <= 60 else text[:57] + "..."
    if isinstance(v, dict):
        return JsonValue("an object", text)
    return JsonValue(f"a list of {len(v)} value(s), not all strings or numbers", text)
