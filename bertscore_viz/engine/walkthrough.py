"""BERTScore computed step by step on a small batch, keeping every intermediate tensor: what the walkthrough page
("How BERTScore is computed") shows, in the order the engine computes it, with the engine's own functions.

Steps (``B`` pairs, ``Tc``/``Tr`` candidate/reference tokens after padding, ``H`` hidden size):

1. the batch: ``B`` candidate/reference pairs;
2. tokens: ids with special tokens, padded to ``[B, T]``, and the attention mask (True on real tokens);
3. embeddings at the layer, ``[B, T, H]``, normalised to unit length (the norms before are kept for display);
4. similarity ``[B, Tc, Tr]``: one batched matrix product of unit vectors (cosines), padding masked out;
5. greedy matching: the maximum over reference tokens for each candidate token (``[B, Tc]``, precision) and over
   candidate tokens for each reference token (``[B, Tr]``, recall), over real tokens only;
6. idf from the batch's references (``M`` documents, document frequencies, ``ln((M + 1) / (df + 1))``), or 1,
   with 0 on special tokens; the ``[B, T]`` weight tensors;
7. weighted means to P and R ``[B]``, F = 2PR / (P + R), and rescaling ``(x - b) / (1 - b)`` with the baseline
   row of the layer.

The numbers equal :meth:`~bertscore_viz.engine.scorer.Scorer.score` for the same pairs and settings (tested to
1e-6): the vectors come from the encoder (its cache, its batches) and every step from
:mod:`bertscore_viz.engine.tensor_ops`, the kernel the engine scores with. No Streamlit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from bertscore_viz.engine import tensor_ops
from bertscore_viz.engine.arguments import normalize_inputs
from bertscore_viz.engine.encoder import (
    layer_states,
    model_through_layer,
    windowed_layer_states,
)
from bertscore_viz.engine.matching import side_flags, similarity_dtype, weight_vector
from bertscore_viz.errors import InputError

__all__ = ["DEFAULT_BATCH", "WORKED_EXAMPLE", "MAX_PAIRS", "Side", "Walkthrough", "compute", "pair_terms",
           "SCRIPT_TEMPLATE", "reproduction_script", "candidate_gradient"]

#: The default batch: an everyday pair, two more, and an identical pair (its F1 is exactly 1, the sanity check).
DEFAULT_BATCH = (
    ("the weather is cold today", "it is freezing today"),
    ("The cat sat on the mat.", "A cat was sitting on the mat."),
    ("He left the meeting early.", "The meeting ended late."),
    ("Rain is expected tomorrow.", "Rain is expected tomorrow."),
)
#: The worked example of the formula: recall of "alphabet" is the larger of its similarities to "writing" and
#: "system".
WORKED_EXAMPLE = ("writing system", "alphabet")
#: Most pairs of a batch by default (a walkthrough, not a test set; the app's is a deployment setting).
MAX_PAIRS = 16


@dataclass(frozen=True)
class Side:
    """One side of the batch (candidates or references), padded to ``[B, T]``.

    Attributes:
        texts: the texts; tokens: each text's token strings (special tokens included).
        ids: ``[B, T]`` token ids (the pad id on padding); mask: ``[B, T]`` True on real tokens;
        special: ``[B, T]`` True on special tokens (CLS, SEP, ...).
        norms: ``[B, T]`` length of each token's vector before normalisation (0 on padding).
        vectors: ``[B, T, H]`` unit vectors (0 on padding).
        weights: ``[B, T]`` idf (or 1), 0 on special tokens and padding.
        best: ``[B, T]`` each token's best similarity on the other side (0 on padding);
        best_index: ``[B, T]`` the position of that best match (-1 on padding).
        empty: ``[B]`` the text has no token but specials (its pair scores 0).
        window_cuts: in window mode, per text, the token positions where the window its vectors come from
            changes (empty for a text that fits the model).
    """

    texts: list
    tokens: list
    ids: np.ndarray
    mask: np.ndarray
    special: np.ndarray
    norms: np.ndarray
    vectors: np.ndarray
    weights: np.ndarray
    best: np.ndarray
    best_index: np.ndarray
    empty: np.ndarray
    window_cuts: tuple = ()

    @property
    def lengths(self) -> np.ndarray:
        return self.mask.sum(axis=1)


@dataclass(frozen=True)
class Walkthrough:
    """Every step's tensors as numpy arrays (see the module docstring).

    Attributes:
        cand, ref: the two sides; layer, hidden: the layer and hidden size.
        similarity: ``[B, Tc, Tr]`` cosines, NaN where a padded token is involved (masked out).
        idf: None without idf; else ``{"M", "source", "df": {token: documents}, "weight": {token: idf}}`` for the
            tokens of the batch (specials included), ``"unseen"`` (the idf of a token in no document), and where
            the M documents come from (the batch's references, or the scorer's ``idf_sentences``).
        precision, recall, f1: ``[B]`` raw; baseline: ``[3]`` P, R, F baseline of the layer or None;
        rescaled: ``[B, 3]`` rescaled P, R, F or None; signature: of the scorer.
    """

    cand: Side
    ref: Side
    layer: int
    hidden: int
    similarity: np.ndarray
    idf: dict | None
    precision: np.ndarray
    recall: np.ndarray
    f1: np.ndarray
    baseline: np.ndarray | None
    rescaled: np.ndarray | None
    signature: str

    @property
    def batch(self) -> int:
        return len(self.cand.texts)


def _raw_norms(enc, id_lists: list[np.ndarray], layer: int) -> list[np.ndarray]:
    """Each token's vector length at ``layer`` before normalisation (one forward pass, for display; in windows,
    as window mode embeds it, for a text longer than the model's maximum)."""

    net = model_through_layer(enc.model, layer)
    out = []
    with torch.no_grad():
        for ids in id_lists:
            x = torch.as_tensor(np.asarray(ids, dtype=np.int64)[None], device=enc.device)
            if len(ids) > enc.max_length:
                states = windowed_layer_states(net, layer, [enc.window_plan(len(ids))], input_ids=x,
                                               pad_id=enc.pad_id)
            else:
                states = layer_states(net, layer, input_ids=x, attention_mask=torch.ones_like(x))
            out.append(torch.linalg.vector_norm(states[0].float(), dim=-1).cpu().numpy())
    return out


def _checked_pairs(candidates, references, max_pairs: int = MAX_PAIRS) -> tuple[list[str], list[str]]:
    """The batch as candidates and one reference each, within ``max_pairs``."""
    cands, groups = normalize_inputs(candidates, references)
    if any(len(g) != 1 for g in groups):
        raise InputError("The walkthrough takes one reference per candidate.")
    if not cands:
        raise InputError("Give at least one pair.")
    if len(cands) > max_pairs:
        raise InputError(f"The walkthrough shows at most {max_pairs} pairs (it prints every tensor); got "
                         f"{len(cands)}. Score larger sets on the Compare page.")
    return cands, [g[0] for g in groups]


def _idf_info(scorer, idf, toks, n_cands: int, wvec: np.ndarray) -> dict:
    """The documents idf was counted over (a corpus given to the scorer, else the batch's references), their
    number M, and each present token's document frequency and weight."""
    tokenizer = scorer.encoder.tokenizer
    present = sorted({int(t) for x in toks for t in x.ids})
    corpus = scorer.idf_sentences
    doc_ids = [x.ids for x in (scorer.encode(corpus) if corpus is not None else toks[n_cands:])]
    docs = [set(map(int, d)) for d in doc_ids]
    return {"M": idf.num_documents, "unseen": float(idf.unseen),
            "source": "the batch's references" if corpus is None else f"a corpus of {len(corpus):,} sentences",
            "df": {tokenizer.convert_ids_to_tokens(t): sum(t in d for d in docs) for t in present},
            "weight": {tokenizer.convert_ids_to_tokens(t): float(wvec[t]) for t in present}}


def compute(scorer, candidates, references, max_pairs: int = MAX_PAIRS) -> Walkthrough:
    """Run the steps on a batch of single-reference pairs with ``scorer``'s model, layer, idf and rescaling.

    Raises:
        InputError: more than ``max_pairs`` pairs, or references that are not one string per candidate.
    """
    cands, refs = _checked_pairs(candidates, references, max_pairs)
    enc = scorer.encoder
    layer = scorer.layer
    toks = scorer.encode(cands + refs)  # whole texts in window mode
    vecs = enc.embed_layers(cands + refs, [layer], batch_size=scorer.batch_size, long_texts=scorer.long_texts)
    norms = _raw_norms(enc, [t.ids for t in toks], layer)
    idf = scorer.idf_weights(refs) if scorer.idf else None
    special_ids = enc.special_ids
    size = int(max(int(t.ids.max()) for t in toks if len(t.ids)) + 1)
    wvec = weight_vector(idf, special_ids, size)
    dtype = similarity_dtype(enc.device)

    def padded(rows: list, fill, kind: torch.dtype) -> np.ndarray:
        return tensor_ops.pad_sequences(rows, fill, dtype=kind)[0].numpy()

    def side(part: slice, texts: list[str]) -> dict:
        t_ids = [toks[i].ids for i in range(len(toks))[part]]
        ids, mask = tensor_ops.pad_sequences(t_ids, enc.pad_id, dtype=torch.long)
        empty, _ = side_flags(t_ids, wvec, special_ids)
        return {
            "texts": texts, "ids_list": t_ids,
            "tokens": [enc.tokenizer.convert_ids_to_tokens(x.tolist()) for x in t_ids],
            "ids": ids.numpy(),
            "mask": mask.numpy(),
            "special": padded([enc.is_special(x) for x in t_ids], False, torch.bool),
            "norms": padded(list(norms[part]), 0.0, torch.float32),
            "vectors": padded([v[0].detach().float().cpu() for v in vecs[part]], 0.0, torch.float32),
            "weights": padded([wvec[x] for x in t_ids], 0.0, torch.float64),
            "empty": empty,
            "cuts": tuple(tuple(enc.window_plan(len(x)).cut_points()) if len(x) > enc.max_length else ()
                          for x in t_ids),
        }

    c, r = side(slice(0, len(cands)), cands), side(slice(len(cands), None), refs)
    dev = enc.device
    cv = torch.as_tensor(c["vectors"], device=dev).to(dtype)
    rv = torch.as_tensor(r["vectors"], device=dev).to(dtype)
    cm = torch.as_tensor(c["mask"], device=dev)
    rm = torch.as_tensor(r["mask"], device=dev)
    sim = tensor_ops.similarity(cv, rv)  # [B, Tc, Tr]: one batched matrix product of unit vectors
    c_best, r_best = tensor_ops.greedy_maxima(sim, cm, rm)
    valid = cm[:, :, None] & rm[:, None, :]
    masked = sim.masked_fill(~valid, float("-inf"))
    c_idx = torch.where(cm, masked.argmax(dim=2), torch.full_like(cm, -1, dtype=torch.long))
    r_idx = torch.where(rm, masked.argmax(dim=1), torch.full_like(rm, -1, dtype=torch.long))
    cw = torch.as_tensor(c["weights"], device=dev)
    rw = torch.as_tensor(r["weights"], device=dev)
    p, rr, f = tensor_ops.precision_recall_f1(c_best, r_best, cw, rw, torch.as_tensor(c["empty"], device=dev),
                                              torch.as_tensor(r["empty"], device=dev), safe=False)
    baseline = scorer.baseline if scorer.rescale_with_baseline else None
    scores = torch.stack([p, rr, f], dim=1)
    rescaled = None if baseline is None else tensor_ops.rescale(scores, baseline).cpu().numpy()
    similarity = sim.float().masked_fill(~valid, float("nan")).cpu().numpy()
    idf_info = None if idf is None else _idf_info(scorer, idf, toks, len(cands), wvec)

    def finish(d: dict, best, idx) -> Side:
        return Side(d["texts"], d["tokens"], d["ids"], d["mask"], d["special"], d["norms"], d["vectors"],
                    d["weights"], best.double().cpu().numpy(), idx.cpu().numpy(), d["empty"], d["cuts"])

    return Walkthrough(finish(c, c_best, c_idx), finish(r, r_best, r_idx), layer, enc.hidden_size, similarity,
                       idf_info, p.cpu().numpy(), rr.cpu().numpy(), f.cpu().numpy(),
                       None if baseline is None else np.asarray(baseline, dtype=np.float64), rescaled,
                       str(scorer.signature))


def pair_terms(w: Walkthrough, i: int) -> dict:
    """The formula of pair ``i`` written out: every real token with its best match, similarity and weight.

    Returns:
        ``{"precision": [(token, best match, similarity, weight)], "recall": [...], "P", "R", "F"}``; P and R are
        ``sum(weight * similarity) / sum(weight)`` over these rows (special tokens have weight 0).
    """
    def rows(side: Side, other: Side) -> list[tuple]:
        out = []
        for t in range(int(side.lengths[i])):
            j = int(side.best_index[i, t])
            out.append((side.tokens[i][t], other.tokens[i][j], float(side.best[i, t]), float(side.weights[i, t])))
        return out

    return {"precision": rows(w.cand, w.ref), "recall": rows(w.ref, w.cand), "P": float(w.precision[i]),
            "R": float(w.recall[i]), "F": float(w.f1[i])}


SCRIPT_TEMPLATE = '''"""BERTScore of {n} pair(s) in plain torch + transformers, reproducing bertscore-viz's walkthrough.
Settings: {signature}"""
import math

import torch
from transformers import AutoModel, AutoTokenizer

MODEL = {model!r}
LAYER = {layer}
IDF = {idf}
BASELINE = {baseline}  # P, R, F of the layer, or None (no rescaling)
CANDIDATES = {candidates!r}
REFERENCES = {references!r}

tokenizer = AutoTokenizer.from_pretrained(MODEL{tok_kwargs})
model = AutoModel.from_pretrained(MODEL).eval()


def encode(texts):
    batch = tokenizer([t.strip() for t in texts], padding=True, truncation=True, return_tensors="pt")
    with torch.no_grad():
        states = model(**batch, output_hidden_states=True).hidden_states[LAYER]  # [B, T, H]
    vectors = states / states.norm(dim=-1, keepdim=True)  # unit vectors
    return batch["input_ids"], batch["attention_mask"].bool(), vectors.double()


c_ids, c_mask, c_vec = encode(CANDIDATES)
r_ids, r_mask, r_vec = encode(REFERENCES)
special = set(tokenizer.all_special_ids)
if IDF:  # idf from the references: ln((M + 1) / (df + 1)); special tokens occur everywhere, so weigh 0
    M = len(REFERENCES)
    df = {{}}
    for ids, mask in zip(r_ids, r_mask):
        for t in set(ids[mask].tolist()):
            df[t] = df.get(t, 0) + 1
    weight = lambda t: math.log((M + 1) / (df.get(t, 0) + 1))  # noqa: E731
else:
    weight = lambda t: 0.0 if t in special else 1.0  # noqa: E731
c_w = torch.tensor([[weight(t) for t in row] for row in c_ids.tolist()], dtype=torch.float64) * c_mask
r_w = torch.tensor([[weight(t) for t in row] for row in r_ids.tolist()], dtype=torch.float64) * r_mask

sim = torch.bmm(c_vec, r_vec.transpose(1, 2))  # [B, Tc, Tr] cosines
valid = c_mask[:, :, None] & r_mask[:, None, :]
sim = sim.masked_fill(~valid, float("-inf"))  # padding never wins a maximum
c_best = sim.max(dim=2).values.masked_fill(~c_mask, 0)  # [B, Tc]: precision side
r_best = sim.max(dim=1).values.masked_fill(~r_mask, 0)  # [B, Tr]: recall side
P = (c_best * c_w).sum(1) / c_w.sum(1)
R = (r_best * r_w).sum(1) / r_w.sum(1)
F = torch.nan_to_num(2 * P * R / (P + R))
for i in range(len(CANDIDATES)):
    line = f"pair {{i}}: P {{P[i].item():.6f}} R {{R[i].item():.6f}} F1 {{F[i].item():.6f}}"
    if BASELINE is not None:
        resc = [(x - b) / (1 - b) for x, b in zip((P[i].item(), R[i].item(), F[i].item()), BASELINE)]
        line += " rescaled P {{:.6f}} R {{:.6f}} F1 {{:.6f}}".format(*resc)
    print(line)
'''


def reproduction_script(w: Walkthrough, model_source: str, add_prefix_space: bool = False) -> str:
    """A short plain torch + transformers script that recomputes the walkthrough's numbers and prints them (for
    texts that fit the model and have at least one real token)."""
    baseline = None if w.baseline is None else [float(x) for x in w.baseline]
    return SCRIPT_TEMPLATE.format(n=w.batch, signature=w.signature, model=model_source, layer=w.layer,
                                  idf=w.idf is not None, baseline=baseline, candidates=list(w.cand.texts),
                                  references=list(w.ref.texts),
                                  tok_kwargs=", add_prefix_space=True" if add_prefix_space else "")


def candidate_gradient(scorer, w: Walkthrough, i: int) -> np.ndarray:
    """The length of the gradient of ``1 - F1`` of pair ``i`` with respect to each candidate token's input
    embedding (exact maxima, the pair's weights): which tokens would move the score most."""

    enc = scorer.encoder
    n_c, n_r = int(w.cand.lengths[i]), int(w.ref.lengths[i])
    ids = torch.as_tensor(w.cand.ids[i, :n_c][None], device=enc.device)
    # in the model's own dtype: a bf16 or fp16 model takes no fp32 input (the gradient's lengths are read in fp32)
    weights = enc.model.get_input_embeddings()
    emb = weights(ids).detach().to(weights.weight.dtype).requires_grad_(True)
    net = model_through_layer(enc.model, w.layer)
    with torch.enable_grad():
        if n_c > enc.max_length:  # window mode: through the windows, as the vectors were computed
            states = windowed_layer_states(net, w.layer, [enc.window_plan(n_c)], inputs_embeds=emb)
        else:
            states = layer_states(net, w.layer, inputs_embeds=emb, attention_mask=torch.ones_like(ids))
        cand = tensor_ops.normalize(states.float())
        ref = torch.as_tensor(w.ref.vectors[i, :n_r][None], device=enc.device)
        sim = tensor_ops.similarity(cand, ref)
        ones_c, ones_r = torch.ones(1, n_c, dtype=torch.bool), torch.ones(1, n_r, dtype=torch.bool)
        c_best, r_best = tensor_ops.greedy_maxima(sim, ones_c.to(enc.device), ones_r.to(enc.device))
        cw = torch.as_tensor(w.cand.weights[i, :n_c][None], device=enc.device, dtype=torch.float32)
        rw = torch.as_tensor(w.ref.weights[i, :n_r][None], device=enc.device, dtype=torch.float32)
        _, _, f = tensor_ops.precision_recall_f1(c_best, r_best, cw, rw)
        (1 - f.sum()).backward()
    return torch.linalg.vector_norm(emb.grad[0].float(), dim=-1).cpu().numpy()
