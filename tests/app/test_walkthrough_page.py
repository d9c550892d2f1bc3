"""The walkthrough page (issue 20) in AppTest with the real model and navigation: every step is there with its
shapes, the scores are the engine's, it follows the sidebar's settings, and the batch can come from the worked
example, the Inspect pair or the Compare dataset."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from bertscore_viz import Scorer
from bertscore_viz.engine import walkthrough as wt
from bertscore_viz.models.spec import BUNDLED_MODEL_NAME

from .navigation import app, go, texts

STEPS = ["1. The batch", "2. Tokens", "3. Embeddings", "4. Similarity", "5. Greedy matching",
         "6. Token weights (idf)", "7. P, R, F1 and rescaling", "8. The formula for one pair", "9. The code",
         "10. As a training signal", "11. Document context: one window"]


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
    kept = at.session_state["_walk_result"].walk
    at.selectbox(key="walk_pair").set_value(2).run()
    assert not at.exception, at.exception
    assert at.session_state["_walk_result"].walk is kept  # the same result: no second pass
    assert 2 in at.session_state["_walk_result"].gradients  # the gradient of the pair shown, kept too


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


def test_paired_tables_are_named_and_padding_is_blank(page):
    """Issue 30, item 4: the paired tables had no "candidate" / "reference" captions and showed "None" in padded
    cells (Streamlit's text for a missing value)."""
    at = page
    captions = [c.value for c in at.caption]
    for what in ("`token (id)` at each position", "each token's best match (cosine)", "each token's weight"):
        k = captions.index(f"**Candidate** · {what}")
        assert captions[k + 1] == f"**Reference** · {what}"
    cands = [c for c, _ in wt.DEFAULT_BATCH]
    lengths = [len(t) for t in Scorer().encoder.tokenizer(cands)["input_ids"]]
    norms = next(d.value for d in at.dataframe if list(d.value.columns[:2]) == ["t0", "t1"]
                 and d.value.iloc[0, 0] not in ("", None) and "(" not in str(d.value.iloc[0, 0]))
    assert norms.shape == (4, max(lengths))
    for b, n in enumerate(lengths):  # padding blank, every real position a number with 2 decimals
        assert list(norms.iloc[b, n:]) == [""] * (norms.shape[1] - n)
        assert all(re.fullmatch(r"\d+\.\d\d", v) for v in norms.iloc[b, :n])
    assert not any(d.value.isna().any().any() for d in at.dataframe if list(d.value.columns[:1]) == ["t0"])


def test_the_similarity_matrix_of_a_long_pair_is_drawn_whole():
    import json

    from tests.conftest import DATA
    from tests.unit.test_plots import exact_tokens

    sc = Scorer()
    words = (DATA / "newstest2017-english" / "newstest2017-deen-ref.en").read_text(encoding="utf-8").split()
    cand, ref = exact_tokens(sc, words[:400], 120), exact_tokens(sc, words[40:440], 128)
    at = app("walkthrough.py", walk_batch=pd.DataFrame([[cand, ref]], columns=["candidate", "reference"]))
    sim = json.loads(next(el for el in at.get("plotly_chart") if el.key == "walk_sim").proto.spec)["layout"]
    assert sim["meta"]["shape"] == [122, 130] and not sim["meta"]["windowed"]  # with CLS and SEP
    assert tuple(sim["xaxis"]["range"]) == (-0.5, 129.5) and tuple(sim["yaxis"]["range"]) == (121.5, -0.5)
    assert len(sim["xaxis"]["ticktext"]) == 130 and sim["xaxis"]["ticktext"][-1] == "129:[SEP]"
    assert sim["width"] >= 130 * 16
