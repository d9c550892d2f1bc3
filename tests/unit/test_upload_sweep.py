"""Issue 31: a sweep of bad inputs across uploads, the API and results files. Every case ends in a clear message or
a correct number, with nothing lost: parsing linear in the input and isolated from the server, every dimension
bounded and named with its setting, every value checked at load, good rows kept and every guess said."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
import textwrap
import time
import zipfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bertscore_viz import Scorer
from bertscore_viz.engine.results import Signature
from bertscore_viz.errors import InputError
from bertscore_viz.evaluation.correlation import agreement
from bertscore_viz.files import formats, limits, tables, upload
from bertscore_viz.files.human_scores import MAX_HUMAN_MAGNITUDE, parse_human_scores, parse_number
from bertscore_viz.files.results import format as results_format
from bertscore_viz.files.results import table as results_table
from bertscore_viz.files.textfile import decode_text
from bertscore_viz.files.upload import ColumnMapping, parse_upload
from bertscore_viz.serving import isolated

ROOT = Path(__file__).resolve().parents[2]
WORST_LINE = ',"x'  # the sniffer attack: one line of it repeated


def _csv(text: str) -> bytes:
    return text.strip("\n").encode("utf-8") + b"\n"


def _guesses(ds) -> dict[str, str]:
    return {p.column: p.problem for p in ds.problems if p.problem.startswith("Guessed:")}


# --- 2. linear parsing ----------------------------------------------------------------------------------------------
LINEARITY_SCRIPT = textwrap.dedent("""
    import sys
    from bertscore_viz.files import limits, tables, upload
    from bertscore_viz.files.human_scores import parse_human_scores
    for n in (40_000, 350_000):  # 120 KB (58 s before) and 1 MB of the worst line
        data = b"reference,sysA\\n" + b',"x' * n + b"\\nThe cat.,A cat.\\n"
        ds = upload.parse_upload(data, "worst.csv")
        print("CSV", len(data), ds.n_segments, [p.row for p in ds.errors])
        print("SNIFF", repr(tables.sniff_delimiter(data.decode())))
    line = '{"reference": "a", "A": "' + '\\\\"' * 500_000 + '\\n'  # escaped quotes, never closed (quadratic before)
    print("JSON", limits.json_depth(line), upload.parse_upload(line.encode(), "x.jsonl").errors[0].row)
    print("NAME", len(upload.detect_mapping(["reference", "1" * 1_000_000 + "x"])[0].systems))
    cell = "1" * 1_000_000 + "x"
    rated = parse_human_scores(("candidate,reference,human\\n" + "a,b," + cell + "\\n").encode(), "h.csv")
    print("NUMBER", rated.errors[0].row)
""")


def test_pathological_inputs_finish_in_linear_time_in_a_subprocess():
    """The issue's 120 KB sniffer case and 1 MB of it, a JSON line of unclosed escaped quotes, a 1 MB column name
    and number: each finished long before the generous timeout (the 120 KB case alone took 58 s before)."""
    proc = subprocess.run([sys.executable, "-c", LINEARITY_SCRIPT], capture_output=True, text=True, timeout=120,
                          cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = proc.stdout.splitlines()
    csv_lines = [line for line in out if line.startswith("CSV")]
    assert csv_lines == [f"CSV {3 * 40_000 + 32} 1 [2]", f"CSV {3 * 350_000 + 32} 1 [2]"]
    assert out.count("SNIFF ','") == 2
    assert "JSON 1 1" in out and "NAME 1" in out and "NUMBER 2" in out


def test_the_sniffer_parses_a_bounded_sample_whatever_the_file(monkeypatch):
    """Operation count, not time: the delimiter is chosen from at most SNIFF_CHARS characters per candidate."""
    seen: list[int] = []
    real = tables.io.StringIO

    class Recording(real):
        def __init__(self, text="", newline=None):
            seen.append(len(text))
            super().__init__(text, newline=newline)

    monkeypatch.setattr(tables.io, "StringIO", Recording)
    text = "reference,sysA\n" + WORST_LINE * 350_000 + "\n"
    assert tables.sniff_delimiter(text) == ","
    assert len(seen) == len(tables.DELIMITERS) and max(seen) <= tables.SNIFF_CHARS


@pytest.mark.parametrize("text, name, expected", [
    ("reference;A;B\nr, with comma;a;b\n", None, ";"), ("reference|A\nx|y\n", "x.csv", "|"),
    ("reference\tA\n", None, "\t"), ("reference\n", "x.tsv", "\t"), ("reference\n", None, ","),
    ('"ref;erence",A\n"r;1",a\n"r;2",b\n', None, ","),  # quoted semicolons are not delimiters
    ("a,b;c\n1,2;3\n4,5\n", None, ","), ("a,b;c\n1,2;3\n4;5\n", None, ";"),  # rows as wide as the header
    ("\n\n  \nreference;A\nr;a\n", None, ";"),  # blank lines before the header
    ("reference," + "x" * 70_000 + ",B\nr,a,b\n", None, ","),  # a header longer than the sample
])
def test_the_delimiter_is_the_one_that_splits_header_and_rows_alike(text, name, expected):
    assert tables.sniff_delimiter(text, name) == expected


def test_json_depth_is_linear_and_exact_on_escapes():
    assert limits.json_depth('["\\\\", ["\\""], {"a": "]"}]') == 2
    assert limits.json_depth('"' + '\\"' * 1000) == 0  # one open string: brackets inside never count
    assert limits.loads("[1.50, 1e5, NaN]", numbers_as_text=True) == ["1.50", "1e5", "NaN"]


# --- 3. every dimension bounded and named ---------------------------------------------------------------------------
def test_ten_thousand_system_columns_are_refused_after_the_header_naming_the_setting():
    header = "reference," + ",".join(f"sys{i}" for i in range(10_000))
    table, problems = upload.read_table(_csv(header + "\n" + ",".join(["x"] * 10_001)), "wide.csv")
    assert table is None
    (p,) = problems
    assert "10,001 columns; at most 500 are read" in p.problem
    assert "BERTSCORE_VIZ_UPLOAD_COLUMNS" in p.problem and "max_columns" in p.problem
    jsonl = "\n".join(json.dumps({f"k{i}": "x" for i in range(j * 300, j * 300 + 300)}) for j in range(3))
    table, problems = upload.read_table(jsonl.encode(), "wide.jsonl")
    assert table is None and "counting the fields of its objects up to line 2" in problems[-1].problem


def test_cells_limit_keeps_the_first_rows_and_lists_the_rest():
    data = _csv("reference,A,B,C\n" + "\n".join(f"r{i},a,b,c" for i in range(10)))
    table, problems = upload.read_table(data, "x.csv", max_cells=17)
    assert len(table.rows) == 4 and table.row_numbers[-1] == 5
    (p,) = problems
    assert p.row == 6 and "more than 4 data rows of 4 columns, over 17 cells" in p.problem
    assert "BERTSCORE_VIZ_UPLOAD_CELLS" in p.problem and "rows from 6 on are left out" in p.problem


@pytest.mark.parametrize("kwargs, fragment", [
    ({"max_pairs": 11}, "The file holds 12 pairs to score (3 systems x 4 segments); at most 11"),
    ({"max_systems": 2}, "The mapping has 3 system columns; at most 2 systems"),
])
def test_pairs_and_systems_are_refused_before_building(kwargs, fragment):
    data = _csv("reference,A,B,C\n" + "\n".join(f"r{i},a,b,c" for i in range(4)))
    ds = parse_upload(data, **kwargs)
    assert not ds.ok and ds.n_segments == 0
    assert fragment in ds.errors[-1].problem
    setting = limits.SETTINGS["max_pairs" if "max_pairs" in kwargs else "max_systems"]
    assert setting in ds.errors[-1].problem
    fixed = parse_upload(data, mapping=ColumnMapping("wide", ("reference",), ("A", "B")), **kwargs)
    assert fixed.ok and fixed.system_names == ["A", "B"]  # correctable by picking fewer systems


def test_long_layout_pairs_and_systems_are_bounded():
    data = _csv("system,candidate,reference\n" + "\n".join(f"S{i % 3},c{i},r{i // 3}" for i in range(9)))
    assert "9 rows, each a pair to score; at most 8" in parse_upload(data, max_pairs=8).errors[-1].problem
    assert "names 3 systems; at most 2" in parse_upload(data, max_systems=2).errors[-1].problem
    assert parse_upload(data).ok


def test_every_limit_has_a_setting_and_a_default():
    assert set(limits.SETTINGS) == {"max_bytes", "max_rows", "max_columns", "max_cells", "max_systems", "max_pairs",
                                    "max_cell_chars", "max_seconds", "max_memory_bytes"}
    assert all(v.startswith("BERTSCORE_VIZ_UPLOAD_") for v in limits.SETTINGS.values())
    assert (limits.MAX_COLUMNS, limits.MAX_CELLS, limits.MAX_SYSTEMS, limits.MAX_PAIRS) == (500, 5_000_000, 100,
                                                                                           1_000_000)
    assert upload.MAX_BYTES == limits.MAX_BYTES and upload.MAX_ROWS == limits.MAX_ROWS
    assert upload.MAX_CELL_CHARS == limits.MAX_CELL_CHARS == 20_000


# --- 5. good rows kept --------------------------------------------------------------------------------------------
def test_a_cell_over_csvs_field_limit_is_a_listed_row_and_the_rows_after_it_are_kept():
    long_cell = "x" * 200_000  # csv's default field limit is 131,072: the read used to stop here
    data = _csv(f'reference,A,notes\nr1,a1,n\nr2,"{long_cell}",n\nr3,a3,n\nr4,a4,"{long_cell}"\nr5,a5,n')
    ds = parse_upload(data, "long.csv")
    assert ds.references == [["r1"], ["r3"], ["r4"], ["r5"]]  # r4's long cell is in a column not scored
    (p,) = ds.errors
    assert p.row == 3 and p.column == "A" and "200,000 characters long; the limit is 20,000" in p.problem
    assert csv.field_size_limit() >= len(data)  # raised for the read, never lowered


def test_a_quote_never_closed_loses_only_its_row_and_the_rows_after_it_are_read():
    """A stray opening quote would make the rest of the file one cell (the lenient reader reads on to the end):
    its row is listed and left out, the lines after it are read as rows, in CSV and in human-score files."""
    ds = parse_upload(_csv('reference,A\nr1,a1\nr2,"a2 oops\nr3,a3\nr4,a4'))
    assert ds.references == [["r1"], ["r3"], ["r4"]] and ds.systems == {"A": ["a1", "a3", "a4"]}
    (p,) = ds.errors
    assert p.row == 3 and "never closed" in p.problem and "lines 3-5" in p.problem
    assert ds.segment_ids == ["2", "4", "5"]  # the rows keep their line numbers
    crlf = parse_upload(b'reference,A\r\nr1,"x\r\nr2,b\r\nr3,c\r\n')  # CRLF lines, split as the reader splits
    assert crlf.systems["A"] == ["b", "c"] and [p.row for p in crlf.errors] == [2]
    rated = parse_human_scores(_csv('candidate,reference,human\na,b,0.5\n"c,d,0.1\ne,f,0.9\ng,h,0.2'), "h.csv")
    assert list(rated.human) == [0.5, 0.9, 0.2] and [p.row for p in rated.errors] == [3]


def test_rows_joined_by_a_quoted_line_break_are_said_or_listed_with_their_lines():
    ds = parse_upload(_csv('reference,A\nr1,"two\nlines"\nr2,a2'))
    assert ds.systems["A"] == ["two\nlines", "a2"]  # a real multi-line cell, kept and said
    (w,) = [p for p in ds.problems if p.severity == "warning" and "line breaks" in p.problem]
    assert w.row == 2 and "1 row(s)" in w.problem
    glued = parse_upload(_csv('reference,A,B\nr1,a1,b1\nr2,"a2,b2\nr3,a3,b3\nr4,"a4\nr5,a5,b5'))
    assert glued.references == [["r1"], ["r5"]]
    (p,) = glued.errors
    assert p.row == 3 and "lines 3-5" in p.problem and "stray quote" in p.problem


def test_json_fields_that_are_one_name_once_stripped_are_listed_first_kept():
    lines = [{"reference": "r1", "A": "x", " A": "y"}, {"reference": "r2", "A": "x2", " A": "y2"}]
    ds = parse_upload("\n".join(json.dumps(x) for x in lines).encode(), "x.jsonl")
    assert ds.systems == {"A": ["x", "x2"]}
    (p,) = ds.errors
    assert p.row == 1 and p.column == "A" and "' A'" in p.problem and "line 1 and 1 more" in p.problem


def test_human_b_is_a_system_with_the_guess_said_unless_system_b_exists():
    ds = parse_upload(_csv("reference,Human-B,ONLINE-A\nr,h,o"))
    assert ds.system_names == ["Human-B", "ONLINE-A"]
    guess = _guesses(ds)["Human-B"]
    assert "read as a system's outputs" in guess and "no system column 'B'" in guess and "--system-columns" in guess
    paired = parse_upload(_csv("reference,B,Human-B\nr,b,0.5"))
    assert paired.system_names == ["B"] and not paired.problems  # human_S with a column S: documented, not a guess
    found = upload.detect_columns(["reference", "B", "Human-B"])
    line = upload.mapping_line(found.mapping, found.guesses, found.unused)
    assert line == "Wide layout: reference 'reference'; 1 system: 'B'; segment id: the row number; not scored: " \
                   "'Human-B' (human scores of 'B')."


def test_id_is_the_segment_id_said_and_correctable():
    data = _csv("id,reference,A\n7,r1,a1\n9,r2,a2")
    ds = parse_upload(data)
    assert ds.segment_ids == ["7", "9"] and ds.mapping.segment_id == "id"
    assert "'id' is a known alias of 'segment_id'" in _guesses(ds)["id"] and "(none)" in _guesses(ds)["id"]
    fixed = parse_upload(data, mapping=ColumnMapping("wide", ("reference",), ("A", "id")))
    assert fixed.segment_ids == ["2", "3"] and fixed.systems["id"] == ["7", "9"] and not fixed.problems
    found = upload.detect_columns(["id", "reference", "A"])
    assert "segment id 'id' (guessed)" in upload.mapping_line(found.mapping, found.guesses, found.unused)


@pytest.mark.parametrize("header, column, fragment", [
    ("ref,A", "ref", "the reference ('ref' is a known alias of 'reference')"),
    ("reference,src,A", "src", "the source ('src' is a known alias of 'source')"),
    ("reference,index,A", "index", "not scored ('index' is a name of row numbers)"),
    ("reference,lp,A", "lp", "not scored ('lp' is a name of metadata)"),
    ("reference,document,A", "document", "the document id ('document' is a known alias of 'doc_id')"),
    ("reference,score,A", "score", "not scored ('score' is a name of human scores)"),
    ("reference,segment_id,id,A", "id", "not scored ('id' is a name of another id or source column)"),
])
def test_every_guess_is_said_on_the_header_row(header, column, fragment):
    ds = parse_upload(_csv(header + "\n" + ",".join(["1"] + ["x"] * header.count(","))))
    guess = _guesses(ds)[column]
    assert fragment in guess
    (p,) = [p for p in ds.problems if p.column == column]
    assert p.row == 1 and p.severity == "warning"


def test_documented_names_decide_without_a_word():
    ds = parse_upload(_csv("segment_id,source,reference,reference_2,human,A\n1,s,r,r2,0.4,a"))
    assert ds.ok and not ds.problems and ds.system_names == ["A"] and ds.references == [["r", "r2"]]
    long = parse_upload(_csv("system,segment_id,candidate,reference,lp\nA,1,a,r,de-en"))
    assert long.ok and not long.problems
    found = upload.detect_columns(["system", "segment_id", "candidate", "reference", "lp"])
    assert found.unused == {"lp": "not used in the long layout"} and not found.guesses


def test_a_column_of_numbers_is_scored_but_said():
    ds = parse_upload(_csv("reference,A,comet\nr1,a,0.81\nr2,b,-0.2"))
    assert ds.system_names == ["A", "comet"]
    assert "holds only numbers" in _guesses(ds)["comet"]


@pytest.mark.parametrize("value, fragment", [
    (["a", "b"], "The output of system 'A' is a list of 2 strings; it must be one string"),
    ({"text": "a"}, 'The output of system \'A\' is an object ({"text": "a"})'),
    (True, "The output of system 'A' is true (true)"),
    ([["nested"]], "a list of 1 value(s), not all strings or numbers"),
])
def test_json_values_that_are_not_text_are_listed_and_other_lines_kept(value, fragment):
    lines = [{"reference": "r1", "A": "a1"}, {"reference": "r2", "A": value}, {"reference": "r3", "A": "a3"}]
    ds = parse_upload("\n".join(json.dumps(x) for x in lines).encode(), "x.jsonl")
    assert ds.references == [["r1"], ["r3"]] and ds.systems == {"A": ["a1", "a3"]}
    (p,) = ds.errors
    assert p.row == 2 and p.column == "A" and fragment in p.problem


def test_json_numbers_are_kept_as_written_and_lists_are_references():
    lines = [{"segment_id": 7, "reference": ["r a", 12], "A": 1.50}, {"segment_id": 8, "reference": [], "A": "x"}]
    ds = parse_upload("\n".join(json.dumps(x) for x in lines).encode(), "x.jsonl")
    assert ds.segment_ids == ["7", "8"] and ds.references[0] == ["r a", "12"] and ds.systems["A"][0] == "1.5"
    assert ds.references[1] == [""] and "reference is empty" in ds.warnings[0].problem
    raw = b'{"reference": "r", "A": 1.50, "segment_id": 1e3}\n'
    kept = parse_upload(raw, "x.jsonl")
    assert kept.systems["A"] == ["1.50"] and kept.segment_ids == ["1e3"]  # the file's text, not a float's repr


def _xlsx() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("[Content_Types].xml", "<Types/>")
        z.writestr("xl/workbook.xml", "<workbook/>")
    return buf.getvalue()


def _zip() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("outputs.csv", "reference,A\nr,a\n")
    return buf.getvalue()


@pytest.mark.parametrize("data, fragments", [
    (__import__("gzip").compress(b"reference,A\nr,a\n", mtime=0), ["a gzip-compressed file", "gunzip"]),
    (_xlsx(), ["an Excel workbook (.xlsx", "CSV UTF-8"]),
    (_zip(), ["a zip archive", "unzip"]),
    (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n", ["a PDF document"]),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 100, ["Excel 97-2003 workbook (.xls)"]),
    (b"PAR1\x15\x04\x15\x10\x15\x14L\x15\x02", ["a Parquet file", "score --ray"]),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", ["a PNG image"]),
    (__import__("bz2").compress(b"reference,A\n" * 10), ["a bzip2-compressed file"]),
    ("reference,A\nr,a\n".encode("utf-16-le"), ["UTF-16 text", "iconv -f UTF-16"]),
    (b"\x00\x01\x02\x03\xff\xfe\x80" * 50, ["binary data, not text"]),
])
def test_compressed_files_spreadsheets_and_binaries_are_named_with_what_to_do(data, fragments):
    ds = parse_upload(data, "renamed.csv")
    assert not ds.ok
    (p,) = ds.problems
    for fragment in fragments:
        assert fragment in p.problem, p.problem
    assert "Latin-1" not in p.problem
    with pytest.raises(InputError) as info:
        decode_text(data, "The candidate file c.txt")
    assert "The candidate file c.txt is" in str(info.value)


def test_only_real_8_bit_text_is_called_latin_1_and_text_starting_like_a_signature_is_text():
    (p,) = parse_upload("reference,A\nr,caf\xe9\n".encode("latin-1")).problems
    assert "probably Latin-1" in p.problem and p.row == 2
    assert formats.identify_binary(b"PAR1 is a system,reference\n") is None
    assert parse_upload(b"%PDF-notes,reference\nx,r\n").ok


# --- 4. values checked at load: human scores --------------------------------------------------------------------------
@pytest.mark.parametrize("raw", ["1_000", "nan", "NaN", "inf", "-infinity", "0x10", "1e5x", "\u0661\u0662", "1,5",
                                 "1.2.3", "--1", "", "e5", "1e99999"])
def test_human_scores_that_are_not_plain_decimals_are_refused(raw):
    value, why = parse_number(raw)
    assert value is None and why
    if raw == "1,5":
        assert "decimal comma" in why and "write 1.5" in why


@pytest.mark.parametrize("raw, value", [("0.5", 0.5), ("-12", -12.0), ("1.5e-3", 0.0015), ("\u22120.3", -0.3),
                                        (" 7 ", 7.0), (".5", 0.5), ("3.", 3.0), ("+2", 2.0), ("1e15", 1e15)])
def test_plain_decimals_are_read_exactly(raw, value):
    assert parse_number(raw) == (value, "")


def test_huge_and_tiny_human_scores_are_refused_and_the_statistics_hold_at_any_scale():
    rows = "".join(f"c{i},r{i},{h}\n" for i, h in enumerate(["1e200", "2e200", "3e200", "0.5"]))
    rated = parse_human_scores(("candidate,reference,human\n" + rows).encode(), "h.csv")
    assert rated.human == [0.5] and [p.row for p in rated.errors][:3] == [2, 3, 4]
    assert f"larger in magnitude than {MAX_HUMAN_MAGNITUDE:g}" in rated.errors[0].problem
    tiny = "".join(f"c{i},r{i},{h}e-120\n" for i, h in enumerate([1, 2, 3, 4]))
    rated = parse_human_scores(("candidate,reference,human\n" + tiny).encode(), "h.csv")
    assert not rated.ok and "less than 1e-100" in rated.errors[-1].problem
    # the statistics themselves no longer depend on the scale (the interval at 1e200 was (0.0, 0.0) before the
    # bootstrap standardised its inputs): the API, which takes any array, gives the scale-free interval
    rng = np.random.default_rng(0)
    metric = rng.random(40)
    human = metric + rng.random(40) * 0.3
    base = agreement({"m": metric}, human, n_samples=200).segment["m"].ci95["pearson"]
    for scale in (1e200, MAX_HUMAN_MAGNITUDE, 1e-120):
        scaled = agreement({"m": metric}, human * scale, n_samples=200).segment["m"].ci95["pearson"]
        np.testing.assert_allclose(scaled, base, rtol=1e-9)


def test_human_file_json_values_and_cells_are_listed():
    lines = [{"candidate": "a", "reference": "r", "human": 0.5}, {"candidate": ["a", "b"], "reference": "r",
                                                                   "human": 0.1},
             {"candidate": "c", "reference": "r", "human": True}, {"candidate": "d", "reference": "r", "human": "1_0"}]
    rated = parse_human_scores("\n".join(json.dumps(x) for x in lines).encode(), "h.jsonl")
    assert rated.candidates == ["a"]
    errors = {p.row: p.problem for p in rated.errors if p.row}
    assert "is a list of 2 strings; it must be one string" in errors[2]
    assert "is true (true), not a finite number" in errors[3] and "'1_0', not a finite number" in errors[4]


# --- 4. values checked at load: results files -----------------------------------------------------------------------
CANDS = {"A": ["The cat sat on the mat.", "It is raining.", "He left."],
         "B": ["A cat is on a mat.", "Rain falls.", "She stayed home."]}
REFS = [["The cat sat on the mat."], ["It rains today.", "It is raining."], ["He went away."]]
BASELINE = (0.31, 0.32, 0.33)


@pytest.fixture(scope="module")
def raw_scores():
    sc = Scorer(layer=4)
    return {name: sc.score(cands, REFS) for name, cands in CANDS.items()}


def _results(raw_scores, edit=None, idf=False, baseline=BASELINE, schema_edit=None) -> bytes:
    """A results file from real scores, written with results_file's schema and metadata; rescaled numbers computed
    here from the raw ones with the baseline (an independent computation); ``edit(cols)`` changes columns."""
    names = list(CANDS)
    n = len(REFS)
    rows = [(i, name) for i in range(n) for name in names]
    raw = np.array([[getattr(raw_scores[s], f"raw_{k}")[i] for k in ("precision", "recall", "f1")] for i, s in rows])
    b = np.asarray(baseline if baseline is not None else (np.nan,) * 3)
    scaled = (raw - b) / (1 - b)
    cols = {"segment_index": [i for i, _ in rows], "segment_id": [str(i + 1) for i, _ in rows],
            "row": [i + 2 for i, _ in rows], "system": [s for _, s in rows],
            "candidate": [CANDS[s][i] for i, s in rows], "references": [REFS[i] for i, _ in rows],
            "source": [None] * len(rows), "precision": raw[:, 0], "recall": raw[:, 1], "f1": raw[:, 2],
            "raw_precision": raw[:, 0], "raw_recall": raw[:, 1], "raw_f1": raw[:, 2],
            "rescaled_precision": scaled[:, 0] if baseline else None,
            "rescaled_recall": scaled[:, 1] if baseline else None, "rescaled_f1": scaled[:, 2] if baseline else None,
            "best_reference": [0] * len(rows), "notes": [""] * len(rows)}
    if edit is not None:
        edit(cols)
    schema = results_format.schema()
    if schema_edit is not None:
        schema = schema_edit(schema)
    meta = results_format.metadata(Signature("all-MiniLM-L6-v2", 4, idf, False, False, "fp32", "5.0"), baseline, names,
                                 n)
    arrays = [pa.nulls(len(rows), f.type) if cols[f.name] is None else pa.array(cols[f.name], type=f.type)
              for f in schema]
    buf = io.BytesIO()
    pq.write_table(pa.Table.from_arrays(arrays, schema=schema.with_metadata(meta)), buf)
    return buf.getvalue()


def test_a_good_results_file_reads_back_its_numbers(raw_scores):
    table = results_table.read_results(_results(raw_scores))
    for name in CANDS:
        np.testing.assert_array_equal(table.columns[name]["raw_f1"], raw_scores[name].raw_f1)
        expected = (raw_scores[name].raw_f1 - BASELINE[2]) / (1 - BASELINE[2])
        np.testing.assert_allclose(table.columns[name]["rescaled_f1"], expected, rtol=0, atol=1e-12)
    assert table.has_rescaled
    assert not results_table.read_results(_results(raw_scores, baseline=None)).has_rescaled


def _set(column, index, value):
    def edit(cols):
        values = list(cols[column])
        values[index] = value
        cols[column] = values
    return edit


@pytest.mark.parametrize("edit, schema_edit, fragment", [
    (_set("raw_f1", 3, float("nan")), None, "raw_f1 = nan in row 4 of the file (segment_index 1, system 'B')"),
    (_set("raw_f1", 0, 7.0), None, "raw_f1 = 7.0 in row 1 of the file (segment_index 0, system 'A')"),
    (_set("raw_recall", 2, float("nan")), None, "raw_recall = nan in row 3"),
    (_set("rescaled_f1", 5, 0.99), None, "rescaled_f1 = 0.99 in row 6 of the file"),
    (_set("f1", 1, 0.123), None, "reports f1 = 0.123 in row 2"),
    (_set("candidate", 2, None), None, "no candidate in row 3"),
    (_set("system", 1, "C"), None, "system 'C' (first in row 2 of the file"),
    (_set("references", 4, []), None, "references in row 5 of the file (segment_index 2, system 'A') are empty"),
    (_set("best_reference", 2, 2), None, "best_reference 2 in row 3 of the file (segment_index 1, system 'A'), which "
                                         "has 2 reference(s)"),
    (_set("row", 0, 0), None, "gives row 0 and segment_index 0 in row 1"),
    (_set("references", 1, ["Another ref."]), None, "gives segment_index 0 the references ('Another ref.',) in row 2 "
                                                    "of the file (segment_index 0, system 'B'), but ('The cat sat on "
                                                    "the mat.',) in row 1"),
    (_set("segment_id", 3, "x"), None, "gives segment_index 1 the segment id 'x' in row 4"),
    (lambda cols: cols.update(candidate=list(range(6))), lambda s: s.set(s.get_field_index("candidate"),
                                                                         pa.field("candidate", pa.int64())),
     "column 'candidate' holds int64 values (the first, in row 1 of the file (segment_index 0, system 'A'): 0); it "
     "must hold string values"),
])
def test_edited_results_values_are_refused_with_the_row_named(raw_scores, edit, schema_edit, fragment):
    data = _results(raw_scores, edit, schema_edit=schema_edit)
    with pytest.raises(InputError) as info:
        results_table.read_results(data)
    assert fragment in str(info.value)


def test_nan_precision_or_recall_is_bert_scores_own_only_with_idf(raw_scores):
    def degenerate(cols):
        recall = list(cols["raw_recall"])
        recall[0] = float("nan")
        f1 = list(cols["raw_f1"])
        f1[0] = 0.0
        cols.update(raw_recall=recall, recall=recall, raw_f1=f1, f1=f1)
        for k, b in zip(("precision", "recall", "f1"), BASELINE):
            cols[f"rescaled_{k}"] = [(x - b) / (1 - b) for x in cols[f"raw_{k}"]]
    table = results_table.read_results(_results(raw_scores, degenerate, idf=True))
    assert np.isnan(table.columns["A"]["raw_recall"][0]) and table.columns["A"]["raw_f1"][0] == 0.0
    with pytest.raises(InputError, match="raw_recall = nan in row 1"):
        results_table.read_results(_results(raw_scores, degenerate, idf=False))


@pytest.mark.parametrize("change, fragment", [({"precision": "fp8"}, "precision = 'fp8'"),
                                              ({"long_texts": 3}, "long_texts = 3"),
                                              ({"custom_baseline": "no"}, "custom_baseline = 'no'")])
def test_edited_signature_fields_are_refused(raw_scores, change, fragment):
    data = _results(raw_scores)
    table = pq.read_table(io.BytesIO(data))
    info = json.loads(table.schema.metadata[results_format.META_KEY])
    info["settings"].update(change)
    table = table.replace_schema_metadata({**table.schema.metadata, results_format.META_KEY: json.dumps(info).encode()})
    buf = io.BytesIO()
    pq.write_table(table, buf)
    with pytest.raises(InputError, match=fragment):
        results_table.read_results(buf.getvalue())


# --- 2. isolation: a worker process with a time and a memory limit --------------------------------------------------
@pytest.mark.slow  # a second of sleep in the worker, plus the worker's start
def test_a_read_over_the_time_limit_is_stopped_with_the_limit_and_setting_named():
    with pytest.raises(limits.LimitExceeded) as info:
        isolated.run_isolated(time.sleep, 600, max_seconds=1, what="The file slow.csv")
    assert "The file slow.csv took longer than 1 s" in str(info.value)
    assert "BERTSCORE_VIZ_UPLOAD_SECONDS" in str(info.value)


def test_a_read_over_the_memory_limit_is_stopped_with_the_limit_and_setting_named():
    with pytest.raises(limits.LimitExceeded) as info:
        isolated.run_isolated(bytearray, 3 * 2**30, max_memory_bytes=256 * 2**20)
    assert "needs more than 256 MB of memory" in str(info.value)
    assert "BERTSCORE_VIZ_UPLOAD_MEMORY_MB" in str(info.value)
    data = b"reference,A\n" + b"".join(b"r%d,a%d\n" % (i, i) for i in range(200_000))
    table, problems = isolated.read_table(data, "big.csv", max_memory_bytes=16 * 2**20)
    assert table is None and "needs more than 16 MB of memory" in problems[0].problem


def test_isolated_readers_give_the_in_process_results_and_engine_errors():
    data = _csv("id,reference,A,Human-B\n1,r1,a1,h1\n2,r2,,h2\n3,r3,a3,h3")
    assert isolated.parse_upload(data, "x.csv") == parse_upload(data, "x.csv")
    table, problems = isolated.read_table(data, "x.csv")
    assert (table, problems) == upload.read_table(data, "x.csv")
    assert isolated.build_dataset(table, None, problems=problems) == upload.build_dataset(table, problems=problems)
    worst = b"reference,sysA\n" + WORST_LINE.encode() * 350_000 + b"\nr,a\n"
    assert isolated.parse_upload(worst, "worst.csv", max_seconds=30).n_segments == 1
    rated = b"candidate,reference,human\na,r,0.1\nb,r,0.2\nc,r,1_0\n"
    assert isolated.parse_human_scores(rated, "h.csv") == parse_human_scores(rated, "h.csv")
    with pytest.raises(InputError, match="cannot be read as Parquet"):
        isolated.read_results(b"PAR1 not really")
    assert isolated.start_method() in ("forkserver", "spawn")
