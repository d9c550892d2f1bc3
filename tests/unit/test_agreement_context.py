"""Document context for agreement with humans (issue 45): a rated file's document column (``document``/``doc``,
never ``doc_id``, which names the shared item), mt-metrics-eval's ``documents/``, and the model pass over several
systems' outputs in one list, which must equal scoring each system alone with its documents. The real bundled
model; texts from the Compare context tests."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest

from bertscore_viz import Scorer
from bertscore_viz.evaluation import human_agreement as ha
from bertscore_viz.evaluation.documents import system_documents
from bertscore_viz.files.human_scores import parse_human_scores
from tests.unit.test_compare_context import DOCS, REFS, SYSTEMS


def _long(doc_header: str = "document", with_item: bool = True) -> bytes:
    """One row per rated output, systems interleaved (A's and B's rows alternate): the order within a system is
    its documents' order."""
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(["system", "candidate", "reference", "human", doc_header] + (["doc_id"] if with_item else []))
    for i, ref in enumerate(REFS):
        for s in ("A", "B"):
            w.writerow([s, SYSTEMS[s][i], ref, (i * 7 % 5) / 4 + (s == "B"), DOCS[i]]
                       + ([f"item{i}"] if with_item else []))
    return out.getvalue().encode()


def test_the_document_column_is_read_and_doc_id_stays_the_item():
    data = parse_human_scores(_long(), "rated.csv")
    assert data.document_column == "document"
    assert data.doc_ids == [d for d in DOCS for _ in "AB"]
    assert data.segment_ids[:2] == ["item0", "item0"]  # doc_id: the item several systems' outputs share


@pytest.mark.parametrize("header", ["doc", "Document", "doc_name", "context_document"])
def test_a_document_column_is_recognised_by_its_names(header):
    assert parse_human_scores(_long(header), "rated.csv").document_column == header


def test_a_document_column_can_be_named_or_turned_off_and_a_wrong_name_is_said():
    assert parse_human_scores(_long(), "rated.csv", document_column="").doc_ids is None
    named = parse_human_scores(_long("talk"), "rated.csv", document_column="talk")
    assert named.document_column == "talk" and named.doc_ids[0] == "bridge"
    assert parse_human_scores(_long("talk"), "rated.csv").doc_ids is None  # "talk" is not guessed
    missing = parse_human_scores(_long(), "rated.csv", document_column="chapter")
    assert missing.doc_ids is None and len(missing) == 16
    (warning,) = [p for p in missing.problems if p.column == "chapter"]
    assert warning.severity == "warning" and "'chapter' is not in the file" in warning.problem
    taken = parse_human_scores(_long(), "rated.csv", document_column="reference")
    assert taken.doc_ids is None and any("already read as another column" in p.problem for p in taken.problems)


def test_the_wide_layout_gives_every_system_the_row_s_document():
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(["reference", "doc", "A", "human_A", "B", "human_B"])
    for i, ref in enumerate(REFS):
        w.writerow([ref, DOCS[i], SYSTEMS["A"][i], i, SYSTEMS["B"][i], -i])
    data = parse_human_scores(out.getvalue().encode(), "wide.csv")
    assert data.layout == "wide" and data.doc_ids == [d for d in DOCS for _ in "AB"]


def test_system_documents_keep_systems_apart_and_no_document_stays_alone():
    assert system_documents(["d", "", "d"], ["A", "A", "B"]) == ["A\x1fd", "", "B\x1fd"]
    assert system_documents(["d", ""], None) == ["d", ""]
    assert system_documents(["", ""], ["A", "B"]) is None and system_documents(None, ["A"]) is None


@pytest.mark.parametrize("source", ["ref", "own"])
def test_one_pass_over_interleaved_systems_equals_each_system_alone(source):
    data = parse_human_scores(_long(), "rated.csv")
    scorer = Scorer(context=2, context_source=source)
    scores = ha.layer_scores(scorer, data.candidates, data.references,
                             doc_ids=system_documents(data.doc_ids, data.systems))
    f1 = scores.values[scorer.layer, 2]
    for s in ("A", "B"):
        mine = np.asarray([i for i, x in enumerate(data.systems) if x == s])
        want = Scorer(context=2, context_source=source).score(SYSTEMS[s], REFS, doc_ids=DOCS).raw_f1
        np.testing.assert_allclose(f1[mine], want, atol=1e-6)
    alone = Scorer().score(data.candidates, data.references).raw_f1
    assert not np.allclose(f1, alone, atol=1e-4)  # the context changed the scores
    assert "_ctx:2-" + source in scores.signature[scorer.layer]


def test_correlate_with_context_correlates_the_engine_s_context_scores(tmp_path, capsys):
    import json

    from bertscore_viz.cli.entry import main

    path = tmp_path / "rated.csv"
    path.write_bytes(_long())
    assert main(["correlate", "--input", str(path), "--context", "1", "--json", "--no-sentence-metrics",
                 "--resamples", "0", "--no-meta"]) == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert "2 of 16 rated outputs have no document" in captured.err
    assert out["signature"].endswith("_ctx:1-ref") and out["input"]["document_column"] == "document"
    data = parse_human_scores(_long(), "rated.csv")
    f1 = np.empty(len(data))
    for s in ("A", "B"):
        mine = [i for i, x in enumerate(data.systems) if x == s]
        f1[mine] = Scorer(context=1).score(SYSTEMS[s], REFS, doc_ids=DOCS).raw_f1
    want = np.corrcoef(f1, data.human)[0, 1]
    assert out["metrics"]["BERTScore-F1"]["segment"]["pearson"] == pytest.approx(want, abs=1e-6)
    assert main(["correlate", "--input", str(path), "--context", "1", "--document-column", "", "--json"]) == 2
    assert "--context needs documents" in capsys.readouterr().err
