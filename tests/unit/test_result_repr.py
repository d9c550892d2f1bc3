"""The result objects read well: a one-line repr for ``ScoreResult``, ``PairExplanation`` and
``MultiReferenceExplanation`` (not every array), and a table of a ``ScoreResult`` (``to_pandas()``, ``columns()``),
since ``pd.DataFrame(res.as_dict())`` cannot be one. Real bundled model throughout."""

from __future__ import annotations

import dataclasses
import sys

import numpy as np
import pandas as pd
import pytest

from bertscore_viz import Scorer, score
from bertscore_viz.extras import MissingExtraError

CANDS = ["The cat sat on the mat.", "Heavy rain flooded the villages.", "She ran the marathon.", "A dog."]
REFS = [["There is a cat sitting on the mat.", "The cat is on the mat."],
        ["Heavy rain caused flooding in several villages.", "It rained."],
        ["She finished the marathon in under four hours.", "The marathon was run."],
        ["A dog barks.", "Dogs bark at night."]]
LONG = "This candidate sentence goes on for much longer than a repr should ever show of it, and then some more."


@pytest.fixture(scope="module")
def res():
    """200 candidates, two references each."""
    return score(CANDS * 50, REFS * 50)


@pytest.fixture(scope="module")
def rescaled():
    return Scorer(rescale_with_baseline=True).score(CANDS, REFS)


def test_score_result_repr_is_one_short_line_of_means_and_signature(res):
    text = repr(res)
    p, r, f = res.mean()
    assert text == (f"ScoreResult(n=200, P={p:.4f} R={r:.4f} F1={f:.4f} (means, raw), signature={res.signature})")
    assert "\n" not in text and len(text) < 200 and "array" not in text


def test_score_result_repr_says_rescaled_and_counts_warnings(rescaled):
    assert "(means, rescaled)" in repr(rescaled) and str(rescaled.signature).endswith("-rescaled")
    warned = dataclasses.replace(rescaled, warnings=("one", "two"))
    assert ", 2 warning(s), signature=" in repr(warned)


def test_pair_repr_shortens_the_texts_and_gives_scores_and_signature(scorer):
    pair = scorer.explain(LONG, "A short reference.")
    text = repr(pair)
    assert text.startswith("PairExplanation(candidate='This candidate sentence goes on for muc…', "
                           "reference='A short reference.', tokens=")
    assert (f"P={pair.precision:.4f} R={pair.recall:.4f} F1={pair.f1:.4f} (raw), signature={pair.signature})"
            in text)
    assert "\n" not in text and len(text) < 250


def test_rescaled_pair_repr_gives_the_reported_scores():
    pair = Scorer(rescale_with_baseline=True).explain("people like foreign cars", "consumers prefer imported cars")
    p, r, f = pair.rescaled
    assert f"P={p:.4f} R={r:.4f} F1={f:.4f} (rescaled)" in repr(pair)


def test_multi_reference_repr_names_the_best_references(scorer):
    multi = scorer.explain("people like foreign cars", ["consumers prefer imported cars", "people like cars"])
    text = repr(multi)
    best = " ".join(f"{k}:{int(i)}" for k, i in zip(("P", "R", "F1"), multi.best_reference))
    assert text.startswith("MultiReferenceExplanation(candidate='people like foreign cars', references=2, ")
    assert f"F1={multi.f1:.4f} (raw; best reference {best}), signature={multi.signature})" in text
    assert "PairExplanation" not in text and "\n" not in text


def test_columns_are_equal_length_lists_a_dataframe_takes(res):
    cols = res.columns()
    assert list(cols) == ["precision", "recall", "f1", "raw_precision", "raw_recall", "raw_f1", "best_reference_p",
                          "best_reference_r", "best_reference_f"]
    assert {len(v) for v in cols.values()} == {200} and all(isinstance(v, list) for v in cols.values())
    df = pd.DataFrame(cols)
    assert np.array_equal(df["f1"].to_numpy(), res.f1) and np.array_equal(df["raw_recall"].to_numpy(), res.raw_recall)
    assert df["best_reference_r"].tolist() == res.best_reference[:, 1].tolist()


def test_columns_without_best_reference(res):
    assert "best_reference_p" not in dataclasses.replace(res, best_reference=None).columns()


def test_to_pandas_one_row_per_candidate_with_the_signature_in_attrs(rescaled):
    df = rescaled.to_pandas()
    assert len(df) == len(CANDS) and list(df.columns) == list(rescaled.columns())
    assert np.array_equal(df["precision"].to_numpy(), rescaled.precision)
    assert np.array_equal(df["raw_f1"].to_numpy(), rescaled.raw_f1)
    assert df.attrs["signature"] == str(rescaled.signature)
    assert df.attrs["settings"] == rescaled.signature.as_dict()
    assert df.attrs["baseline"] == rescaled.baseline.tolist() and df.attrs["warnings"] == list(rescaled.warnings)


def test_as_dict_keeps_the_json_of_score_json(res):
    assert list(res.as_dict()) == ["precision", "recall", "f1", "raw_precision", "raw_recall", "raw_f1", "baseline",
                                   "best_reference", "warnings", "signature", "settings"]


def test_to_pandas_without_pandas_names_the_extra(res, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # `import pandas` fails as on a core install
    with pytest.raises(MissingExtraError, match=r"pip install 'bertscore-viz\[app\]'"):
        res.to_pandas()
