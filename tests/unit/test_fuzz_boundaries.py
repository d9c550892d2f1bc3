"""Issue 19: fuzzing at the engine's boundaries with Hypothesis. Whatever a caller hands in, the only outcomes are
the engine's own errors (:class:`BertScoreVizError`, with a message) or finite numbers; never a TypeError from
deep inside, a NaN, or an infinity.

The upload formats are fuzzed in test_properties.py (any bytes, every row kept or listed) and test_input_limits.py;
the command line through subprocesses in test_cli_fuzz.py (slow layer).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bertscore_viz import BertScoreVizError, Scorer, score
from bertscore_viz.engine.baseline import BaselineTable, parse_baseline, read_baseline

FUZZ = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                        HealthCheck.function_scoped_fixture])

#: Anything a caller might pass where a value is expected.
anything = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 300), st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12), st.sampled_from(["", "en", "all", "cpu", "cuda", "fp16", "fp64", "auto", "../x", "4"]),
    st.binary(max_size=6), st.lists(st.integers(-2, 9), max_size=3), st.just(np.int64(3)), st.just(np.bool_(True)),
)
texts = st.text(st.characters(codec="utf-8"), max_size=40)  # real Unicode: letters, marks, controls, emoji...
weird_texts = st.text(max_size=30)  # also lone surrogates


def _finite_result(res) -> None:
    """Finite numbers; the one exception is bert-score's own, never silent: with idf weights that sum to 0 on a
    side (one reference: every token is in every reference), P or R is undefined (NaN), F1 is 0, and the result
    says so."""
    assert np.all(np.isfinite(res.f1)), res.f1
    for values in (res.precision, res.recall):
        if not np.all(np.isfinite(values)):
            assert any("idf is degenerate" in w for w in res.warnings), res.warnings


@FUZZ
@given(st.fixed_dictionaries({}, optional={
    "layer": anything, "idf": anything, "rescale_with_baseline": anything, "lang": anything,
    "batch_size": anything, "precision": anything, "device": anything, "token_budget": anything,
    "baseline_path": anything,
}))
def test_any_scorer_arguments_give_an_engine_error_or_finite_scores(kwargs):
    kwargs.setdefault("device", "cpu")
    try:
        scorer = Scorer(**kwargs)
        res = scorer.score(["The cat sat on the mat."], ["A cat sat on a mat."])
    except BertScoreVizError as exc:
        assert str(exc)
        return
    _finite_result(res)


@FUZZ
@given(anything, anything)
def test_any_candidates_and_references_objects_give_an_engine_error_or_finite_scores(cands, refs):
    try:
        res = score(cands, refs, device="cpu")
    except BertScoreVizError as exc:
        assert str(exc)
        return
    _finite_result(res)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(weird_texts, st.lists(weird_texts, min_size=1, max_size=3)), min_size=1, max_size=4),
       st.booleans(), st.booleans())
def test_any_texts_give_an_engine_error_or_finite_scores(pairs, idf, rescale):
    cands = [c for c, _ in pairs]
    refs = [r for _, r in pairs]
    try:
        res = score(cands, refs, idf=idf, rescale_with_baseline=rescale, device="cpu")
    except BertScoreVizError as exc:
        assert "surrogate" in str(exc)  # the only text a tokenizer cannot take
        return
    raw = np.stack([res.raw_precision, res.raw_recall, res.raw_f1]) if rescale else np.stack(
        [res.precision, res.recall, res.f1])
    if not np.all(np.isfinite(raw)):
        # bert-score's one NaN, kept for parity and never silent: idf weights summing to 0 on a side (every token in
        # every reference) leave P or R undefined; F1 is then 0 and the result says so
        assert idf and any("idf is degenerate" in w for w in res.warnings), res.warnings
        assert np.all(np.isfinite(res.f1)) and np.all(np.isfinite(raw[:2]) | np.isnan(raw[:2]))
        raw = np.nan_to_num(raw, nan=0.0)
    else:
        _finite_result(res)
    assert np.all(raw <= 1 + 1e-6) and np.all(raw >= -1 - 1e-6)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts, st.one_of(texts, st.lists(texts, min_size=1, max_size=3)))
def test_any_pair_explains_to_finite_numbers(cand, ref):
    exp = Scorer(device="cpu").explain(cand, ref)
    assert all(math.isfinite(float(x)) for x in exp.scores)


number = st.one_of(st.floats(allow_nan=True, allow_infinity=True).map(repr), st.integers(-5, 5).map(str),
                   st.sampled_from(["nan", "inf", "-inf", "1", "1.0", "0.999", "-1", "1e309", "", " ", "x", "0x1"]))
row = st.lists(number, min_size=0, max_size=5).map(",".join)


@settings(max_examples=300, deadline=None)
@given(st.lists(row, max_size=8), st.sampled_from(["LAYER,P,R,F", "layer,p,r,f", "LAYER,P,R", ""]),
       st.sampled_from(["\n", "\r\n", "\r"]))
def test_any_baseline_text_is_a_usable_table_or_a_baseline_error(rows, header, newline):
    text = newline.join([header, *rows]) + newline
    try:
        table = parse_baseline(text, "fuzz.tsv")
    except BertScoreVizError as exc:
        assert "fuzz.tsv" in str(exc)
        return
    _usable(table)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=300))
def test_any_bytes_as_a_baseline_file_are_a_usable_table_or_a_baseline_error(tmp_path, data):
    path = tmp_path / "fuzz.tsv"
    path.write_bytes(b"LAYER,P,R,F\n" + data)
    try:
        table = read_baseline(path)
    except BertScoreVizError as exc:
        assert "fuzz.tsv" in str(exc)
        return
    _usable(table)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(*[st.floats(allow_nan=True, allow_infinity=True)] * 3), min_size=0, max_size=6),
       st.one_of(st.none(), st.lists(st.integers(-2, 40), max_size=7)))
def test_any_values_make_a_usable_table_or_a_baseline_error(values, layers):
    try:
        table = BaselineTable(np.asarray(values, dtype=np.float64).reshape(-1, 3),
                              "fuzz", layers=None if layers is None else tuple(layers))
    except BertScoreVizError:
        return
    _usable(table)


def _usable(table: BaselineTable) -> None:
    assert table.values.ndim == 2 and table.values.shape[1] == 3 and len(table.values) >= 1
    assert np.all(np.isfinite(table.values)) and np.all(table.values < 1) and np.all(table.values >= -1)
    layer = 0 if table.layers is None else table.layers[0]
    rescaled = (0.5 - table.for_layer(layer)) / (1 - table.for_layer(layer))
    assert np.all(np.isfinite(rescaled))


@pytest.fixture(scope="module", autouse=True)
def _model_once():
    """Load the bundled model once for the module (each example then costs a few milliseconds)."""
    Scorer(device="cpu").score(["a"], ["b"])


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=400))
def test_any_bytes_as_a_results_file_are_a_table_or_an_engine_error(data):
    from bertscore_viz.files.results.table import read_results

    try:
        read_results(b"PAR1" + data + b"PAR1", max_bytes=2**20, max_rows=1000)
    except BertScoreVizError as exc:
        assert str(exc)


json_value = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=8)),
                          lambda c: st.one_of(st.lists(c, max_size=3), st.dictionaries(st.text(max_size=6), c,
                                                                                        max_size=3)), max_leaves=12)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.sampled_from(["format", "format_version", "settings", "systems", "n_segments", "baseline",
                                        "signature"]), json_value))
def test_any_results_metadata_is_read_or_refused_with_an_engine_error(fields):
    import io
    import json

    import pyarrow.parquet as pq

    from bertscore_viz.files.results import format as results_format
    from bertscore_viz.files.results import table as results_table

    info = {"format": results_format.FORMAT, "format_version": 2, "settings": {"model": "m", "layer": 4, "idf": False},
            "systems": ["A"], "n_segments": 1, "baseline": None, **fields}
    table = results_format.schema().empty_table().replace_schema_metadata(
        {results_format.META_KEY: json.dumps(info).encode()})
    buf = io.BytesIO()
    pq.write_table(table, buf)
    try:
        results_table.read_results(buf.getvalue(), max_rows=10)
    except BertScoreVizError as exc:
        assert str(exc)


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=500), st.sampled_from(["r.csv", "r.tsv", "r.jsonl", "r.json", None]))
def test_any_bytes_of_rated_outputs_are_rows_or_problems(data, name):
    from bertscore_viz.files.human_scores import parse_human_scores

    rated = parse_human_scores(data, name)
    assert len(rated.candidates) == len(rated.human) == len(rated.references) == len(rated.rows)
    assert all(np.isfinite(rated.human))
    assert rated.ok or rated.problems
