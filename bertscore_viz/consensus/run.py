"""``pairwise`` and ``consensus``: many samples per input, each distinct text embedded once, all pairs matched.

Inputs are processed in rounds of at most :data:`ROUND_TEXTS` distinct texts (samples, references and, when asked,
sentences of several inputs together): one model pass embeds a round's texts in shared forward batches, then each
input's pairs are matched in bounded blocks (:mod:`bertscore_viz.consensus.blocks`) and its vectors are released.
An input larger than a round is a round of its own. Memory is thus bounded by a round's vectors plus one block,
plus the results (three ``(N, N)`` float64 matrices per input).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from bertscore_viz.consensus.blocks import TextSet, cross_scores, square_scores
from bertscore_viz.consensus.mbr import ConsensusResult, GroupConsensus, best_index, expected_utility, select
from bertscore_viz.consensus.pairwise import (
    COLUMNS,
    PairwiseResult,
    Weighting,
    check_utility,
    embedded_texts,
    expand,
    group_idf,
    pairwise_result,
    signature_for,
)
from bertscore_viz.consensus.sentences import split_sentences
from bertscore_viz.consensus.support import (
    TokenSupport,
    best_per_sample,
    sentence_support,
    token_spans,
    token_support,
)
from bertscore_viz.engine.arguments import check_texts
from bertscore_viz.engine.cache import release_free_memory
from bertscore_viz.engine.idf import IdfWeights
from bertscore_viz.engine.matching import best_of_references, rescaled
from bertscore_viz.engine.messages import WINDOW_HINT
from bertscore_viz.engine.options import scorer_from
from bertscore_viz.engine.scorer import Scorer
from bertscore_viz.errors import InputError, shorten

__all__ = ["ROUND_TEXTS", "pairwise", "consensus"]

#: Most distinct texts embedded in one round (several inputs share its forward batches).
ROUND_TEXTS = 1024

ProgressFn = Callable[[int, int], None]


def _check_groups(groups) -> list[list[str]]:
    if isinstance(groups, (str, bytes)) or not hasattr(groups, "__iter__"):
        raise InputError(f"Expected a list of groups (each a list of sample strings), got {type(groups).__name__} "
                         f"{shorten(groups)}.")
    out = []
    for g, group in enumerate(groups):
        if isinstance(group, str):
            raise InputError(f"Group {g} is a single string {shorten(group)}: each group is a list of samples. "
                             "For one group of texts, use pairwise(texts) or consensus([texts]).")
        samples = check_texts(group, f"sample of group {g}")
        if not samples:
            raise InputError(f"Group {g} has no samples: each group needs at least one (two to compare).")
        out.append(samples)
    return out


def _check_references(references, n: int) -> list[list[str]]:
    if references is None:
        return [[] for _ in range(n)]
    if isinstance(references, str) or not hasattr(references, "__len__"):
        raise InputError(f"Expected one entry of references per group (a string, a list of strings, or None), got "
                         f"{type(references).__name__} {shorten(references)}.")
    if len(references) != n:
        raise InputError(f"Expected references for each of the {n} groups, got {len(references)} entries. Give None "
                         "(or []) for a group without references.")
    out = []
    for g, refs in enumerate(references):
        if refs is None:
            out.append([])
        elif isinstance(refs, str):
            out.append([refs])
        else:
            out.append(check_texts(refs, f"reference of group {g}"))
    return out


def _rounds(groups: list[list[str]], refs: list[list[str]], sentences: list[dict]) -> list[list[int]]:
    """Consecutive groups whose distinct texts fit in :data:`ROUND_TEXTS` (a larger group alone)."""
    rounds: list[list[int]] = []
    seen: set[str] = set()
    for g in range(len(groups)):
        texts = _texts_of(groups[g], refs[g], sentences[g])
        if rounds and len(seen | texts) <= ROUND_TEXTS:
            rounds[-1].append(g)
            seen |= texts
        else:
            rounds.append([g])
            seen = set(texts)
    return rounds


def _texts_of(samples: list[str], refs: list[str], sentences: dict) -> set[str]:
    return set(samples) | set(refs) | {s.text for sents in sentences.values() for s in sents}


def _group_warnings(inverse: np.ndarray, distinct: list[str], toks: dict, empty: np.ndarray,
                    unweighted: np.ndarray) -> list[str]:
    """Empty samples, degenerate idf and truncation, naming samples by index."""
    msgs = []

    def which(flags: np.ndarray) -> list[int]:
        return np.flatnonzero(flags[inverse]).tolist()

    def listed(idx: list[int]) -> str:
        return ", ".join(map(str, idx[:10])) + (f" and {len(idx) - 10} more" if len(idx) > 10 else "")

    e = which(empty)
    if e:
        msgs.append(f"{len(e)} empty sample(s), scored 0 against every sample and every sample 0 against them: "
                    f"{listed(e)}.")
    u = which(unweighted & ~empty)
    if u:
        msgs.append(f"idf is degenerate for {len(u)} sample(s) ({listed(u)}): every token has idf 0, so their "
                    "precision (as candidate) and recall (as reference) are NaN and F1 0. Compute idf from more "
                    "text (idf_weights) or turn idf off.")
    cut = np.array([toks[t].dropped for t in distinct], dtype=np.int64)
    t = which(cut > 0)
    if t:
        msgs.append(f"{len(t)} sample(s) longer than the model's maximum length were truncated, "
                    f"{int(cut[inverse][t].sum()):,} tokens dropped from their tails: {listed(t)}. {WINDOW_HINT}")
    return msgs


def _reference_part(rows: TextSet, inverse: np.ndarray, refs: list[str], vecs: dict, toks: dict,
                    weighting: Weighting, baseline: np.ndarray | None) -> dict:
    """Each sample against the group's references (multi-reference maximum, rescaled after), as fields of
    :class:`GroupConsensus` except the oracle."""
    distinct = list(dict.fromkeys(refs))
    index = {t: k for k, t in enumerate(distinct)}
    r_inv = np.array([index[t] for t in refs], dtype=np.int64)
    ids = [toks[t].ids for t in distinct]
    empty, _ = weighting.flags(ids)
    cols = TextSet(tuple(vecs[t] for t in distinct), tuple(weighting.of(i) for i in ids), empty)
    cs = cross_scores(rows, cols)
    pair = np.stack([cs.precision, cs.recall, cs.f1], axis=-1)[inverse][:, r_inv]  # (N, K, 3)
    n, k = pair.shape[0], pair.shape[1]
    best, arg = best_of_references(pair.reshape(n * k, 3), [(i * k, (i + 1) * k) for i in range(n)])
    shown = rescaled(best, baseline) if baseline is not None else best.copy()
    return {"references": tuple(refs), "reference_scores": shown, "raw_reference_scores": best,
            "best_reference": arg}


def _token_part(scorer: Scorer, distinct: list[str], inverse: np.ndarray, toks: dict, sums: tuple,
                self_best: tuple) -> tuple:
    enc = scorer.encoder
    cut = enc.max_length if scorer.long_texts == "truncate" else None
    n = len(inverse)
    per_text = []
    for a, text in enumerate(distinct):
        ids = toks[text].ids
        special = enc.is_special(ids)
        per_text.append(TokenSupport(tuple(enc.tokenizer.convert_ids_to_tokens(ids.tolist())), ids, special,
                                     token_spans(enc.text_tokenizer, text, ids, special, cut),
                                     token_support(sums[a], self_best[a], n)))
    return tuple(per_text[a] for a in inverse)


def _sentence_part(distinct: list[str], inverse: np.ndarray, sentences: dict, vecs: dict, toks: dict,
                   weighting: Weighting, baseline: np.ndarray | None) -> tuple:
    """Per sample, its :class:`SentenceSupport` from the F1 of every pair of the group's distinct sentences."""
    texts: list[str] = []
    index: dict[str, int] = {}
    owners: list[list[int]] = []
    for text in distinct:
        rows = []
        for s in sentences[text]:
            if s.text not in index:
                index[s.text] = len(texts)
                texts.append(s.text)
            rows.append(index[s.text])
        owners.append(rows)
    ids = [toks[t].ids for t in texts]
    empty, _ = weighting.flags(ids)
    scores = square_scores(TextSet(tuple(vecs[t] for t in texts), tuple(weighting.of(i) for i in ids), empty))
    f1 = scores.f1 if baseline is None else rescaled(scores.f1, baseline[2])
    evidence = np.zeros(len(texts), dtype=bool)
    for text in distinct:
        for s in sentences[text]:
            evidence[index[s.text]] = s.evidence
    best = best_per_sample(f1, owners, evidence)
    return tuple(sentence_support(sentences[distinct[a]], owners[a], best, inverse, i)
                 for i, a in enumerate(inverse))


def _weighting(cache: dict, scorer: Scorer, idf: IdfWeights | None, toks: dict) -> Weighting:
    """The group's token weights; without idf, or with the same fixed idf, every group reuses the last vector."""
    last = cache.get("last")
    if last is not None and last[0] is idf:
        return last[1]
    weighting = Weighting.build(scorer, idf, [t.ids for t in toks.values()])
    cache["last"] = (idf, weighting)
    return weighting


def _one_group(scorer: Scorer, gid, samples: list[str], refs: list[str], sentences: dict, vecs: dict, toks: dict,
               utility: str, idf_weights: IdfWeights | None, tokens: bool, weightings: dict) -> GroupConsensus:
    """The consensus of one group from its embedded texts."""
    distinct = list(dict.fromkeys(samples))
    index = {t: k for k, t in enumerate(distinct)}
    inverse = np.array([index[t] for t in samples], dtype=np.int64)
    counts = np.bincount(inverse, minlength=len(distinct)).astype(np.float64)
    idf = group_idf(scorer, samples, idf_weights)
    weighting = _weighting(weightings, scorer, idf, toks)
    ids = [toks[t].ids for t in distinct]
    empty, unweighted = weighting.flags(ids)
    rows = TextSet(tuple(vecs[t] for t in distinct), tuple(weighting.of(i) for i in ids), empty)
    block = square_scores(rows, counts, support=tokens)
    raw = tuple(expand(m, inverse) for m in (block.precision, block.recall, block.f1))
    warnings = _group_warnings(inverse, distinct, toks, empty, unweighted)
    baseline = scorer.baseline
    matrices = pairwise_result(samples, raw, signature_for(scorer, idf_weights), baseline, idf, warnings)
    eu = expected_utility(matrices.matrix(utility))
    chosen, order, rank, notes = select(eu)
    fields: dict = {}
    if tokens:
        fields["token_support"] = _token_part(scorer, distinct, inverse, toks, block.support_sum, block.self_best)
    if sentences:
        fields["sentence_support"] = _sentence_part(distinct, inverse, sentences, vecs, toks, weighting, baseline)
    if refs:
        fields.update(_reference_part(rows, inverse, refs, vecs, toks, weighting, baseline))
        fields["oracle"] = best_index(fields["reference_scores"][:, COLUMNS.index(utility)])
    return GroupConsensus(gid, tuple(samples), matrices, utility, eu, order, rank, chosen,
                          notes=tuple(warnings) + notes, **fields)


def consensus(groups: Sequence[Sequence[str]], references=None, scorer: Scorer | None = None, *,
              utility: str = "f1", ids: Sequence | None = None, idf_weights: IdfWeights | None = None,
              token_support: bool = True, sentence_support: bool = False, progress: ProgressFn | None = None,
              **options) -> ConsensusResult:
    """MBR selection, order by consensus and support for many inputs, each with its samples.

    Args:
        groups: per input, its N samples (N may differ between inputs; N >= 1).
        references: None, or per input None / a reference string / a list of references: adds each sample's
            score against them, the oracle choice and the gap (:class:`GroupConsensus`).
        scorer: the :class:`Scorer` whose settings (model, layer, idf, rescaling, long texts, device) apply;
            default one built from ``options`` (e.g. ``layer=4, idf=True``).
        utility: ``"f1"`` (default), ``"precision"`` or ``"recall"``: what MBR maximises and the oracle ranks by.
        ids: per input, an id for the results (default its index).
        idf_weights: fixed idf for every input (else, with idf on, each input's distinct samples: module
            :mod:`bertscore_viz.consensus.pairwise`).
        token_support: compute per-token support (cheap: from the same matching).
        sentence_support: compute per-sentence support as SelfCheckGPT's BERTScore variant (embeds every sentence
            of every sample on its own, and matches all sentence pairs of an input).
        progress: ``progress(done, total)`` in distinct texts embedded.
        **options: :class:`Scorer` arguments when no scorer is given.

    Returns:
        :class:`ConsensusResult`, one :class:`GroupConsensus` per input.

    Raises:
        InputError: malformed groups, references or ids, an unknown utility, or both a scorer and options.
        ModelError, BaselineError: as :class:`Scorer`.
    """
    scorer = scorer_from(scorer, options)
    utility = check_utility(utility)
    groups = _check_groups(groups)
    refs = _check_references(references, len(groups))
    ids = list(range(len(groups))) if ids is None else list(ids)
    if len(ids) != len(groups):
        raise InputError(f"Expected one id per group ({len(groups)}), got {len(ids)}.")
    sentences = [{t: split_sentences(t) for t in dict.fromkeys(g)} if sentence_support else {} for g in groups]
    total = len(set().union(*(_texts_of(g, r, s) for g, r, s in zip(groups, refs, sentences)))) if groups else 0
    done: set[str] = set()
    weightings: dict = {}
    out: list[GroupConsensus] = []
    for members in _rounds(groups, refs, sentences):
        texts = sorted(set().union(*(_texts_of(groups[g], refs[g], sentences[g]) for g in members)))
        offset = len(done)
        report = None if progress is None else (lambda d, _t, offset=offset: progress(min(total, offset + d), total))
        vecs, toks = embedded_texts(scorer, texts, report)
        done.update(texts)
        if progress is not None:
            progress(len(done), total)
        for g in members:
            out.append(_one_group(scorer, ids[g], groups[g], refs[g], sentences[g], vecs, toks, utility,
                                  idf_weights, token_support, weightings))
        del vecs
        release_free_memory()
    signature = out[0].matrices.signature if out else signature_for(scorer, idf_weights)
    warnings = tuple(f"group {g.id}: {n}" for g in out for n in g.notes)
    return ConsensusResult(tuple(out), utility, signature, warnings)


def pairwise(texts: Sequence[str], scorer: Scorer | None = None, *, idf_weights: IdfWeights | None = None,
             progress: ProgressFn | None = None, **options) -> PairwiseResult:
    """The N x N BERTScore matrices of one group of texts, each distinct text embedded once.

    ``[i, j]`` is text ``i`` as candidate against text ``j`` as reference, as ``Scorer.score([texts[i]],
    [texts[j]])`` gives it (with idf, the group's weights: module :mod:`bertscore_viz.consensus.pairwise`).

    Args:
        texts: the N texts (N >= 1; duplicates kept).
        scorer: the :class:`Scorer` to use; default one built from ``options``.
        idf_weights: fixed idf (else, with idf on, idf of the distinct texts).
        progress: ``progress(done, total)`` in distinct texts embedded.

    Returns:
        :class:`PairwiseResult`.

    Raises:
        InputError: not a list of strings, or an empty one.
    """
    texts = check_texts(texts, "text")
    if not texts:
        raise InputError("pairwise needs at least one text.")
    result = consensus([texts], scorer=scorer, idf_weights=idf_weights, token_support=False, progress=progress,
                       **options)
    return result.groups[0].matrices
