"""Google's MQM layout (files/mqm.py): the paper's weights, raters averaged, markers removed, documents and
positions kept, bad rows listed with their line and the rest read."""

from __future__ import annotations

import pytest

from bertscore_viz.errors import InputError
from bertscore_viz.files.mqm import MQM_COLUMNS, mqm_weight, parse_mqm, read_mqm

HEADER = "\t".join(MQM_COLUMNS)


def _row(system, doc, pos, seg, rater, target, category, severity, source="src"):
    return "\t".join([system, doc, str(pos), str(seg), rater, source, target, category, severity])


@pytest.mark.parametrize(("category", "severity", "weight"), [
    ("Accuracy/Mistranslation", "Major", 5.0),
    ("Accuracy/Mistranslation", "Minor", 1.0),
    ("Fluency/Punctuation", "Minor", 0.1),
    ("Fluency/Punctuation", "Major", 5.0),  # a Major punctuation error has the standard weight
    ("Non-translation!", "Major", 25.0),
    ("Style/Awkward", "Neutral", 0.0),
    ("No-error", "No-error", 0.0),
    ("no-error", "no-error", 0.0),
])
def test_the_papers_weights(category, severity, weight):
    assert mqm_weight(category, severity) == weight


def test_an_unknown_severity_is_refused():
    with pytest.raises(InputError, match="unknown severity 'Critical'"):
        mqm_weight("Accuracy/Omission", "Critical")


def test_errors_are_summed_per_rater_and_averaged_over_raters():
    text = "\n".join([
        HEADER,
        _row("A", "talk.1", 1, 10, "r1", "The <v>cat</v> sat.", "Accuracy/Mistranslation", "Major"),
        _row("A", "talk.1", 1, 10, "r1", "The cat sat<v>.</v>", "Fluency/Punctuation", "Minor"),
        _row("A", "talk.1", 1, 10, "r2", "The cat <v>sat</v>.", "Fluency/Grammar", "Minor"),
        _row("A", "talk.1", 2, 11, "r1", "It purred.", "No-error", "No-error"),
        _row("B", "talk.1", 1, 10, "r1", "A cat sat.", "no-error", "no-error"),
    ])
    data = parse_mqm(text)
    assert data.problems == [] and data.rows == 5 and data.systems == ["A", "B"]
    a = data.by_system("A")
    # rater 1: 5 + 0.1; rater 2: 1; averaged over the two raters
    assert a[10].mqm == pytest.approx((5.1 + 1.0) / 2) and a[10].raters == 2 and a[10].errors == 3
    assert a[10].target == "The cat sat." and a[10].doc == "talk.1" and a[10].position == 1
    assert a[11].mqm == 0.0 and a[11].errors == 0 and a[11].position == 2
    assert data.by_system("B")[10].mqm == 0.0


def test_outputs_are_in_document_order_whatever_the_row_order():
    text = "\n".join([HEADER,
                      _row("A", "d2", 1, 5, "r", "x", "No-error", "No-error"),
                      _row("A", "d1", 2, 2, "r", "y", "No-error", "No-error"),
                      _row("A", "d1", 1, 1, "r", "z", "No-error", "No-error"),
                      _row("A", "d2", 2, 6, "r", "w", "No-error", "No-error")])
    outs = parse_mqm(text).outputs
    assert [(o.doc, o.position) for o in outs] == [("d2", 1), ("d2", 2), ("d1", 1), ("d1", 2)]


def test_bad_rows_are_listed_with_their_line_and_the_rest_is_read():
    text = "\n".join([
        HEADER,
        _row("A", "d", 1, 1, "r", "ok", "No-error", "No-error"),
        "A\td\t2\t2\tr\tsrc\ttoo few",                                  # line 3
        _row("A", "d", "two", 3, "r", "x", "No-error", "No-error"),      # line 4
        _row("A", "d", 4, 4, "r", "x", "Accuracy/Omission", "Critical"),  # line 5
        _row("A", "d", 1, 1, "r", "not the same output", "Style/Awkward", "Minor"),  # line 6
    ])
    data = parse_mqm(text)
    lines = [line for line, _ in data.problems]
    assert lines == [3, 4, 5, 6]
    assert "7 tab-separated fields, not 9" in data.problems[0][1]
    assert "is not a whole number" in data.problems[1][1] and "unknown severity" in data.problems[2][1]
    assert "differs from line 2's" in data.problems[3][1]
    (only,) = data.outputs
    assert only.target == "ok" and only.mqm == 1.0  # the disagreeing row still counts as rater r's error


def test_a_file_of_another_layout_is_refused_with_the_layout_named(tmp_path):
    with pytest.raises(InputError, match="system doc doc_id seg_id rater source target category severity"):
        parse_mqm("sys\tseg\tscore\nA\t1\t0.5\n")
    with pytest.raises(InputError, match="empty"):
        parse_mqm("")
    path = tmp_path / "big.tsv"
    path.write_text(HEADER + "\n" + _row("A", "d", 1, 1, "r", "x" * 200, "No-error", "No-error") + "\n")
    with pytest.raises(InputError, match="MAX_MQM_BYTES"):
        read_mqm(path, limit=100)
    assert read_mqm(path).outputs[0].target == "x" * 200


def mqm_file() -> bytes:
    """Systems A and B of the Compare context tests as an MQM file: reference refB (the references), a second human
    translation 'ref', documents and positions; A's errors on every other segment, B's on every third."""
    from tests.unit.test_compare_context import DOCS, REFS, SYSTEMS

    lines, position = [HEADER], {}
    for i, ref in enumerate(REFS):
        doc = DOCS[i] or "single"
        position[doc] = position.get(doc, 0) + 1
        rows = [("refB", ref, "No-error", "No-error"), ("ref", ref.upper(), "Style/Awkward", "Minor"),
                ("A", SYSTEMS["A"][i], "Accuracy/Mistranslation", "Major" if i % 2 else "Minor"),
                ("B", SYSTEMS["B"][i], *(("Fluency/Grammar", "Minor") if i % 3 == 0 else ("No-error", "No-error")))]
        for system, target, category, severity in rows:
            lines.append(_row(system, doc, position[doc], i + 1, "r1", target, category, severity))
    return ("\n".join(lines) + "\n").encode()


def test_an_mqm_file_gives_the_agreement_page_its_rated_outputs():
    from bertscore_viz.files.mqm import guess_reference, parse_mqm_bytes
    from tests.unit.test_compare_context import REFS, SYSTEMS

    data = parse_mqm_bytes(mqm_file())
    assert guess_reference(data.systems) == "refB" and guess_reference(["A", "B"]) is None
    rated = data.human_scored("refB", leave_out=["ref"])
    assert rated.systems == ["A"] * 8 + ["B"] * 8 and rated.candidates == SYSTEMS["A"] + SYSTEMS["B"]
    assert rated.references == [[r] for r in REFS] * 2 and rated.human_column == "-MQM"
    assert rated.human[:3] == [-1.0, -5.0, -1.0] and rated.human[8:11] == [-1.0, 0.0, 0.0]
    assert rated.doc_ids[:5] == ["bridge"] * 4 + ["single"] and rated.segment_ids[:2] == ["1", "2"]
    assert rated.rows[0] == 4  # the file line of A's first row (header, refB's and ref's rows before it)
    assert set(data.human_scored("refB").systems) == {"ref", "A", "B"}
    with pytest.raises(InputError, match="No system 'refC'"):
        data.human_scored("refC")
    with pytest.raises(InputError, match="Unknown system"):
        data.human_scored("refB", leave_out=["C"])
    partial = parse_mqm_bytes(mqm_file().replace(b"refB\tflood\t3\t8", b"refB\tflood\t3\t9"))
    scored = partial.human_scored("refB", leave_out=["ref"])
    assert len(scored) == 14 and sum("has no output of the reference" in p.problem for p in scored.problems) == 2


def test_correlate_reads_an_mqm_file_with_its_documents(tmp_path, capsys):
    import json

    import numpy as np

    from bertscore_viz import Scorer
    from bertscore_viz.cli.entry import main
    from tests.unit.test_compare_context import DOCS, REFS, SYSTEMS

    path = tmp_path / "mqm.tsv"
    path.write_bytes(mqm_file())
    assert main(["correlate", "--mqm", str(path), "--leave-out", "ref", "--context", "2", "--json",
                 "--no-sentence-metrics", "--resamples", "0", "--no-meta"]) == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert "refB is the reference" in captured.err and out["signature"].endswith("_ctx:2-ref")
    docs = [d or "single" for d in DOCS]
    f1 = np.concatenate([Scorer(context=2).score(SYSTEMS[s], REFS, doc_ids=docs).raw_f1 for s in ("A", "B")])
    human = [-(5.0 if i % 2 else 1.0) for i in range(8)] + [-(1.0 if i % 3 == 0 else 0.0) for i in range(8)]
    assert out["metrics"]["BERTScore-F1"]["segment"]["pearson"] == pytest.approx(np.corrcoef(f1, human)[0, 1],
                                                                                abs=1e-6)
    assert main(["correlate", "--mqm", str(path), "--metric-column", "x"]) == 2
    assert "an MQM file (--mqm) have no such columns" in capsys.readouterr().err
    assert main(["correlate", "--mqm", str(tmp_path / "missing.tsv")]) == 2  # a message, not a traceback
    assert "The MQM file" in capsys.readouterr().err
    assert main(["correlate", "--mqm", str(tmp_path)]) == 2  # a folder
    assert "cannot be read" in capsys.readouterr().err
