"""Limits on what a file may expand to, in every format: rows, characters and nesting, checked before or while a
file is materialised, never after.

A file's size says little about its cost: a 144 KB Parquet file (constant columns, dictionary encoding, zstd)
expanded to 2,000,000 rows and 1.3 GB of server memory, and one line of JSON nested 5,000 levels deep made
Python's parser raise ``RecursionError``. So:

* **rows**: a Parquet file's footer states its rows; a file stating more than the limit is refused before any
  data is read, and rows are counted again while reading (a footer may lie);
* **characters**: the text a Parquet file expands to is counted batch by batch while reading (dictionary-encoded
  columns count every row's value), and reading stops above the limit;
* **nesting**: JSON deeper than :data:`MAX_JSON_DEPTH` is refused by a scan of its brackets before it is parsed.

Pure functions, no Streamlit; the messages say what was found, what the limit is, and what to do.
"""

from __future__ import annotations

import json
import re

from bertscore_viz.errors import InputError

#: Deepest JSON nesting read (objects and arrays). System outputs are flat records; 64 leaves room for any real
#: metadata and stays far below Python's recursion limit.
MAX_JSON_DEPTH = 64
#: Characters of text a results or input file may expand to, at least (the limit is the larger of this and
#: :data:`EXPANSION_FACTOR` times the file-size limit).
MIN_EXPANDED_CHARS = 256 * 2**20
#: How much larger than the file-size limit its text may be once expanded (compression, dictionary encoding).
EXPANSION_FACTOR = 8

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_BRACKETS = re.compile(r"[\[\]{}]")


class LimitExceeded(InputError):
    """A file that expands beyond a limit (rows, characters, nesting)."""


def expanded_chars_limit(max_bytes: int | None) -> int:
    """Most characters a file may expand to: :data:`EXPANSION_FACTOR` times its byte limit, at least
    :data:`MIN_EXPANDED_CHARS`."""
    return max(MIN_EXPANDED_CHARS, EXPANSION_FACTOR * int(max_bytes or 0))


def json_depth(text: str) -> int:
    """The deepest nesting of objects and arrays in JSON text (strings skipped), without parsing it."""
    depth = best = 0
    for m in _BRACKETS.finditer(_STRING.sub("", text)):
        depth += 1 if m.group() in "[{" else -1
        best = max(best, depth)
    return best


def loads(text: str, what: str = "The JSON", max_depth: int = MAX_JSON_DEPTH):
    """``json.loads`` with the nesting limit: LimitExceeded above ``max_depth``; ``json.JSONDecodeError`` for text
    that is not JSON (as ``json.loads`` raises it)."""
    if ("[" in text or "{" in text) and json_depth(text) > max_depth:
        raise LimitExceeded(f"{what} is nested {json_depth(text):,} levels deep; at most {max_depth} are read. "
                            "Give flat records (one object per line with text fields).")
    try:
        return json.loads(text)
    except RecursionError:  # a safety net: the scan above makes this unreachable for valid JSON
        raise LimitExceeded(f"{what} is nested too deeply to read.") from None


def check_parquet_footer(metadata, max_rows: int | None, what: str = "The Parquet file") -> None:
    """Refuse a Parquet file whose footer states more rows than ``max_rows``, before any data is read."""
    if max_rows is not None and metadata.num_rows > max_rows:
        raise LimitExceeded(f"{what} holds {metadata.num_rows:,} rows; at most {max_rows:,} are read here. Split it, "
                            "or use the command line (`python -m bertscore_viz score --ray`) for larger data.")


class ExpansionCounter:
    """Counts rows and characters while a file is read in batches; raises :class:`LimitExceeded` above a limit."""

    def __init__(self, max_rows: int | None, max_chars: int | None, what: str = "The file"):
        self.max_rows, self.max_chars, self.what = max_rows, max_chars, what
        self.rows = self.chars = 0

    def add_rows(self, n: int) -> None:
        self.rows += n
        if self.max_rows is not None and self.rows > self.max_rows:
            raise LimitExceeded(f"{self.what} holds more than {self.max_rows:,} rows; at most {self.max_rows:,} are "
                                "read here.")

    def add_chars(self, n: int) -> None:
        self.chars += n
        if self.max_chars is not None and self.chars > self.max_chars:
            raise LimitExceeded(f"{self.what} expands to more than {self.max_chars:,} characters of text once "
                                f"decompressed; at most {self.max_chars:,} are read here. Split it into smaller "
                                "files.")

    def add_batch(self, batch) -> None:
        """A pyarrow RecordBatch: its rows, and the characters of its text columns (every row's value, also in
        dictionary-encoded columns)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        self.add_rows(batch.num_rows)
        for column in batch.columns:
            if pa.types.is_dictionary(column.type):
                column = column.dictionary_decode()
            if pa.types.is_list(column.type) or pa.types.is_large_list(column.type):
                column = pc.list_flatten(column)
            if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
                total = pc.sum(pc.utf8_length(column)).as_py()
                self.add_chars(int(total or 0))


def dumps_safe(obj) -> str:
    """``json.dumps`` that never raises on depth (a value nested too deeply is written as a short marker)."""
    try:
        return json.dumps(obj, ensure_ascii=False)
    except (RecursionError, ValueError, TypeError):
        return '"(a value too deeply nested or not JSON)"'
