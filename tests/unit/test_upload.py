"""Parsing and validation of uploaded system outputs: one test per bad-input case, and the good layouts."""

import json

import pytest

from bertscore_viz.files import upload
from bertscore_viz.files.upload import ColumnMapping, parse_upload
from bertscore_viz.locations import EXAMPLES_DIR

EXAMPLE = EXAMPLES_DIR / "systems_example.csv"


def _csv(text: str) -> bytes:
    return text.strip("\n").encode("utf-8") + b"\n"


def _messages(ds, severity=None):
    return [p.problem for p in ds.problems if severity is None or p.severity == severity]


# --- good input -------------------------------------------------------------------------------------------------
def test_shipped_example_is_wide_with_four_systems_and_no_problems():
    ds = parse_upload(EXAMPLE.read_bytes(), EXAMPLE.name)
    assert ds.ok and not ds.problems
    assert ds.system_names == ["paraphrase", "literal", "drops_content", "errors"]
    assert ds.n_segments == 30
    assert ds.mapping.layout == "wide" and ds.mapping.segment_id == "segment_id"
    assert all(len(v) == 30 for v in ds.systems.values())
    assert ds.segment_ids[0] == "s01" and ds.rows[0] == 2


def test_wide_with_source_and_quoted_commas():
    ds = parse_upload(_csv('source,reference,A,B\n"Le chat, noir.","The cat, black.",A cat.,"The cat, dark."'))
    assert ds.ok and not ds.problems
    assert ds.sources == ["Le chat, noir."]
    assert ds.references == [["The cat, black."]]
    assert ds.systems == {"A": ["A cat."], "B": ["The cat, dark."]}
    assert ds.segment_ids == ["2"]


@pytest.mark.parametrize("header", ["reference,reference_2", "ref1,ref2", "Reference 1,Reference 2"])
def test_several_reference_columns_give_several_references(header):
    ds = parse_upload(_csv(f"{header},sys\nr one,r two,out"))
    assert ds.references == [["r one", "r two"]]
    assert ds.system_names == ["sys"]


def test_long_layout_with_segment_ids_pairs_rows_by_id():
    data = _csv("system,segment_id,candidate,reference\n"
                "A,1,a one,ref one\nB,2,b two,ref two\nA,2,a two,ref two\nB,1,b one,ref one")
    ds = parse_upload(data)
    assert ds.mapping.layout == "long" and not ds.problems
    assert ds.segment_ids == ["1", "2"]
    assert ds.systems == {"A": ["a one", "a two"], "B": ["b one", "b two"]}
    assert ds.references == [["ref one"], ["ref two"]]


def test_long_layout_without_ids_pairs_rows_by_position():
    ds = parse_upload(_csv("system,candidate,reference\nA,a1,r1\nA,a2,r2\nB,b1,r1\nB,b2,r2"))
    assert ds.systems == {"A": ["a1", "a2"], "B": ["b1", "b2"]} and not ds.problems


@pytest.mark.parametrize("delim,name", [("\t", "x.tsv"), (";", "x.csv"), ("|", None), ("\t", None)])
def test_delimiter_is_sniffed(delim, name):
    text = delim.join(["reference", "A", "B"]) + "\n" + delim.join(["the ref, with comma", "a", "b"]) + "\n"
    ds = parse_upload(text.encode(), name)
    assert ds.ok and ds.references == [["the ref, with comma"]] and ds.system_names == ["A", "B"]


def test_utf8_with_bom_is_read():
    ds = parse_upload("\ufeffreference,Système\nCafé,Café\n".encode("utf-8"))
    assert ds.ok and not ds.problems
    assert ds.system_names == ["Système"] and ds.references == [["Café"]]


def test_jsonl_with_list_of_references():
    lines = [{"segment_id": 7, "reference": ["r a", "r b"], "A": "x", "B": "y"},
             {"segment_id": 8, "reference": ["r c"], "A": "z", "B": "w"}]
    data = "\n".join(json.dumps(x) for x in lines).encode()
    ds = parse_upload(data, "out.jsonl")
    assert ds.ok and not ds.problems
    assert ds.references == [["r a", "r b"], ["r c"]] and ds.segment_ids == ["7", "8"]


def test_explicit_mapping_overrides_detection():
    data = _csv("gold,hyp_a,hyp_b,notes\nref,a,b,n")
    mapping = ColumnMapping("wide", references=("gold",), systems=("hyp_a",))
    ds = parse_upload(data, mapping=mapping)
    assert ds.systems == {"hyp_a": ["a"]} and ds.references == [["ref"]]


# --- bad input: one test per case -------------------------------------------------------------------------------
def test_not_utf8_says_so_with_line_and_fix():
    ds = parse_upload("reference,A\nr,caf\xe9\n".encode("latin-1"))
    assert not ds.ok
    msg = _messages(ds)[0]
    assert "not UTF-8" in msg and "line 2" in msg and "Save it as UTF-8" in msg


def test_utf16_says_so():
    ds = parse_upload("reference,A\nr,a\n".encode("utf-16"))
    assert not ds.ok and "UTF-16" in _messages(ds)[0]


def test_empty_file():
    ds = parse_upload(b"  \n")
    assert not ds.ok and "empty" in _messages(ds)[0]


def test_header_only():
    ds = parse_upload(b"reference,A\n")
    assert not ds.ok and "no data rows" in _messages(ds)[0]


def test_empty_system_cell_scored_as_empty_with_warning():
    ds = parse_upload(_csv("reference,A,B\nr1,a1,b1\nr2,,b2\nr3,a3,b3"))
    assert ds.n_segments == 3 and ds.systems["A"][1] == ""
    (p,) = ds.problems
    assert p.severity == "warning" and p.row == 3 and p.column == "A" and "scored as empty" in p.problem


def test_empty_system_cell_skipped_when_asked():
    ds = parse_upload(_csv("reference,A,B\nr1,a1,b1\nr2,,b2\nr3,a3,b3"), empty="skip")
    assert ds.n_segments == 2 and ds.systems == {"A": ["a1", "a3"], "B": ["b1", "b3"]}
    (p,) = ds.problems
    assert p.row == 3 and "left out" in p.problem


def test_empty_reference_is_listed_and_kept_or_skipped():
    kept = parse_upload(_csv("reference,A\nr1,a1\n,a2"))
    assert kept.n_segments == 2 and kept.references[1] == [""]
    assert kept.problems[0].row == 3 and "reference is empty" in kept.problems[0].problem
    skipped = parse_upload(_csv("reference,A\nr1,a1\n,a2"), empty="skip")
    assert skipped.n_segments == 1 and skipped.problems[0].row == 3


def test_one_of_several_references_empty_is_a_warning():
    ds = parse_upload(_csv("reference,reference_2,A\nr1,,a1"))
    assert ds.references == [["r1"]]
    assert ds.problems[0].severity == "warning" and "1 of 2 reference cells" in ds.problems[0].problem


def test_long_layout_systems_with_different_numbers_of_segments():
    ds = parse_upload(_csv("system,candidate,reference\nA,a1,r1\nA,a2,r2\nA,a3,r3\nB,b1,r1\nB,b2,r2"))
    assert ds.n_segments == 2 and ds.systems == {"A": ["a1", "a2"], "B": ["b1", "b2"]}
    msg = _messages(ds)[0]
    assert "different numbers of segments" in msg and "'A': 3" in msg and "'B': 2" in msg


def test_long_layout_missing_segment_id_for_one_system():
    ds = parse_upload(_csv("system,segment_id,candidate,reference\nA,1,a1,r1\nA,2,a2,r2\nB,1,b1,r1"))
    assert ds.segment_ids == ["1"]
    assert any("Segment '2' is missing for 'B'" in m for m in _messages(ds))


def test_long_layout_mismatched_references_for_same_segment():
    ds = parse_upload(_csv("system,segment_id,candidate,reference\nA,1,a1,r1\nB,1,b1,OTHER\nA,2,a2,r2\nB,2,b2,r2"))
    assert ds.segment_ids == ["2"]
    (p,) = ds.problems
    assert "different references" in p.problem and p.row == 2 and "left out" in p.problem


def test_long_layout_duplicate_segment_for_a_system():
    ds = parse_upload(_csv("system,segment_id,candidate,reference\nA,1,a1,r1\nA,1,again,r1\nB,1,b1,r1"))
    assert ds.systems["A"] == ["a1"]
    assert any("segment '1' twice" in m and "rows 2 and 3" in m for m in _messages(ds))


def test_duplicate_system_columns():
    ds = parse_upload(_csv("reference,A,B,A\nr1,a,b,a again"))
    assert ds.systems == {"A": ["a"], "B": ["b"]}
    (p,) = ds.problems
    assert "appears twice" in p.problem and "columns 2 and 4" in p.problem


def test_unnamed_column_is_reported():
    ds = parse_upload(_csv("reference,,B\nr1,x,b"))
    assert ds.system_names == ["B"]
    assert "no name" in ds.problems[0].problem


def test_file_larger_than_limit():
    ds = parse_upload(_csv("reference,A\n" + "r,a\n" * 100), max_bytes=100)
    assert not ds.ok and "The file is 412 bytes; the limit is 100 bytes." in _messages(ds)[0]
    big = b"reference,A\n" + b"r,a\n" * (2**20 // 4)
    (p,) = parse_upload(big, max_bytes=2**20).problems
    assert p.problem.startswith("The file is 1.0 MB; the limit is 1 MB.")  # binary MB, as the limits are set


@pytest.mark.parametrize("n, text", [(0, "0 bytes"), (1023, "1,023 bytes"), (1024, "1 kB"), (1536, "1.5 kB"),
                                     (5130, "5.0 kB"), (2**20, "1 MB"), (50 * 2**20, "50 MB"),
                                     (int(1.25 * 2**20), "1.2 MB"), (int(123.4 * 2**20), "123 MB")])
def test_sizes_are_stated_in_binary_units(n, text):
    assert upload.describe_size(n) == text


def test_more_rows_than_limit_keeps_the_first():
    ds = parse_upload(_csv("reference,A\n" + "\n".join(f"r{i},a{i}" for i in range(10))), max_rows=4)
    assert ds.n_segments == 4
    assert "more than 4 data rows" in _messages(ds)[0] and ds.problems[0].row == 6


def test_cell_longer_than_limit_leaves_segment_out():
    ds = parse_upload(_csv(f"reference,A\nr1,a1\nr2,{'x' * 50}\nr3,a3"), max_cell_chars=20)
    assert ds.n_segments == 2 and ds.systems["A"] == ["a1", "a3"]
    (p,) = ds.problems
    assert p.row == 3 and p.column == "A" and "limit is 20" in p.problem


def test_no_system_columns():
    ds = parse_upload(_csv("segment_id,reference\n1,r1"))
    assert not ds.ok and "No system column" in _messages(ds)[0]


def test_no_reference_column():
    ds = parse_upload(_csv("A,B\na,b"))
    assert not ds.ok
    msg = _messages(ds)[0]
    assert "No reference column" in msg and "'A'" in msg


def test_row_with_wrong_number_of_cells_is_left_out_and_others_kept():
    ds = parse_upload(_csv("reference,A,B\nr1,a1,b1\nr2,a2,b2,extra\nr3,a3,b3"))
    assert ds.n_segments == 2 and ds.references == [["r1"], ["r3"]]
    (p,) = ds.problems
    assert p.row == 3 and "3 cells" not in p.problem and "has 4 cells" in p.problem


def test_bad_json_line_is_listed_and_others_kept():
    data = b'{"reference": "r1", "A": "a1"}\n{not json\n{"reference": "r3", "A": "a3"}\n'
    ds = parse_upload(data, "x.jsonl")
    assert ds.n_segments == 2
    assert ds.problems[0].row == 2 and "not valid JSON" in ds.problems[0].problem


def test_mapping_naming_a_missing_column():
    ds = parse_upload(_csv("reference,A\nr,a"), mapping=ColumnMapping("wide", ("reference",), ("Z",)))
    assert not ds.ok and "'Z'" in _messages(ds)[0]


def test_mapping_without_reference():
    ds = parse_upload(_csv("reference,A\nr,a"), mapping=ColumnMapping("wide", (), ("A",)))
    assert not ds.ok and "No reference column is selected" in _messages(ds)[0]


def test_duplicate_segment_id_in_wide_layout():
    ds = parse_upload(_csv("segment_id,reference,A\n1,r1,a1\n1,r2,a2"))
    assert ds.n_segments == 1 and "already used in row 2" in ds.problems[0].problem


def test_every_problem_listed_with_rows_and_good_rows_kept():
    data = _csv("reference,A,B\nr1,a1,b1\n,a2,b2\nr3,,b3\nr4,a4,b4,x\nr5,a5,b5")
    ds = parse_upload(data, empty="skip")
    assert ds.references == [["r1"], ["r5"]]
    assert sorted(p.row for p in ds.problems) == [3, 4, 5]


def test_content_key_depends_on_bytes():
    assert upload.content_key(b"a") != upload.content_key(b"b")
    assert upload.content_key(b"a") == upload.content_key(b"a")


def test_a_header_of_empty_cells_says_it_has_no_names():
    ds = parse_upload(_csv(",,\na,b,c"))
    assert not ds.ok
    assert _messages(ds) == ["The header row (row 1) has 3 cell(s) but no column names. The first row must name "
                             "the columns, e.g. reference,system_a,system_b (wide) or system,candidate,reference "
                             "(long)."]


def test_a_ragged_row_under_a_header_with_empty_trailing_cells_counts_both():
    table, problems = upload.read_table(_csv("reference,A,,\nr1,a1,x,y\nr2,a2"), "x.csv")
    assert table.columns == ("reference", "A") and table.row_numbers == (3,)
    assert "Row 2 has 4 cells but the header has 2 named column(s) (its last 2 cell(s) are empty)" \
        in problems[0].problem
