"""``bertscore-viz mbr``: reading plain-text and JSON Lines inputs, the TSV and JSON outputs, atomic files, and input
errors, on the real bundled model. Outputs are checked against the library's ``consensus`` on the same groups.

The command is driven through the package's parser and its module's ``run``, as the entry point runs it."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bertscore_viz import InputError, Scorer
from bertscore_viz.cli import mbr
from bertscore_viz.cli.parser import build_parser
from bertscore_viz.consensus import consensus
from bertscore_viz.files.samples import read_groups

SAMPLES = [
    ["The cat sat on the mat.", "A cat was sitting on the mat.", "The dog sat on the mat.", "Cats like mats."],
    ["He bought milk at the store.", "She went shopping for bread.", "He got some milk from the shop.",
     "He bought milk at the store today."],
    ["Rain is expected tomorrow.", "Tomorrow it will probably rain.", "The sun shines all week.",
     "Rain is likely tomorrow afternoon."],
]
REFS = ["There is a cat on the mat.", "He purchased milk at the shop.", "It will rain tomorrow."]


def cli(*argv: str) -> int:
    """The command's own run, with the package's parser: errors raise (the entry turns them into exit 2)."""
    args = build_parser().parse_args(list(argv))
    assert args.command_module == "bertscore_viz.cli.mbr"
    return mbr.run(args)


def write(path, lines) -> str:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def expected():
    return consensus(SAMPLES, references=[[r] for r in REFS], scorer=Scorer(), token_support=False)


def read_tsv(text: str) -> list[dict]:
    lines = text.rstrip("\n").split("\n")
    head = lines[0].split("\t")
    return [dict(zip(head, line.split("\t"))) for line in lines[1:]]


def test_plain_text_with_group_size_and_references(tmp_path, capsys, expected):
    samples = write(tmp_path / "s.txt", [s for g in SAMPLES for s in g])
    refs = write(tmp_path / "r.txt", REFS)
    assert cli("mbr", "--samples", samples, "--group-size", "4", "--refs", refs) == 0
    out, err = capsys.readouterr()
    rows = read_tsv(out)
    assert len(rows) == 3
    for row, g in zip(rows, expected):
        assert int(row["chosen"]) == g.chosen and row["text"] == g.chosen_text
        assert float(row["expected_utility"]) == pytest.approx(g.chosen_utility, abs=1e-6)
        assert row["ranking"] == ",".join(map(str, g.order))
        assert int(row["oracle"]) == g.oracle and float(row["gap"]) == pytest.approx(g.gap, abs=1e-6)
        assert float(row["chosen_score"]) == pytest.approx(g.chosen_score, abs=1e-6)
        assert int(row["reference_rank"]) == g.reference_rank
    assert "all-MiniLM-L6-v2_L4_no-idf" in err and "3 inputs, 12 samples" in err and "oracle" in err


def test_groups_file_and_json_output_to_a_file(tmp_path, capsys, expected):
    order = [(g, k) for k in range(4) for g in range(3)]  # interleaved: the ids say which input a line belongs to
    samples = write(tmp_path / "s.txt", [SAMPLES[g][k] for g, k in order])
    groups = write(tmp_path / "ids.txt", [f"seg{g}" for g, _ in order])
    out_file = tmp_path / "out" / "chosen.jsonl"
    assert cli("mbr", "--samples", samples, "--groups", groups, "--json", "-o", str(out_file)) == 0
    records = [json.loads(line) for line in out_file.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in records] == ["seg0", "seg1", "seg2"]
    for r, g in zip(records, expected):
        assert r["chosen"] == g.chosen and r["ranking"] == g.order.tolist()
        np.testing.assert_allclose(r["expected_utilities"], g.expected_utility, atol=1e-9)
        assert "oracle" not in r and r["signature"].startswith("all-MiniLM-L6-v2_L4")
    assert capsys.readouterr().out == ""


def test_jsonl_with_references_and_support(tmp_path, capsys, expected):
    records = [{"id": f"q{g}", "samples": SAMPLES[g], "references": REFS[g]} for g in range(3)]
    path = tmp_path / "in.txt"  # no JSON ending: recognised by its first line
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n\n", encoding="utf-8")
    assert cli("mbr", "--samples", str(path), "--json", "--support", "--utility", "f1") == 0
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    for r, g in zip(out, expected):
        assert r["id"].startswith("q") and r["chosen"] == g.chosen and r["oracle"] == g.oracle
        assert r["references"] == [REFS[int(r["id"][1])]]
        assert len(r["sentence_support"]) == 4 and r["sentence_support"][0]["sentences"][0]["text"]


def test_options_reach_the_scorer(tmp_path, capsys):
    samples = write(tmp_path / "s.jsonl", [json.dumps({"samples": g}) for g in SAMPLES])
    assert cli("mbr", "--samples", samples, "-l", "2", "--idf", "--utility", "precision", "--json") == 0
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    want = consensus(SAMPLES, scorer=Scorer(layer=2, idf=True), utility="precision", token_support=False)
    assert [r["chosen"] for r in out] == want.chosen.tolist() and [r["id"] for r in out] == [0, 1, 2]
    assert all(r["utility"] == "precision" and "_L2_idf-samples_" in r["signature"] for r in out)


@pytest.mark.parametrize("files, extra, message", [
    ({"s.txt": ["a", "b", "c"]}, ["--group-size", "2"], "not a multiple of --group-size 2"),
    ({"s.txt": ["a", "b"]}, [], "--group-size N"),
    ({"s.txt": ["a", "b"], "ids.txt": ["x"]}, ["--groups", "ids.txt"], "one group id per sample"),
    ({"s.txt": ["a", "b"], "r.txt": ["r1", "r2"]}, ["--group-size", "2", "--refs", "r.txt"], "2 lines"),
    ({"s.jsonl": ['{"samples": ["a"]}', "{not json"]}, [], "line 2 is not JSON"),
    ({"s.jsonl": ['{"answers": ["a"]}']}, [], 'with "samples"'),
    ({"s.jsonl": ['{"samples": ["a", 1]}']}, [], "list of strings"),
    ({"s.jsonl": ['{"samples": []}']}, [], "is empty"),
    ({"s.jsonl": ['{"samples": ["a"]}']}, ["--group-size", "1"], "do not apply"),
    ({"s.txt": ["a"]}, ["--group-size", "1", "--support"], "add --json"),
    ({"s.txt": ["a"]}, ["--group-size", "0"], "--group-size takes a number of samples: 1 to 1,024, got 0"),
])
def test_input_errors(tmp_path, files, extra, message):
    for name, lines in files.items():
        write(tmp_path / name, lines)
    extra = [str(tmp_path / x) if x in files else x for x in extra]
    first = str(tmp_path / next(iter(files)))
    with pytest.raises(InputError, match=message):
        cli("mbr", "--samples", first, *extra)


def test_unreadable_samples_file(tmp_path):
    (tmp_path / "s.txt").write_bytes("caf\u00e9\n".encode("latin-1"))
    with pytest.raises(InputError, match="not UTF-8"):
        cli("mbr", "--samples", str(tmp_path / "s.txt"), "--group-size", "1")
    with pytest.raises(InputError, match="does not exist"):
        cli("mbr", "--samples", str(tmp_path / "missing.txt"), "--group-size", "1")


def test_output_is_written_atomically(tmp_path, capsys, monkeypatch):
    samples = write(tmp_path / "s.txt", SAMPLES[0])
    out = tmp_path / "chosen.tsv"
    out.write_text("earlier\n")
    monkeypatch.setattr(mbr, "format_tsv", lambda result: (_ for _ in ()).throw(KeyboardInterrupt()))
    with pytest.raises(KeyboardInterrupt):
        cli("mbr", "--samples", samples, "--group-size", "4", "-o", str(out))
    assert out.read_text() == "earlier\n"  # an interrupted run leaves the earlier file
    monkeypatch.undo()
    assert cli("mbr", "--samples", samples, "--group-size", "4", "-o", str(out)) == 0
    assert read_tsv(out.read_text())[0]["n_samples"] == "4"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tmp-")]


def test_read_groups_keeps_text_order_and_tabs_out_of_tsv(tmp_path, capsys):
    ids, groups, refs = read_groups(write(tmp_path / "s.txt", ["x\ty", "b", "c", "d"]), group_size=2)
    assert ids == [0, 1] and groups == [["x\ty", "b"], ["c", "d"]] and refs == [[], []]
    assert cli("mbr", "--samples", str(tmp_path / "s.txt"), "--group-size", "1") == 0
    rows = read_tsv(capsys.readouterr().out)
    assert rows[0]["text"] == "x y" and rows[0]["expected_utility"] == ""  # one sample: NaN, left empty


def test_ids_with_tabs_and_line_breaks_keep_every_row_whole(tmp_path, capsys):
    """Issue 46: an id holding a tab or a newline broke its TSV row (an extra column, a row cut in two). Ids are
    escaped (documented in cli/mbr.py and docs/MBR.md) and read back exactly."""
    ids = ["a\tb", "c\nd", "e\\f\r\u2028g"]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps({"id": i, "samples": g}) + "\n" for i, g in zip(ids, SAMPLES)),
                    encoding="utf-8")
    out_path = tmp_path / "out.tsv"
    assert cli("mbr", "--samples", str(path), "-o", str(out_path)) == 0
    capsys.readouterr()
    text = out_path.read_text(encoding="utf-8")
    lines = text.splitlines()  # every line break Python knows, not only "\n"
    assert len(lines) == 1 + len(ids)
    assert len({len(line.split("\t")) for line in lines}) == 1
    written = [line.split("\t")[0] for line in lines[1:]]
    assert written == ["a\\tb", "c\\nd", "e\\\\f\\r\\u2028g"]
    unescape = {"\\t": "\t", "\\n": "\n", "\\r": "\r", "\\\\": "\\", "\\u2028": "\u2028"}
    import re
    assert [re.sub(r"\\u2028|\\.", lambda m: unescape[m.group()], w) for w in written] == ids
