"""Exports that are safe to open: CSV with formula-like cells neutralised, JSON with the signature."""

from __future__ import annotations

import io
import json
import math

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def neutralize_cell(value):
    """Prefix a text cell that a spreadsheet would read as a formula with a single quote.

    Numbers are left alone (a negative rescaled score stays a number); only strings are touched.

    >>> neutralize_cell("=HYPERLINK(1)"), neutralize_cell("-0.5 is text"), neutralize_cell(-0.5)
    ("'=HYPERLINK(1)", "'-0.5 is text", -0.5)
    """
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES):
        return "'" + value
    return value


def safe_csv(frame, signature: str | None = None) -> bytes:
    """CSV bytes (UTF-8 with BOM, for spreadsheets) of a pandas DataFrame, text cells neutralised.

    Args:
        frame: the table.
        signature: written as a last column ``signature`` when given.
    """
    df = frame.copy()
    df.columns = [neutralize_cell(str(c)) for c in df.columns]
    for col in df.columns:
        if df[col].dtype == object or str(df[col].dtype).startswith(("string", "str")):
            df[col] = df[col].map(neutralize_cell)
    if signature is not None:
        df["signature"] = neutralize_cell(signature)
    buf = io.StringIO()
    # CRLF rows (RFC 4180): the writer then quotes every cell holding a CR or LF. With "\n" rows a bare CR stayed
    # unquoted, a spreadsheet broke the row there, and the text after it ("=...") began a new, live cell.
    df.to_csv(buf, index=False, lineterminator="\r\n")
    return ("\ufeff" + buf.getvalue()).encode("utf-8")


def to_json(obj) -> bytes:
    """JSON bytes; NaN and infinities become null (JSON has no NaN)."""

    def clean(x):
        if isinstance(x, float) and not math.isfinite(x):
            return None
        if isinstance(x, dict):
            return {k: clean(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [clean(v) for v in x]
        return x

    return json.dumps(clean(obj), ensure_ascii=False, indent=1).encode("utf-8")
