"""Document context on the Agreement page (issue 45), in Streamlit's AppTest with the real model: a rated file
with a ``document`` column offers the context and says how many outputs have no document; with 1 previous segment
the model pass equals scoring each system alone with its documents, the signature names the context, and the
document column can be turned off."""

from __future__ import annotations

import numpy as np
import pytest

from bertscore_viz import Scorer
from bertscore_viz.app.app_pages.agreement import work
from tests.unit.test_agreement_context import _long
from tests.unit.test_compare_context import DOCS, REFS, SYSTEMS

from .navigation import app, texts

pytestmark = pytest.mark.app
BOX = "Document context: previous segments"


def _page():
    return app("agreement.py", agreement_input={"name": "rated.csv", "data": _long(), "origin": "upload"})


def test_document_context_on_agreement_equals_the_engine_per_system():
    at = _page()
    assert not at.exception, at.exception
    assert "The document column names 2 documents; 2 of 16 rated outputs have no document id" in texts(at)
    assert next(s for s in at.selectbox if s.label == "Document column (for context)").value == "(detect)"
    next(n for n in at.number_input if n.label == BOX).set_value(1).run()
    assert not at.exception, at.exception
    state = at.session_state[work.WORK_KEY]
    scores, rated = state["pass"].value, state["rated"]
    layer = Scorer().layer
    f1 = scores.values[layer, 2]
    for s in ("A", "B"):
        mine = [i for i, x in enumerate(rated.data.systems) if x == s]
        want = Scorer(context=1).score(SYSTEMS[s], REFS, doc_ids=DOCS).raw_f1
        np.testing.assert_allclose(f1[mine], want, atol=1e-6)
    assert "_ctx:1-ref" in texts(at)
    assert state["counts"]["model"] == 2  # another model pass for the context


def test_the_document_column_can_be_turned_off():
    at = _page()
    next(s for s in at.selectbox if s.label == "Document column (for context)").set_value("(none)").run()
    assert not at.exception, at.exception
    assert not [n for n in at.number_input if n.label == BOX]
    assert "names 2 documents" not in texts(at)


def test_an_expert_mqm_file_is_read_with_its_reference_documents_and_context():
    from tests.unit.test_mqm_file import mqm_file

    at = app("agreement.py", agreement_input={"name": "mqm.tsv", "data": mqm_file(), "origin": "upload"})
    assert not at.exception, at.exception
    assert "Guessed: 'refB' is the reference" in texts(at)
    assert next(s for s in at.selectbox if s.label == "Reference (a system of the file)").value == "refB"
    next(m for m in at.multiselect if m.label == "Not scored").set_value(["ref"]).run()
    assert not at.exception, at.exception
    rated = at.session_state[work.WORK_KEY]["rated"]
    assert rated.data.systems == ["A"] * 8 + ["B"] * 8 and rated.data.human_column == "-MQM"
    assert "The doc column names 3 documents; all 16 rated outputs have one." in texts(at)
    next(n for n in at.number_input if n.label == BOX).set_value(1).run()
    assert not at.exception, at.exception
    f1 = at.session_state[work.WORK_KEY]["pass"].value.values[Scorer().layer, 2]
    docs = [d or "single" for d in DOCS]
    for k, s in enumerate(("A", "B")):
        want = Scorer(context=1).score(SYSTEMS[s], REFS, doc_ids=docs).raw_f1
        np.testing.assert_allclose(f1[8 * k:8 * (k + 1)], want, atol=1e-6)
    assert "_ctx:1-ref" in texts(at)
