"""Document context on the Compare page (issue 45), in Streamlit's AppTest with the real model: a file with a
``doc_id`` column offers the context; with 2 previous segments every system's mean F1 equals
``Scorer(context=2).score(outputs, references, doc_ids=...)`` of that system alone, the signature names the
context, and the segments without a document are counted."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest

from bertscore_viz import Scorer
from tests.unit.test_compare_context import DOCS, REFS, SYSTEMS  # the same documents, written once

from .navigation import app, texts

pytestmark = pytest.mark.app

def _file() -> bytes:
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(["reference", "doc_id", "A", "B"])
    for i, r in enumerate(REFS):
        w.writerow([r, DOCS[i], SYSTEMS["A"][i], SYSTEMS["B"][i]])
    return out.getvalue().encode()


def _systems_table(at):
    return next(df.value for df in at.dataframe if "F1" in df.value.columns and "Cluster" in df.value.columns)


def test_document_context_on_compare_equals_the_engine():
    at = app("compare.py", compare_input={"name": "docs.csv", "data": _file(), "origin": "upload"})
    assert not at.exception, at.exception
    page = texts(at)
    assert "The file names 2 documents; 1 of 8 segments have no document id" in page
    plain = _systems_table(at)
    box = next(n for n in at.number_input if n.label == "Document context: previous segments")
    box.set_value(2).run()
    assert not at.exception, at.exception
    table = _systems_table(at)
    sc = Scorer(context=2)
    for name, f1 in zip(table["System"], table["F1"]):
        assert f1 == pytest.approx(float(np.mean(sc.score(SYSTEMS[name], REFS, doc_ids=DOCS).f1)), abs=1e-6)
    assert not np.allclose(table.sort_values("System")["F1"].to_numpy(),
                           plain.sort_values("System")["F1"].to_numpy(), atol=1e-5)
    assert "_ctx:2-ref" in texts(at)


def test_the_drill_down_explains_a_segment_with_its_context():
    at = app("compare.py", compare_input={"name": "docs.csv", "data": _file(), "origin": "upload"})
    next(n for n in at.number_input if n.label == "Document context: previous segments").set_value(2).run()
    at.session_state["cmp_tab"] = "Drill-down"
    at.run()
    assert not at.exception, at.exception
    seg = next(s for s in at.selectbox if s.label == "Segment")
    seg.set_value(3).run()  # the fourth segment: two previous segments of "bridge"
    assert not at.exception, at.exception
    page = texts(at).replace("\\", "")
    assert "Document context" in page and "encoded after the previous 2 segment(s)" in page
    # the reference side's context: the two previous references of the document, greyed
    assert ":gray[it approved the plan for the bridge . [SEP] work will start in may . [SEP]]" in page
    want = Scorer(context=2).score(SYSTEMS["A"], REFS, doc_ids=DOCS).f1[3]
    alone = Scorer().score(SYSTEMS["A"], REFS).f1[3]
    assert f"With the context: F1 {want:.4f} (raw); alone: {alone:.4f}" in page


def test_inspect_explains_a_typed_pair_with_its_context():
    at = app("inspect.py")
    at.text_area(key="inspect_candidate").set_value("He cleaned it all weekend.")
    at.text_area(key="inspect_reference_0").set_value("She cleaned it all weekend.")
    at.text_area(key="inspect_ref_context").set_value("Marta found an old bicycle in the barn.\nIts frame was rusty.")
    at.run()
    assert not at.exception, at.exception
    page = texts(at).replace("\\", "")
    assert ":gray[marta found an old bicycle in the barn . [SEP] its frame was rusty . [SEP]]" in page
    want = Scorer(context=2).score(["x", "y", "He cleaned it all weekend."],
                                   ["Marta found an old bicycle in the barn.", "Its frame was rusty.",
                                    "She cleaned it all weekend."], doc_ids=["d", "d", "d"]).f1[2]
    assert f"With the context: F1 {want:.4f}" in page  # the candidate side gets the reference's context (paper)


def test_the_walkthrough_shows_one_context_window():
    at = app("walkthrough.py")
    assert not at.exception, at.exception
    assert "11. Document context: one window" in [h.value for h in at.header]
    batch = at.session_state["walk_batch"]
    cands, refs = batch["candidate"].tolist(), batch["reference"].tolist()
    window = next(d.value for d in at.dataframe if "Part" in d.value.columns)
    context = window[window["Part"] == "context (not matched)"]["Token"].tolist()
    sc = Scorer()
    prev_tokens = sc.encoder.tokenizer.tokenize(refs[-1])  # pair 0 is encoded after the last pair's reference
    assert context == prev_tokens + [sc.encoder.tokenizer.sep_token]
    own = window[window["Part"] == "own (matched)"]["Token"].tolist()
    assert own == list(sc.explain(cands[0], refs[0]).ref.tokens)
    want = Scorer(context=1).score([cands[-1], cands[0]], [refs[-1], refs[0]], doc_ids=["d", "d"]).f1[1]
    assert f"F1 {want:.4f} with the context" in texts(at).replace("\\", "")
