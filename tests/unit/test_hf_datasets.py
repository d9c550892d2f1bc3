"""score_dataset on 🤗 datasets built here (no hub): the columns it adds equal ``bertscore_viz.score`` on the same
rows (1e-6), idf over the whole dataset however it is batched, streaming scored lazily, splits each on their own,
the signature in the info, and bad input refused with a message."""

from __future__ import annotations

import json
import os
from pathlib import Path

import datasets
import numpy as np
import pytest

from bertscore_viz import BertScoreWarning, ScoringOptions, score
from bertscore_viz.errors import InputError
from bertscore_viz.integrations.hf_datasets import score_dataset

os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
pytestmark = pytest.mark.slow  # datasets, a model pass per test
DATA = Path(__file__).resolve().parents[2] / "data" / "wmt16-da-to-english"


def real(kind: str, n: int = 8) -> list[str]:
    return (DATA / f"DAseg-newstest2016.{kind}.de-en").read_text(encoding="utf-8").splitlines()[:n]


CANDS, REFS, OTHER = real("mt-system"), real("reference"), real("source")


@pytest.fixture(scope="module")
def ds():
    return datasets.Dataset.from_dict({"hyp": CANDS, "ref": REFS, "more": [[o, r[:20]] for o, r in zip(OTHER, REFS)]})


def assert_columns(scored, expected, prefix: str = "bertscore_") -> None:
    for name in ("precision", "recall", "f1"):
        got = np.asarray(scored[prefix + name] if not isinstance(scored, list) else [r[prefix + name] for r in scored])
        np.testing.assert_allclose(got, getattr(expected, name), rtol=0, atol=1e-6)


def test_one_reference_column_equals_score_and_the_info_names_the_signature(ds):
    scored = score_dataset(ds, "hyp", "ref")
    expected = score(CANDS, REFS)
    assert_columns(scored, expected)
    assert scored.column_names == ["hyp", "ref", "more", "bertscore_precision", "bertscore_recall", "bertscore_f1"]
    assert scored.features["bertscore_f1"] == datasets.Value("float64")
    assert scored.info.description.endswith(str(expected.signature))
    assert "'hyp' against 'ref'" in scored.info.description
    assert ds.column_names == ["hyp", "ref", "more"] and ds.info.description == ""  # the input is untouched


def test_several_reference_columns_and_idf_over_the_whole_dataset_in_small_batches(ds):
    groups = [[r, *m] for r, m in zip(REFS, ds["more"])]
    scored = score_dataset(ds, "hyp", ["ref", "more"], idf=True, layer=6, map_batch_size=3)
    expected = score(CANDS, groups, idf=True, layer=6)
    assert_columns(scored, expected)
    assert str(expected.signature) in scored.info.description
    # idf counted per batch (3, 3 and 2 rows) would differ: the test above can fail
    per_batch = np.concatenate([score(CANDS[i:i + 3], groups[i:i + 3], idf=True, layer=6).f1 for i in (0, 3, 6)])
    assert np.max(np.abs(per_batch - expected.f1)) > 1e-4


def test_options_object_rescaling_and_a_prefix(ds):
    options = ScoringOptions(rescale_with_baseline=True)
    scored = score_dataset(ds, "hyp", "ref", options=options, prefix="bs_")
    expected = score(CANDS, REFS, rescale_with_baseline=True)
    assert_columns(scored, expected, prefix="bs_")
    assert "-rescaled" in scored.info.description
    twice = score_dataset(scored, "hyp", "more", prefix="bs2_")
    assert_columns(twice, score(CANDS, list(ds["more"])), prefix="bs2_")
    assert twice.info.description.count("BERTScore of") == 2  # the second line is added, the first kept


def test_a_streaming_dataset_is_scored_lazily_as_it_is_read(tmp_path):
    def stream(rows, name):
        path = tmp_path / name
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        return datasets.load_dataset("json", data_files=str(path), split="train", streaming=True)

    good = [{"hyp": c, "ref": r} for c, r in zip(CANDS, REFS)]
    scored = score_dataset(stream(good, "good.jsonl"), "hyp", "ref", map_batch_size=3)
    assert isinstance(scored, datasets.IterableDataset)
    assert str(score(["a"], ["a"]).signature) in scored.info.description
    assert_columns(list(scored), score(CANDS, REFS))
    # a bad row in the last batch: nothing is read when the columns are added, the first batch scores, the bad
    # row fails only when its batch is read
    late = score_dataset(stream(good + [{"hyp": None, "ref": "late"}], "late.jsonl"), "hyp", "ref", map_batch_size=3)
    first = next(iter(late))
    assert abs(first["bertscore_f1"] - float(score(CANDS[:1], REFS[:1]).f1[0])) < 1e-6
    with pytest.raises(InputError, match=r"Row 8, column 'hyp': expected a candidate string"):
        list(late)


def test_streaming_idf_needs_idf_sentences(ds):
    stream = ds.to_iterable_dataset()
    with pytest.raises(InputError, match="idf_sentences"):
        score_dataset(stream, "hyp", "ref", idf=True)
    scored = list(score_dataset(stream, "hyp", "ref", idf_sentences=REFS, map_batch_size=2))
    expected = ScoringOptions().scorer(idf_sentences=REFS).score(CANDS, REFS)
    assert_columns(scored, expected)
    assert "idf-corpus-8-" in str(expected.signature)


def test_a_dataset_dict_scores_each_split_on_its_own(ds):
    splits = datasets.DatasetDict({"a": ds.select(range(4)), "b": ds.select(range(4, 8))})
    scored = score_dataset(splits, "hyp", "ref", idf=True)
    assert isinstance(scored, datasets.DatasetDict) and list(scored) == ["a", "b"]
    assert_columns(scored["a"], score(CANDS[:4], REFS[:4], idf=True))
    assert_columns(scored["b"], score(CANDS[4:], REFS[4:], idf=True))


@pytest.mark.parametrize("call, message", [
    (lambda d: score_dataset(d, "hypothesis", "ref"), r"No column 'hypothesis'.*its columns are: hyp, ref, more"),
    (lambda d: score_dataset(score_dataset(d, "hyp", "ref"), "hyp", "ref"), "already has column.*prefix="),
    (lambda d: score_dataset(d, "hyp", "ref", layers=3), "Unknown scoring option.*layers"),
    (lambda d: score_dataset(d, "hyp", "ref", options=ScoringOptions(), idf=True), "either options="),
    (lambda d: score_dataset(d, "hyp", [], layer=3), "references must be a column name"),
    (lambda d: score_dataset(d, "hyp", "ref", map_batch_size=0), "map_batch_size"),
    (lambda d: score_dataset(d.to_dict(), "hyp", "ref"), "Expected a datasets.Dataset"),
])
def test_bad_input_is_refused_with_a_message(ds, call, message):
    with pytest.raises(InputError, match=message):
        call(ds)


def test_a_bad_reference_row_is_named():
    bad = datasets.Dataset.from_dict({"hyp": ["a", "b", "c"], "ref": [["x"], ["y"], []]})
    with pytest.raises(InputError, match=r"Row 2 has no reference in 'ref'"):
        score_dataset(bad, "hyp", "ref")


def test_a_warning_names_the_rows_of_its_batch():
    rows = datasets.Dataset.from_dict({"hyp": CANDS[:5] + [""], "ref": REFS[:6]})
    with pytest.warns(BertScoreWarning, match=r"Rows 4 to 5 \(indices below count from row 4\): .*empty candidate.*"
                                              r"index 1"):
        score_dataset(rows, "hyp", "ref", map_batch_size=4)
