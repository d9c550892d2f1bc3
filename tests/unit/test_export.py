"""Exports: CSV cells that a spreadsheet would run as formulas are neutralised; numbers stay numbers; JSON."""

from __future__ import annotations

import csv
import io
import json
import math

import numpy as np
import pandas as pd
import pytest

from bertscore_viz import Scorer
from bertscore_viz.files.export import neutralize_cell, safe_csv, to_json

SIG = "all-MiniLM-L6-v2_L4_no-idf_version=bertscore-viz-0.1.0(hug_trans=5.23.0)"


@pytest.mark.parametrize(
    "cell, expected",
    [
        ("=HYPERLINK(\"http://x\",\"y\")", "'=HYPERLINK(\"http://x\",\"y\")"),
        ("+1+1", "'+1+1"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\t=1+1", "'\t=1+1"),
        ("\r=1+1", "'\r=1+1"),
        (" =1+1", "' =1+1"),  # spreadsheets skip leading whitespace before a formula
        ("  +cmd", "'  +cmd"),
        ("\u00a0-x", "'\u00a0-x"),  # a no-break space
        ("\u3000@SUM(A1)", "'\u3000@SUM(A1)"),  # an ideographic space
        ("\n=1", "'\n=1"),
        ("\uff1dHYPERLINK(1)", "'\uff1dHYPERLINK(1)"),  # full-width = + - @
        ("\uff0b1", "'\uff0b1"),
        ("\uff0dx", "'\uff0dx"),
        ("\uff20y", "'\uff20y"),
        (" \uff1dz", "' \uff1dz"),
        ("   ", "   "),  # whitespace alone is not a formula
        ("plain text", "plain text"),
        (" plain", " plain"),
        ("a = b", "a = b"),  # only a leading sign matters
        ("", ""),
        (-0.5, -0.5),  # numbers are left alone
        (3, 3),
    ],
)
def test_neutralize_cell(cell, expected):
    assert neutralize_cell(cell) == expected


def _read(data: bytes) -> list[list[str]]:
    assert data.startswith("\ufeff".encode("utf-8"))
    return list(csv.reader(io.StringIO(data.decode("utf-8-sig"))))


def test_safe_csv_neutralises_text_and_keeps_numbers():
    frame = pd.DataFrame({
        "candidate": ["=1+1", "+cmd", "-x", "@y", "\t=z", "\r=w", "fine"],
        "f1": [0.5, -0.25, 0.0, 1.0, -1.5, 0.125, 0.75],
        "n": [1, 2, 3, 4, 5, 6, 7],
    })
    before = frame.copy()
    rows = _read(safe_csv(frame))
    assert rows[0] == ["candidate", "f1", "n"]
    assert [r[0] for r in rows[1:]] == ["'=1+1", "'+cmd", "'-x", "'@y", "'\t=z", "'\r=w", "fine"]
    # negative scores stay numeric, unquoted
    assert [r[1] for r in rows[1:]] == ["0.5", "-0.25", "0.0", "1.0", "-1.5", "0.125", "0.75"]
    back = pd.read_csv(io.BytesIO(safe_csv(frame)), encoding="utf-8-sig")
    assert back["f1"].dtype.kind == "f" and back["n"].dtype.kind == "i"
    pd.testing.assert_frame_equal(frame, before)  # input untouched


def test_safe_csv_neutralises_headers_and_string_dtype():
    frame = pd.DataFrame({"=evil": pd.Series(["-a", "b"], dtype="string"), "ok": [1.0, 2.0]})
    rows = _read(safe_csv(frame))
    assert rows[0] == ["'=evil", "ok"]
    assert [r[0] for r in rows[1:]] == ["'-a", "b"]


def test_safe_csv_neutralises_category_columns_and_keeps_their_other_cells():
    frame = pd.DataFrame({"system": pd.Categorical(["=cmd", " +x", "ok", "=cmd"]),
                          "bucket": pd.Categorical([1, 2, 1, 3]),  # numeric categories stay numbers
                          "f1": [0.1, -0.2, 0.3, 0.4]})
    before = frame.copy()
    rows = _read(safe_csv(frame))
    assert [r[0] for r in rows[1:]] == ["'=cmd", "' +x", "ok", "'=cmd"]
    assert [r[1] for r in rows[1:]] == ["1", "2", "1", "3"] and rows[2][2] == "-0.2"
    pd.testing.assert_frame_equal(frame, before)  # input untouched, still categorical


def test_safe_csv_neutralises_every_text_dtype_and_duplicate_column_names():
    frame = pd.DataFrame([["=a", " -b", "\uff20c", 1.0]], columns=["x", "x", "y", "z"])
    frame["y"] = frame["y"].astype("string")
    rows = _read(safe_csv(frame))
    assert rows[1] == ["'=a", "' -b", "'\uff20c", "1.0"]


def test_safe_csv_carries_the_signature():
    frame = pd.DataFrame({"f1": [0.9, 0.8]})
    rows = _read(safe_csv(frame, SIG))
    assert rows[0] == ["f1", "signature"]
    assert all(r[1] == SIG for r in rows[1:])
    # a signature that looks like a formula is neutralised too
    rows = _read(safe_csv(frame, "=cmd|' /C calc'!A0"))
    assert rows[1][1].startswith("'=")


def test_safe_csv_of_real_scores():
    res = Scorer(layer=4).score(["=SUM(A1:A9)", "-- a dash start"], ["A sum.", "A dash."])
    frame = pd.DataFrame({"candidate": ["=SUM(A1:A9)", "-- a dash start"], "f1": res.f1})
    rows = _read(safe_csv(frame, str(res.signature)))
    assert rows[1][0] == "'=SUM(A1:A9)" and rows[2][0] == "'-- a dash start"
    assert float(rows[1][1]) == pytest.approx(res.f1[0], abs=1e-12)
    assert rows[1][2] == str(res.signature)


def test_to_json_round_trips():
    obj = {"precision": [0.5, -0.25], "name": "caf\u00e9 \U0001F600", "nested": {"k": [1, 2, {"x": 1.5}]},
           "flag": True, "none": None}
    data = to_json(obj)
    assert isinstance(data, bytes)
    assert json.loads(data.decode("utf-8")) == obj
    assert "caf\u00e9".encode("utf-8") in data  # not escaped


def test_to_json_nan_and_infinity_become_null():
    data = to_json({"a": float("nan"), "b": [1.0, math.inf, -math.inf], "c": (0.5, float("nan"))})
    assert json.loads(data) == {"a": None, "b": [1.0, None, None], "c": [0.5, None]}
    assert b"NaN" not in data and b"Infinity" not in data


def test_to_json_of_a_result_and_an_explanation():
    s = Scorer(layer=4, idf=True)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = s.score(["the cat"], ["the cat"])  # degenerate idf: NaN precision and recall
    d = json.loads(to_json(res.as_dict()))
    assert d["raw_recall"] == [None] and d["f1"] == [0.0]
    assert d["signature"] == str(res.signature) and d["settings"]["idf"] is True
    e = Scorer(layer=4).explain("The cat sat.", "A cat sat.")
    d = json.loads(to_json(e.as_dict()))
    assert d["precision"] == pytest.approx(e.precision)
    assert len(d["candidate_tokens"]) == len(e.cand)
    assert np.allclose(np.array(d["similarity"]), e.similarity, atol=1e-6)
