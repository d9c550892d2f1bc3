"""Property-based tests (Hypothesis) of the pure math and of the upload parser.

The math: P/R/F bounds, the batched torch kernels equal to the one-pair reference whatever the batch order and
batch size, rescaling round trips, idf's definition; and the engine's own scoring (``Scorer.result``) from given
greedy maxima and real token ids: equal to the definition computed by hand (weights, idf, empty sides, the best of
several references), rescaling, candidate order, special tokens. The parser: any bytes give a result, never an
exception; every data row of a CSV or TSV (any cell text, CR, LF, NUL, quotes) and every line of a JSON Lines file
is either kept or listed as a problem, a blank row is neither; every row read is a segment or an error.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from bertscore_viz.engine import tensor_ops as T
from bertscore_viz.engine.idf import compute_idf
from bertscore_viz.files import upload
from tests import numpy_reference as sim_np

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
        p, r, f = T.bertscore(cand, cm, wc, ref, rm, wr, normalized=False, safe=False)  # exact, as scoring
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


# --- the engine's scoring from given maxima (Scorer.result, no model pass) ---------------------------------------
SENTENCES = ["The cat sat on the mat.", "A cat was sitting on a mat.", "Prices rose sharply.", "the the the",
             "Snow held up the train.", "", "Every night he practises his violin.", "ok"]
_ENGINE: dict = {}


def engine():
    """The bundled model's scorer and the token ids of :data:`SENTENCES` (loaded once: the tokenizer is real)."""
    if not _ENGINE:
        from bertscore_viz import Scorer

        sc = Scorer(layer=4)
        _ENGINE["scorer"] = sc
        _ENGINE["ids"] = [t.ids for t in sc.encoder.encode(SENTENCES)]
        _ENGINE["special"] = sc.encoder.special_ids
    return _ENGINE


@st.composite
def match_stats(draw):
    """MatchStats as :meth:`Scorer.match` makes them, with the greedy maxima drawn instead of computed: 1-4
    candidates, each with 1-3 references, texts from :data:`SENTENCES` (their real token ids)."""
    from bertscore_viz.engine.matching import MatchStats

    e = engine()
    n = draw(st.integers(1, 4))
    cands = [draw(st.integers(0, len(SENTENCES) - 1)) for _ in range(n)]
    groups, refs, pair_cand = [], [], []
    for i in range(n):
        k = draw(st.integers(1, 3))
        groups.append((len(refs), len(refs) + k))
        for _ in range(k):
            refs.append(draw(st.integers(0, len(SENTENCES) - 1)))
            pair_cand.append(i)
    sim = st.floats(-1.0, 1.0, allow_nan=False, width=32)
    cand_best = tuple(np.array([draw(st.lists(sim, min_size=len(e["ids"][cands[c]]),
                                              max_size=len(e["ids"][cands[c]])))]) for c in pair_cand)
    ref_best = tuple(np.array([draw(st.lists(sim, min_size=len(e["ids"][r]), max_size=len(e["ids"][r])))])
                     for r in refs)
    return MatchStats((4,), tuple(SENTENCES[c] for c in cands), tuple(SENTENCES[r] for r in refs),
                      np.array(pair_cand), tuple(groups), tuple(e["ids"][c] for c in cands),
                      tuple(e["ids"][r] for r in refs), np.zeros(n, bool), np.zeros(len(refs), bool), cand_best,
                      ref_best, e["special"])


def by_hand(stats, idf: bool) -> np.ndarray:
    """``(n_pairs, 3)`` raw P/R/F of every pair, as docs/SEMANTICS.md defines them: weighted means of the maxima
    (weights: idf from the references, or 1; special tokens 0), F the harmonic mean, 0 for an empty side."""
    special = list(stats.special_ids)
    weights = compute_idf(stats.ref_ids) if idf else None
    out = []
    for p, c in enumerate(stats.pair_candidate):
        sides = []
        for ids, best in ((stats.cand_ids[c], stats.cand_best[p][0]), (stats.ref_ids[p], stats.ref_best[p][0])):
            is_special = np.isin(ids, special)
            w = np.where(is_special, 0.0, 1.0) if weights is None else weights(ids)
            sides.append((float(np.dot(w, best) / w.sum()) if w.sum() else float("nan"), bool(is_special.all())))
        (prec, c_empty), (rec, r_empty) = sides
        if c_empty or r_empty:
            prec = rec = 0.0
        with np.errstate(divide="ignore", invalid="ignore"):
            f = 2 * np.float64(prec) * rec / (np.float64(prec) + rec)  # P + R = 0 with P != 0: +-inf, as bert-score
        out.append((prec, rec, 0.0 if np.isnan(f) else f))  # NaN (0/0, or no idf weight) becomes 0
    return np.array(out)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(match_stats(), st.booleans())
def test_result_is_the_best_reference_of_the_hand_computed_pair_scores(stats, idf):
    sc = engine()["scorer"]
    res = sc.result(stats, idf=idf, baseline=None)
    pairs = by_hand(stats, idf)
    with np.errstate(invalid="ignore"):
        for i, (s, e) in enumerate(stats.groups):
            best = np.max(pairs[s:e], axis=0)
            got = np.array([res.precision[i], res.recall[i], res.f1[i]])
            np.testing.assert_allclose(got, best, atol=1e-9, equal_nan=True)
            np.testing.assert_allclose(pairs[s + res.best_reference[i], [0, 1, 2]], best, atol=1e-9,
                                       equal_nan=True)
    finite = np.isfinite(res.precision) & np.isfinite(res.recall)
    assert np.all(np.abs(res.precision[finite]) <= 1 + 1e-9) and np.all(np.abs(res.recall[finite]) <= 1 + 1e-9)
    # one reference: F is the harmonic mean of P and R (with several, P, R and F are each their own maximum)
    single = np.array([e - s == 1 for s, e in stats.groups])
    both = finite & single & (res.precision > 0) & (res.recall > 0)
    assert np.all(res.f1[both] >= np.minimum(res.precision, res.recall)[both] - 1e-12)
    assert np.all(res.f1[both] <= np.maximum(res.precision, res.recall)[both] + 1e-12)
    empty = [i for i, c in enumerate(stats.candidates) if not c.strip()]
    assert all(res.f1[i] == 0 and res.precision[i] == 0 for i in empty)  # an empty candidate scores 0
    if empty:
        assert any("empty candidate" in w for w in res.warnings)
    assert not np.isnan(res.f1).any()  # F is a number even when idf leaves no weight (P and R NaN, as bert-score)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(match_stats(), st.tuples(*[st.floats(-0.9, 0.95) for _ in range(3)]))
def test_result_rescaling_maps_raw_scores_linearly_and_back(stats, baseline):
    sc = engine()["scorer"]
    raw = sc.result(stats, baseline=None)
    res = sc.result(stats, baseline=np.array(baseline))
    b = np.array(baseline)
    np.testing.assert_array_equal(res.raw_f1, raw.f1)  # the raw numbers are kept beside the rescaled ones
    for k, (scaled, unscaled) in enumerate(((res.precision, raw.precision), (res.recall, raw.recall),
                                            (res.f1, raw.f1))):
        np.testing.assert_allclose(scaled, (unscaled - b[k]) / (1 - b[k]), atol=1e-12)
        np.testing.assert_allclose(scaled * (1 - b[k]) + b[k], unscaled, atol=1e-12)
        order = np.argsort(unscaled, kind="stable")
        assert np.all(np.diff(scaled[order]) >= -1e-12)  # the ranking of candidates is unchanged
    assert res.rescaled and not raw.rescaled and "-rescaled" in str(res.signature)
    np.testing.assert_array_equal(res.baseline, b)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(match_stats(), st.randoms(use_true_random=False))
def test_result_does_not_depend_on_the_order_of_the_candidates(stats, rnd):
    from bertscore_viz.engine.matching import MatchStats

    sc = engine()["scorer"]
    order = list(range(len(stats.candidates)))
    rnd.shuffle(order)
    pairs = [list(range(*stats.groups[i])) for i in order]  # each candidate keeps its references, in order
    flat = [p for group in pairs for p in group]
    groups, start = [], 0
    for group in pairs:
        groups.append((start, start + len(group)))
        start += len(group)
    shuffled = MatchStats(stats.layers, tuple(stats.candidates[i] for i in order),
                          tuple(stats.references[p] for p in flat),
                          np.array([new for new, group in enumerate(pairs) for _ in group]), tuple(groups),
                          tuple(stats.cand_ids[i] for i in order), tuple(stats.ref_ids[p] for p in flat),
                          stats.cand_truncated[order], stats.ref_truncated[flat],
                          tuple(stats.cand_best[p] for p in flat), tuple(stats.ref_best[p] for p in flat),
                          stats.special_ids)
    for idf in (False, True):  # idf counts documents: the same set of references, so the same weights
        a, b = sc.result(stats, idf=idf, baseline=None), sc.result(shuffled, idf=idf, baseline=None)
        np.testing.assert_allclose(b.f1, a.f1[order], atol=1e-12, equal_nan=True)
        np.testing.assert_allclose(b.precision, a.precision[order], atol=1e-12, equal_nan=True)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(match_stats(), st.floats(-1, 1, allow_nan=False))
def test_special_tokens_weigh_nothing_with_or_without_idf(stats, value):
    """[CLS] and [SEP] are in every reference, so idf gives them ln(1) = 0; without idf they weigh 0 too: their
    maxima cannot change a score."""
    from dataclasses import replace as dc_replace

    sc = engine()["scorer"]
    special = list(stats.special_ids)

    def overwrite(bests, ids_of):
        out = []
        for p, best in enumerate(bests):
            best = best.copy()
            best[0, np.isin(ids_of(p), special)] = value
            out.append(best)
        return tuple(out)

    changed = dc_replace(stats, cand_best=overwrite(stats.cand_best, lambda p: stats.cand_ids[stats.pair_candidate[p]]),
                         ref_best=overwrite(stats.ref_best, lambda p: stats.ref_ids[p]))
    for idf in (False, True):
        a, b = sc.result(stats, idf=idf, baseline=None), sc.result(changed, idf=idf, baseline=None)
        np.testing.assert_allclose(b.f1, a.f1, atol=1e-12, equal_nan=True)


# --- the upload parser ----------------------------------------------------------------------------------------------
NAMES = st.sampled_from([None, "x.csv", "x.tsv", "x.jsonl", "x.json", "x.txt", "x"])
#: The parser's messages for rows it stops reading at: they list every later row at once.
LATER_ROWS_LEFT_OUT = ("later rows are left out", "on are left out")


def listed(n: int, problems) -> bool:
    """Row ``n`` is named by an error (a row left out), or falls after an error that leaves every later row out. A
    warning names a row that is kept (e.g. a quoted cell with line breaks, said)."""
    return any(p.severity == "error" and (p.row == n or (p.row is not None and p.row <= n
                                                          and any(s in p.problem for s in LATER_ROWS_LEFT_OUT)))
               for p in problems)


def check_rows_of_the_dataset(table, read_problems) -> None:
    """Every row read is a segment of the dataset or named by an error (the wide layout: one row, one segment)."""
    ds = upload.build_dataset(table, None, upload.EMPTY_SCORE, problems=read_problems)
    assert len(ds.rows) == len(set(ds.rows)) == ds.n_segments
    assert ds.rows == [n for n in table.row_numbers if n in set(ds.rows)]  # a subset, in file order
    if ds.ok and ds.mapping.layout == "wide":
        errors = {p.row for p in ds.problems if p.severity == "error"}
        for n in table.row_numbers:
            assert n in ds.rows or n in errors, n
    elif not ds.ok:
        assert ds.problems  # nothing to score is always explained


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
    table, problems = upload.read_table(data, name)
    if table is None:
        assert problems and all(p.severity == "error" for p in problems)
    else:
        check_rows_of_the_dataset(table, problems)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=400), NAMES)
def test_any_text_gives_a_dataset_or_problems_never_an_exception(text, name):
    ds = upload.parse_upload(text.encode("utf-8"), name)
    assert isinstance(ds, upload.Dataset) and (ds.ok or ds.problems)


# any text in a cell: quotes, delimiters, CR, LF, NUL, right-to-left and zero-width characters
cell = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
blank = st.text(" \t\u00a0\u3000", max_size=3)  # a cell that is whitespace only


@settings(max_examples=120, deadline=None)
@given(st.lists(st.one_of(st.lists(cell, min_size=1, max_size=5), st.lists(blank, min_size=1, max_size=4)),
                max_size=15),
       st.booleans(), st.sampled_from([(",", "x.csv"), ("\t", "x.tsv"), (";", "x.csv"), ("|", "x.txt")]),
       st.sampled_from(["\n", "\r\n"]))
def test_every_csv_or_tsv_row_is_kept_or_listed_as_a_problem(rows, with_id, dialect, newline):
    delimiter, name = dialect
    header = (["segment_id"] if with_id else []) + ["reference", "system_a", "system_b"]
    buf = io.StringIO()
    writer = csv.writer(buf, delimiter=delimiter, lineterminator=newline)
    # csv.writer leaves a bare CR unquoted when the line end is LF, and a bare CR ends a line for every CSV reader:
    # such a row is written quoted, so that it is one record starting on the line counted here
    quoted = csv.writer(buf, delimiter=delimiter, lineterminator=newline, quoting=csv.QUOTE_ALL)
    writer.writerow(header)
    starts = []
    for row in rows:
        starts.append(len(re.findall(r"\r\n|\r|\n", buf.getvalue())) + 1)  # the line this record starts on
        (quoted if any("\r" in c for c in row) else writer).writerow(row)
    table, read_problems = upload.read_table(buf.getvalue().encode("utf-8"), name)
    assert table is not None and table.columns == tuple(header) and table.delimiter == delimiter
    assert len(set(table.row_numbers)) == len(table.row_numbers)
    for n, row in zip(starts, rows):
        if any(c.strip() for c in row):  # a row with data: kept, or listed, never both, never neither
            assert (n in table.row_numbers) != listed(n, read_problems), (n, row)
        else:  # a blank row (every cell empty or whitespace) holds no data: skipped, and not a problem
            assert n not in table.row_numbers and not any(p.row == n for p in read_problems), (n, row)
    check_rows_of_the_dataset(table, read_problems)


json_value = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), cell,
                       st.lists(cell, max_size=3), st.dictionaries(cell, cell, max_size=2))
json_line = st.one_of(
    st.dictionaries(st.sampled_from(["reference", "system_a", "system_b", "segment_id", "other"]), json_value,
                    max_size=5).map(lambda d: ("object", json.dumps(d))),
    json_value.map(lambda v: ("not an object", json.dumps(v))),
    st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n\x0b\x0c\x1c\x1d\x1e"
                          "\x85\u2028\u2029"), max_size=20).map(lambda t: ("text", t)),
)


@settings(max_examples=120, deadline=None)
@given(st.lists(json_line, max_size=15))
def test_every_json_lines_line_is_kept_or_listed_as_a_problem(lines):
    text = "\n".join(line for _, line in lines)
    assume(not text.strip().startswith("["))  # a JSON array is read as one document, not line by line
    table, problems = upload.read_table(text.encode("utf-8"), "x.jsonl")
    if table is None:
        assert problems and problems[-1].row is None  # said for the whole file: empty, or no object in it
        kept: tuple = ()
    else:
        kept = table.row_numbers
        check_rows_of_the_dataset(table, problems)
    for n, (kind, line) in enumerate(lines, start=1):
        if not line.strip():
            assert n not in kept and not any(p.row == n for p in problems)  # a blank line: no data
            continue
        assert (n in kept) != any(p.row == n for p in problems), (n, kind, line)
        if kind == "object":
            assert n in kept  # every object is a row, whatever its fields
