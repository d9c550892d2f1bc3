"""Orchestration: inputs -> token ids -> embeddings (cached) -> greedy maxima -> P/R/F1 -> results.

Gives the numbers of bert-score 0.3.13 (``bert_score.score`` / ``BERTScorer``) for the same model, layer and
options, to within 1e-5 in fp32; the differences where the reference is wrong are listed in the README.
The model pass is the only expensive step: :class:`MatchStats` keeps each pair's greedy maxima for the layers
computed, so idf, rescaling and (when all layers were computed) the layer can change without another pass.
"""

from __future__ import annotations

import warnings as _warnings
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from . import similarity as sim_ops
from .baseline import BaselineTable, find_baseline
from .encoder import DEFAULT_TOKEN_BUDGET, Encoder, get_encoder
from .errors import BaselineError, InputError, ModelError, shorten
from .idf import IdfWeights, compute_idf, uniform_weights
from .models import ModelSpec, resolve_model
from .results import MultiReferenceExplanation, PairExplanation, ScoreResult, Signature, TokenSide

ProgressFn = Callable[[int, int], None]
#: Pairs handled per streaming chunk: bounds memory for large inputs while keeping length-sorted batches full.
CHUNK_PAIRS = 1024


class BertScoreWarning(UserWarning):
    """Soft problems with the input (empty sentences, truncation, degenerate idf)."""


def _check_texts(values, what: str) -> list[str]:
    if isinstance(values, str):
        raise InputError(f"Expected a list of {what} strings, got a single string {shorten(values)}. "
                         f"Wrap it in a list: [{shorten(values)}].")
    out = list(values)
    for i, v in enumerate(out):
        if not isinstance(v, str):
            raise InputError(f"Expected every {what} to be a string, but the one at index {i} is "
                             f"{type(v).__name__} {shorten(v)}. Convert missing values to '' first.")
    return out


def normalize_inputs(candidates, references) -> tuple[list[str], list[list[str]]]:
    """Validate and bring references to one list per candidate.

    Raises:
        InputError: unequal lengths, non-strings, or a candidate with an empty list of references.
    """
    cands = _check_texts(candidates, "candidate")
    if isinstance(references, str):
        raise InputError(f"Expected a list of references, got a single string {shorten(references)}.")
    refs_in = list(references)
    if len(cands) != len(refs_in):
        raise InputError(
            f"Expected as many candidates as references, got {len(cands)} candidates and {len(refs_in)} "
            "references. Check that both files have one sentence per line."
        )
    groups: list[list[str]] = []
    for i, r in enumerate(refs_in):
        if isinstance(r, str):
            groups.append([r])
        else:
            try:
                group = _check_texts(r, f"reference of candidate {i}")
            except TypeError:
                raise InputError(f"Reference {i} is {type(r).__name__} {shorten(r)}; expected a string or a "
                                 "list of strings.") from None
            if not group:
                raise InputError(f"Candidate {i} has an empty list of references; give at least one.")
            groups.append(group)
    return cands, groups


def _indices(idx: Sequence[int], limit: int = 10) -> str:
    shown = ", ".join(str(i) for i in idx[:limit])
    return shown + (f" and {len(idx) - limit} more" if len(idx) > limit else "")


@dataclass(frozen=True)
class MatchStats:
    """Greedy maxima of every (candidate, reference) pair at the layers computed.

    Attributes:
        layers: the layers available, in order; ``cand_best[p][k]`` is for layer ``layers[k]``.
        candidates: the candidate texts; references: the flattened reference texts.
        pair_candidate: ``(n_pairs,)`` candidate index of each pair (pairs follow the flattened references).
        groups: ``(start, end)`` pairs of each candidate.
        cand_ids, ref_ids: token ids of each candidate and each flattened reference.
        cand_truncated, ref_truncated: ``(n,)`` bool, cut at the model's maximum length.
        cand_best, ref_best: per pair, ``(n_layers, n_cand_tokens)`` and ``(n_layers, n_ref_tokens)``.
        special_ids: the ids weighted 0 (CLS/SEP).
    """

    layers: tuple[int, ...]
    candidates: tuple[str, ...]
    references: tuple[str, ...]
    pair_candidate: np.ndarray
    groups: tuple[tuple[int, int], ...]
    cand_ids: tuple[np.ndarray, ...]
    ref_ids: tuple[np.ndarray, ...]
    cand_truncated: np.ndarray
    ref_truncated: np.ndarray
    cand_best: tuple[np.ndarray, ...]
    ref_best: tuple[np.ndarray, ...]
    special_ids: frozenset

    def reference_idf(self) -> IdfWeights:
        """idf from the references of this input (flattened; duplicates count as separate documents)."""
        return compute_idf(self.ref_ids)

    def pair_scores(self, layer: int, idf: IdfWeights | None = None):
        """Raw P, R, F of every pair at one layer, and the soft problems found.

        Returns:
            ``(scores, notes)``: ``(n_pairs, 3)`` float64 and a dict with the pair indices of empty
            candidates, empty references and degenerate idf.
        """
        if layer not in self.layers:
            raise ModelError(f"Layer {layer} was not computed for these pairs (have {list(self.layers)}).")
        k = self.layers.index(layer)
        special = list(self.special_ids)
        side_cache: dict[int, tuple[np.ndarray, bool]] = {}

        def side(ids: np.ndarray) -> tuple[np.ndarray, bool]:
            """(weights, empty) of a token array, computed once per array (candidates recur in every pair)."""
            key = id(ids)
            if key not in side_cache:
                is_special = np.isin(ids, special)
                w = np.where(is_special, 0.0, 1.0) if idf is None else idf(ids)
                side_cache[key] = (w, bool(is_special.all()))
            return side_cache[key]

        n = len(self.pair_candidate)
        out = np.empty((n, 3), dtype=np.float64)
        notes: dict[str, list[int]] = {"empty_candidate": [], "empty_reference": [], "degenerate_idf": []}
        for p in range(n):
            wc, c_empty = side(self.cand_ids[self.pair_candidate[p]])
            wr, r_empty = side(self.ref_ids[p])
            if c_empty:
                notes["empty_candidate"].append(p)
            if r_empty:
                notes["empty_reference"].append(p)
            if not (c_empty or r_empty) and (wc.sum() == 0 or wr.sum() == 0):
                notes["degenerate_idf"].append(p)
            out[p] = sim_ops.precision_recall_f1(self.cand_best[p][k], self.ref_best[p][k], wc, wr,
                                                 c_empty, r_empty)
        return out, notes


class Scorer:
    """BERTScore with token-level explanations.

    Precision is over candidate tokens (each matched to its most similar reference token), recall over
    reference tokens (each matched to its most similar candidate token), F1 their harmonic mean.

    Args:
        model: None (the bundled all-MiniLM-L6-v2), a local model directory, or a Hugging Face hub name.
        layer: ``hidden_states`` index (0 = embeddings); default: the model's tuned layer.
        idf: weight tokens by idf computed from the references of each call (or from ``idf_sentences``).
        idf_sentences: fixed sentences to compute idf from instead (as bert-score's ``idf_sents``).
        rescale_with_baseline: report ``(x - b) / (1 - b)`` with the baseline of model, language and layer.
        lang: language of the baseline (``baselines/<lang>/<model>.tsv``).
        baseline_path: a custom baseline file (bert-score format) instead of the shipped one.
        batch_size: most sentences in one forward batch.
        device: ``"cpu"``, ``"cuda"``, ``"cuda:1"``; default CUDA when available.
        precision: ``"fp32"`` (exact, default), ``"fp16"`` (CUDA) or ``"bf16"``; shown in the signature.
        token_budget: most padded token cells in one forward batch.
        baseline_table: a baseline already read or computed (e.g. in the app), used instead of any file;
            the signature then says ``-custom-rescaled``.

    Raises:
        ModelError, BaselineError: at construction for an unknown layer or a missing baseline, before any work.
    """

    def __init__(self, model: str | None = None, layer: int | None = None, idf: bool = False,
                 idf_sentences: Sequence[str] | None = None, rescale_with_baseline: bool = False,
                 lang: str = "en", baseline_path: str | None = None, batch_size: int = 64,
                 device: str | None = None, precision: str = "fp32", token_budget: int = DEFAULT_TOKEN_BUDGET,
                 baseline_table: BaselineTable | None = None):
        self.spec: ModelSpec = model if isinstance(model, ModelSpec) else resolve_model(model)
        if layer is None:
            layer = self.spec.default_layer
            if layer is None:
                raise ModelError(
                    f"No default layer is known for {self.spec.name!r}. Pass layer=N (0 = embeddings), or find "
                    f"the best one with `python -m bertscore_viz tune-layers --data DIR -m {self.spec.name}`."
                )
        self.layer = int(layer)
        self.idf = bool(idf or idf_sentences is not None)
        self.idf_sentences = None if idf_sentences is None else _check_texts(idf_sentences, "idf sentence")
        self.rescale_with_baseline = bool(rescale_with_baseline)
        self.lang = lang
        self.baseline_path = baseline_path
        self.baseline_table = baseline_table
        if batch_size < 1:
            raise InputError(f"batch_size must be at least 1, got {batch_size}.")
        self.batch_size = int(batch_size)
        self.device = device
        self.precision = precision
        self.token_budget = int(token_budget)
        self._encoder: Encoder | None = None
        self._fixed_idf: IdfWeights | None = None
        self.baseline = None
        if self.rescale_with_baseline:
            self.baseline = self.baseline_for(self.layer)
        if self.layer < 0:
            raise ModelError(f"Layer must be 0 or more (0 = embeddings), got {self.layer}.")

    @property
    def custom_baseline(self) -> bool:
        return self.baseline_path is not None or self.baseline_table is not None

    def baseline_for(self, layer: int) -> np.ndarray:
        """``(3,)`` P/R/F baseline of a layer, from the given table, the given file, or the shipped files."""
        try:
            table = self.baseline_table or find_baseline(self.spec.name, self.lang, self.baseline_path)
        except BaselineError as exc:  # BERTSCORE.md: name the file, the model and the layer
            raise BaselineError(f"{exc} (Rescaling was asked for layer {layer}.)") from None
        return table.for_layer(layer, self.spec.name)

    # --- shared pieces ----------------------------------------------------------------------------------------
    @property
    def encoder(self) -> Encoder:
        if self._encoder is None:
            enc = get_encoder(self.spec, self.device, self.precision)
            if self.layer > enc.num_layers:
                raise ModelError(f"Layer {self.layer} does not exist in {self.spec.name}: it has layers 0 to "
                                 f"{enc.num_layers} (0 = embeddings).")
            self._encoder = enc
        return self._encoder

    @property
    def signature(self) -> Signature:
        enc = self._encoder
        if enc is None:
            import transformers

            tv = transformers.__version__
        else:
            tv = enc.transformers_version
        return Signature(self.spec.name, self.layer, self.idf, self.rescale_with_baseline,
                         self.custom_baseline, self.precision, tv)

    def idf_weights(self, references: Sequence[str]) -> IdfWeights:
        """The idf used for a call whose (flattened) references are given."""
        if self.idf_sentences is not None:
            if self._fixed_idf is None:
                self._fixed_idf = compute_idf(t.ids for t in self.encoder.encode(self.idf_sentences))
            return self._fixed_idf
        return compute_idf(t.ids for t in self.encoder.encode(list(references)))

    # --- corpus path ------------------------------------------------------------------------------------------
    def match(self, candidates, references, layers: Sequence[int] | str | None = None,
              progress: ProgressFn | None = None) -> MatchStats:
        """Embed and greedily match every pair, keeping the maxima for later scoring.

        Args:
            candidates: list of strings.
            references: list of strings, or list of lists of strings (several references per candidate).
            layers: layers to keep; None = this scorer's layer; ``"all"`` = every layer from one pass.
            progress: ``progress(done, total)`` in sentences embedded.
        """
        cands, groups_in = normalize_inputs(candidates, references)
        enc = self.encoder
        if layers is None:
            layers = (self.layer,)
        elif layers == "all":
            layers = tuple(range(enc.num_layers + 1))
        layers = tuple(int(x) for x in layers)
        if not layers or min(layers) < 0 or max(layers) > enc.num_layers:
            raise ModelError(f"Layers {list(layers)} are not all in 0..{enc.num_layers} for {self.spec.name}.")
        depth = max(layers)
        flat_refs: list[str] = []
        pair_cand: list[int] = []
        groups: list[tuple[int, int]] = []
        for i, g in enumerate(groups_in):
            groups.append((len(flat_refs), len(flat_refs) + len(g)))
            flat_refs.extend(g)
            pair_cand.extend([i] * len(g))
        cand_tok = enc.encode(cands)
        ref_tok = enc.encode(flat_refs)
        total = len(set(cands) | set(flat_refs))
        done = 0
        if progress:
            progress(0, total)
        cand_best: list[np.ndarray] = [None] * len(flat_refs)  # type: ignore[list-item]
        ref_best: list[np.ndarray] = [None] * len(flat_refs)  # type: ignore[list-item]
        seen: set[str] = set()
        sel = np.asarray(layers)
        for start in range(0, len(flat_refs), CHUNK_PAIRS):
            stop = min(start + CHUNK_PAIRS, len(flat_refs))
            texts = list(dict.fromkeys([cands[pair_cand[p]] for p in range(start, stop)] + flat_refs[start:stop]))
            new = [t for t in texts if t not in seen]
            offset = done

            def chunk_progress(d: int, _t: int, offset=offset) -> None:
                if progress:
                    progress(min(total, offset + d), total)

            embs = dict(zip(texts, enc.embed(texts, depth, batch_size=self.batch_size,
                                             token_budget=self.token_budget, progress=chunk_progress)))
            seen.update(new)
            done = min(total, len(seen))
            if progress:
                progress(done, total)
            for p in range(start, stop):
                c = embs[cands[pair_cand[p]]][sel]
                r = embs[flat_refs[p]][sel]
                s = np.matmul(c, np.swapaxes(r, -1, -2))  # (layers, n_cand, n_ref)
                cand_best[p] = s.max(axis=-1)
                ref_best[p] = s.max(axis=-2)
        return MatchStats(layers, tuple(cands), tuple(flat_refs), np.asarray(pair_cand, dtype=np.int64),
                          tuple(groups), tuple(t.ids for t in cand_tok), tuple(t.ids for t in ref_tok),
                          np.array([t.truncated for t in cand_tok], dtype=bool),
                          np.array([t.truncated for t in ref_tok], dtype=bool),
                          tuple(cand_best), tuple(ref_best), enc.special_ids)

    def result(self, stats: MatchStats, layer: int | None = None, idf: bool | None = None,
               baseline: np.ndarray | None | str = "auto") -> ScoreResult:
        """Scores from :class:`MatchStats` without a model pass (any computed layer, idf on or off).

        Args:
            stats: from :meth:`match`.
            layer: default this scorer's layer.
            idf: default this scorer's setting.
            baseline: ``"auto"`` = this scorer's rescaling setting (looked up for ``layer``); None = raw;
                or a ``(3,)`` P/R/F baseline.
        """
        layer = self.layer if layer is None else int(layer)
        idf = self.idf if idf is None else bool(idf)
        if isinstance(baseline, str):
            baseline = self.baseline_for(layer) if self.rescale_with_baseline else None
        weights = self.idf_weights(stats.references) if idf else None
        pair, notes = stats.pair_scores(layer, weights)
        best, arg = sim_ops.multi_reference_max(pair, list(stats.groups))
        if not len(best):
            best = np.zeros((0, 3))
            arg = np.zeros((0, 3), dtype=np.int64)
        raw_p, raw_r, raw_f = best[:, 0], best[:, 1], best[:, 2]
        if baseline is not None:
            baseline = np.asarray(baseline, dtype=np.float64)
            scaled = sim_ops.rescale(best, baseline)
            p, r, f = scaled[:, 0], scaled[:, 1], scaled[:, 2]
        else:
            p, r, f = raw_p, raw_r, raw_f
        msgs = self._messages(stats, notes, idf)
        sig = Signature(self.spec.name, layer, idf, baseline is not None, self.custom_baseline,
                        self.precision, self.encoder.transformers_version)
        return ScoreResult(p, r, f, raw_p, raw_r, raw_f, sig, baseline, arg, tuple(msgs))

    @staticmethod
    def _messages(stats: MatchStats, notes: dict, idf: bool) -> list[str]:
        msgs = []
        multi = any(e - s > 1 for s, e in stats.groups)

        def where(pairs: list[int]) -> list[str]:
            if not multi:
                return [str(int(stats.pair_candidate[p])) for p in pairs]
            return [f"{int(stats.pair_candidate[p])} (reference {p - stats.groups[stats.pair_candidate[p]][0]})"
                    for p in pairs]

        empty_c = sorted({int(stats.pair_candidate[p]) for p in notes["empty_candidate"]})
        if empty_c:
            msgs.append(f"{len(empty_c)} empty candidate(s), scored 0: index {_indices([str(i) for i in empty_c])}.")
        if notes["empty_reference"]:
            w = where(notes["empty_reference"])
            msgs.append(f"{len(w)} empty reference(s), scored 0: candidate index {_indices(w)}.")
        if notes["degenerate_idf"]:
            w = where(notes["degenerate_idf"])
            msgs.append(
                f"idf is degenerate for {len(w)} pair(s) (candidate index {_indices(w)}): every token of a side "
                "occurs in all reference sentences, so its weights sum to 0 and precision or recall is undefined "
                "(NaN; F1 is then 0, as in bert-score). Compute idf from more references, or turn idf off."
            )
        tc = np.flatnonzero(stats.cand_truncated).tolist()
        if tc:
            msgs.append(f"{len(tc)} candidate(s) longer than the model's maximum length were truncated (tail "
                        f"dropped): index {_indices(tc)}.")
        tr = np.flatnonzero(stats.ref_truncated).tolist()
        if tr:
            msgs.append(f"{len(tr)} reference(s) longer than the model's maximum length were truncated: candidate "
                        f"index {_indices(where(tr))}.")
        return msgs

    def score(self, candidates, references, progress: ProgressFn | None = None) -> ScoreResult:
        """BERTScore of each candidate against its reference(s).

        Args:
            candidates: list of strings.
            references: list of strings, or a list of lists for several references per candidate (the maximum
                of P, R and F1 is taken separately, as bert-score does).
            progress: ``progress(done, total)`` in sentences embedded.

        Returns:
            :class:`ScoreResult` with warnings for empty sentences, truncation and degenerate idf.

        Raises:
            InputError: unequal lengths or non-string input, with both lengths or the bad index.
        """
        cands, groups = normalize_inputs(candidates, references)
        if not cands:
            empty = np.zeros(0)
            return ScoreResult(empty, empty, empty, empty, empty, empty, self.signature, self.baseline,
                               np.zeros((0, 3), dtype=np.int64))
        res = self.result(self.match(cands, groups, progress=progress))
        for m in res.warnings:
            _warnings.warn(m, BertScoreWarning, stacklevel=2)
        return res

    # --- one pair ---------------------------------------------------------------------------------------------
    def _token_side(self, text: str, weights_fn) -> TokenSide:
        enc = self.encoder
        tok = enc.encode_one(text)
        stripped = text.strip()
        special = enc.is_special(tok.ids)
        tokens = tuple(enc.tokenizer.convert_ids_to_tokens(tok.ids.tolist()))
        display = list(tokens)
        word_index = np.where(special, -1, 0).astype(np.int64)
        if stripped:
            info = enc.tokenizer(stripped, add_special_tokens=True, return_offsets_mapping=True,
                                 truncation=True, max_length=enc.max_length)
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
        return TokenSide(tokens, tuple(display), tok.ids, special, word_index, weights_fn(tok.ids), tok.truncated)

    def explain(self, candidate: str, reference: str | Sequence[str]):
        """Token-level explanation of one candidate against one reference (or several).

        idf, when on, comes from ``idf_sentences`` if given, else from the reference(s) of this call, as in
        :meth:`score`; P/R/F1 equal :meth:`score` on the same pair.

        Returns:
            :class:`PairExplanation` for one reference; :class:`MultiReferenceExplanation` for a list.
        """
        if not isinstance(candidate, str):
            raise InputError(f"Expected the candidate to be a string, got {type(candidate).__name__}.")
        refs = [reference] if isinstance(reference, str) else _check_texts(reference, "reference")
        if not refs:
            raise InputError("Give at least one reference to explain the candidate against.")
        enc = self.encoder
        idf = self.idf_weights(refs) if self.idf else None
        special = list(enc.special_ids)

        def weights(ids):
            return idf(ids) if idf is not None else uniform_weights(ids, special)

        embs = enc.embed([candidate] + refs, None, batch_size=self.batch_size, token_budget=self.token_budget)
        cand_side = self._token_side(candidate, weights)
        pairs = []
        for ref, r_emb in zip(refs, embs[1:]):
            ref_side = self._token_side(ref, weights)
            s = np.matmul(embs[0][self.layer], r_emb[self.layer].T)
            cb, ci, rb, ri = sim_ops.greedy_match(s)
            c_empty, r_empty = not np.any(~cand_side.special), not np.any(~ref_side.special)
            p, r, f = sim_ops.precision_recall_f1(cb, rb, cand_side.weights, ref_side.weights, c_empty, r_empty)
            msgs = []
            if c_empty:
                msgs.append("The candidate is empty: P, R and F1 are 0.")
            if r_empty:
                msgs.append("The reference is empty: P, R and F1 are 0.")
            if not (c_empty or r_empty) and (cand_side.weights.sum() == 0 or ref_side.weights.sum() == 0):
                msgs.append("idf is degenerate: every token of a side occurs in all reference sentences, so its "
                            "weights sum to 0 and precision or recall is undefined (NaN; F1 is 0, as in "
                            "bert-score). Add more references (idf needs several) or turn idf off.")
            if cand_side.truncated:
                msgs.append(f"The candidate was truncated to the model's maximum of {enc.max_length} tokens.")
            if ref_side.truncated:
                msgs.append(f"The reference was truncated to the model's maximum of {enc.max_length} tokens.")
            raw = np.array([p, r, f], dtype=np.float64)
            pairs.append(PairExplanation(
                candidate, ref, cand_side, ref_side, s, ci, cb, ri, rb, float(p), float(r), float(f),
                self.signature, None if self.baseline is None else sim_ops.rescale(raw, self.baseline),
                self.baseline, tuple(msgs)))
        if isinstance(reference, str):
            return pairs[0]
        raw = np.array([[x.precision, x.recall, x.f1] for x in pairs])
        best = raw.max(axis=0)
        msgs = tuple(dict.fromkeys(m for x in pairs for m in x.warnings))
        return MultiReferenceExplanation(
            tuple(pairs), raw.argmax(axis=0), float(best[0]), float(best[1]), float(best[2]), self.signature,
            None if self.baseline is None else sim_ops.rescale(best, self.baseline), self.baseline, msgs)


def score(candidates, references, model: str | None = None, layer: int | None = None, idf: bool = False,
          rescale_with_baseline: bool = False, lang: str = "en", baseline_path: str | None = None,
          batch_size: int = 64, device: str | None = None, precision: str = "fp32",
          progress: ProgressFn | None = None) -> ScoreResult:
    """BERTScore in one call; see :class:`Scorer` for the options.

    >>> res = score(["The cat sat on the mat."], ["There is a cat sitting on the mat."], layer=6)
    >>> round(float(res.f1[0]), 6)
    0.910953
    """
    scorer = Scorer(model=model, layer=layer, idf=idf, rescale_with_baseline=rescale_with_baseline, lang=lang,
                    baseline_path=baseline_path, batch_size=batch_size, device=device, precision=precision)
    return scorer.score(candidates, references, progress=progress)
