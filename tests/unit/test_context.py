"""Document context (docs/CONTEXT.md): each segment encoded after the previous k segments of its document, only its
own tokens matched, weighted and averaged.

The scores with context are checked against an independent computation written here from the paper's recipe: the
context and the segment joined as text with the tokenizer's separator (`" [SEP] ".join(...)`, as the paper's
``add_context`` does), tokenized and run through the Hugging Face model directly, the segment's token vectors taken
at the layer, greedy cosine matching and idf in numpy. The texts are written for this test (two short stories, not
in the repository)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
from transformers import AutoModel, AutoTokenizer

from bertscore_viz import Scorer, score
from bertscore_viz.cli.entry import main
from bertscore_viz.engine.context import check_doc_ids, context_window, previous_in_document
from bertscore_viz.engine.options import ScoringOptions
from bertscore_viz.errors import InputError
from bertscore_viz.files.mtme import read_evalset, score_evalset

LAYER = 4

# Two documents, interleaved on purpose in some tests; pronouns whose referent is in the previous sentence.
DOC_A_REF = ["Marta found an old bicycle in her grandfather's barn.",
             "Its frame was rusty, but the wheels still turned.",
             "She cleaned it for a whole weekend.",
             "On Monday she rode it to the harbour."]
DOC_A_HYP = ["Marta discovered an old bike in the barn of her grandfather.",
             "The frame was rusted, yet the wheels still spun.",
             "He cleaned it during the entire weekend.",
             "On Monday she cycled to the port."]
DOC_B_REF = ["The village council met on a rainy Thursday.",
             "They argued about the new bridge for hours.",
             "Nobody wanted to pay for it."]
DOC_B_HYP = ["The town council gathered on a wet Thursday.",
             "It discussed the new bridge for hours.",
             "No one wished to fund it."]
HYPS = DOC_A_HYP + DOC_B_HYP
REFS = DOC_A_REF + DOC_B_REF
DOCS = ["a"] * 4 + ["b"] * 3


@pytest.fixture(scope="module")
def scorer():
    return Scorer(layer=LAYER)


@pytest.fixture(scope="module")
def hf(scorer):
    """The bundled model and tokenizer, loaded straight from Hugging Face's classes."""
    tok = AutoTokenizer.from_pretrained(scorer.spec.source, local_files_only=True)
    model = AutoModel.from_pretrained(scorer.spec.source, local_files_only=True).eval()
    return tok, model


def own_vectors(hf, context: list[str], segment: str, max_length: int | None = None) -> tuple[np.ndarray, list]:
    """Unit vectors at LAYER of the segment's own tokens ([CLS], its words, its final [SEP]) encoded after its
    context, and the segment's ids; the oldest context tokens dropped when the whole is longer than max_length."""
    tok, model = hf
    seg_ids = tok(segment.strip())["input_ids"]
    text = f" {tok.sep_token} ".join([c.strip() for c in context] + [segment.strip()])
    ids = tok(text)["input_ids"]
    n_ctx = len(ids) - len(seg_ids)  # the context's tokens and separators, between [CLS] and the segment
    if max_length is not None and len(ids) > max_length:
        keep = max(0, max_length - len(seg_ids))
        ids = ids[:1] + ids[1 + n_ctx - keep:1 + n_ctx] + ids[1 + n_ctx:]
        n_ctx = keep
    assert ids[:1] + ids[1 + n_ctx:] == seg_ids  # the segment's own ids are its ids alone
    with torch.no_grad():
        hidden = model(input_ids=torch.tensor([ids]), output_hidden_states=True).hidden_states[LAYER][0].numpy()
    own = [0] + list(range(1 + n_ctx, len(ids)))
    vec = hidden[own].astype(np.float64)
    return vec / np.linalg.norm(vec, axis=1, keepdims=True), seg_ids


def idf_table(hf, refs: list[str]):
    tok = hf[0]
    df: dict[int, int] = {}
    for r in refs:
        for t in set(tok(r.strip())["input_ids"]):
            df[t] = df.get(t, 0) + 1
    m = len(refs)
    return lambda t: math.log((m + 1) / (df.get(t, 0) + 1))


def weights(hf, ids, idf) -> np.ndarray:
    special = {hf[0].cls_token_id, hf[0].sep_token_id}
    return np.array([0.0 if t in special else (idf(t) if idf else 1.0) for t in ids])


def reference_prf(hf, hyps, refs, docs, k, source="ref", idf=False, max_length=None, hyp_context=None) -> np.ndarray:
    """P/R/F1 of every pair, computed here without the engine; the hypothesis's context from ``hyp_context`` when
    given, else from the references (``source="ref"``) or the hypotheses (``"own"``)."""
    hyp_context = hyp_context if hyp_context is not None else refs if source == "ref" else hyps
    idf_fn = idf_table(hf, refs) if idf else None
    prev = {}
    out = []
    for i, (h, r, d) in enumerate(zip(hyps, refs, docs)):
        before = [] if d is None else prev.setdefault(d, [])
        ctx_idx = before[-k:] if k else []
        hc = [hyp_context[q] for q in ctx_idx]
        rc = [refs[q] for q in ctx_idx]
        hv, hid = own_vectors(hf, hc, h, max_length)
        rv, rid = own_vectors(hf, rc, r, max_length)
        sim = hv @ rv.T
        wh, wr = weights(hf, hid, idf_fn), weights(hf, rid, idf_fn)
        p = float((wh / wh.sum()) @ sim.max(axis=1))
        rr = float((wr / wr.sum()) @ sim.max(axis=0))
        out.append((p, rr, 2 * p * rr / (p + rr)))
        if d is not None:
            before.append(i)
    return np.array(out)


def prf(res) -> np.ndarray:
    return np.stack([res.raw_precision, res.raw_recall, res.raw_f1], axis=1)


# --- context=0 is today's engine -------------------------------------------------------------------------------------
def test_context_zero_is_bit_equal_to_no_option(scorer):
    plain = scorer.score(HYPS, REFS)
    for other in (Scorer(layer=LAYER, context=0).score(HYPS, REFS, doc_ids=DOCS),
                  score(HYPS, REFS, layer=LAYER, context=0, doc_ids=DOCS)):
        assert np.array_equal(prf(other), prf(plain))
        assert str(other.signature) == str(plain.signature) and "ctx" not in str(plain.signature)
        assert other.context is None and other.warnings == plain.warnings
    assert ScoringOptions(layer=LAYER, context=0).cache_key() == ScoringOptions(layer=LAYER).cache_key()
    assert "context" not in plain.signature.as_dict()


# --- with context: equal to the independent computation --------------------------------------------------------------
@pytest.mark.parametrize("k", [1, 2, 3])
def test_reference_context_equals_an_independent_computation(hf, k):
    res = Scorer(layer=LAYER, context=k).score(HYPS, REFS, doc_ids=DOCS)
    want = reference_prf(hf, HYPS, REFS, DOCS, k)
    assert np.abs(prf(res) - want).max() < 1e-6
    assert not np.allclose(prf(res), prf(Scorer(layer=LAYER).score(HYPS, REFS)), atol=1e-3)  # context matters
    assert res.context.with_context == 5 and res.context.documents == 2 and res.context.alone == 0


def test_own_context_and_idf_equal_an_independent_computation(hf):
    res = Scorer(layer=LAYER, context=2, context_source="own", idf=True).score(HYPS, REFS, doc_ids=DOCS)
    # idf counted over the references alone (their own tokens, not their context): as without context
    want = reference_prf(hf, HYPS, REFS, DOCS, 2, source="own", idf=True)
    assert np.abs(prf(res) - want).max() < 1e-6
    assert str(res.signature).endswith("_ctx:2-own")


def test_idf_counts_only_each_references_own_tokens(scorer, hf):
    with_ctx = Scorer(layer=LAYER, context=2, idf=True)
    with_ctx.score(HYPS, REFS, doc_ids=DOCS)
    plain = Scorer(layer=LAYER, idf=True)
    plain.score(HYPS, REFS)
    marta = hf[0]("Marta")["input_ids"][1]  # only in the first reference: in the context of two others
    assert with_ctx._last_idf(np.array([marta]))[0] == pytest.approx(math.log(8 / 2))
    assert np.array_equal(with_ctx._last_idf(np.arange(30000)), plain._last_idf(np.arange(30000)))


def test_match_keeps_the_same_numbers_as_score():
    s = Scorer(layer=LAYER, context=2, idf=True)
    res = s.score(HYPS, REFS, doc_ids=DOCS)
    stats = s.match(HYPS, REFS, doc_ids=DOCS)
    again = s.result(stats)
    assert np.abs(prf(again) - prf(res)).max() < 1e-6
    assert str(again.signature) == str(res.signature) and again.context == res.context


# --- documents -------------------------------------------------------------------------------------------------------
def test_context_never_crosses_documents(hf):
    order = [0, 4, 1, 5, 2, 6, 3]  # the two documents interleaved
    hyps, refs, docs = [HYPS[i] for i in order], [REFS[i] for i in order], [DOCS[i] for i in order]
    s = Scorer(layer=LAYER, context=3)
    mixed = prf(s.score(hyps, refs, doc_ids=docs))
    alone_a = prf(s.score(DOC_A_HYP, DOC_A_REF, doc_ids=["a"] * 4))
    alone_b = prf(s.score(DOC_B_HYP, DOC_B_REF, doc_ids=["b"] * 3))
    back = np.empty_like(mixed)
    back[order] = mixed
    assert np.abs(back - np.concatenate([alone_a, alone_b])).max() < 1e-6
    assert previous_in_document(docs, 3)[5] == [1, 3]  # segment 5 (b's third) sees b's first two only


def test_a_segment_without_a_document_is_scored_alone_and_counted(scorer):
    docs = ["a", "a", None, "", "b", "b", "b"]
    with pytest.warns(UserWarning, match="2 segment"):
        res = Scorer(layer=LAYER, context=2).score(HYPS, REFS, doc_ids=docs)
    plain = prf(scorer.score(HYPS, REFS))
    assert np.abs(prf(res)[[0, 2, 3, 4]] - plain[[0, 2, 3, 4]]).max() < 1e-6  # no previous segment, or no doc
    assert np.abs(prf(res)[1] - plain[1]).max() > 1e-3
    assert res.context.alone == 2 and res.context.with_context == 3
    with pytest.warns(UserWarning, match="7 segment"):
        none = Scorer(layer=LAYER, context=2).score(HYPS, REFS)
    assert none.context.alone == 7 and np.abs(prf(none) - plain).max() < 1e-6


def test_the_oldest_context_is_dropped_first_to_fit_the_model(hf):
    long_ref = " ".join(["The harbour master counted every boat that entered the bay that morning."] * 24)
    hyps = ["Boats came in.", "They were counted.", "The count was long."]
    refs = [long_ref, long_ref, "The count took all morning."]
    with pytest.warns(UserWarning, match="lost its oldest tokens"):
        res = Scorer(layer=LAYER, context=2).score(hyps, refs, doc_ids=["d"] * 3)
    assert res.context.cut == 3
    want = reference_prf(hf, hyps, refs, ["d"] * 3, 2, max_length=512)
    assert np.abs(prf(res) - want).max() < 1e-6
    w = context_window(np.array([101, 9, 102]), [np.array([101, 1, 2, 3, 102]), np.array([101, 4, 5, 102])],
                       1, 1, 102, 7)
    assert w.ids.tolist() == [101, 102, 4, 5, 102, 9, 102] and w.own.tolist() == [0, 5, 6]
    assert w.cut and w.n_context == 4 and w.context_ids.tolist() == [102, 4, 5, 102]
    full = context_window(np.array([101, 9, 102]), [np.array([101, 1, 102])], 1, 1, 102, 512)
    assert not full.cut and full.ids.tolist() == [101, 1, 102, 9, 102]


def test_several_references_take_context_from_their_own_document(hf):
    second = ["A girl named Marta found a bike in a barn.", "The bike was rusty.", "She washed it.",
              "Then she rode to the harbour.", "The council met.", "Members argued over the bridge.",
              "None would pay."]
    res = Scorer(layer=LAYER, context=1).score(HYPS, [[a, b] for a, b in zip(REFS, second)], doc_ids=DOCS)
    against_first = reference_prf(hf, HYPS, REFS, DOCS, 1)
    # the hypothesis's context: the first references' previous segments; the second reference's: its own document's
    against_second = reference_prf(hf, HYPS, second, DOCS, 1, hyp_context=REFS)
    assert np.abs(prf(res) - np.maximum(against_first, against_second)).max() < 1e-6


# --- the cache never mixes a segment with context and the same segment alone -----------------------------------------
def test_a_context_encoded_segment_never_collides_with_a_plain_one(scorer):
    s = Scorer(layer=LAYER, context=2, encoder=scorer.encoder)
    before = prf(scorer.score(HYPS, REFS))
    with_ctx = prf(s.score(HYPS, REFS, doc_ids=DOCS))
    after = prf(scorer.score(HYPS, REFS))
    again = prf(s.score(HYPS, REFS, doc_ids=DOCS))
    assert np.array_equal(before, after) and np.array_equal(with_ctx, again)
    assert np.abs(before - with_ctx).max() > 1e-3


# --- inputs ----------------------------------------------------------------------------------------------------------
def test_bad_inputs_are_clear_input_errors():
    with pytest.raises(InputError, match="doc_ids has 2 ids for 7 segments"):
        Scorer(layer=LAYER, context=1).score(HYPS, REFS, doc_ids=["a", "b"])
    with pytest.raises(InputError, match="context must be 0"):
        Scorer(layer=LAYER, context=-1)
    with pytest.raises(InputError, match="context must be a whole number"):
        ScoringOptions(context=1.5)
    with pytest.raises(InputError, match="context_source must be one of ref, own"):
        Scorer(layer=LAYER, context=1, context_source="hyp")
    with pytest.raises(InputError, match="one document id per segment"):
        check_doc_ids("abc", 3)
    with pytest.raises(InputError, match=r"doc_ids\[1\] is list"):
        check_doc_ids(["a", ["b"]], 2)
    assert check_doc_ids([" a ", 3, None, ""], 4) == ["a", "3", None, None]


def test_cli_reads_document_ids_from_a_file(tmp_path, capsys):
    for name, lines in (("c.txt", HYPS), ("r.txt", REFS), ("d.txt", ["a"] * 4 + ["b", "", "b"])):
        (tmp_path / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    c, r, d = (str(tmp_path / n) for n in ("c.txt", "r.txt", "d.txt"))
    assert main(["score", "-c", c, "-r", r, "-l", str(LAYER), "--context", "2", "--doc-ids", d, "--json"]) == 0
    out, err = capsys.readouterr()
    got = json.loads(out)
    with pytest.warns(UserWarning, match="1 segment"):
        want = Scorer(layer=LAYER, context=2).score(HYPS, REFS, doc_ids=["a"] * 4 + ["b", None, "b"])
    assert np.abs(np.array(got["f1"]) - want.f1).max() < 1e-9
    assert got["signature"].endswith("_ctx:2-ref") and "1 segment(s) have no document id" in err
    (tmp_path / "short.txt").write_text("a\nb\n", encoding="utf-8")
    assert main(["score", "-c", c, "-r", r, "--context", "2", "--doc-ids", str(tmp_path / "short.txt")]) == 2
    assert "got 2 lines for 7 candidates" in capsys.readouterr().err
    assert main(["score", "-c", c, "-r", r, "--context", "2"]) == 2
    assert "needs --doc-ids" in capsys.readouterr().err
    assert main(["score", "-c", c, "-r", r, "--doc-ids", d]) == 2
    assert "--doc-ids is used with --context" in capsys.readouterr().err
    assert main(["score", "--ray", "--input", c, "--output", str(tmp_path / "o"), "--context", "2"]) == 2
    assert "not available with --ray" in capsys.readouterr().err


def test_mtme_documents_become_document_ids(tmp_path):
    ts = tmp_path / "wmt-test"
    docs = ["news a"] * 4 + ["news b"] * 3
    for folder, name, lines in (("sources", "xx-en.txt", REFS), ("references", "xx-en.refA.txt", REFS),
                                ("system-outputs/xx-en", "sysA.txt", HYPS), ("documents", "xx-en.docs", docs)):
        path = ts / folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    ev = read_evalset(ts, "xx-en")
    assert ev.documents == ("a",) * 4 + ("b",) * 3
    s = Scorer(layer=LAYER, context=2)
    got = score_evalset(s, ev, "refA", systems=["sysA"])["sysA"]
    want = s.score(HYPS, REFS, doc_ids=DOCS)
    assert np.array_equal(got.f1, want.f1) and got.context.documents == 2


def test_explain_with_context_equals_the_score_row_and_carries_the_context_tokens():
    s = Scorer(layer=LAYER, context=2, idf=True)
    res = s.score(HYPS, REFS, doc_ids=DOCS)
    e = s.explain(HYPS[2], REFS[2], cand_context=REFS[:2], ref_context=REFS[:2])
    assert (e.precision, e.recall, e.f1) == pytest.approx(
        (res.raw_precision[2], res.raw_recall[2], res.raw_f1[2]), abs=1e-6)  # another batch: ~1e-8 apart
    assert e.cand_context == e.ref_context and e.cand_context[:3] == ("marta", "found", "an")
    assert e.cand_context.count("[SEP]") == 2 and len(e.cand.tokens) == len(s.encode([HYPS[2]])[0].ids)
    plain = s.explain(HYPS[2], REFS[2])
    assert plain.cand_context == () and plain.ref_context == ()
    assert abs(plain.f1 - e.f1) > 1e-4
