"""Property-based tests (Hypothesis) of the pure math and of the upload parser.

The math: P/R/F bounds, the batched torch kernels equal to the one-pair reference whatever the batch order and
batch size, rescaling round trips, idf's definition. The parser: any bytes give a result, never an exception, and
every data row of a CSV is either kept or listed as a problem.
"""

from __future__ import annotations

import csv
import io
import math

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from bertscore_viz import similarity as sim_np
from bertscore_viz import tensor_ops as T
from bertscore_viz import upload
from bertscore_viz.idf import compute_idf

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

finite = st.floats(-3.0, 3.0, allow_nan=False, allow_infinity=False, width=32)


@st.composite
def pair(draw, max_tokens: int = 6, dim: int | None = None):
    """One (candidate, reference) pair: token vectors of norm > 0, weights >= 0 with a positive sum."""
    dim = dim or draw(st.integers(2, 6))
    n_c, n_r = draw(st.integers(1, max_tokens)), draw(st.integers(1, max_tokens))
    cand = draw(hnp.arrays(np.float64, (n_c, dim), elements=finite))
    ref = draw(hnp.arrays(np.float64, (n_r, dim), elements=finite))
    cand[np.linalg.norm(cand, axis=1) < 1e-3, 0] = 1.0  # no zero vectors: a cosine needs a direction
    ref[np.linalg.norm(ref, axis=1) < 1e-3, 0] = 1.0
    weights = st.floats(0.0, 5.0, allow_nan=False)
    wc = np.array(draw(st.lists(weights, min_size=n_c, max_size=n_c)))
    wr = np.array(draw(st.lists(weights, min_size=n_r, max_size=n_r)))
    wc[0] += 0.5  # a positive sum on both sides
    wr[0] += 0.5
    return cand, ref, wc, wr


def reference_scores(cand, ref, wc, wr) -> tuple[float, float, float]:
    """The one-pair reference in float64 (similarity.py's functions, on normalised float64 vectors)."""
    c = cand / np.linalg.norm(cand, axis=1, keepdims=True)
    r = ref / np.linalg.norm(ref, axis=1, keepdims=True)
    cb, _, rb, _ = sim_np.greedy_match(c @ r.T)
    p, rr, f = sim_np.precision_recall_f1(cb, rb, wc, wr)
    return float(p), float(rr), float(f)


# --- bounds -------------------------------------------------------------------------------------------------------
@FAST
@given(pair())
def test_cosines_and_precision_recall_are_in_minus_one_one(example):
    cand, ref, wc, wr = example
    before = [a.copy() for a in example]
    sim = sim_np.cosine_matrix(cand, ref)
    assert sim.shape == (len(cand), len(ref))
    assert np.all(sim <= 1 + 1e-5) and np.all(sim >= -1 - 1e-5)
    p, r, f = reference_scores(cand, ref, wc, wr)
    assert -1 - 1e-9 <= p <= 1 + 1e-9 and -1 - 1e-9 <= r <= 1 + 1e-9
    if p > 0 and r > 0:  # the harmonic mean lies between the two
        assert min(p, r) - 1e-12 <= f <= max(p, r) + 1e-12
    for a, b in zip(before, example):
        np.testing.assert_array_equal(a, b)  # inputs unchanged


@FAST
@given(pair())
def test_a_sentence_against_itself_scores_one(example):
    cand, _, wc, _ = example
    p, r, f = reference_scores(cand, cand, wc, wc)
    assert p == pytest.approx(1.0, abs=1e-9) and r == pytest.approx(1.0, abs=1e-9)
    assert f == pytest.approx(1.0, abs=1e-9)


@FAST
@given(pair())
def test_precision_and_recall_swap_with_the_sides(example):
    cand, ref, wc, wr = example
    p, r, f = reference_scores(cand, ref, wc, wr)
    p2, r2, f2 = reference_scores(ref, cand, wr, wc)
    assert p == pytest.approx(r2, abs=1e-12) and r == pytest.approx(p2, abs=1e-12)
    assert f == pytest.approx(f2, abs=1e-12)


# --- batched kernels: batch order and batch size do not matter -------------------------------------------------------
def batched(pairs, chunk: int) -> np.ndarray:
    """tensor_ops.bertscore over padded batches of ``chunk`` pairs, in float64; ``(n, 3)``."""
    out = []
    for start in range(0, len(pairs), chunk):
        part = pairs[start:start + chunk]
        cand, cm = T.pad_sequences([torch.from_numpy(c) for c, _, _, _ in part])
        ref, rm = T.pad_sequences([torch.from_numpy(r) for _, r, _, _ in part])
        wc, _ = T.pad_sequences([torch.from_numpy(w) for _, _, w, _ in part])
        wr, _ = T.pad_sequences([torch.from_numpy(w) for _, _, _, w in part])
        p, r, f = T.bertscore(cand, cm, wc, ref, rm, wr, normalized=False)
        out.append(torch.stack([p, r, f], dim=1).numpy())
    return np.concatenate(out)


@FAST
@given(st.integers(2, 5).flatmap(lambda dim: st.lists(pair(dim=dim), min_size=1, max_size=7)),
       st.integers(1, 7), st.randoms(use_true_random=False))
def test_batched_scores_equal_the_one_pair_reference_in_any_order_and_batch_size(pairs, chunk, rnd):
    expected = np.array([reference_scores(*p) for p in pairs])
    np.testing.assert_allclose(batched(pairs, chunk), expected, atol=1e-9)
    order = list(range(len(pairs)))
    rnd.shuffle(order)
    shuffled = batched([pairs[i] for i in order], chunk)
    np.testing.assert_allclose(shuffled, expected[order], atol=1e-9)


@FAST
@given(hnp.arrays(np.float64, st.tuples(st.integers(1, 12), st.just(3)), elements=st.floats(-1, 1)),
       st.data())
def test_multi_reference_maximum_agrees_in_numpy_and_torch(scores, data):
    n = len(scores)
    cuts = sorted(data.draw(st.sets(st.integers(1, n - 1), max_size=n - 1)) if n > 1 else set())
    bounds = [0] + cuts + [n]
    groups = list(zip(bounds[:-1], bounds[1:]))
    best_np, arg_np = sim_np.multi_reference_max(scores, groups)
    best_t, _ = T.multi_reference_max(torch.from_numpy(scores), groups)
    np.testing.assert_array_equal(best_np, best_t.numpy())
    for g, (s, e) in enumerate(groups):
        assert np.all(best_np[g] >= scores[s:e])
        np.testing.assert_array_equal(scores[s + arg_np[g], [0, 1, 2]], best_np[g])


# --- rescaling ----------------------------------------------------------------------------------------------------
@FAST
@given(st.lists(st.floats(-1, 1), min_size=1, max_size=20), st.floats(-0.99, 0.99))
def test_rescaling_round_trips_keeps_order_and_maps_the_baseline_to_zero(values, b):
    x = np.array(values)
    y = sim_np.rescale(x, b)
    np.testing.assert_allclose(y * (1 - b) + b, x, atol=1e-12)
    np.testing.assert_allclose(T.rescale(torch.from_numpy(x), b).numpy(), y, atol=1e-12)
    assert np.all(np.diff(y[np.argsort(x, kind="stable")]) >= -1e-12)  # monotone: rankings unchanged
    assert float(sim_np.rescale(b, b)) == pytest.approx(0.0, abs=1e-12)
    assert float(sim_np.rescale(1.0, b)) == pytest.approx(1.0, abs=1e-12)


# --- idf ----------------------------------------------------------------------------------------------------------
documents = st.lists(st.lists(st.integers(0, 30), max_size=12), min_size=1, max_size=10)


@FAST
@given(documents, st.randoms(use_true_random=False))
def test_idf_follows_its_definition_and_ignores_order_and_repeats(docs, rnd):
    w = compute_idf(docs)
    m = len(docs)
    assert w.num_documents == m and w.unseen == pytest.approx(math.log(m + 1))
    for token, value in w.weights.items():
        df = sum(token in d for d in docs)
        assert value == pytest.approx(math.log((m + 1) / (df + 1)))
        assert 0.0 <= value <= w.unseen
        if df == m:
            assert value == pytest.approx(0.0, abs=1e-12)  # in every document, like CLS and SEP
    shuffled = [list(d) for d in docs]
    rnd.shuffle(shuffled)
    doubled = [d + d for d in shuffled]  # a token twice in a document still counts once
    assert compute_idf(shuffled).weights == pytest.approx(w.weights)
    assert compute_idf(doubled).weights == pytest.approx(w.weights)
    ids = np.array([t for d in docs for t in d] + [999])
    got = w(ids)
    assert got[-1] == pytest.approx(w.unseen) and got.shape == ids.shape


# --- the upload parser ----------------------------------------------------------------------------------------------
NAMES = st.sampled_from([None, "x.csv", "x.tsv", "x.jsonl", "x.json", "x.txt", "x"])


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=600), NAMES)
def test_any_bytes_give_a_dataset_or_problems_never_an_exception(data, name):
    ds = upload.parse_upload(data, name)
    assert isinstance(ds, upload.Dataset)
    assert all(isinstance(p, upload.Problem) and p.problem for p in ds.problems)
    if not ds.ok:
        assert ds.problems  # nothing to score is always explained
    for texts in ds.systems.values():
        assert len(texts) == ds.n_segments


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=400), NAMES)
def test_any_text_gives_a_dataset_or_problems_never_an_exception(text, name):
    ds = upload.parse_upload(text.encode("utf-8"), name)
    assert isinstance(ds, upload.Dataset) and (ds.ok or ds.problems)


cell = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\x00"), max_size=12)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.lists(cell, min_size=1, max_size=5), max_size=15), st.booleans())
def test_every_csv_row_is_kept_or_listed_as_a_problem(rows, with_id):
    header = (["segment_id"] if with_id else []) + ["reference", "system_a", "system_b"]
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    starts = []
    for row in rows:
        starts.append(buf.getvalue().count("\n") + 1)  # the line on which this record starts
        writer.writerow(row)
    table, read_problems = upload.read_table(buf.getvalue().encode("utf-8"), "x.csv")
    assert table is not None and table.columns == tuple(header)
    problem_rows = {p.row for p in read_problems}
    real = [n for n, row in zip(starts, rows) if any(c.strip() for c in row)]
    for n in real:
        assert (n in table.row_numbers) != (n in problem_rows), n  # kept, or listed: exactly one
    ds = upload.build_dataset(table, None, upload.EMPTY_SCORE, problems=read_problems)
    listed = {p.row for p in ds.problems}
    for n in table.row_numbers:
        assert n in ds.rows or n in listed, n
    assert len(ds.rows) + sum(n not in ds.rows for n in table.row_numbers) == len(table.row_numbers)
