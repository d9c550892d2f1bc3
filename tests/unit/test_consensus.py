"""Consensus among samples (bertscore_viz.consensus) on the real bundled model, checked against independent
computations: ``Scorer.score`` over every explicit pair, plain numpy on the encoder's vectors, and plain Python
loops for expected utility, the MBR choice, the oracle and the support scores.

The samples are made here, not read: WMT16 system outputs and newstest2017 sentences edited at random (words
dropped, swapped, repeated, or borrowed from the reference), so the tests run on text that is in no file.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import random
import warnings
from pathlib import Path

import numpy as np
import pytest

from bertscore_viz import InputError, Scorer
from bertscore_viz.consensus import (
    ConsensusResult,
    consensus,
    count_tokens,
    expected_utility,
    pairwise,
    select,
    split_sentences,
)
from bertscore_viz.consensus import run as consensus_run
from bertscore_viz.consensus.blocks import TextSet, chunk_plan, square_scores
from bertscore_viz.engine.idf import compute_idf
from bertscore_viz.engine.matching import weight_vector

DATA = Path(os.environ.get("BERTSCORE_VIZ_DATA") or Path(__file__).resolve().parents[2] / "data")
TOL = 1e-6


def _lines(name: str) -> list[str]:
    return (DATA / name).read_text(encoding="utf-8").splitlines()


def edited(rng: random.Random, text: str, donor: str) -> str:
    """``text`` with one to four random edits: drop, swap, repeat a word, or borrow one from ``donor``."""
    words, extra = text.split(), donor.split()
    for _ in range(rng.randint(1, 4)):
        if len(words) < 3:
            break
        k = rng.randrange(len(words) - 1)
        op = rng.choice(["drop", "swap", "repeat", "borrow"])
        if op == "drop":
            del words[k]
        elif op == "swap":
            words[k], words[k + 1] = words[k + 1], words[k]
        elif op == "repeat":
            words.insert(k, words[k])
        else:
            words[k] = rng.choice(extra)
    return " ".join(words)


def make_group(seed: int, n: int, lp: str = "de-en") -> tuple[list[str], str]:
    """``n`` samples around a WMT16 system output (the output itself among them) and its reference."""
    rng = random.Random(seed)
    mt, ref = _lines(f"wmt16-da-to-english/DAseg-newstest2016.mt-system.{lp}"), \
        _lines(f"wmt16-da-to-english/DAseg-newstest2016.reference.{lp}")
    i = rng.randrange(len(mt))
    samples = [edited(rng, mt[i], ref[i]) for _ in range(n - 1)]
    samples.insert(rng.randrange(n), mt[i])
    return samples, ref[i]


def paragraph_group(seed: int, n: int) -> list[str]:
    """``n`` passages of 2-3 edited newstest2017 sentences, some with a short sentence or a sentence of their own."""
    rng = random.Random(seed)
    lines = _lines("newstest2017-english/newstest2017-csen-ref.en")
    start = rng.randrange(len(lines) - 10)
    base = lines[start:start + 3]
    out = []
    for k in range(n):
        sents = [edited(rng, s, base[(j + 1) % 3]) for j, s in enumerate(base[: rng.randint(2, 3)])]
        if k % 2:
            sents.insert(1, "It rained.")  # 3 tokens: scored, but no evidence for the others
        if k == n - 1:
            sents.append(lines[start + 7])  # something only this sample says
        out.append(" ".join(sents))
    return out


def pair_matrix(scorer: Scorer, texts: list[str]) -> np.ndarray:
    """``(N, N, 3)`` P, R, F of every ordered pair from ``Scorer.score`` over the N^2 explicit pairs."""
    n = len(texts)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = scorer.score([a for a in texts for _ in range(n)], [b for _ in range(n) for b in texts])
    return np.stack([res.precision, res.recall, res.f1], axis=1).reshape(n, n, 3)


def loop_expected_utility(u: np.ndarray) -> list[float]:
    n = len(u)
    return [sum(float(u[i][j]) for j in range(n) if j != i) / (n - 1) if n > 1 else math.nan for i in range(n)]


def loop_argmax(values) -> int:
    best = 0
    for i, v in enumerate(values):
        if v > values[best]:
            best = i
    return best


@pytest.fixture(scope="module")
def layer4():
    return Scorer(layer=4)


@pytest.fixture(scope="module")
def group():
    samples, ref = make_group(7, 7)
    return samples + [samples[2]], ref  # a duplicate at the end


# --- matrices -------------------------------------------------------------------------------------------------
def test_matrices_equal_scorer_score_over_all_pairs(layer4, group):
    samples, _ = group
    res = pairwise(samples, layer4)
    want = pair_matrix(layer4, samples)
    for k, name in enumerate(("precision", "recall", "f1")):
        np.testing.assert_allclose(getattr(res, name), want[..., k], rtol=0, atol=TOL)
        np.testing.assert_array_equal(getattr(res, name), getattr(res, f"raw_{name}"))
    assert res.texts == tuple(samples) and res.baseline is None and res.idf is None
    np.testing.assert_array_equal(res.precision, res.recall.T)  # P(i, j) = R(j, i): the same maxima and weights
    np.testing.assert_array_equal(res.f1, res.f1.T)
    np.testing.assert_array_equal(res.f1[2], res.f1[-1])  # a duplicate has the same row, to the bit


def test_other_layer_and_rescaling(tmp_path, group):
    samples, _ = group
    path = tmp_path / "base.tsv"
    path.write_text("LAYER,P,R,F\n" + "\n".join(f"{i},0.{50 + i},0.{40 + i},0.{45 + i}" for i in range(7)) + "\n")
    scorer = Scorer(layer=2, rescale_with_baseline=True, baseline_path=str(path))
    res = pairwise(samples[:5], scorer)
    want = pair_matrix(scorer, samples[:5])
    np.testing.assert_allclose(res.precision, want[..., 0], atol=TOL)
    np.testing.assert_allclose(res.f1, want[..., 2], atol=TOL)
    np.testing.assert_allclose(res.raw_recall, res.recall * (1 - 0.42) + 0.42, atol=1e-12)
    np.testing.assert_array_equal(res.baseline, [0.52, 0.42, 0.47])
    assert str(res.signature).endswith("-custom-rescaled") and "_L2_" in str(res.signature)


def test_idf_from_the_distinct_samples(layer4, group):
    samples, _ = group
    scorer = layer4.replace(idf=True)
    res = pairwise(samples, scorer)
    distinct = list(dict.fromkeys(samples))
    want_idf = compute_idf(t.ids for t in scorer.encode(distinct))  # each distinct sample one document
    assert res.idf.weights == want_idf.weights and res.idf.num_documents == len(distinct) == len(samples) - 1
    fixed = Scorer(layer=4, idf_weights=want_idf)
    np.testing.assert_allclose(res.f1, pair_matrix(fixed, samples)[..., 2], atol=TOL)
    assert "idf-samples" in str(res.signature)
    given = pairwise(samples[:4], layer4, idf_weights=want_idf)  # the same weights given explicitly
    np.testing.assert_allclose(given.f1, res.f1[:4, :4], atol=1e-12)
    assert f"idf-weights-{len(distinct)}" in str(given.signature)


def test_window_mode_scores_long_texts_whole(group):
    samples, _ = group
    long_text = " ".join(_lines("newstest2017-english/newstest2017-deen-ref.en")[:40])
    scorer = Scorer(layer=4, long_texts="window")
    texts = [long_text, samples[0], long_text[: len(long_text) // 2]]
    res = pairwise(texts, scorer)
    np.testing.assert_allclose(res.f1, pair_matrix(scorer, texts)[..., 2], atol=TOL)
    assert not res.warnings  # nothing truncated
    truncated = pairwise(texts, Scorer(layer=4))
    assert any("truncated" in w for w in truncated.warnings)


def test_empty_sample_scores_zero(layer4):
    texts = ["The cat sat on the mat.", "", "A cat was sitting on a mat."]
    res = pairwise(texts, layer4)
    assert np.all(res.f1[1] == 0) and np.all(res.f1[:, 1] == 0) and np.all(res.precision[1] == 0)
    assert any("1 empty sample" in w and ": 1." in w for w in res.warnings)


def test_blocks_do_not_change_numbers(layer4):
    samples = make_group(11, 9)[0] + paragraph_group(3, 4)
    vecs = layer4.encoder.embed_layers(samples, [4])
    ids = [t.ids for t in layer4.encode(samples)]
    w = weight_vector(None, layer4.encoder.special_ids, len(layer4.encoder.tokenizer))
    texts = TextSet(tuple(v[0] for v in vecs), tuple(w[i] for i in ids), np.zeros(len(samples), dtype=bool))
    whole = square_scores(texts, support=True)
    small = square_scores(texts, support=True, chunk_tokens=60)  # many chunks: off-diagonal blocks transposed
    for name in ("precision", "recall", "f1"):
        np.testing.assert_allclose(getattr(small, name), getattr(whole, name), atol=1e-12)
    for a, b in zip(small.support_sum, whole.support_sum):
        np.testing.assert_allclose(a, b, atol=1e-9)
    lengths = [len(i) for i in ids]
    plan = chunk_plan(lengths, 60)
    assert sorted(np.concatenate(plan).tolist()) == list(range(len(samples)))
    assert all(len(c) == 1 or len(c) * max(lengths[k] for k in c) <= 60 for c in plan)


# --- MBR --------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("utility", ["f1", "precision", "recall"])
def test_mbr_choice_equals_expected_utility_from_all_pairs(layer4, utility):
    groups = [make_group(seed, n)[0] for seed, n in ((1, 6), (2, 5), (3, 8))] + [paragraph_group(5, 4)]
    res = consensus(groups, scorer=layer4, utility=utility, token_support=False)
    col = ("precision", "recall", "f1").index(utility)
    for g, samples in zip(res, groups):
        want = loop_expected_utility(pair_matrix(layer4, samples)[..., col])
        np.testing.assert_allclose(g.expected_utility, want, rtol=0, atol=TOL)
        assert g.chosen == loop_argmax(want) and g.utility == utility
        assert list(g.order) == sorted(range(len(samples)), key=lambda i: (-want[i], i))
        assert g.rank[g.chosen] == 1 and sorted(g.rank.tolist()) == list(range(1, len(samples) + 1))


def test_expected_utility_and_select_by_hand():
    u = np.array([[1.0, 0.5, 0.7], [0.4, 1.0, 0.9], [0.6, 0.8, 1.0]])
    np.testing.assert_allclose(expected_utility(u), [0.6, 0.65, 0.7])
    chosen, order, rank, notes = select(np.array([0.6, 0.7, 0.7, np.nan]))
    assert chosen == 1 and order.tolist() == [1, 2, 0, 3] and rank.tolist() == [3, 1, 2, 4]
    assert any("tie" in n for n in notes) and any("NaN" in n for n in notes)
    assert select(np.array([np.nan]))[0] == 0
    assert select(np.array([np.nan, np.nan]))[0] == 0 and "first sample" in select(np.array([np.nan, np.nan]))[3][0]
    with pytest.raises(ValueError):
        expected_utility(np.zeros((2, 3)))


def test_duplicates_count_as_samples_and_ties_go_to_the_lowest_index(layer4):
    samples, _ = make_group(21, 5)
    top = samples[consensus([samples], scorer=layer4)[0].chosen]
    rest = [s for s in samples if s != top]
    dup = [rest[0], top, rest[1], top, rest[2]]  # a copy of the best sample: both copies gain, and tie
    g = consensus([dup], scorer=layer4)[0]
    want = loop_expected_utility(pair_matrix(layer4, dup)[..., 2])
    np.testing.assert_allclose(g.expected_utility, want, atol=TOL)
    assert g.expected_utility[1] == g.expected_utility[3]  # copies tie exactly
    assert g.chosen == 1 and g.order.tolist()[:2] == [1, 3] and g.rank.tolist()[3] == 2
    assert any("tie" in n for n in g.notes)


def test_identical_samples_tie_exactly_where_column_order_sums_made_the_copy_win(layer4):
    """Issue 46: a copy's row holds the same values as the first's in another order, and summing them in column
    order gave the later copy a larger expected utility by the last bits (2.2e-16), so it was chosen against the
    documented "ties go to the lowest index". Real model, a real group with its best sample copied at every pair of
    places, each embedded afresh; the old sum is recomputed to show the places where the copy won before."""
    samples, _ = make_group(1, 6)
    top = samples[consensus([samples], scorer=layer4, token_support=False)[0].chosen]
    rest = [s for s in samples if s != top][:4]
    copy_won = 0
    for a, b in itertools.combinations(range(6), 2):
        dup = list(rest)
        dup.insert(a, top)
        dup.insert(b, top)
        with layer4.encoder.private_cache():  # the same bits whatever earlier tests embedded
            g = consensus([dup], scorer=layer4, token_support=False)[0]
        u = g.matrices.matrix("f1")
        column_order = np.where(~np.eye(6, dtype=bool), u, 0.0).sum(axis=1) / 5
        copy_won += int(np.argmax(column_order)) == b
        assert g.expected_utility[a] == g.expected_utility[b] and g.chosen == a and g.order.tolist()[:2] == [a, b]
        np.testing.assert_allclose(g.expected_utility, column_order, rtol=0, atol=1e-12)  # numbers unchanged
    assert copy_won > 0  # the old sum broke the rule somewhere here


def test_one_sample_is_chosen_with_nan_utility(layer4):
    res = consensus([["Only one answer."], ["First.", "Second answer."]], scorer=layer4)
    g = res[0]
    assert g.chosen == 0 and math.isnan(g.chosen_utility) and np.isnan(g.token_support[0].support).all()
    assert any("One sample" in n for n in g.notes) and any(w.startswith("group 0: One sample") for w in res.warnings)


def test_references_give_the_oracle_and_the_gap(layer4):
    samples, ref = make_group(31, 6)
    refs = [ref, edited(random.Random(0), ref, samples[0])]
    for utility, col in (("f1", 2), ("recall", 1)):
        g = consensus([samples], references=[refs], scorer=layer4, utility=utility)[0]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = layer4.score(samples, [refs] * len(samples))  # multi-reference maximum
        np.testing.assert_allclose(g.reference_scores, np.stack([want.precision, want.recall, want.f1], 1), atol=TOL)
        np.testing.assert_array_equal(g.best_reference, want.best_reference)
        scores = g.reference_scores[:, col]
        assert g.oracle == loop_argmax(scores.tolist())
        assert g.gap == pytest.approx(scores[g.oracle] - scores[g.chosen], abs=1e-12) and g.gap >= 0
        assert g.reference_rank == 1 + sum(s > scores[g.chosen] for s in scores)
        assert g.references == tuple(refs)


def test_references_use_the_group_idf_and_rescaling(layer4, tmp_path):
    samples, ref = make_group(41, 5)
    path = tmp_path / "b.tsv"
    path.write_text("LAYER,P,R,F\n" + "\n".join(f"{i},0.6,0.5,0.55" for i in range(7)) + "\n")
    scorer = Scorer(layer=4, idf=True, rescale_with_baseline=True, baseline_path=str(path))
    g = consensus([samples], references=[ref], scorer=scorer)[0]
    fixed = Scorer(layer=4, idf_weights=g.matrices.idf, rescale_with_baseline=True, baseline_path=str(path))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = fixed.score(samples, [ref] * len(samples))
    np.testing.assert_allclose(g.reference_scores[:, 2], want.f1, atol=TOL)
    np.testing.assert_allclose(g.raw_reference_scores[:, 2], want.raw_f1, atol=TOL)
    np.testing.assert_allclose(g.matrices.f1, pair_matrix(fixed, samples)[..., 2], atol=TOL)


def test_groups_share_rounds_without_changing_results(layer4, monkeypatch):
    groups = [make_group(s, 3)[0] for s in range(50, 55)]
    refs = [None, "A reference.", ["One.", "Two refs."], None, None]
    alone = [consensus([g], references=[r], scorer=layer4) for g, r in zip(groups, refs)]
    monkeypatch.setattr(consensus_run, "ROUND_TEXTS", 7)  # several rounds of one or two groups
    seen = []
    together = consensus(groups, references=refs, scorer=layer4, ids=list("abcde"),
                         progress=lambda d, t: seen.append((d, t)))
    for a, b in zip(alone, together):
        np.testing.assert_allclose(b.matrices.f1, a[0].matrices.f1, atol=1e-12)
        assert b.chosen == a[0].chosen and (b.reference_scores is None) == (a[0].reference_scores is None)
    assert [g.id for g in together] == list("abcde")
    total = seen[-1][1]
    assert seen[-1][0] == total == len({t for g, r in zip(groups, refs) for t in g + ([r] if isinstance(r, str)
                                                                                       else r or [])})
    assert all(b[0] >= a[0] for a, b in zip(seen, seen[1:]))


# --- support ----------------------------------------------------------------------------------------------------
def test_token_support_is_the_mean_best_cosine_over_the_other_samples(layer4):
    samples = paragraph_group(9, 4)
    samples.append(samples[1])  # a duplicate is another sample
    g = consensus([samples], scorer=layer4)[0]
    vecs = [v[0].cpu().numpy().astype(np.float64) for v in layer4.encoder.embed_layers(samples, [4])]
    for i, ts in enumerate(g.token_support):
        best = [(vecs[i] @ vecs[j].T).max(axis=1) for j in range(len(samples)) if j != i]
        np.testing.assert_allclose(ts.support, np.mean(best, axis=0), atol=TOL)
        ids = layer4.encode([samples[i]])[0].ids
        np.testing.assert_array_equal(ts.ids, ids)
        assert ts.tokens == tuple(layer4.encoder.tokenizer.convert_ids_to_tokens(ids.tolist()))
        assert ts.special.tolist() == [t in ("[CLS]", "[SEP]") for t in ts.tokens]
        for tok, (a, b), sp in zip(ts.tokens, ts.spans, ts.special):
            assert (a, b) == (-1, -1) if sp else samples[i][a:b].lower() == tok.removeprefix("##")
    # the sentence only the last original sample says has the least supported words
    last = g.token_support[len(samples) - 2]
    own = len(samples[-2]) - len(paragraph_group(9, 4)[-1].split(". ")[-1])
    inside = np.array([a >= own for a, _ in last.spans])
    assert last.support[inside & ~last.special].mean() < last.support[~inside & ~last.special].mean() - 0.05


def test_sentence_support_follows_selfcheckgpt(layer4):
    samples = paragraph_group(13, 5)
    samples[2] = "Yes. No way."  # no sentence of more than 3 tokens: no evidence for the others
    g = consensus([samples], scorer=layer4, sentence_support=True)[0]
    splits = [[s.text for s in split_sentences(t)] for t in samples]
    evidence = [[s for s in sents if count_tokens(s) > 3] for sents in splits]
    assert evidence[2] == [] and any(not e for e in g.sentence_support[1].evidence)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i, ss in enumerate(g.sentence_support):
            assert [s.text for s in ss.sentences] == splits[i]
            for k, sent in enumerate(splits[i]):
                per = []
                for j in range(len(samples)):
                    if j == i or not evidence[j]:
                        assert math.isnan(ss.per_sample[k, j])
                        continue
                    f1 = layer4.score(evidence[j], [sent] * len(evidence[j])).f1  # SelfCheckGPT's orientation
                    per.append(max(f1))
                    assert ss.per_sample[k, j] == pytest.approx(per[-1], abs=TOL)
                assert ss.support[k] == pytest.approx(sum(per) / len(per), abs=TOL)
                assert ss.inconsistency[k] == pytest.approx(1 - sum(per) / len(per), abs=TOL)


def test_sentence_support_of_one_sentence_samples_is_the_expected_f1(layer4):
    samples = make_group(61, 5)[0]
    g = consensus([samples], scorer=layer4, sentence_support=True)[0]
    assert all(len(s.sentences) == 1 for s in g.sentence_support)
    np.testing.assert_allclose([s.support[0] for s in g.sentence_support], g.expected_utility, atol=1e-12)


# --- splitting --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, want", [
    ("Dr. Smith left at 5 p.m. on Monday. He was tired!  Why?", ["Dr. Smith left at 5 p.m. on Monday.",
                                                                  "He was tired!", "Why?"]),
    ('He said "Stop." Then he left.', ['He said "Stop."', "Then he left."]),
    ("Prices rose 3.5% in the U.S. economy. Fine.", ["Prices rose 3.5% in the U.S. economy.", "Fine."]),
    ("See Fig. 3 and J. Smith et al. for details. Done.", ["See Fig. 3 and J. Smith et al. for details.", "Done."]),
    ("First line\n\n  Second line without a stop", ["First line", "Second line without a stop"]),
    ("Wait... what? yes, lower case goes on.", ["Wait... what? yes, lower case goes on."]),
    ("\u6211\u662f\u5b66\u751f\u3002\u4f60\u597d\uff01", ["\u6211\u662f\u5b66\u751f\u3002", "\u4f60\u597d\uff01"]),
    ("   ", []),
])
def test_split_sentences(text, want):
    got = split_sentences(text)
    assert [s.text for s in got] == want
    assert all(text[s.start:s.end] == s.text for s in got)


def test_token_count_as_spacy_counts_for_evidence():
    assert count_tokens("It rained.") == 3 and count_tokens("It rained all day.") == 5
    assert count_tokens("Don't stop, it's 3,000 km!") == 7


# --- inputs and outputs -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("call, message", [
    (lambda s: consensus("one string", scorer=s), "list of groups"),
    (lambda s: consensus(["a", "b"], scorer=s), "single string"),
    (lambda s: consensus([[]], scorer=s), "no samples"),
    (lambda s: consensus([["a", 3]], scorer=s), "index 1"),
    (lambda s: consensus([["a"], ["b"]], references=["r"], scorer=s), "2 groups"),
    (lambda s: consensus([["a"]], scorer=s, utility="bleu"), "Unknown utility"),
    (lambda s: consensus([["a"]], scorer=s, ids=[1, 2]), "one id per group"),
    (lambda s: pairwise(["a"], s, layer=3), "not both"),
    (lambda s: pairwise("one text", s), "single string"),
    (lambda s: pairwise([], s), "at least one text"),
])
def test_bad_inputs_are_input_errors(layer4, call, message):
    with pytest.raises(InputError, match=message):
        call(layer4)


def test_results_are_frozen_and_json_ready(layer4):
    samples, ref = make_group(71, 4)
    res = consensus([samples, samples[:2]], references=[ref, None], scorer=layer4, sentence_support=True)
    assert isinstance(res, ConsensusResult) and len(res) == 2 and res.chosen.tolist() == [g.chosen for g in res]
    text = json.dumps([g.as_dict(matrices=True, support=True) for g in res] + [res.summary()])
    back = json.loads(text)
    assert back[0]["chosen"] == res[0].chosen and back[0]["oracle"] == res[0].oracle
    assert back[0]["matrices"]["f1"][1][2] == pytest.approx(res[0].matrices.f1[1, 2])
    assert back[-1]["groups_with_references"] == 1 and back[-1]["mean_gap"] == pytest.approx(res[0].gap)
    with pytest.raises(AttributeError):
        res[0].chosen = 1
    m = res[0].matrices.matrix("P")
    m[0, 0] = 5.0
    assert res[0].matrices.precision[0, 0] != 5.0  # a copy
