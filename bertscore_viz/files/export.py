"""Exports that are safe to open: CSV with formula-like cells neutralised, JSON with the signature."""

from __future__ import annotations

import io
import json
import math

import pandas as pd

__all__ = ["FORMULA_SIGNS", "FORMULA_PREFIXES", "json_ready", "neutralize_cell", "safe_csv", "to_json"]

#: Characters that start a formula in a spreadsheet, ASCII and full-width (some spreadsheets, e.g. with East Asian
#: input, read the full-width forms as the ASCII ones).
FORMULA_SIGNS = ("=", "+", "-", "@", "\uff1d", "\uff0b", "\uff0d", "\uff20")
#: Leading characters that are neutralised whatever follows them (a tab or CR can shift a cell or start a row).
FORMULA_PREFIXES = FORMULA_SIGNS + ("\t", "\r")


def neutralize_cell(value):
    """Prefix a text cell that a spreadsheet would read as a formula with a single quote.

    A formula sign counts also after leading whitespace (spreadsheets skip it: ``" =1+1"`` is a formula), and in
    its full-width form (``＝``). Numbers are left alone (a negative rescaled score stays a number); only strings
    are touched.

    >>> neutralize_cell("=HYPERLINK(1)"), neutralize_cell("-0.5 is text"), neutralize_cell(-0.5)
    ("'=HYPERLINK(1)", "'-0.5 is text", -0.5)
    >>> neutralize_cell("  @SUM(A1)"), neutralize_cell("\uff1dcmd")
    ("'  @SUM(A1)", "'\uff1dcmd")
    """
    if isinstance(value, str) and (value.startswith(FORMULA_PREFIXES) or value.lstrip().startswith(FORMULA_SIGNS)):
        return "'" + value
    return value


def _is_text(series) -> bool:

    return series.dtype == object or pd.api.types.is_string_dtype(series.dtype)


def safe_csv(frame, signature: str | None = None) -> bytes:
    """CSV bytes (UTF-8 with BOM, for spreadsheets) of a pandas DataFrame, text cells neutralised.

    Args:
        frame: the table.
        signature: written as a last column ``signature`` when given.
    """

    df = frame.copy()
    df.columns = [neutralize_cell(str(c)) for c in df.columns]
    for i in range(df.shape[1]):  # by position: two columns may share a name
        col = df.iloc[:, i]
        if isinstance(col.dtype, pd.CategoricalDtype):  # the categories are the text: neutralise them
            col = col.astype(object)
        if _is_text(col):
            df.isetitem(i, col.map(neutralize_cell))
    if signature is not None:
        df["signature"] = neutralize_cell(signature)
    buf = io.StringIO()
    # CRLF rows (RFC 4180): the writer then quotes every cell holding a CR or LF. With "\n" rows a bare CR stayed
    # unquoted, a spreadsheet broke the row there, and the text after it ("=...") began a new, live cell.
    df.to_csv(buf, index=False, lineterminator="\r\n")
    return ("\ufeff" + buf.getvalue()).encode("utf-8")


def json_ready(x):
    """``x`` with NaN and infinities as None, in every dict, list and tuple (JSON has no NaN)."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: json_ready(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [json_ready(v) for v in x]
    return x


def to_json(obj) -> bytes:
    """JSON bytes; NaN and infinities become null (:func:`json_ready`)."""
    return json.dumps(json_ready(obj), ensure_ascii=False, indent=1).encode("utf-8")
