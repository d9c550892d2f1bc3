"""The walkthrough page (issue 20) in AppTest with the real model and navigation: every step is there with its
shapes, the scores are the engine's, it follows the sidebar's settings, and the batch can come from the worked
example, the Inspect pair or the Compare dataset."""

from __future__ import annotations

import pandas as pd
import pytest

from bertscore_viz import Scorer
from bertscore_viz.engine import walkthrough as wt
from bertscore_viz.models.spec import BUNDLED_MODEL_NAME

from .navigation import app, go, texts

STEPS = ["1. The batch", "2. Tokens", "3. Embeddings", "4. Similarity", "5. Greedy matching",
         "6. Token weights (idf)", "7. P, R, F1 and rescaling", "8. The formula for one pair", "9. The code",
         "10. As a training signal"]


def _scores(at) -> pd.DataFrame:
    return next(d.value for d in at.dataframe if "F1" in d.value.columns and "candidate" in d.value.columns)


@pytest.fixture(scope="module")
def page():
    return app("walkthrough.py")


def test_every_step_with_its_shapes_and_the_engines_numbers(page):
    at = page
    assert [h.value for h in at.main.header] == STEPS
    text = texts(at)
    assert "`sim` [B, Tc, Tr] = [4, 9, 10]" in text and "`cand_best` [B, Tc] = [4, 9]" in text
    assert "`cand` [B, Tc, H] = [4, 9, 384]" in text
    cands, refs = [c for c, _ in wt.DEFAULT_BATCH], [r for _, r in wt.DEFAULT_BATCH]
    res = Scorer().score(cands, refs)
    shown = _scores(at)
    assert shown["F1"].tolist() == pytest.approx(res.raw_f1.tolist(), abs=1e-6)
    assert shown["F1"].iloc[3] == pytest.approx(1.0, abs=1e-6)  # the identical pair
    assert any("def similarity(" in c.value for c in at.code)  # the kernel's own source beside the step
    assert any("def greedy_maxima(" in c.value for c in at.code)


def test_it_follows_the_sidebar_idf_layer_and_rescaling(page):
    at = page
    at.sidebar.slider(key=f"layer::{BUNDLED_MODEL_NAME}").set_value(2).run()
    at.sidebar.toggle(key="idf").set_value(True).run()
    at.sidebar.toggle(key="rescale").set_value(True).run()
    assert not at.exception, at.exception
    cands, refs = [c for c, _ in wt.DEFAULT_BATCH], [r for _, r in wt.DEFAULT_BATCH]
    res = Scorer(layer=2, idf=True, rescale_with_baseline=True).score(cands, refs)
    shown = _scores(at)
    assert shown["F1"].tolist() == pytest.approx(res.raw_f1.tolist(), abs=1e-6)
    assert shown["F1 rescaled"].tolist() == pytest.approx(res.f1.tolist(), abs=1e-6)
    assert "idf from the batch's references (M = 4 documents)" in texts(at)
    assert "Rescaled: x' = (x − b) / (1 − b) with the baseline row of layer 2" in texts(at)


def test_the_worked_example_and_the_inspect_pair_fill_the_batch():
    at = app("walkthrough.py")
    at.button(key="walk_worked").click().run()
    assert not at.exception, at.exception
    assert at.session_state["walk_batch"].values.tolist() == [list(wt.WORKED_EXAMPLE)]
    assert "R = (" in texts(at) or any(c.value.startswith("R = (") for c in at.code)
    at.session_state["inspect_candidate"] = "The cat sat on the mat."
    at.session_state["inspect_reference_0"] = "A cat was on the mat."
    at.run()
    at.button(key="walk_inspect").click().run()
    assert at.session_state["walk_batch"].values.tolist() == [["The cat sat on the mat.", "A cat was on the mat."]]


def test_segments_come_from_the_compare_dataset():
    at = app("compare.py")
    at.button(key="cmp_load_example").click().run()
    go(at, "walkthrough.py")
    at.button(key="walk_compare").click().run()
    assert not at.exception, at.exception
    batch = at.session_state["walk_batch"]
    assert len(batch) == 4 and batch["reference"].iloc[0].startswith("The ")


def test_another_pair_redraws_without_a_model_pass(page, monkeypatch):
    at = page
    kept = at.session_state["_walk_result"][1]
    at.selectbox(key="walk_pair").set_value(2).run()
    assert not at.exception, at.exception
    assert at.session_state["_walk_result"][1] is kept  # the same result: no second pass
    assert 2 in at.session_state["_walk_result"][2]  # the gradient of the pair shown, kept too


def test_idf_from_an_uploaded_corpus():
    corpus = ["The cat sat on the mat.", "It rained all day.", "The meeting ended late.", "He left early."]
    at = app("walkthrough.py", idf=True, walk_idf_corpus_input={"name": "corpus.txt",
                                                                  "data": "\n".join(corpus).encode()})
    assert not at.exception, at.exception
    cands, refs = [c for c, _ in wt.DEFAULT_BATCH], [r for _, r in wt.DEFAULT_BATCH]
    res = Scorer(idf_sentences=corpus).score(cands, refs)
    assert _scores(at)["F1"].tolist() == pytest.approx(res.raw_f1.tolist(), abs=1e-6)
    assert "idf from a corpus of 4 sentences (M = 4 documents)" in texts(at)
    assert "_idf-corpus-4-" in texts(at)
