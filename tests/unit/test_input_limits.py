"""Issue 19, classes 2 and 3: limits apply to what a file expands to, in every format.

Before: a 144 KB scores.parquet (constant columns, dictionary encoding, zstd) became 2,000,000 segments and
+1.3 GB of server memory with the row limit set to 50; a JSON Lines upload nested 5,000 levels deep crashed the
page (RecursionError), and `score --ray --input` on it printed a traceback.
"""

from __future__ import annotations

import io
import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bertscore_viz.distributed.inputs import read_input
from bertscore_viz.engine.results import Signature
from bertscore_viz.errors import BertScoreVizError, InputError
from bertscore_viz.files import limits
from bertscore_viz.files.results import format as results_format
from bertscore_viz.files.results import table as results_table
from bertscore_viz.files.upload import parse_upload

SIG = Signature("all-MiniLM-L6-v2", 4, False, False, False, "fp32", "5.0")


def _results_parquet(n_segments: int, systems=("A", "B"), text: str = "The cat sat on the mat.",
                     meta: dict | None = None, constant: bool = False) -> bytes:
    """A results file as `score --ray` writes it; ``constant``: every column constant (the attack: compresses to
    almost nothing)."""
    n = n_segments * len(systems)
    index = np.zeros(n, dtype=np.int64) if constant else np.tile(np.arange(n_segments), len(systems))
    cols = {"segment_index": index,
            "segment_id": pa.array([str(i) for i in index]).dictionary_encode(),
            "row": index + 2,
            "system": pa.array([s for s in systems for _ in range(n_segments)]).dictionary_encode(),
            "candidate": pa.array([text] * n).dictionary_encode(),
            "references": pa.array([[text]] * n, type=pa.list_(pa.string())),
            "source": pa.array([None] * n, type=pa.string())}
    for c in results_format.SCORE_COLUMNS:  # no baseline in the metadata: rescaled columns are null, as written
        cols[c] = pa.nulls(n, pa.float64()) if c.startswith("rescaled_") else np.full(n, 0.5)
    cols["best_reference"] = np.zeros(n, dtype=np.int64)
    cols["notes"] = pa.array([""] * n)
    table = pa.table(cols)
    md = results_format.metadata(SIG, None, list(systems), n_segments) if meta is None else meta
    table = table.replace_schema_metadata(md)
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd")
    return buf.getvalue()


def test_a_tiny_parquet_of_millions_of_rows_is_refused_from_its_footer_before_reading():
    data = _results_parquet(1_000_000, constant=True)
    assert len(data) < 400_000  # a few hundred KB on disk...
    with pytest.raises(limits.LimitExceeded, match="holds 2,000,000 rows; at most 50 are read here"):
        results_table.read_results(data, max_bytes=50 * 2**20, max_rows=50)


def test_text_that_expands_beyond_the_limit_is_refused_while_reading():
    data = _results_parquet(2000, text="x" * 5000, constant=True)  # 20 MB of text, a dictionary of one value
    assert len(data) < 200_000
    with pytest.raises(limits.LimitExceeded, match="expands to more than 1,000,000 characters"):
        results_table.read_results(data, max_rows=10_000, max_chars=1_000_000)
    ok = results_table.read_results(_results_parquet(20), max_bytes=2**20, max_rows=50)
    assert ok.dataset.n_segments == 20 and list(ok.dataset.systems) == ["A", "B"]


@pytest.mark.parametrize("change, match", [
    ({"settings": "not a dict"}, "wrong type"),
    ({"n_segments": {"a": 1}}, "wrong type"),
    ({"systems": [1, 2]}, "wrong type"),
    ({"format_version": "2"}, "not a whole number"),
    ({"baseline": [float("nan"), 0.5, 0.5]}, "P = nan for layer 4"),
    ({"baseline": [0.5, 0.5, 1.0]}, "F = 1.0 for layer 4"),
])
def test_edited_metadata_is_refused_with_a_message(change, match):
    md = results_format.metadata(SIG, None, ["A", "B"], 20)
    info = json.loads(md[results_format.META_KEY])
    info.update(change)
    md[results_format.META_KEY] = json.dumps(info).encode()
    with pytest.raises(BertScoreVizError, match=match):
        results_table.read_results(_results_parquet(20, meta=md), max_rows=100)


def test_deeply_nested_metadata_is_refused_not_a_recursion_error():
    md = results_format.metadata(SIG, None, ["A", "B"], 20)
    md[results_format.META_KEY] = b'{"format": "bertscore-viz-results", "x": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    with pytest.raises(InputError, match="nested 5,001 levels deep"):
        results_table.read_results(_results_parquet(20, meta=md))


DEEP = b'{"reference": "a", "A": ' + b"[" * 5000 + b"]" * 5000 + b"}\n"
GOOD = b'{"reference": "The cat sat.", "A": "A cat sat."}\n'


def test_a_deeply_nested_json_line_is_listed_and_the_other_lines_kept():
    ds = parse_upload(GOOD + DEEP + GOOD, "nested.jsonl")
    assert ds.n_segments == 2
    (problem,) = ds.errors
    assert problem.row == 2 and "nested 5,001 levels deep; at most 64" in problem.problem
    array = parse_upload(b"[" * 5000 + b"]" * 5000, "nested.json")
    assert not array.ok and "nested 5,000 levels deep" in array.errors[0].problem


def test_the_ray_input_reader_lists_the_nested_line_too(tmp_path):
    path = tmp_path / "nested.jsonl"
    path.write_bytes(GOOD + DEEP + GOOD)
    ds = read_input(str(path))
    assert ds.n_segments == 2 and any("levels deep" in p.problem for p in ds.problems)
    only = tmp_path / "only.jsonl"
    only.write_bytes(DEEP)
    with pytest.raises(InputError, match="levels deep"):
        read_input(str(only))


@pytest.mark.parametrize("text, depth", [("{}", 1), ('{"a": [1, {"b": "[[[["}]}', 3), ('"[[["', 0),
                                         ('["\\"[", [[]]]', 3), ("[" * 70 + "]" * 70, 70)])
def test_json_depth_skips_strings(text, depth):
    assert limits.json_depth(text) == depth


def test_csv_oddities_are_problems_not_exceptions():
    huge_field = b"reference,A\n" + b'"' + b"x" * 300_000 + b'",y\nThe cat.,A cat.\n'
    ds = parse_upload(huge_field, "huge.csv")
    assert ds.problems
    for data in (b"\x00" * 1000, b"\x1f\x8b\x08\x00" + bytes(range(256)) * 4, b"PK\x03\x04" + b"\x00" * 200,
                 ("," * 200_000 + "\n").encode()):
        ds = parse_upload(data, "odd.csv")
        assert not ds.ok and ds.problems
