"""Window mode for long texts (``long_texts="window"``): the window plan (pure), and the engine on the real model.

The plan is pinned by hand-computed examples and by properties checked against a brute-force reading of the rule
(docs/SEMANTICS.md, section 10); the engine by: a text that fits scores exactly as in truncate mode, a long text
keeps every token, each token's vector is the one-pass vector of its window, idf counts the whole text, and a
damaged tail past the model's maximum changes the window score and not the truncated one.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from bertscore_viz import BertScoreWarning, Scorer
from bertscore_viz.engine.arguments import check_long_texts
from bertscore_viz.engine.windows import assemble, min_context, plan_windows, window_starts
from bertscore_viz.errors import InputError
from tests.conftest import DATA


def _sentences(n: int, start: int = 0) -> list[str]:
    lines = (DATA / "newstest2017-english" / "newstest2017-deen-ref.en").read_text(encoding="utf-8").splitlines()
    return lines[start:start + n]


def _brute_owner(n_content: int, starts, capacity: int) -> list[int]:
    """The rule read literally: the window maximising min(context before, context after), a window holding the
    text's first (last) token seeing all of that side; the earlier window on ties."""
    owners = []
    for p in range(n_content):
        best, best_k = None, None
        for k, s in enumerate(starts):
            if not s <= p < s + capacity:
                continue
            before = float("inf") if s == 0 else p - s
            after = float("inf") if s + capacity >= n_content else s + capacity - 1 - p
            ctx = min(before, after)
            if best is None or ctx > best:
                best, best_k = ctx, k
        owners.append(best_k)
    return owners


# --- the plan (pure) ------------------------------------------------------------------------------------------------
def test_hand_computed_plan():
    # [CLS] + 10 content tokens + [SEP], at most 6 positions: 4 content tokens per window, stride 2
    plan = plan_windows(12, 6, 1, 1)
    assert plan.starts == (0, 2, 4, 6)
    # content token p: 0-2 -> window 0, 3-4 -> 1, 5-6 -> 2, 7-9 -> 3; [CLS] from the first, [SEP] from the last
    assert plan.window.tolist() == [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 3, 3]
    assert plan.row.tolist() == [0, 1, 2, 3, 2, 3, 2, 3, 2, 3, 4, 5]
    assert plan.positions(1).tolist() == [0, 3, 4, 5, 6, 11]
    assert plan.positions(3).tolist() == [0, 7, 8, 9, 10, 11]
    assert plan.boundaries() == [(0, 3), (4, 5), (6, 7), (8, 11)]
    assert plan.cut_points() == [4, 6, 8]


def test_last_window_moves_back_to_end_at_the_text():
    assert window_starts(9, 4) == (0, 2, 4, 5)
    assert window_starts(5, 4) == (0, 1)
    assert window_starts(4, 4) == (0,)
    assert window_starts(0, 4) == (0,)


def test_text_that_fits_is_one_window_of_itself():
    for n in (2, 3, 100, 512):
        plan = plan_windows(n, 512, 1, 1)
        assert plan.n_windows == 1
        assert plan.window.tolist() == [0] * n
        assert plan.row.tolist() == list(range(n))
        assert plan.positions(0).tolist() == list(range(n))


def test_bert_sized_windows():
    # 510 content tokens per window (512 with [CLS] and [SEP]), stride 255: 4x the limit needs 7 windows
    plan = plan_windows(4 * 510 + 2, 512, 1, 1)
    assert plan.starts == (0, 255, 510, 765, 1020, 1275, 1530)
    assert min_context(plan) == 127
    assert all(len(plan.positions(k)) == 512 for k in range(plan.n_windows))


def test_assemble_numpy_and_torch():
    plan = plan_windows(12, 6, 1, 1)
    ids = np.arange(100, 112)
    parts = plan.window_ids(ids)
    # each window's "vector" of a position is the position's id: the assembly must give the text back, in order
    assert assemble([p[:, None] for p in parts], plan)[:, 0].tolist() == ids.tolist()
    tparts = [torch.as_tensor(p, dtype=torch.float32)[:, None].requires_grad_() for p in parts]
    out = assemble(tparts, plan)
    assert out[:, 0].tolist() == ids.tolist()
    out.sum().backward()  # differentiable: each position's window row gets gradient 1, the others 0
    used = sum(int(t.grad.sum()) for t in tparts)
    assert used == 12


def test_check_long_texts():
    assert check_long_texts("window") == "window"
    with pytest.raises(InputError, match="'truncate'.*'window'"):
        check_long_texts("chunks")
    with pytest.raises(InputError):
        Scorer(long_texts="sliding")


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 400), st.integers(3, 40), st.integers(0, 2), st.integers(0, 2))
def test_plan_properties(length, max_length, n_prefix, n_suffix):
    if max_length - n_prefix - n_suffix < 1 or length < n_prefix + n_suffix:
        return
    plan = plan_windows(length, max_length, n_prefix, n_suffix)
    n_content = length - n_prefix - n_suffix
    cap = plan.capacity
    if length <= max_length:
        assert plan.n_windows == 1
        return
    # every window is full, the first starts at the text's start and the last ends at its end
    assert all(len(plan.positions(k)) == max_length for k in range(plan.n_windows))
    assert plan.starts[0] == 0 and plan.starts[-1] + cap == n_content
    # consecutive windows overlap by at least half a window
    assert all(b - a <= cap // 2 or cap // 2 == 0 for a, b in zip(plan.starts, plan.starts[1:]))
    assert all(b > a for a, b in zip(plan.starts, plan.starts[1:]))
    # each position's vector comes from a window that holds it, at the right row
    for pos in range(length):
        k, r = int(plan.window[pos]), int(plan.row[pos])
        assert plan.positions(k)[r] == pos
    # specials as in one pass: the prefix from the first window, the suffix from the last
    assert set(plan.window[:n_prefix].tolist()) <= {0}
    assert set(plan.window[length - n_suffix:].tolist()) <= {plan.n_windows - 1}
    # the rule, read literally
    owners = plan.window[n_prefix:n_prefix + n_content].tolist()
    assert owners == _brute_owner(n_content, plan.starts, cap)
    # the guaranteed context
    assert min_context(plan) >= (cap - cap // 2) // 2


# --- the engine on the real model ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def window():
    return Scorer(long_texts="window")


@pytest.fixture(scope="module")
def long_pair():
    """A real passage of consecutive newstest2017 sentences (about 2.3x the model's 512 tokens) and the same
    passage with its last sentences replaced by unrelated ones (a system that garbles its tail)."""
    ref_lines = _sentences(48, 1000)
    damaged = ref_lines[:-12] + _sentences(12, 2500)
    return " ".join(damaged), " ".join(ref_lines)


def test_fitting_texts_score_exactly_as_truncate_mode(scorer, window):
    cands = _sentences(30, 0) + [" ".join(_sentences(15, 100)), "", "   "]
    refs = _sentences(30, 40) + [" ".join(_sentences(15, 200)), "A sentence.", "Another."]
    enc = scorer.encoder
    assert all(len(t.ids) <= enc.max_length for t in enc.encode(cands + refs))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BertScoreWarning)
        a, b = scorer.score(cands, refs), window.score(cands, refs)
    for x, y in ((a.precision, b.precision), (a.recall, b.recall), (a.f1, b.f1)):
        np.testing.assert_allclose(x, y, atol=1e-6, rtol=0)
    # same ids, same vectors
    for t, u in zip(enc.encode(cands + refs), enc.encode(cands + refs, "window")):
        assert t.ids.tolist() == u.ids.tolist()
    va = enc.embed_layers(cands[:5], [4])
    vb = enc.embed_layers(cands[:5], [4], long_texts="window")
    for x, y in zip(va, vb):
        assert torch.allclose(x[0], y[0], atol=1e-6, rtol=0)


def test_long_text_keeps_every_token(scorer, window, long_pair):
    cand, ref = long_pair
    enc = scorer.encoder
    full = enc.tokenizer(ref.strip(), add_special_tokens=True)["input_ids"]
    assert len(full) > 2 * enc.max_length
    cut, whole = enc.encode_one(ref), enc.encode_one(ref, "window")
    assert whole.ids.tolist() == full and not whole.truncated
    assert cut.truncated and cut.dropped == len(full) - enc.max_length and cut.length == len(full)
    # the first window is what truncate mode embeds (bert-score's input), so the two share cache entries
    plan = enc.window_plan(len(full))
    assert plan.window_ids(whole.ids)[0].tolist() == cut.ids.tolist()
    vecs = enc.embed_layers([ref], [4], long_texts="window")[0][0]
    assert vecs.shape == (len(full), enc.hidden_size)
    np.testing.assert_allclose(torch.linalg.vector_norm(vecs, dim=-1).numpy(), 1.0, atol=1e-5)


def test_each_vector_is_its_windows_one_pass_vector(scorer, long_pair):
    """The property behind the cache keyed by window: a token's vector in window mode is the vector the model gives
    it in one pass over the window that the plan names (to 1e-6), at every layer."""
    enc = scorer.encoder
    ref = long_pair[1]
    whole = enc.encode_one(ref, "window")
    plan = enc.window_plan(len(whole.ids))
    layers = [0, 3, 6]
    assembled = enc.embed_layers([ref], layers, long_texts="window")[0]
    net = enc.model
    for k, ids in enumerate(plan.window_ids(whole.ids)):
        x = torch.as_tensor(ids)[None]
        with torch.no_grad():
            states = net(input_ids=x, attention_mask=torch.ones_like(x), output_hidden_states=True).hidden_states
        for j, layer in enumerate(layers):
            one = torch.nn.functional.normalize(states[layer][0].float(), dim=-1)
            mine = np.flatnonzero(plan.window == k)
            assert torch.allclose(assembled[j][mine], one[plan.row[mine]], atol=1e-5, rtol=0), (k, layer)


def test_damaged_tail_changes_the_window_score_only(scorer, window, long_pair):
    cand, ref = long_pair
    clean = " ".join(_sentences(48, 1000))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t = scorer.score([cand, clean], [ref, ref])
    # truncation hides the damage: the garbled tail lies past the first 512 tokens
    assert t.f1[0] == pytest.approx(t.f1[1], abs=1e-6) and t.f1[1] == pytest.approx(1.0, abs=1e-6)
    texts = [str(w.message) for w in caught]
    assert any("dropped from their tails" in m and "long_texts='window'" in m for m in texts)
    w = window.score([cand, clean], [ref, ref])
    assert w.f1[1] == pytest.approx(1.0, abs=1e-6)
    assert w.f1[0] < w.f1[1] - 0.02
    assert not w.warnings
    assert str(w.signature).endswith("_window") and w.signature.as_dict()["long_texts"] == "window"
    assert not str(t.signature).endswith("_window")


def test_truncation_warning_counts_the_dropped_tokens(scorer, long_pair):
    cand, ref = long_pair
    enc = scorer.encoder
    dropped_c = enc.encode_one(cand).dropped
    dropped_r = enc.encode_one(ref).dropped
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BertScoreWarning)
        res = scorer.score([cand], [ref])
    assert f"1 candidate(s) longer than the model's maximum length were truncated, {dropped_c:,} tokens" in \
        " ".join(res.warnings)
    assert f"{dropped_r:,} tokens dropped" in " ".join(res.warnings)
    e = scorer.explain(cand, ref)
    assert e.cand.dropped == dropped_c and e.cand.windows == ()
    assert any(f"{dropped_c:,} tokens of its tail are not scored" in m for m in e.warnings)


def test_idf_counts_the_whole_text(window):
    tail_word = "zygomorphic"
    ref_long = " ".join(_sentences(40, 300)) + f" The {tail_word} flowers."
    refs = [ref_long, "A short reference.", "Another reference here."]
    enc = window.encoder
    tail_ids = enc.tokenizer(tail_word, add_special_tokens=False)["input_ids"]
    whole = window.idf_weights(refs)
    cut = Scorer(idf=True).idf_weights(refs)
    # in window mode the tail's tokens occur in one of three documents; truncated, in none
    assert all(whole(np.array([t]))[0] == pytest.approx(np.log(4 / 2)) for t in tail_ids)
    assert all(cut(np.array([t]))[0] == pytest.approx(np.log(4 / 1)) for t in tail_ids)


def test_explain_marks_windows_and_equals_score(window, long_pair):
    cand, ref = long_pair
    e = window.explain(cand, ref)
    assert e.f1 == pytest.approx(float(window.score([cand], [ref]).f1[0]), abs=1e-6)
    enc = window.encoder
    assert len(e.ref) == len(enc.encode_one(ref, "window").ids)
    plan = enc.window_plan(len(e.ref))
    assert e.ref.windows == tuple(plan.boundaries()) and len(e.ref.windows) == plan.n_windows >= 3
    assert e.ref.window_cuts == plan.cut_points()
    assert not e.ref.truncated and e.similarity.shape == (len(e.cand), len(e.ref))
    assert not any("truncated" in m for m in e.warnings)


def test_windows_of_many_texts_share_batches_and_the_cache(long_pair):
    """Windows are sequences like any other: two long texts and short ones in one call give the same vectors as
    each alone, and every window is cached under its own ids."""
    from bertscore_viz.engine.cache import EmbeddingCache

    cand, ref = long_pair
    enc = Scorer().encoder
    texts = [cand, "A short one.", ref, "Another short sentence."]
    with enc.private_cache():
        together = enc.embed_layers(texts, [4], long_texts="window", token_budget=2048)
        cache: EmbeddingCache = enc.cache
        for text in (cand, ref):
            whole = enc.encode_one(text, "window")
            for ids in enc.window_plan(len(whole.ids)).window_ids(whole.ids):
                assert cache.get((enc.key, 4, ids.tobytes())) is not None
    with enc.private_cache():
        alone = [enc.embed_layers([t], [4], long_texts="window")[0] for t in texts]
    for x, y in zip(together, alone):
        assert torch.allclose(x[0], y[0], atol=1e-5, rtol=0)


def test_progress_counts_texts_not_windows(long_pair):
    enc = Scorer().encoder
    seen = []
    with enc.private_cache():
        enc.embed_layers([long_pair[0], long_pair[1], "short"], [4], long_texts="window",
                         progress=lambda d, t: seen.append((d, t)))
    assert seen[0] == (0, 3) and seen[-1] == (3, 3)
    assert all(a[0] <= b[0] for a, b in zip(seen, seen[1:]))


# --- every client ------------------------------------------------------------------------------------------------
def test_loss_in_window_mode_equals_scoring_and_reaches_the_tail(long_pair):
    from bertscore_viz.loss import BERTScoreLoss

    cand, ref = long_pair
    loss = BERTScoreLoss(long_texts="window", reduction="none")
    ids, mask = loss.encode_texts([cand, "A cat sat."])
    assert ids.shape[1] > loss.encoder.max_length  # whole: nothing cut
    refs = [ref, "A cat sat on the mat."]
    expected = Scorer(long_texts="window").score([cand, "A cat sat."], refs).f1
    out = loss.scores(ids, refs, attention_mask=mask)
    np.testing.assert_allclose(out.f1.detach().numpy(), expected, atol=1e-5, rtol=0)
    probs = torch.nn.functional.one_hot(ids, loss.vocab_size).float().requires_grad_()
    loss.scores(probs, refs, attention_mask=mask).f1.sum().backward()
    per_position = probs.grad.abs().sum(dim=-1)[0]
    n = int(mask[0].sum())
    assert bool((per_position[n - 50:n] > 0).all())  # the tail, past 512 tokens, gets gradient
    assert float(per_position[n:].abs().sum()) == 0.0
    truncating = BERTScoreLoss(reduction="none")
    with pytest.raises(InputError, match="long_texts='window'"):
        truncating.scores(ids, refs, attention_mask=mask)


def test_cli_long_texts(tmp_path, capsys, long_pair):
    from bertscore_viz.cli.entry import main

    cand, ref = long_pair
    (tmp_path / "c.txt").write_text(cand + "\n", encoding="utf-8")
    (tmp_path / "r.txt").write_text(ref + "\n", encoding="utf-8")
    assert main(["score", "-c", str(tmp_path / "c.txt"), "-r", str(tmp_path / "r.txt"), "--long_texts", "window",
                 "--json"]) == 0
    out, err = capsys.readouterr()
    import json

    d = json.loads(out)
    assert d["signature"].endswith("_window") and "truncated" not in err
    assert d["f1"][0] == pytest.approx(float(Scorer(long_texts="window").score([cand], [ref]).f1[0]), abs=1e-6)
    assert main(["score", "-c", str(tmp_path / "c.txt"), "-r", str(tmp_path / "r.txt"), "--json"]) == 0
    out, err = capsys.readouterr()
    assert "truncated" in err and "--long_texts window" in err
    with pytest.raises(SystemExit):
        main(["score", "-c", "a", "-r", "b", "--long_texts", "chunks"])
    capsys.readouterr()
    fig = tmp_path / "pair.html"
    assert main(["show", "-c", cand, "-r", ref, "--long_texts", "window", "-o", str(fig)]) == 0
    assert "window" in fig.read_text(encoding="utf-8")


def test_figures_mark_the_window_boundaries(window, long_pair):
    from bertscore_viz.figures.cells import window_cut_cells
    from bertscore_viz.figures.plots import heatmap_figure

    cand, ref = long_pair
    e = window.explain(cand, ref)
    # between the cells of the last token of one window and the first of the next, on the axis as shown
    shown = np.arange(1, len(e.ref) - 1)  # special tokens hidden
    assert window_cut_cells(e.ref, shown) == [c - 1 - 0.5 for c in e.ref.window_cuts]
    assert window_cut_cells(e.ref, np.arange(len(e.ref))) == [c - 0.5 for c in e.ref.window_cuts]
    fig = heatmap_figure(e)
    assert fig.layout.meta["window_cuts"] == {"rows": window_cut_cells(e.cand, shown[: len(e.cand) - 2]),
                                              "cols": window_cut_cells(e.ref, shown)}
    dashed = [s for s in fig.layout.shapes if s.line.dash == "dash"]
    assert len(dashed) == len(e.ref.window_cuts) + len(e.cand.window_cuts)
    assert any("window boundary" in (t.name or "") for t in fig.data)
    plain = heatmap_figure(Scorer().explain(cand, ref))  # truncate mode: no window, no dashed line
    assert plain.layout.meta["window_cuts"] == {"rows": [], "cols": []}
    assert not [s for s in plain.layout.shapes if s.line.dash == "dash"]


def test_the_boundaries_are_said_in_words_and_where_to_pan():
    from bertscore_viz.app.shared.long_texts import describe_cuts

    assert describe_cuts([], [], (10, 10)) == ""
    # a cut at cell coordinate k - 0.5 is before the (k + 1)-th row counted from 1 (from 0 on the walkthrough)
    text = describe_cuts([383.5, 638.5], [383.5], (900, 700), (50, 40))
    assert "before candidate rows 385 and 640 of 900" in text
    assert "before reference column 385 of 700" in text
    assert "3 of them lie beyond the first 50 × 40 shown" in text
    text = describe_cuts([10.5], [], (20, 30), (8, 30), first=0)
    assert "before candidate row 11 of 20" in text and "none among the 30 reference columns" in text
    assert "1 of them lies beyond the first 8 × 30" in text
    assert "beyond" not in describe_cuts([10.5], [5.5], (20, 30), (20, 30))  # all in view
    assert "beyond" not in describe_cuts([10.5], [5.5], (20, 30))
