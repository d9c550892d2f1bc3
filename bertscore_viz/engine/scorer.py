"""Orchestration: inputs -> token ids -> embeddings (cached) -> greedy maxima -> P/R/F1 -> results.

Gives the numbers of bert-score 0.3.13 (``bert_score.score`` / ``BERTScorer``) for the same model, layer and
options, to within 1e-5 in fp32; the differences where the reference is wrong are listed in the README.
The model pass is the only expensive step: :class:`MatchStats` keeps each pair's greedy maxima for the layers
computed, so idf, rescaling and (when all layers were computed) the layer can change without another pass.
Matching runs where the embeddings are (CPU or CUDA), in length-sorted padded batches
(:func:`match_batched`, on :mod:`bertscore_viz.engine.tensor_ops`); only the per-token maxima come back to the host.
:meth:`Scorer.score` (one layer, no explanation) goes further: each pair's P/R/F is computed on the device in the
same batches (:func:`score_batched`) and only ``(n_pairs, 3)`` numbers come back.
"""

from __future__ import annotations

import contextlib
import warnings as _warnings
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import torch

from bertscore_viz.engine.arguments import (
    check_flag,
    check_lang,
    check_layers,
    check_long_texts,
    check_model_name,
    check_path,
    check_precision,
    check_texts,
    check_whole,
    corpus_tag,
    normalize_inputs,
)
from bertscore_viz.engine.baseline import BaselineTable, find_baseline
from bertscore_viz.engine.cache import release_free_memory
from bertscore_viz.engine.context import (
    DEFAULT_CONTEXT_SOURCE,
    check_context,
    check_context_source,
    check_doc_ids,
    context_tag,
    document_windows,
    separator_id,
)
from bertscore_viz.engine.encoder import (
    DEFAULT_TOKEN_BUDGET,
    Encoder,
    get_encoder,
    resolve_device,
)
from bertscore_viz.engine.explain import explain as explain_pair
from bertscore_viz.engine.idf import IdfWeights, compute_idf
from bertscore_viz.engine.matching import (
    MatchStats,
    best_of_references,
    match_batched,
    rescaled,
    score_batched,
    side_flags,
    weight_vector,
)
from bertscore_viz.engine.messages import context_messages, score_messages
from bertscore_viz.engine.pairs import CallPairs, PairScores, distinct_texts, flatten_groups
from bertscore_viz.engine.results import ContextReport, ScoreResult, Signature
from bertscore_viz.engine.token_notes import (
    unk_id,
)
from bertscore_viz.errors import BaselineError, InputError, ModelError
from bertscore_viz.models.spec import ModelSpec, resolve_model
from bertscore_viz.versions import package_version

__all__ = ["ProgressFn", "GuardFn", "CHUNK_PAIRS", "BertScoreWarning", "distinct_texts", "Scorer", "score",
           "MatchStats"]

ProgressFn = Callable[[int, int], None]
#: Called with the number of distinct sentences a model pass embeds; the context manager it returns is held around
#: the pass (the app's job queue: a slot for large passes, nothing for an Inspect pair).
GuardFn = Callable[[int], contextlib.AbstractContextManager]
#: Pairs handled per streaming chunk: bounds memory for large inputs while keeping length-sorted batches full.
CHUNK_PAIRS = 1024


class BertScoreWarning(UserWarning):
    """Soft problems with the input (empty sentences, truncation, degenerate idf)."""


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
        encoder: a loaded :class:`~bertscore_viz.engine.encoder.Encoder` to use (e.g. one of a pool shared by several
            scorers) instead of the process-wide one for ``model``/``device``/``precision``; ``model`` may then be
            omitted, and ``device`` and ``precision`` are the encoder's.
        idf_weights: fixed :class:`~bertscore_viz.engine.idf.IdfWeights` (e.g. computed over a whole corpus and
            broadcast to workers); implies idf on and takes precedence over ``idf_sentences``.
        guard: ``guard(n_sentences)`` returns a context manager held around every model pass (e.g. a job queue).
        custom_baseline: whether the signature calls the baseline custom; default: a ``baseline_path`` or a
            ``baseline_table`` was given.
        long_texts: ``"truncate"`` (default, bert-score's numbers: a text longer than the model's maximum length
            loses its tail, with a warning) or ``"window"``: such a text is embedded whole, in overlapping windows
            of the maximum length, each token's vector from the window where it has the most context
            (docs/SEMANTICS.md, section 10); texts that fit score exactly as in truncate mode. In the signature.
        context: document context (docs/CONTEXT.md): each segment is encoded after the previous ``context``
            segments of its document (``doc_ids`` of :meth:`score`), only its own tokens matched; 0 = none (default).
        context_source: ``"ref"`` (the paper's: both sides get the previous reference segments) or ``"own"``.

    Raises:
        ModelError, BaselineError: at construction for an unknown layer or a missing baseline, before any work.
    """

    def __init__(self, model: str | ModelSpec | None = None, layer: int | None = None, idf: bool = False,
                 idf_sentences: Sequence[str] | None = None, rescale_with_baseline: bool = False,
                 lang: str = "en", baseline_path: str | None = None, batch_size: int = 64,
                 device: str | None = None, precision: str = "fp32", token_budget: int = DEFAULT_TOKEN_BUDGET,
                 baseline_table: BaselineTable | None = None, *, encoder: Encoder | None = None,
                 idf_weights: IdfWeights | None = None, guard: GuardFn | None = None,
                 custom_baseline: bool | None = None, long_texts: str = "truncate", context: int = 0,
                 context_source: str = DEFAULT_CONTEXT_SOURCE):
        self._options: dict[str, Any] = dict(model=model, layer=layer, idf=idf, idf_sentences=idf_sentences,
                             rescale_with_baseline=rescale_with_baseline, lang=lang, baseline_path=baseline_path,
                             batch_size=batch_size, device=device, precision=precision, token_budget=token_budget,
                             baseline_table=baseline_table, encoder=encoder, idf_weights=idf_weights, guard=guard,
                             custom_baseline=custom_baseline, long_texts=long_texts, context=context,
                             context_source=context_source)
        if encoder is not None:
            model = encoder.spec if model is None else model
            spec = model if isinstance(model, ModelSpec) else resolve_model(model)
            if (spec.name, spec.source) != (encoder.spec.name, encoder.spec.source):
                raise ModelError(f"The encoder given is for {encoder.spec.name!r}, not for {spec.name!r}.")
            device, precision = encoder.device, encoder.precision
        # every argument is checked before any work (engine/arguments.py); the model is looked up last
        check_whole(layer, "layer", optional=True)
        check_whole(batch_size, "batch_size", minimum=1)
        check_whole(token_budget, "token_budget", minimum=1)
        self.long_texts = check_long_texts(long_texts)
        self.context, self.context_source = check_context(context), check_context_source(context_source)
        idf, rescale_with_baseline = check_flag(idf, "idf"), check_flag(rescale_with_baseline, "rescale_with_baseline")
        if rescale_with_baseline and baseline_table is None:
            check_lang(lang)
        baseline_path = check_path(baseline_path, "baseline_path")
        if device is not None and encoder is None:
            resolve_device(device)  # an unknown device fails here, before any work
        if encoder is None:
            check_precision(precision)
        check_model_name(model)
        self.spec: ModelSpec = model if isinstance(model, ModelSpec) else resolve_model(model)
        if layer is None:
            layer = self.spec.default_layer
            if layer is None and not self.spec.local:  # neither known here nor a directory: say that first
                raise ModelError(
                    f"No model {self.spec.name!r} is known here: it is not the bundled model, not in the catalog "
                    "(`python -m bertscore_viz models list`) and not a local model directory. Check the spelling. "
                    "If it is a Hugging Face hub name (used when this machine can download it), also give its "
                    "layer: layer=N (-l N; 0 = embeddings), since no tuned layer is known for it."
                )
            if layer is None:
                raise ModelError(
                    f"No default layer is known for {self.spec.name!r}. Pass layer=N (0 = embeddings), or find "
                    f"the best one with `python -m bertscore_viz tune-layers --data DIR -m {self.spec.name}`."
                )
        self.layer = int(layer)
        self.idf = bool(idf or idf_sentences is not None or idf_weights is not None)
        self.idf_sentences = None if idf_sentences is None else check_texts(idf_sentences, "idf sentence")
        if self.idf_sentences is not None and not self.idf_sentences:  # every weight would be 0: say so instead
            raise InputError("idf_sentences is empty: give the sentences to count idf over (e.g. the references of "
                             "the test set), or None for the references of each call.")
        fixed_idf = self.idf_sentences if idf_weights is None else None  # the corpus of fixed idf, if any
        self.idf_source = corpus_tag(fixed_idf) if fixed_idf is not None else ""  # named in the signature
        self.rescale_with_baseline = bool(rescale_with_baseline)
        self.lang = lang
        self.baseline_path = baseline_path
        self.baseline_table = baseline_table
        self.batch_size = int(batch_size)
        self.device = device
        self.precision = precision
        self.token_budget = int(token_budget)
        self._encoder: Encoder | None = None
        self._given_encoder = encoder
        self._fixed_idf: IdfWeights | None = idf_weights
        # the idf of the references of the last score() or match() call (idf from each call's references): what
        # explain() of one of that call's pairs uses, so that it equals that call's row
        self._last_idf: IdfWeights | None = None
        self._guard = guard
        self._custom_baseline = custom_baseline
        if self.layer < 0:
            raise ModelError(f"Layer must be 0 or more (0 = embeddings), got {self.layer}.")
        self.baseline = self.baseline_for(self.layer) if self.rescale_with_baseline else None
        if encoder is not None:
            _ = self.encoder  # checks the layer against the given model now

    def replace(self, **changes) -> Scorer:
        """A new scorer with these options changed and the others as here (the encoder stays shared), e.g.
        ``scorer.replace(idf_weights=w)`` or ``scorer.replace(encoder=other_device_encoder)``."""
        options = dict(self._options)
        unknown = set(changes) - set(options)
        if unknown:
            raise InputError(f"Unknown Scorer option(s): {', '.join(sorted(unknown))}.")
        if "encoder" not in changes and self._encoder is not None and not {"model", "device", "precision"} & set(
                changes):
            options["encoder"] = self._encoder
        if "encoder" in changes and changes["encoder"] is not None and "model" not in changes:
            options["model"] = None
        options.update(changes)
        return type(self)(**options)

    @property
    def custom_baseline(self) -> bool:
        if self._custom_baseline is not None:
            return bool(self._custom_baseline)
        return self.baseline_path is not None or self.baseline_table is not None

    def baseline_for(self, layer: int) -> np.ndarray:
        """``(3,)`` P/R/F baseline of a layer, from the given table, the given file, or the shipped files."""
        try:
            table = self.baseline_table or find_baseline(self.spec.name, self.lang, self.baseline_path)
        except BaselineError as exc:  # BERTSCORE.md: name the file, the model and the layer
            raise BaselineError(f"{exc} (Rescaling was asked for layer {layer}.)") from None
        return table.for_layer(layer, self.spec.name)

    def guarded(self, n_sentences: int) -> contextlib.AbstractContextManager:
        """The context held around a model pass over ``n_sentences`` (the ``guard`` given, else nothing)."""
        return self._guard(n_sentences) if self._guard is not None else contextlib.nullcontext()

    # --- shared pieces ----------------------------------------------------------------------------------------
    @property
    def encoder(self) -> Encoder:
        if self._encoder is None:
            enc = self._given_encoder or get_encoder(self.spec, self.device, self.precision)
            if self.layer > enc.num_layers:
                raise ModelError(f"Layer {self.layer} does not exist in {self.spec.name}: it has layers 0 to "
                                 f"{enc.num_layers} (0 = embeddings).")
            self._encoder = enc
        return self._encoder

    @property
    def signature(self) -> Signature:
        enc = self._encoder
        # without an encoder, the installed version (without importing transformers for it)
        tv = package_version("transformers") if enc is None else enc.transformers_version
        return Signature(self.spec.name, self.layer, self.idf, self.rescale_with_baseline,
                         self.custom_baseline, self.precision, tv, idf_source=self.idf_source,
                         long_texts=self.long_texts, context=context_tag(self.context, self.context_source))

    def idf_weights(self, references: Sequence[str]) -> IdfWeights:
        """The idf used for a call whose (flattened) references are given: the fixed ``idf_weights``, else those of
        ``idf_sentences``, else those of the references."""
        if self._fixed_idf is not None:
            return self._fixed_idf
        if self.idf_sentences is not None:
            if self._fixed_idf is None:
                self._fixed_idf = compute_idf(t.ids for t in self.encode(self.idf_sentences))
            return self._fixed_idf
        return compute_idf(t.ids for t in self.encode(list(references)))

    def explanation_idf(self, references: Sequence[str]) -> tuple[IdfWeights, str]:
        """The idf :meth:`explain` uses, and where it comes from: the fixed ``idf_weights`` or ``idf_sentences``;
        else that of the references of this scorer's last :meth:`score`, :meth:`match` or :meth:`result` call (so
        that explaining one of its pairs gives that call's row); else that of ``references`` alone (degenerate for
        one reference: every one of its tokens occurs in every reference, so each weighs 0)."""
        if self._fixed_idf is not None or self.idf_sentences is not None:
            return self.idf_weights(references), "fixed"
        if self._last_idf is not None:
            return self._last_idf, "last call"
        return self.idf_weights(references), "these references"

    def encode(self, texts: Sequence[str]):
        """Token ids of texts as this scorer scores them: cut at the model's maximum length in truncate mode, whole
        in window mode (idf then counts every token of a long text)."""
        return self.encoder.encode(texts, self.long_texts)

    # --- corpus path ------------------------------------------------------------------------------------------
    def match(self, candidates, references, layers: Sequence[int] | str | None = None,
              progress: ProgressFn | None = None, keep: str = "tokens",
              idf_weights: IdfWeights | None = None, doc_ids: Sequence | None = None) -> MatchStats:
        """Embed and greedily match every pair, keeping what later scoring needs.

        Args:
            candidates: list of strings.
            references: list of strings, or list of lists of strings (several references per candidate).
            layers: layers to keep; None = this scorer's layer; ``"all"`` = every layer from one pass.
            progress: ``progress(done, total)`` in sentences embedded.
            keep: ``"tokens"``: each pair's per-token maxima (any idf later; what explanations and the layer
                tables use). ``"scores"``: only each pair's raw P/R/F at each layer, without idf and (when this
                scorer has idf on, or ``idf_weights`` are given) with idf, computed on the device
                (:func:`score_batched`): a few numbers per pair, whatever the lengths.
            idf_weights: with ``keep="scores"``, the idf of the idf-on scores; default this scorer's
                (:meth:`idf_weights` of these references) when its idf is on. :meth:`result` then uses these for
                ``idf=True``.
            doc_ids: with ``context``, the document of each candidate (as :meth:`score`).
        """
        if keep not in ("tokens", "scores"):
            raise InputError(f"keep must be 'tokens' or 'scores', got {keep!r}.")
        cands, groups_in = normalize_inputs(candidates, references)
        enc = self.encoder
        layers = (self.layer,) if layers is None else check_layers(layers, enc.num_layers, self.spec.name)
        call = self._pairs(cands, groups_in, doc_ids)
        if keep == "scores":
            idf = idf_weights if idf_weights is not None else self.idf_weights(call.flat_refs) if self.idf else None
            if idf is not None and idf_weights is None:
                self._last_idf = idf
            table = self._pair_table(call, layers, idf, True, progress)
            return replace(self._stats(call, layers), pair_table=table, table_idf=idf)
        cand_best: list[np.ndarray] = [None] * len(call.flat_refs)  # type: ignore[list-item]
        ref_best: list[np.ndarray] = [None] * len(call.flat_refs)  # type: ignore[list-item]
        with self.guarded(call.distinct):
            for pairs, vecs in self._embedded_chunks(call, layers, progress):
                cb, rb = match_batched([vecs[call.cand_of(p)] for p in pairs], [vecs[call.ref_of(p)] for p in pairs])
                for j, p in enumerate(pairs):
                    cand_best[p], ref_best[p] = cb[j], rb[j]
        return self._stats(call, layers, cand_best, ref_best)

    def _pairs(self, cands: list[str], groups_in: Sequence[Sequence[str]],
               doc_ids: Sequence | None = None) -> CallPairs:
        """The call's pairs, both sides tokenized as this scorer scores them; with context, each side's sequence
        (:func:`~bertscore_viz.engine.context.document_windows`)."""
        docs = check_doc_ids(doc_ids, len(cands))
        flat_refs, pair_cand, groups = flatten_groups(groups_in)
        call = CallPairs(cands, flat_refs, pair_cand, groups, self.encode(cands), self.encode(flat_refs))
        if not self.context:
            return call
        enc = self.encoder
        prefix, suffix = enc.text_tokenizer.special_layout
        cw, rw, counts = document_windows([t.ids for t in call.cand_tok], [t.ids for t in call.ref_tok], groups, docs,
                                          self.context, self.context_source, (len(prefix), len(suffix)),
                                          separator_id(enc.tokenizer.sep_token_id, suffix), enc.max_length)
        units = {w.key: w for w in cw + rw}
        return replace(call, cand_keys=[w.key for w in cw], ref_keys=[w.key for w in rw], units=units,
                       report=ContextReport(self.context, self.context_source, **counts))

    def _pair_table(self, call: CallPairs, layers: Sequence[int], idf: IdfWeights | None, plain: bool,
                    progress: ProgressFn | None) -> dict:
        """Raw P/R/F of every pair at ``layers``, without idf (when ``plain``) and with ``idf`` (when given), computed
        on the device in one model pass: ``{(layer, idf on): ((n_pairs, 3) float64, notes)}``."""
        enc = self.encoder
        cand_ids = [t.ids for t in call.cand_tok]
        ref_ids = [t.ids for t in call.ref_tok]
        pair_cand = call.pair_cand
        max_id = max((int(a.max()) for a in cand_ids + ref_ids if len(a)), default=-1)
        size = max(len(enc.tokenizer), max_id + 1)
        variants = ([False] if plain else []) + ([True] if idf is not None else [])
        weights = [weight_vector(idf if on else None, enc.special_ids, size) for on in variants]
        pc = np.asarray(pair_cand, dtype=np.int64)
        flags = []
        for w in weights:
            c_empty, c_unweighted = side_flags(cand_ids, w, enc.special_ids)
            r_empty, r_unweighted = side_flags(ref_ids, w, enc.special_ids)
            flags.append((c_empty[pc], r_empty, c_unweighted[pc] | r_unweighted))
        pair_c_empty, r_empty = flags[0][0], flags[0][1]
        out = np.empty((len(layers), len(call.flat_refs), len(weights), 3), dtype=np.float64)
        with self.guarded(call.distinct):
            for pairs, vecs in self._embedded_chunks(call, layers, progress):
                for k in range(len(layers)):
                    out[k, pairs] = score_batched(
                        [vecs[call.cand_of(p)][k] for p in pairs], [vecs[call.ref_of(p)][k] for p in pairs],
                        [cand_ids[pair_cand[p]] for p in pairs], [ref_ids[p] for p in pairs], weights,
                        pair_c_empty[pairs], r_empty[pairs])
        either_empty = pair_c_empty | r_empty
        table = {}
        for j, on in enumerate(variants):
            notes = {"empty_candidate": np.flatnonzero(pair_c_empty).tolist(),
                     "empty_reference": np.flatnonzero(r_empty).tolist(),
                     "degenerate_idf": np.flatnonzero(~either_empty & flags[j][2]).tolist()}
            for k, layer in enumerate(layers):
                table[(layer, on)] = (np.ascontiguousarray(out[k, :, j]), notes)
        return table

    def _stats(self, call: CallPairs, layers: Sequence[int], cand_best: Sequence[np.ndarray] = (),
               ref_best: Sequence[np.ndarray] = ()) -> MatchStats:
        """:class:`MatchStats` of a call's pairs at ``layers``, with their per-token maxima when given."""
        enc = self.encoder
        return MatchStats(tuple(layers), tuple(call.cands), tuple(call.flat_refs),
                          np.asarray(call.pair_cand, dtype=np.int64), tuple(call.groups),
                          tuple(t.ids for t in call.cand_tok), tuple(t.ids for t in call.ref_tok),
                          np.array([t.dropped for t in call.cand_tok], dtype=np.int64),
                          np.array([t.dropped for t in call.ref_tok], dtype=np.int64),
                          tuple(cand_best), tuple(ref_best), enc.special_ids, unk_id(enc), context=call.report)

    def _embedded_chunks(self, call: CallPairs, layers: Sequence[int], progress: ProgressFn | None):
        """Embed the pairs chunk by chunk (:data:`CHUNK_PAIRS` pairs): yields ``(pairs, vectors)`` where ``pairs``
        is an int64 array of pair indices and ``vectors`` maps each text of those pairs to its unit-vector tensors
        at ``layers`` (on the encoder's device). Progress counts distinct texts embedded, over the whole call, and
        never goes down.

        Pairs that share a reference are embedded in the same chunk (several systems' outputs against one test
        set arrive system after system): each reference is embedded once, whatever the cache's bound, instead of
        once per system when the cache cannot hold a whole system's texts."""
        enc = self.encoder
        total = call.distinct
        shown = [0]

        def report(value: int) -> None:
            if progress:
                shown[0] = max(shown[0], min(total, value))
                progress(shown[0], total)

        report(0)
        first: dict[str, int] = {}
        n_pairs = len(call.flat_refs)
        order = np.argsort(np.fromiter((first.setdefault(call.ref_of(p), p) for p in range(n_pairs)),
                                       dtype=np.int64, count=n_pairs), kind="stable")
        seen: set[str] = set()
        for start in range(0, len(order), CHUNK_PAIRS):
            pairs = order[start:start + CHUNK_PAIRS]
            texts = list(dict.fromkeys([call.cand_of(p) for p in pairs] + [call.ref_of(p) for p in pairs]))
            offset = len(seen)

            def chunk_progress(d: int, _t: int, offset: int = offset) -> None:
                report(offset + d)

            if call.units is None:
                vecs = dict(zip(texts, enc.embed_layers(texts, layers, batch_size=self.batch_size,
                                                        token_budget=self.token_budget, long_texts=self.long_texts,
                                                        progress=chunk_progress)))
            else:  # each sequence embedded whole, its segment's own vectors kept
                units = [call.units[t] for t in texts]
                whole = enc.embed_ids([u.ids for u in units], layers, batch_size=self.batch_size,
                                      token_budget=self.token_budget, progress=chunk_progress)
                vecs = {t: [v if not u.n_context else v[torch.as_tensor(u.own, device=v.device)] for v in vs]
                        for t, u, vs in zip(texts, units, whole)}
            seen.update(texts)
            report(len(seen))
            yield pairs, vecs
            del vecs
            release_free_memory()  # this chunk's vectors, once matched

    def _score_on_device(self, cands: list[str], groups_in: list[list[str]], progress: ProgressFn | None,
                         doc_ids: Sequence | None = None) -> ScoreResult:
        """:meth:`score`'s path: P/R/F of each pair computed on the device (:meth:`_pair_table`) in the matching
        batches, with idf known before matching (the references are tokenized first); only ``(n_pairs, 3)``
        float64 comes back to the host, and the result equals ``result(match(...))`` (to about 1e-16)."""
        layer = self.layer
        call = self._pairs(cands, groups_in, doc_ids)
        idf = self.idf_weights(call.flat_refs) if self.idf else None
        if idf is not None:
            self._last_idf = idf
        table = self._pair_table(call, (layer,), idf, not self.idf, progress)
        pair, notes = table[(layer, self.idf)]
        scored = PairScores(pair, notes, layer, self.idf)
        return self._result_from_pairs(self._stats(call, (layer,)), scored, "auto")

    def result(self, stats: MatchStats, layer: int | None = None, idf: bool | None = None,
               baseline: np.ndarray | None | str = "auto", labels: Sequence[str] | None = None) -> ScoreResult:
        """Scores from :class:`MatchStats` without a model pass (any computed layer, idf on or off).

        Args:
            stats: from :meth:`match`.
            layer: default this scorer's layer.
            idf: default this scorer's setting.
            baseline: ``"auto"`` = this scorer's rescaling setting (looked up for ``layer``); None = raw;
                or a ``(3,)`` P/R/F baseline.
            labels: how the warnings name each candidate (default: its index from 0), e.g. ``"row 6"``.
        """
        layer = self.layer if layer is None else int(layer)
        idf = self.idf if idf is None else bool(idf)
        if isinstance(baseline, str):
            baseline = self.baseline_for(layer) if self.rescale_with_baseline else None
        if not idf:
            weights = None
        elif not stats.keeps_tokens and stats.table_idf is not None:
            weights = stats.table_idf  # the idf these pair scores were computed with (match(keep="scores"))
        else:
            weights = self.idf_weights(stats.references)
            if self._fixed_idf is None and self.idf_sentences is None:
                self._last_idf = weights
        pair, notes = stats.pair_scores(layer, weights)
        scored = PairScores(pair, notes, layer, idf)
        return self._result_from_pairs(stats, scored, baseline, labels)

    def _result_from_pairs(self, stats: MatchStats, scored: PairScores, baseline: np.ndarray | None | str,
                           labels: Sequence[str] | None = None) -> ScoreResult:
        """Each candidate's maximum over its references, rescaling, warnings and signature, from the raw
        ``(n_pairs, 3)`` P/R/F of every pair (:meth:`result` and :meth:`score` share it)."""
        layer, idf = scored.layer, scored.idf
        if isinstance(baseline, str):
            baseline = self.baseline_for(layer) if self.rescale_with_baseline else None
        best, arg = best_of_references(scored.scores, stats.groups)
        raw_p, raw_r, raw_f = best[:, 0], best[:, 1], best[:, 2]
        if baseline is not None:
            baseline = np.asarray(baseline, dtype=np.float64)
            scaled = rescaled(best, baseline)
            p, r, f = scaled[:, 0], scaled[:, 1], scaled[:, 2]
        else:
            p, r, f = raw_p, raw_r, raw_f
        msgs = score_messages(stats, scored.notes, idf, labels) + context_messages(stats.context)
        sig = Signature(self.spec.name, layer, idf, baseline is not None, self.custom_baseline,
                        self.precision, self.encoder.transformers_version, idf_source=self.idf_source if idf else "",
                        long_texts=self.long_texts, context=context_tag(self.context, self.context_source))
        return ScoreResult(p, r, f, raw_p, raw_r, raw_f, sig, baseline, arg, tuple(msgs), stats.context)

    def score(self, candidates, references, progress: ProgressFn | None = None,
              doc_ids: Sequence | None = None) -> ScoreResult:
        """BERTScore of each candidate against its reference(s).

        Args:
            candidates: list of strings.
            references: list of strings, or a list of lists for several references per candidate (the maximum
                of P, R and F1 is taken separately, as bert-score does).
            progress: ``progress(done, total)`` in sentences embedded.
            doc_ids: with ``context``, each candidate's document id (None or "": scored alone); the previous
                segments of a document are those before it in this list (docs/CONTEXT.md).

        Returns:
            :class:`ScoreResult` with warnings for empty sentences, truncation and degenerate idf.

        Raises:
            InputError: unequal lengths or non-string input, with both lengths or the bad index.

        Each pair's P/R/F is computed on the device, in the matching batches, and only those three numbers per pair
        come back to the host (no per-token maxima are kept; :meth:`match` keeps them for the app, other layers and
        explanations). The ``guard`` is held around the model pass.
        """
        cands, groups = normalize_inputs(candidates, references)
        check_doc_ids(doc_ids, len(cands))
        if not cands:
            empty = np.zeros(0)
            return ScoreResult(empty, empty, empty, empty, empty, empty, self.signature, self.baseline,
                               np.zeros((0, 3), dtype=np.int64))
        res = self._score_on_device(cands, groups, progress, doc_ids)
        for m in res.warnings:
            _warnings.warn(m, BertScoreWarning, stacklevel=2)
        return res

    # --- one pair ---------------------------------------------------------------------------------------------
    def explain(self, candidate: str, reference: str | Sequence[str], *, cand_context: Sequence[str] = (),
                ref_context: Sequence[str] = ()):
        """Token-level explanation of one candidate against one reference (or several).

        ``cand_context``, ``ref_context``: the previous segments (oldest first) each side is encoded after
        (docs/CONTEXT.md; every reference gets ``ref_context``); the explanation then carries their tokens
        (``cand_context``, ``ref_context``) and its P/R/F1 equal the :meth:`score` row whose context they are.

        idf, when on, comes from ``idf_weights`` or ``idf_sentences`` if given, else from the references of this
        scorer's last :meth:`score` (or :meth:`match`) call, else from the reference(s) of this call
        (:meth:`explanation_idf`): P/R/F1 equal that :meth:`score` call's row for the pair
        (:func:`bertscore_viz.engine.explain.explain`). idf from one reference alone is degenerate (recall NaN, F1
        0, as in bert-score): a :class:`BertScoreWarning` says so.

        Returns:
            :class:`PairExplanation` for one reference; :class:`MultiReferenceExplanation` for a list.
        """
        pair = explain_pair(self, candidate, reference, cand_context, ref_context)
        for m in pair.warnings:
            if m.startswith("idf is degenerate"):  # a NaN recall must not pass unseen
                _warnings.warn(m, BertScoreWarning, stacklevel=2)
        return pair


def score(candidates, references, model: str | None = None, layer: int | None = None, idf: bool = False,
          rescale_with_baseline: bool = False, lang: str = "en", baseline_path: str | None = None,
          batch_size: int = 64, device: str | None = None, precision: str = "fp32",
          progress: ProgressFn | None = None, long_texts: str = "truncate", context: int = 0,
          context_source: str = DEFAULT_CONTEXT_SOURCE, doc_ids: Sequence | None = None) -> ScoreResult:
    """BERTScore in one call; see :class:`Scorer` for the options.

    >>> res = score(["The cat sat on the mat."], ["There is a cat sitting on the mat."], layer=6)
    >>> round(float(res.f1[0]), 6)
    0.910953
    """
    scorer = Scorer(model=model, layer=layer, idf=idf, rescale_with_baseline=rescale_with_baseline, lang=lang,
                    baseline_path=baseline_path, batch_size=batch_size, device=device, precision=precision,
                    long_texts=long_texts, context=context, context_source=context_source)
    return scorer.score(candidates, references, progress=progress, doc_ids=doc_ids)
