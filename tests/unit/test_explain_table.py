"""Token tables of a pair explanation: contributions add up to P and R, merged words, special tokens, exports."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest

from bertscore_viz import Scorer
from bertscore_viz.engine import explain_table as et
from bertscore_viz.files import export

from .pair_example import CAND, REF, TABLE


@pytest.mark.parametrize("options", [dict(), dict(layer=6), dict(idf=True), dict(layer=2, idf=True)])
def test_contributions_add_up_to_precision_and_recall(options):
    sc = Scorer(**options)
    refs = [REF, "The team played very well today.", "Nobody played."]
    multi = sc.explain(CAND, refs)
    for pair in multi.pairs:
        cand = et.token_table(pair, "candidate")
        ref = et.token_table(pair, "reference")
        assert cand["contribution"].sum() == pytest.approx(pair.precision, abs=1e-12)
        assert ref["contribution"].sum() == pytest.approx(pair.recall, abs=1e-12)
        words_c, words_r = et.word_table(pair, "candidate"), et.word_table(pair, "reference")
        assert words_c["contribution"].sum() == pytest.approx(pair.precision, abs=1e-12)
        assert words_r["contribution"].sum() == pytest.approx(pair.recall, abs=1e-12)
        # and P/R are the corpus path's for the same pair
        res = sc.score([CAND], [pair.reference]) if not sc.idf else None
        if res is not None:
            assert pair.precision == pytest.approx(float(res.raw_precision[0]), abs=1e-9)


def test_token_table_columns_and_values(pair):
    table = et.token_table(pair, "candidate", show_special=True)
    assert list(table.columns) == et.TOKEN_COLUMNS
    assert len(table) == len(pair.cand)
    assert table["token"].tolist() == list(pair.cand.tokens)
    assert table["display"].iloc[0] == "[CLS]" and table["display"].iloc[-1] == "[SEP]"
    special = table[table["special"]]
    assert (special["idf weight"] == 0).all() and (special["contribution"] == 0).all()
    np.testing.assert_allclose(table["similarity"], pair.cand_best)
    np.testing.assert_array_equal(table["best match position"], pair.cand_best_index)
    # the best match of each token is the argmax of its row of the similarity matrix
    for _, row in table.iterrows():
        j = int(row["best match position"])
        assert row["similarity"] == pytest.approx(pair.similarity[int(row["position"])].max())
        expected = pair.ref.tokens[j] if pair.ref.special[j] else pair.ref.display[j]
        assert row["best match"] == expected
    np.testing.assert_allclose(table["normalized weight"].sum(), 1.0)


def test_special_tokens_hidden_on_request(pair):
    hidden = et.token_table(pair, "reference", show_special=False)
    assert not hidden["special"].any()
    assert len(hidden) == int((~pair.ref.special).sum())
    assert hidden["contribution"].sum() == pytest.approx(pair.recall, abs=1e-12)


def test_both_sides_in_one_table(pair):
    both = et.token_table(pair, "both")
    assert set(both["side"]) == {"candidate", "reference"}
    assert len(both) == len(pair.cand) + len(pair.ref)
    with pytest.raises(ValueError):
        et.token_table(pair, "neither")


def test_word_table_merges_pieces(pair):
    words = et.word_table(pair, "candidate")
    assert list(words.columns) == et.WORD_COLUMNS
    row = words[words["word"] == "unbelievably"]
    assert len(row) == 1
    pieces = row["pieces"].iloc[0].split()
    assert len(pieces) > 1 and pieces[0] == "un" and all(p.startswith("##") for p in pieces[1:])
    positions = [int(p) for p in row["positions"].iloc[0].split(",")]
    assert row["contribution"].iloc[0] == pytest.approx(pair.cand_contribution[positions].sum())
    # equal weights: the word's similarity is the mean of its pieces' best similarities
    assert row["similarity"].iloc[0] == pytest.approx(pair.cand_best[positions].mean())
    assert words["word"].tolist()[:4] == ["The", "players", "were", "playing"]


def test_token_whose_best_match_is_special(scorer):
    pair = scorer.explain("The cat sat on the mat.", "There is a cat sitting on the mat.")
    table = et.token_table(pair, "reference", show_special=False)
    there = table[table["display"] == "There"].iloc[0]
    assert bool(there["best match is special"]) and there["best match"] == "[SEP]"


def test_empty_candidate_has_undefined_contributions(scorer):
    pair = scorer.explain("", REF)
    assert pair.precision == 0 and pair.recall == 0
    table = et.token_table(pair, "candidate")
    assert table["contribution"].isna().all()
    assert any("empty" in w for w in pair.warnings)


def test_scores_table_raw_and_rescaled(scorer):
    sc = Scorer(rescale_with_baseline=True, baseline_table=TABLE)
    pair = sc.explain(CAND, REF)
    table = et.scores_table(pair)
    assert table["metric"].tolist() == ["Precision", "Recall", "F1"]
    np.testing.assert_allclose(table["raw"], [pair.precision, pair.recall, pair.f1])
    np.testing.assert_allclose(table["baseline"], TABLE.values[sc.layer])
    b = TABLE.values[sc.layer]
    np.testing.assert_allclose(table["rescaled"], (table["raw"] - b) / (1 - b))
    raw_only = et.scores_table(scorer.explain(CAND, REF))
    assert "rescaled" not in raw_only.columns


def test_multi_reference_dict_and_json(scorer):
    multi = scorer.explain("people like foreign cars",
                           ["consumers prefer imported cars", "people like visiting places abroad"])
    d = et.explanation_dict(multi)
    assert d["references"] == ["consumers prefer imported cars", "people like visiting places abroad"]
    assert d["f1"] == pytest.approx(multi.f1)
    assert d["best_reference"]["f1"] == int(multi.best_reference[2])
    assert d["signature"] == str(multi.signature)
    assert len(d["pairs"]) == 2 and d["pairs"][0]["signature"] == str(multi.signature)
    back = json.loads(export.to_json(d))
    assert back["pairs"][1]["reference"] == "people like visiting places abroad"
    table = et.scores_table(multi)
    assert table["best reference"].tolist() == [int(b) + 1 for b in multi.best_reference]
    single = et.explanation_dict(multi.pairs[0])
    assert single["candidate"] == "people like foreign cars" and "similarity" in single


def test_token_csv_is_safe_and_signed(scorer):
    pair = scorer.explain("=cmd|' /C calc'!A0 -1 @x", "+1 plus one")
    data = export.safe_csv(et.token_table(pair, "both"), str(pair.signature))
    frame = pd.read_csv(io.BytesIO(data), encoding="utf-8-sig", keep_default_na=False)
    for col in ("display", "token", "best match"):
        for cell in frame[col].astype(str):
            assert not cell.startswith(("=", "+", "-", "@")), cell
    assert (frame["signature"] == str(pair.signature)).all()
    assert "'=" in frame["display"].tolist()


def test_inputs_not_modified(pair):
    before = (pair.similarity.copy(), pair.cand.weights.copy(), pair.cand_best.copy())
    et.token_table(pair, "both")
    et.word_table(pair, "both")
    np.testing.assert_array_equal(pair.similarity, before[0])
    np.testing.assert_array_equal(pair.cand.weights, before[1])
    np.testing.assert_array_equal(pair.cand_best, before[2])
