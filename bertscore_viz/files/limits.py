"""Limits on what a file may be and expand to, in every format: bytes, rows, columns, cells, systems, pairs,
characters, nesting, time and memory, checked before or while a file is materialised, never after.

A file's size says little about its cost: a 144 KB Parquet file (constant columns, dictionary encoding, zstd)
expanded to 2,000,000 rows and 1.3 GB of server memory, one line of JSON nested 5,000 levels deep made Python's
parser raise ``RecursionError``, and a 38 MB CSV of 10,000 system columns x 2,000 rows is 20,000,000 pairs. So:

* **rows, columns, cells** (rows x columns of the table), **systems** and **pairs** (systems x segments) each have a
  limit below, a parameter of every reading function with these defaults, and a deployment setting
  (:data:`SETTINGS`, read by the app's ``serving/config.py``); a file over one is refused before the work it
  would cost, with a message naming the limit and the setting;
* **Parquet**: a file's footer states its rows; a file stating more than the limit is refused before any data is
  read, rows are counted again while reading (a footer may lie), and the text it expands to is counted batch by
  batch (dictionary-encoded columns count every row's value);
* **nesting**: JSON deeper than :data:`MAX_JSON_DEPTH` is refused by a linear scan of its brackets before it is
  parsed;
* **time and memory**: :mod:`bertscore_viz.serving.isolated` reads a file in a worker process under
  :data:`MAX_SECONDS` and :data:`MAX_MEMORY_BYTES`.

Pure functions, no Streamlit; the messages say what was found, what the limit is, and what to do.
"""

from __future__ import annotations

import json
import re

from bertscore_viz.errors import InputError

__all__ = ["MAX_BYTES", "MAX_ROWS", "MAX_COLUMNS", "MAX_CELLS", "MAX_SYSTEMS", "MAX_PAIRS", "MAX_CELL_CHARS",
           "MAX_SECONDS", "MAX_MEMORY_BYTES", "MAX_JSON_DEPTH", "MIN_EXPANDED_CHARS", "EXPANSION_FACTOR",
           "SETTINGS", "LimitExceeded", "setting_note", "expanded_chars_limit", "json_depth", "loads",
           "dumps_safe"]

#: Largest file accepted, in bytes.
MAX_BYTES = 50 * 1024 * 1024
#: Most data rows read; later rows are left out (and listed as a problem).
MAX_ROWS = 200_000
#: Most columns of a table; a file with more is refused after its header line (WMT's largest tasks have about 40
#: systems; a few hundred columns leave room for metadata).
MAX_COLUMNS = 500
#: Most cells (data rows x columns) read from one table; rows past it are left out and listed, as past MAX_ROWS.
#: A cell costs at least one byte (its delimiter), so without this limit 50 MB of commas would be 50,000,000 cells.
MAX_CELLS = 5_000_000
#: Most systems compared at once (the significance matrix grows with the square of this).
MAX_SYSTEMS = 100
#: Most (system, segment) pairs scored from one file: refused before any model pass.
MAX_PAIRS = 1_000_000
#: Longest cell, in characters; longer cells make their segment be left out.
MAX_CELL_CHARS = 20_000
#: Longest time a file may take to read in a worker process (:mod:`bertscore_viz.serving.isolated`), in seconds.
MAX_SECONDS = 60.0
#: Most memory a worker reading a file may add to what it starts with, in bytes.
MAX_MEMORY_BYTES = 2 * 2**30
#: Deepest JSON nesting read (objects and arrays). System outputs are flat records; 64 leaves room for any real
#: metadata and stays far below Python's recursion limit.
MAX_JSON_DEPTH = 64
#: Characters of text a results or input file may expand to, at least (the limit is the larger of this and
#: :data:`EXPANSION_FACTOR` times the file-size limit).
MIN_EXPANDED_CHARS = 256 * 2**20
#: How much larger than the file-size limit its text may be once expanded (compression, dictionary encoding).
EXPANSION_FACTOR = 8

#: Each limit's deployment setting (environment variable; the app reads them in ``serving/config.py``).
SETTINGS = {
    "max_bytes": "BERTSCORE_VIZ_UPLOAD_MB",
    "max_rows": "BERTSCORE_VIZ_UPLOAD_ROWS",
    "max_columns": "BERTSCORE_VIZ_UPLOAD_COLUMNS",
    "max_cells": "BERTSCORE_VIZ_UPLOAD_CELLS",
    "max_systems": "BERTSCORE_VIZ_UPLOAD_SYSTEMS",
    "max_pairs": "BERTSCORE_VIZ_UPLOAD_PAIRS",
    "max_cell_chars": "BERTSCORE_VIZ_UPLOAD_CELL_CHARS",
    "max_seconds": "BERTSCORE_VIZ_UPLOAD_SECONDS",
    "max_memory_bytes": "BERTSCORE_VIZ_UPLOAD_MEMORY_MB",
}

_TOKEN = re.compile(r'\\.|["\[\]{}]', re.S)  # an escape pair (inside strings), a quote or a bracket
class LimitExceeded(InputError):
    """A file that expands beyond a limit (rows, characters, nesting)."""


def expanded_chars_limit(max_bytes: int | None) -> int:
    """Most characters a file may expand to: :data:`EXPANSION_FACTOR` times its byte limit, at least
    :data:`MIN_EXPANDED_CHARS`."""
    return max(MIN_EXPANDED_CHARS, EXPANSION_FACTOR * int(max_bytes or 0))


def setting_note(limit: str) -> str:
    """How a message names a limit: ``"(limit max_columns; server setting BERTSCORE_VIZ_UPLOAD_COLUMNS)"``."""
    return f"(limit {limit}; server setting {SETTINGS[limit]})"


def json_depth(text: str) -> int:
    """The deepest nesting of objects and arrays in JSON text (strings skipped), without parsing it.

    One pass over the quotes, escapes and brackets (linear in the text: a pattern matching whole strings was
    quadratic on a line of ``\\"`` pairs without a closing quote).
    """
    depth = best = 0
    in_string = False
    for m in _TOKEN.finditer(text):
        token = m.group()
        if token == '"':
            in_string = not in_string
        elif in_string or len(token) == 2:
            continue
        elif token in "[{":
            depth += 1
            best = max(best, depth)
        else:
            depth -= 1
    return best


def _as_text(token: str) -> str:
    return token


def loads(text: str, what: str = "The JSON", max_depth: int = MAX_JSON_DEPTH, numbers_as_text: bool = False):
    """``json.loads`` with the nesting limit: LimitExceeded above ``max_depth``; ``json.JSONDecodeError`` for text
    that is not JSON (as ``json.loads`` raises it).

    Args:
        numbers_as_text: numbers (and ``NaN``/``Infinity``, which Python's parser accepts) are kept as the text
            written in the file (``"1.50"``, ``"1e5"``), not converted to floats and back.
    """
    if text.count("[") + text.count("{") > max_depth:  # fewer opening brackets cannot nest deeper
        depth = json_depth(text)
        if depth > max_depth:
            raise LimitExceeded(f"{what} is nested {depth:,} levels deep; at most {max_depth} are read. Give flat "
                                "records (one object per line with text fields).")
    hooks = {"parse_float": _as_text, "parse_int": _as_text, "parse_constant": _as_text} if numbers_as_text else {}
    try:
        return json.loads(text, **hooks)
    except RecursionError:  # a safety net: the scan above makes this unreachable for valid JSON
        raise LimitExceeded(f"{what} is nested too deeply to read.") from None


def dumps_safe(obj) -> str:
    """``json.dumps`` that never raises on depth (a value nested too deeply is written as a short marker)."""
    try:
        return json.dumps(obj, ensure_ascii=False)
    except (RecursionError, ValueError, TypeError):
        return '"(a value too deeply nested or not JSON)"'
