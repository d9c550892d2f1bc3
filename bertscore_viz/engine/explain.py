"""The token-level explanation of one pair (:meth:`Scorer.explain <bertscore_viz.engine.scorer.Scorer.explain>`):
each side's tokens with what a person reads for them, the similarity matrix, the greedy matches, the weights, and
P/R/F1 equal to :meth:`~bertscore_viz.engine.scorer.Scorer.score` on the same pair, with the pair's warnings."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np
import torch

from bertscore_viz.engine.arguments import check_texts
from bertscore_viz.engine.context import context_window, separator_id
from bertscore_viz.engine.idf import uniform_weights
from bertscore_viz.engine.languages import pair_message
from bertscore_viz.engine.matching import best_of_references, prf_from_maxima, rescaled, similarity_float64
from bertscore_viz.engine.messages import WINDOW_HINT, count_tokens
from bertscore_viz.engine.results import MultiReferenceExplanation, PairExplanation, TokenSide
from bertscore_viz.engine.token_notes import READ_AS, changed_by_tokenizer, unk_id, unknown_message, word_piece
from bertscore_viz.errors import InputError

__all__ = ["explain", "token_side"]


def token_side(scorer, text: str, weights_fn: Callable[[np.ndarray], np.ndarray]) -> TokenSide:
    """One side of a pair: its tokens (special ones flagged), what each covers in the text (word pieces merged into
    words by the tokenizer's offsets), unknown and re-read tokens marked, its weights, and its truncation or
    windows."""
    enc = scorer.encoder
    tok = scorer.encode([text])[0]
    stripped = text.strip()
    special = enc.is_special(tok.ids)
    tokens = tuple(enc.tokenizer.convert_ids_to_tokens(tok.ids.tolist()))
    display = list(tokens)
    word_index = np.where(special, -1, 0).astype(np.int64)
    if stripped:
        info = enc.text_tokenizer.with_offsets(stripped, enc.max_length if scorer.long_texts == "truncate" else None)
        if list(info["input_ids"]) == tok.ids.tolist():
            last_word, word_counter = None, -1
            for pos, ((a, b), w) in enumerate(zip(info["offset_mapping"], info.word_ids())):
                if special[pos] or w is None:
                    word_index[pos] = -1
                    continue
                if w != last_word:
                    word_counter, last_word = word_counter + 1, w
                display[pos] = stripped[a:b] or tokens[pos]
                word_index[pos] = word_counter
    uid = unk_id(enc)
    unknown = np.zeros(len(tokens), dtype=bool) if uid is None else (tok.ids == uid) & ~special
    for pos in np.flatnonzero(unknown).tolist():
        display[pos] = f"{display[pos]}→[UNK]" if display[pos] != tokens[pos] else tokens[pos]
    for pos in np.flatnonzero(~unknown & ~special).tolist():  # が read as か: the figures and the table show が→か
        if changed_by_tokenizer(display[pos], word_piece(tokens[pos])):
            display[pos] = f"{display[pos]}{READ_AS}{word_piece(tokens[pos])}"
    windows = ()
    if len(tok.ids) > enc.max_length:
        windows = tuple(enc.window_plan(len(tok.ids)).boundaries())
    return TokenSide(tokens, tuple(display), tok.ids, special, word_index, weights_fn(tok.ids), tok.truncated,
                     unknown, tok.dropped, windows)


def explain(scorer, candidate: str, reference: str | Sequence[str], cand_context: Sequence[str] = (),
            ref_context: Sequence[str] = ()):
    """Token-level explanation of one candidate against one reference (or several), each side encoded after its
    context segments when given; see :meth:`Scorer.explain <bertscore_viz.engine.scorer.Scorer.explain>`."""
    if not isinstance(candidate, str):
        raise InputError(f"Expected the candidate to be a string, got {type(candidate).__name__}.")
    check_texts([candidate], "candidate")
    refs = [reference] if isinstance(reference, str) else check_texts(reference, "reference")
    if not refs:
        raise InputError("Give at least one reference to explain the candidate against.")
    idf = scorer.explanation_idf(refs)[0] if scorer.idf else None
    special = list(scorer.encoder.special_ids)

    def weights(ids):
        return idf(ids) if idf is not None else uniform_weights(ids, special)

    # Every layer, so that the app's layer slider re-explains the pair without a model pass (one pair: cheap even
    # for a large model); only this layer's vectors come to the host.
    ref_ctx = check_texts(ref_context, "reference context segment")
    contexts = [check_texts(cand_context, "candidate context segment")] + [ref_ctx] * len(refs)
    with scorer.guarded(len({candidate, *refs})):
        if any(contexts):
            vecs, ctx_tokens = _with_context(scorer, [candidate] + refs, contexts)
        else:
            vecs = scorer.encoder.embed_layers([candidate] + refs, "all", batch_size=scorer.batch_size,
                                               token_budget=scorer.token_budget, long_texts=scorer.long_texts)
            ctx_tokens = [()] * (1 + len(refs))
    cand_side = token_side(scorer, candidate, weights)
    several = not isinstance(reference, str) and len(refs) > 1
    pairs = [replace(_pair(scorer, candidate, cand_side, ref, token_side(scorer, ref, weights), vecs[0], r_vecs,
                           f"Reference {k + 1}" if several else "The reference", several),
                     cand_context=ctx_tokens[0], ref_context=ctx_tokens[k + 1])
             for k, (ref, r_vecs) in enumerate(zip(refs, vecs[1:]))]
    if isinstance(reference, str):
        return pairs[0]
    raw = np.array([[x.precision, x.recall, x.f1] for x in pairs])
    best, arg = best_of_references(raw, [(0, len(pairs))])
    best, arg = best[0], arg[0]
    msgs = tuple(dict.fromkeys(m for x in pairs for m in x.warnings))
    return MultiReferenceExplanation(
        tuple(pairs), arg, float(best[0]), float(best[1]), float(best[2]), scorer.signature,
        None if scorer.baseline is None else rescaled(best, scorer.baseline), scorer.baseline, msgs)


def _with_context(scorer, texts: list[str], contexts: list[list[str]]) -> tuple[list, list[tuple[str, ...]]]:
    """Every layer's vectors of each text's own tokens, encoded after its context segments (docs/CONTEXT.md), and
    the context tokens each sequence kept."""
    enc = scorer.encoder
    prefix, suffix = enc.text_tokenizer.special_layout
    sep = separator_id(enc.tokenizer.sep_token_id, suffix)
    windows = [context_window(tok.ids, [t.ids for t in scorer.encode(ctx)], len(prefix), len(suffix), sep,
                              enc.max_length) for tok, ctx in zip(scorer.encode(texts), contexts)]
    whole = enc.embed_ids([w.ids for w in windows], "all", batch_size=scorer.batch_size,
                          token_budget=scorer.token_budget)
    vecs = [[v[torch.as_tensor(w.own, device=v.device)] for v in vs] for w, vs in zip(windows, whole)]
    return vecs, [tuple(enc.tokenizer.convert_ids_to_tokens(w.context_ids.tolist())) for w in windows]


def _pair(scorer, candidate: str, cand_side: TokenSide, ref: str, ref_side: TokenSide, c_vecs, r_vecs, which: str,
          several: bool) -> PairExplanation:
    """The candidate against one reference at the scorer's layer."""
    # computed as the corpus path computes it, so that the maxima agree with score() to the bit
    s = similarity_float64(c_vecs[scorer.layer], r_vecs[scorer.layer]).cpu().numpy()
    cb, ci, rb, ri = s.max(axis=1), s.argmax(axis=1), s.max(axis=0), s.argmax(axis=0)  # the greedy matches
    c_empty, r_empty = not np.any(~cand_side.special), not np.any(~ref_side.special)
    p, r, f = prf_from_maxima([cb], [rb], [cand_side.weights], [ref_side.weights], np.array([c_empty]),
                              np.array([r_empty]))[0]
    msgs = _pair_messages(scorer, candidate, cand_side, ref, ref_side, which, several)
    raw = np.array([p, r, f], dtype=np.float64)
    return PairExplanation(candidate, ref, cand_side, ref_side, s, ci, cb, ri, rb, float(p), float(r), float(f),
                           scorer.signature, None if scorer.baseline is None else rescaled(raw, scorer.baseline),
                           scorer.baseline, tuple(msgs))


def _pair_messages(scorer, candidate: str, cand_side: TokenSide, ref: str, ref_side: TokenSide, which: str,
                   several: bool) -> list[str]:
    """The warnings of one pair: empty sides, degenerate idf, truncation, unknown tokens, text outside the model's
    languages."""
    c_empty, r_empty = not np.any(~cand_side.special), not np.any(~ref_side.special)
    max_length = scorer.encoder.max_length
    msgs = []
    if c_empty:
        msgs.append("The candidate is empty: P, R and F1 are 0.")
    if r_empty and several:
        msgs.append(f"{which} is empty: P, R and F1 against it are 0; the scores shown are the maxima "
                    "over the other references.")
    elif r_empty:
        msgs.append("The reference is empty: P, R and F1 are 0.")
    if not (c_empty or r_empty) and (cand_side.weights.sum() == 0 or ref_side.weights.sum() == 0):
        msgs.append("idf is degenerate: every token of a side occurs in all reference sentences, so its "
                    "weights sum to 0 and precision or recall is undefined (NaN; F1 is 0, as in "
                    "bert-score). Add more references (idf needs several) or turn idf off.")
    if cand_side.truncated:
        msgs.append(f"The candidate was truncated to the model's maximum of {max_length} tokens: "
                    f"{count_tokens(cand_side.dropped)} of its tail are not scored. {WINDOW_HINT}")
    if ref_side.truncated:
        msgs.append(f"{which} was truncated to the model's maximum of {max_length} tokens: "
                    f"{count_tokens(ref_side.dropped)} of its tail are not scored. {WINDOW_HINT}")
    cand_unknown = unknown_message("candidate", cand_side, scorer.spec.name)
    if cand_unknown:
        msgs.append(cand_unknown)
    ref_name = which[0].lower() + which[1:] if several else "reference"
    ref_unknown = unknown_message(ref_name, ref_side, scorer.spec.name)
    if ref_unknown:
        msgs.append(ref_unknown)
    # The text itself (script; language of Latin-script text) against the catalog's languages of the model, for
    # the sides whose tokens showed nothing: German reads cleanly as English word pieces.
    language = pair_message([(what, text) for what, text, token_msg in (
        ("the candidate", candidate, cand_unknown),
        (which[0].lower() + which[1:] if several else "the reference", ref, ref_unknown)) if not token_msg],
        scorer.spec.name)
    if language:
        msgs.append(language)
    return msgs
