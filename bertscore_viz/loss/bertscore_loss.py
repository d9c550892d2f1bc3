"""BERTScore as a differentiable training loss: :class:`BERTScoreLoss`, and Gumbel-softmax / straight-through helpers.

The numbers are the engine's (docs/SEMANTICS.md), computed by the batched kernels of
:mod:`bertscore_viz.engine.tensor_ops` with gradients: on one-hot inputs the loss gives exactly what
:meth:`bertscore_viz.Scorer.score` gives for the same texts (to float32 rounding, about 1e-7). A generator is scored
through "soft predictions" (as in BERTTune, ACL 2021): a probability distribution over the scorer's vocabulary becomes
the expected word embedding ``probs @ E`` (``E`` the scorer's input embedding matrix, ``(V, H)``), fed to the scorer as
``inputs_embeds``.

Special tokens. The scorer's tokenizer wraps a sentence in special tokens (``[CLS] ... [SEP]`` for BERT,
``<s> ... </s>`` for RoBERTa); they take part in the matching with weight 0 (SEMANTICS.md, sections 3-4). With
``add_special_tokens=True`` (the default) every id, probability or embedding input holds **content tokens only**
(what a generator emits) and the loss adds the tokenizer's own prefix and suffix around the real positions of each
row, exactly where the tokenizer puts them. With ``add_special_tokens=False`` the inputs already hold them (e.g.
ids from ``tokenizer(texts)``): ids are recognised by value; for probabilities, a position's weight is the
expected weight of its distribution (0 on a one-hot special); for ``inputs_embeds`` the first and last real
positions of each row are taken as the special tokens. References given as texts are always tokenized by the
scorer's tokenizer (stripped, specials added, truncated to the model's maximum length), as in scoring.

Long texts. With ``long_texts="window"`` (as in scoring, docs/SEMANTICS.md section 10) a candidate or reference
longer than the model's maximum length is embedded in overlapping windows of that length, each token's vector from
the window where it has the most context; gradients flow through every window a token's vector comes from. In the
default ``"truncate"`` mode a sequence longer than the maximum is an error (references given as texts are cut).

Sign. ``loss(candidates, references)`` returns ``1 - S`` per sample, where ``S`` is the chosen metric (F1 by
default, optionally rescaled), reduced by ``reduction``: minimising it maximises BERTScore, and a perfect
candidate has loss 0 (slightly below 0 when F1 rounds above 1, or with rescaling when S > 1). The scores
themselves, with gradients, come from :meth:`BERTScoreLoss.scores`.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import torch

from bertscore_viz.engine import tensor_ops as ops
from bertscore_viz.engine.devices import precision_dtype
from bertscore_viz.engine.encoder import (
    layer_states,
    model_through_layer,
    windowed_layer_states,
)
from bertscore_viz.engine.idf import IdfWeights, compute_idf
from bertscore_viz.engine.options import ScoringOptions
from bertscore_viz.engine.tokenizer import special_layout
from bertscore_viz.errors import InputError, ModelError, shorten
from bertscore_viz.loss.inputs import (
    TensorCache,
    check_options,
    flatten_references,
    id_to_token,
    input_kind,
    is_id_sequence,
    right_padded_lengths,
    shared_encoder,
    wrap_rows,
)

if TYPE_CHECKING:
    from transformers import PreTrainedModel

__all__ = ["REFERENCE_TOKEN_BUDGET", "BERTScoreOutput", "BERTScoreLoss"]

#: Padded token cells in one reference forward batch.
REFERENCE_TOKEN_BUDGET = 4096


class BERTScoreOutput(NamedTuple):
    """Per-sample scores, each ``(batch,)``, differentiable with respect to the candidates."""

    precision: torch.Tensor
    recall: torch.Tensor
    f1: torch.Tensor


class BERTScoreLoss(torch.nn.Module):
    # attributes set with object.__setattr__ or register_buffer, for the type checker (nn.Module's __getattr__
    # would type them Tensor | Module); annotations only, no class attributes
    _net: torch.nn.Module
    _embedding_matrix: torch.Tensor
    _own_model: torch.nn.Module | None
    _uniform: torch.Tensor
    _fixed_idf: torch.Tensor | None
    baseline: torch.Tensor | None
    """BERTScore of candidates against references as a differentiable loss (``1 - S`` per sample).

    Built with the options of :class:`bertscore_viz.Scorer`; the scorer's weights are frozen unless
    ``train_scorer=True``, and it always runs without dropout (BERTScore is a deterministic metric).

    Args:
        model, layer, idf, idf_sentences, rescale_with_baseline, lang, baseline_path, baseline_table, device: as
            for :class:`~bertscore_viz.Scorer` (default: the bundled all-MiniLM-L6-v2 at its layer 4, no idf, raw).
            With ``idf`` and no ``idf_sentences``, idf comes from the references of each call, as in
            ``Scorer.score``; for training, fixed ``idf_sentences`` (e.g. the training references) are usually
            what you want. ``device`` is where the loss starts: ``loss.to(device)`` / ``.cuda()`` move it later
            (:meth:`_apply`), and scores come back on the candidates' device.
        batch_size, token_budget: as for ``Scorer``, for the forward batches of the references (the candidates
            are one batch: the caller's).
        precision: ``"fp32"`` (default, exact), ``"bf16"`` or ``"fp16"`` (CUDA only), as for ``Scorer``: the
            scorer's forward runs under ``torch.autocast`` in that precision. Unlike ``Scorer``, which converts the
            model's weights, the weights stay float32 (the shared model, or the trained copy: its optimiser steps
            need float32), which is how mixed-precision training is done; the numbers then differ from the exact
            ones by about 1e-2, as Scorer's do.
        temperature: None (default) for the exact greedy maximum, the score you report; a positive value uses
            the smooth maximum ``t * logsumexp(sim / t)`` (denser gradients, slightly higher numbers).
        metric: ``"f1"`` (default), ``"precision"`` or ``"recall"``.
        reduction: ``"mean"`` (default), ``"sum"`` or ``"none"`` (one value per sample).
        train_scorer: let gradients reach the scorer's own weights (fine-tuning the metric model). The loss then
            holds its own copy of the model, registered as a submodule, and references are re-embedded on
            every call (with gradients) instead of cached.
        add_special_tokens: True (default): id/probability/embedding inputs hold content tokens only and the loss
            adds the tokenizer's special tokens around them; False: they already include them.
        dtype: ``torch.float32`` (default, the exact scoring precision) or ``torch.float64`` (gradient checks).
        reference_cache_bytes: bound of the cache of reference embeddings (frozen scorer only).
        long_texts: ``"truncate"`` (default) or ``"window"``: sequences longer than the model's maximum length are
            embedded in overlapping windows, as ``Scorer(long_texts="window")`` embeds them.
        generator_tokenizer: the generator's tokenizer (or its vocabulary: a mapping token -> id, or a list of
            tokens in id order), checked here against the scorer's, id by id: a generator whose ids mean other
            tokens would be scored as gibberish without any error, as sizes alone cannot tell.

    Raises:
        ModelError, BaselineError, InputError: for options that cannot work, before any data is seen.

    Example:
        >>> loss_fn = BERTScoreLoss()                                       # doctest: +SKIP
        >>> logits = torch.randn(2, 8, loss_fn.vocab_size, requires_grad=True)  # doctest: +SKIP
        >>> loss = loss_fn(torch.softmax(logits, -1), ["A cat.", "A dog."])  # doctest: +SKIP
        >>> loss.backward()                                                 # doctest: +SKIP
    """

    def __init__(self, model: str | None = None, layer: int | None = None, idf: bool = False,
                 idf_sentences: Sequence[str] | None = None, rescale_with_baseline: bool = False,
                 lang: str = "en", baseline_path: str | None = None, device: str | None = None,
                 temperature: float | None = None, metric: str = "f1", reduction: str = "mean",
                 train_scorer: bool = False, add_special_tokens: bool = True, dtype: torch.dtype = torch.float32,
                 reference_cache_bytes: int = 256 * 2**20, precision: str = "fp32", batch_size: int = 64,
                 token_budget: int = REFERENCE_TOKEN_BUDGET, baseline_table=None, generator_tokenizer=None,
                 long_texts: str = "truncate"):
        super().__init__()

        check_options(metric, reduction, temperature, dtype, precision, batch_size, token_budget)
        # The scorer's model is the shared fp32 one: reduced precision is applied by autocast in _hidden.
        options = ScoringOptions(model=model, layer=layer, idf=idf, rescale_with_baseline=rescale_with_baseline,
                                 lang=lang, baseline_path=baseline_path, device=device, batch_size=batch_size,
                                 token_budget=token_budget, long_texts=long_texts)
        self.scorer = options.scorer(idf_sentences=idf_sentences, baseline_table=baseline_table)
        self.long_texts = self.scorer.long_texts
        enc = self.scorer.encoder  # loads the model (or reuses the process-wide one) and checks the layer
        if precision == "fp16" and not enc.device.startswith("cuda"):
            raise InputError("precision='fp16' needs a CUDA device; on the CPU use precision='bf16' (or the exact "
                             "'fp32').")
        self.encoder = enc
        self.layer = self.scorer.layer
        self.device = torch.zeros(0, device=enc.device).device  # with its index ("cuda:0"), as tensors report it
        self.dtype = dtype
        self.precision = precision
        self.batch_size = int(batch_size)
        self.token_budget = int(token_budget)
        self.temperature = temperature
        self.metric = metric
        self.reduction = reduction
        self.train_scorer = bool(train_scorer)
        self.add_special_tokens = bool(add_special_tokens)
        self.reference_cache_bytes = int(reference_cache_bytes)
        # A copy of the model that is not a submodule (float64, frozen): moved by _apply, not by Module.
        object.__setattr__(self, "_own_model", None)
        if self.train_scorer or dtype != torch.float32:
            # Training or converting the process-wide model would change every Scorer's numbers: use a copy.
            own = copy.deepcopy(enc.model).to(dtype=dtype)
            own.eval()
            own.requires_grad_(self.train_scorer)
            if self.train_scorer:
                self.scorer_model = own  # a submodule: its parameters appear in self.parameters()
            else:
                object.__setattr__(self, "_own_model", own)
            base = own
        else:
            # Share the encoder's model (no second copy in memory). Not registered as a submodule, so that a
            # parent's .train() cannot switch on its dropout; its weights never need gradients (the encoder runs
            # it under inference_mode only).
            base = enc.model
            base.requires_grad_(False)
        self._use_model(base)
        self.vocab_size, self.hidden_size = (int(x) for x in self._embedding_matrix.shape)
        self._prefix, self._suffix = self._special_layout()
        self.special_ids = frozenset(enc.special_ids)
        if generator_tokenizer is not None:
            self.check_vocabulary(generator_tokenizer)
        # Buffers (not saved in the state dict): .to() / .cuda() move them with the module.
        uniform = torch.ones(self.vocab_size, dtype=dtype, device=self.device)
        uniform[[i for i in self.special_ids if i < self.vocab_size]] = 0
        self.register_buffer("_uniform", uniform, persistent=False)
        self.register_buffer("_fixed_idf", None, persistent=False)
        self.register_buffer("baseline", None if self.scorer.baseline is None else torch.as_tensor(
            np.asarray(self.scorer.baseline, dtype=np.float64), dtype=dtype, device=self.device), persistent=False)
        self._ref_cache = TensorCache(self.reference_cache_bytes)

    # --- pieces -----------------------------------------------------------------------------------------------
    def _special_layout(self) -> tuple[list[int], list[int]]:
        """The ids the tokenizer puts before and after the content of a sentence (as the window plans use them)."""
        try:
            return special_layout(self.encoder.tokenizer)
        except ModelError as exc:
            raise ModelError(f"{exc} Pass inputs that include the special tokens and add_special_tokens=False.") \
                from None

    def _use_model(self, base: PreTrainedModel) -> None:
        """Score with ``base``: the view cut after the requested layer, as the scorer runs it (parameters shared),
        and its input embedding matrix ``(V, H)``, kept out of the module's parameters (with train_scorer it is
        already one, in scorer_model)."""
        object.__setattr__(self, "_net", model_through_layer(base, self.layer))
        object.__setattr__(self, "_embedding_matrix", base.get_input_embeddings().weight)

    def _apply(self, fn, recurse: bool = True):
        """What ``.to()``, ``.cuda()``, ``.cpu()`` run: moves the buffers (and a trained scorer, a submodule) as
        for any module, and then the rest to the new device: the shared model is replaced by the process-wide
        encoder on that device (loaded once, as for a ``Scorer`` there; the model on the old device stays for
        the Scorers using it), a float64 copy is moved, the reference cache is emptied (it is re-filled there).

        Raises:
            InputError: a conversion of the dtype (``.half()``, ``.double()``, ``.to(dtype)``): the dtype and
                the forward precision are options of the constructor.
        """
        probe = fn(torch.zeros(1, dtype=self.dtype, device=self.device))
        if probe.dtype != self.dtype:
            raise InputError(f"BERTScoreLoss computes in {self.dtype}; converting it to {probe.dtype} "
                             "(.half(), .double(), .to(dtype)) is not supported. Build it with "
                             "BERTScoreLoss(dtype=torch.float64) for float64, or precision='bf16' / 'fp16' for a "
                             "reduced-precision forward.")
        out = super()._apply(fn, recurse)
        if probe.device != self.device:
            self._move_to(probe.device)
        return out

    def _move_to(self, device: torch.device) -> None:
        if self.train_scorer:
            base = self.scorer_model  # moved by Module._apply
        elif self._own_model is not None:
            base = self._own_model.to(device)
        else:
            enc = shared_encoder(self.scorer.spec, device)
            if self.layer > enc.num_layers:  # cannot happen for the same model; kept as the Scorer checks it
                raise ModelError(f"Layer {self.layer} does not exist in {self.scorer.spec.name}.")
            self.scorer = self.scorer.replace(encoder=enc)
            self.encoder = enc
            base = enc.model
            base.requires_grad_(False)
        self.device = device
        self._use_model(base)
        self.clear_cache()

    def check_vocabulary(self, generator_tokenizer) -> None:
        """InputError unless the generator's vocabulary gives every id the scorer's token.

        Args:
            generator_tokenizer: a tokenizer (``get_vocab()``), a mapping token -> id, or a list of tokens.
        """
        theirs = id_to_token(generator_tokenizer)
        ours = id_to_token(self.encoder.tokenizer)
        bad = [i for i in range(min(len(theirs), len(ours))) if theirs[i] != ours[i]]
        if not bad and len(theirs) == len(ours):
            return
        parts = []
        if bad:
            shown = "; ".join(f"id {i} is {theirs[i]!r} for the generator and {ours[i]!r} for the scorer"
                              for i in bad[:3])
            parts.append(f"{len(bad)} id(s) differ, first {shown}" + (" ..." if len(bad) > 3 else ""))
        if len(theirs) != len(ours):
            parts.append(f"the generator has {len(theirs)} ids and the scorer {len(ours)}")
        raise InputError(
            f"The generator's vocabulary is not the scorer's ({self.scorer.spec.name!r}): {'; '.join(parts)}. "
            "Its token ids would be scored as other words. Train the generator with the scorer's tokenizer, map "
            "its distribution onto the scorer's vocabulary (probs @ a (generator V, scorer V) matrix), or build the "
            "loss with a scorer model that shares the generator's tokenizer (model=...).")

    def train(self, mode: bool = True):
        """Sets the training flag as usual but keeps the scorer without dropout."""
        super().train(mode)
        self._net.eval()
        if self.train_scorer:
            self.scorer_model.eval()
        return self

    @property
    def embedding_matrix(self) -> torch.Tensor:
        """The scorer's input word-embedding matrix ``(V, H)`` (expected embeddings are ``probs @`` it)."""
        return self._embedding_matrix

    def encode_texts(self, texts: Sequence[str]) -> tuple[torch.Tensor, torch.Tensor]:
        """Token ids of texts as this loss expects them: ``(ids, attention_mask)``, ``(b, t)``, right-padded,
        content tokens only when ``add_special_tokens`` (the default), else with the tokenizer's special tokens.
        Tokenized as in scoring (stripped, truncated to the model's maximum length; whole in window mode)."""
        toks = self.scorer.encode(list(texts))
        a, z = len(self._prefix), len(self._suffix)
        rows = [t.ids[a:len(t.ids) - z] if self.add_special_tokens else t.ids for t in toks]
        ids, mask = ops.pad_sequences(rows, self.encoder.pad_id, dtype=torch.long, width=1)
        return ids.to(self.device), mask.long().to(self.device)

    def _weight_vector(self, ref_ids: list[np.ndarray]) -> torch.Tensor:
        """``(V,)`` weight of every vocabulary id: idf (as the Scorer computes it) or 1, and 0 for specials."""
        if not self.scorer.idf:
            return self._uniform
        if self.scorer.idf_sentences is not None:
            if self._fixed_idf is None:
                self._fixed_idf = self._idf_vector(self.scorer.idf_weights([]))
            return self._fixed_idf
        return self._idf_vector(compute_idf(ref_ids))

    def _idf_vector(self, idf: IdfWeights) -> torch.Tensor:
        vec = torch.full((self.vocab_size,), idf.unseen, dtype=self.dtype)
        if idf.weights:
            keys = torch.as_tensor([k for k in idf.weights if k < self.vocab_size], dtype=torch.long)
            vals = torch.as_tensor([idf.weights[int(k)] for k in keys.tolist()], dtype=self.dtype)
            vec[keys] = vals
        return vec.to(self.device)

    def _hidden(self, input_ids=None, inputs_embeds=None, attention_mask=None) -> torch.Tensor:
        """Unit token vectors at the scorer's layer, ``(b, t, H)``."""
        width = (input_ids if input_ids is not None else inputs_embeds).shape[1]
        reduced = None if self.precision == "fp32" else precision_dtype(self.precision)
        if width <= self.encoder.max_length:
            hidden = layer_states(self._net, self.layer, input_ids=input_ids, inputs_embeds=inputs_embeds,
                                  attention_mask=attention_mask, autocast=reduced)
        elif self.long_texts == "window":  # rows longer than the maximum, in windows, as scoring embeds them
            plans = [self.encoder.window_plan(max(int(n), 1)) for n in attention_mask.long().sum(dim=1).tolist()]
            hidden = windowed_layer_states(self._net, self.layer, plans, input_ids=input_ids,
                                           inputs_embeds=inputs_embeds, pad_id=int(self.encoder.pad_id),
                                           token_budget=self.token_budget, autocast=reduced)
        else:
            raise InputError(f"A sequence of {width} positions (special tokens included) is longer than the "
                             f"model's maximum of {self.encoder.max_length}. Truncate the candidates or references, "
                             "or build the loss with long_texts='window' to embed them in windows.")
        return ops.normalize(hidden.to(self.dtype), eps=1e-12)

    # --- references -------------------------------------------------------------------------------------------
    def _reference_ids(self, references, batch: int, reference_mask: torch.Tensor | None = None
                       ) -> tuple[list[np.ndarray], list[tuple[int, int]]]:
        """Flattened reference id arrays (specials included) and each candidate's ``(start, end)`` rows.

        Ids given by the caller must not hold the tokenizer's padding id (it would be scored as a word): a padded
        ``(b, t)`` tensor comes with ``reference_mask``, which cuts each row to its real tokens."""
        flat, groups = flatten_references(references, batch, reference_mask)
        texts = [(k, r) for k, r in enumerate(flat) if isinstance(r, str)]
        out: list[np.ndarray] = [None] * len(flat)  # type: ignore[list-item]
        if texts:
            for (k, _), tok in zip(texts, self.scorer.encode([r for _, r in texts])):
                out[k] = tok.ids
        for k, r in enumerate(flat):
            if out[k] is not None:
                continue
            if not is_id_sequence(r):
                raise InputError(f"Reference {k} is {type(r).__name__} {shorten(r)}; expected a string, a sequence "
                                 "of token ids, or a list of them (several references).")
            ids = np.asarray(r.detach().cpu() if isinstance(r, torch.Tensor) else r, dtype=np.int64).reshape(-1)
            pad = self.encoder.tokenizer.pad_token_id
            if pad is not None and np.any(ids == pad):
                pos = int(np.flatnonzero(ids == pad)[0])
                raise InputError(
                    f"Reference {k} holds the padding id {pad} ({self.encoder.tokenizer.pad_token}) at position "
                    f"{pos}: padding would be scored as a word. Pass reference_mask=(batch, tokens), 1 on real "
                    "tokens (e.g. the tokenizer's attention_mask), with padded reference ids, or give each "
                    "reference as its own 1-D sequence without padding.")
            if self.add_special_tokens:
                ids = np.concatenate([np.asarray(self._prefix, dtype=np.int64), ids,
                                      np.asarray(self._suffix, dtype=np.int64)])
            out[k] = ids
        for k, ids in enumerate(out):
            if len(ids) and (ids.min() < 0 or ids.max() >= self.vocab_size):
                raise InputError(f"Reference {k} holds token id {int(ids.max())}, outside the scorer's vocabulary "
                                 f"of {self.vocab_size}. Give ids from the scorer's tokenizer (or texts).")
        return out, groups

    def _reference_vectors(self, ids: list[np.ndarray]) -> list[torch.Tensor]:
        """Unit vectors ``(n_i, H)`` of each reference: cached and without gradient when the scorer is frozen."""
        out: list[torch.Tensor | None] = [None] * len(ids)
        todo: dict[bytes, list[int]] = {}
        for k, x in enumerate(ids):
            key = x.tobytes()
            hit = None if self.train_scorer else self._ref_cache.get(key)
            if hit is None:
                todo.setdefault(key, []).append(k)
            else:
                out[k] = hit
        if todo:
            keys = sorted(todo, key=lambda k: -len(ids[todo[k][0]]))
            start = 0
            while start < len(keys):
                longest = len(ids[todo[keys[start]][0]])
                n = max(1, min(self.batch_size, self.token_budget // max(longest, 1)))
                chunk = keys[start:start + n]
                start += n
                rows = [ids[todo[k][0]] for k in chunk]
                batch, mask = ops.pad_sequences(rows, self.encoder.pad_id, dtype=torch.long)
                with torch.set_grad_enabled(self.train_scorer and torch.is_grad_enabled()):
                    hidden = self._hidden(input_ids=batch.to(self.device), attention_mask=mask.long().to(self.device))
                for key, r, h in zip(chunk, rows, hidden):
                    vec = h[:len(r)]
                    if not self.train_scorer:
                        vec = vec.detach().clone()
                        self._ref_cache.put(key, vec)
                    for k in todo[key]:
                        out[k] = vec
        return out  # type: ignore[return-value]

    def clear_cache(self) -> None:
        """Forget the cached reference embeddings."""
        self._ref_cache.clear()

    # --- candidates -------------------------------------------------------------------------------------------
    def _candidates(self, candidates: torch.Tensor, attention_mask, input_type: str, weights,
                    vec: torch.Tensor):
        """``(vectors (b, c, H), mask (b, c) bool, weights (b, c), empty (b,))`` of the candidates, given the
        ``(V,)`` weight of every vocabulary id."""
        kind = input_kind(candidates, input_type, self.vocab_size, self.hidden_size, self.scorer.spec.name)
        w: torch.Tensor | None  # None until known: the "embeds" kind's weights come last
        b, t = candidates.shape[:2]
        if attention_mask is None:
            mask = torch.ones((b, t), dtype=torch.bool, device=self.device)
        else:
            if tuple(attention_mask.shape) != (b, t):
                raise InputError(f"attention_mask has shape {tuple(attention_mask.shape)}, expected {(b, t)} "
                                 "like the candidates.")
            mask = attention_mask.to(self.device).bool()
        lengths = right_padded_lengths(mask)
        a, z = len(self._prefix), len(self._suffix)
        dev, dt, wrap = self.device, self.dtype, self.add_special_tokens
        prefix = torch.as_tensor(self._prefix, dtype=torch.long, device=dev)
        suffix = torch.as_tensor(self._suffix, dtype=torch.long, device=dev)
        if weights is not None:
            if tuple(weights.shape) != (b, t):
                raise InputError(f"weights have shape {tuple(weights.shape)}, expected {(b, t)} like the candidates.")
            weights = weights.to(device=dev, dtype=dt) * mask.to(dt)
        elif kind == "embeds" and self.scorer.idf:
            raise InputError("idf needs to know which token each position is: give ids or probabilities, or pass "
                             "weights=(batch, tokens) with inputs_embeds, or build the loss with idf=False.")

        def wrapped(w: torch.Tensor) -> torch.Tensor:
            return wrap_rows(w, lengths, w.new_zeros(a), w.new_zeros(z), w.new_zeros(())) if wrap else w

        if kind == "ids":
            pad = int(self.encoder.pad_id)
            ids = candidates.to(dev)
            pad_token = self.encoder.tokenizer.pad_token_id
            if attention_mask is None and pad_token is not None and bool((ids == pad_token).any()):
                row = int(torch.nonzero((ids == pad_token).any(dim=1)).flatten()[0])
                raise InputError(f"Candidate row {row} holds the padding id {pad_token} and no attention_mask was "
                                 "given: padding would be scored as a word. Pass attention_mask=(batch, tokens), 1 "
                                 "on real tokens (loss.encode_texts gives both).")
            if bool(((ids < 0) | (ids >= self.vocab_size))[mask].any()):
                raise InputError(f"Candidate ids must be in 0..{self.vocab_size - 1} (the scorer's vocabulary), "
                                 f"got {int(ids[mask].max())} and {int(ids[mask].min())}. Use the scorer's "
                                 "tokenizer.")
            ids = torch.where(mask, ids, torch.full_like(ids, pad))
            if wrap:
                ids = wrap_rows(ids, lengths, prefix, suffix, ids.new_tensor(pad))
            full_mask = self._full_mask(lengths, wrap, ids.shape[1])
            vectors = self._hidden(input_ids=ids, attention_mask=full_mask.long())
            w = wrapped(weights) if weights is not None else vec[ids] * full_mask.to(dt)
            special = torch.zeros_like(full_mask)
            for s in self.special_ids:
                special |= ids == s
            empty = ~(full_mask & ~special).any(dim=1)
            return vectors, full_mask, w, empty
        x = candidates.to(device=dev, dtype=dt) * mask[..., None].to(dt)  # padding gets exactly zero gradient
        emb = x @ self._embedding_matrix if kind == "probs" else x
        if weights is not None:
            w = wrapped(weights)
        elif kind == "probs":
            w = wrapped(x @ vec)  # the expected weight of each position's distribution (exact on one-hot)
        else:
            w = None
        if wrap:
            matrix = self._embedding_matrix
            emb = wrap_rows(emb, lengths, matrix[prefix], matrix[suffix], emb.new_zeros(self.hidden_size))
        full_mask = self._full_mask(lengths, wrap, emb.shape[1])
        vectors = self._hidden(inputs_embeds=emb, attention_mask=full_mask.long())
        if kind == "embeds":  # no ids: weight 1 (or the given weights) on content, 0 on the special positions
            content = self._content_mask(lengths, wrap, emb.shape[1]).to(dt)
            w = content if w is None else w * content
        empty = lengths <= (0 if wrap else a + z)
        return vectors, full_mask, w, empty

    def _full_mask(self, lengths: torch.Tensor, wrap: bool, width: int) -> torch.Tensor:
        n = lengths + (len(self._prefix) + len(self._suffix) if wrap else 0)
        return torch.arange(width, device=lengths.device)[None, :] < n[:, None]

    def _content_mask(self, lengths: torch.Tensor, wrap: bool, width: int) -> torch.Tensor:
        """Real positions that are not the special prefix/suffix."""
        a, z = len(self._prefix), len(self._suffix)
        pos = torch.arange(width, device=lengths.device)[None, :]
        if wrap:
            return (pos >= a) & (pos < a + lengths[:, None])
        return (pos >= a) & (pos < lengths[:, None] - z)

    # --- the loss ---------------------------------------------------------------------------------------------
    def scores(self, candidates: torch.Tensor, references, attention_mask: torch.Tensor | None = None,
               input_type: str = "auto", weights: torch.Tensor | None = None,
               reference_mask: torch.Tensor | None = None) -> BERTScoreOutput:
        """P, R and F1 of each candidate (rescaled when asked), differentiable with respect to the candidates.

        Args:
            candidates: token ids ``(b, t)`` (integer), probabilities over the scorer's vocabulary ``(b, t, V)``
                (expected embeddings), or input embeddings ``(b, t, H)``; right-padded.
            references: ``b`` texts, or ``b`` id sequences (a ``(b, t)`` tensor, padded only with
                ``reference_mask``, or a list of 1-D sequences), or for several references per candidate ``b``
                lists of them (P, R and F each take their maximum over a candidate's references, as in scoring).
            attention_mask: ``(b, t)``, 1 on real candidate positions (default: all real).
            input_type: ``"auto"`` (by dtype and last size), ``"ids"``, ``"probs"`` or ``"embeds"``.
            weights: ``(b, t)`` token weights for ``inputs_embeds`` input (needed with idf), else derived from
                the ids or the probabilities.
            reference_mask: ``(b, t)`` 1 on the real tokens of references given as a padded ``(b, t)`` id tensor
                (right-padded); without it such ids must hold no padding id.

        Returns:
            :class:`BERTScoreOutput` of ``(b,)`` tensors in the loss's dtype, on the candidates' device (computed on
            the loss's). An empty batch (``b = 0``) gives empty tensors.

        Raises:
            InputError: mismatched sizes (the vocabulary error names both sizes), left padding, unknown ids, the
                padding id inside ids given without a mask.
        """
        if not isinstance(candidates, torch.Tensor):
            raise InputError(f"Candidates must be a torch tensor (ids, probabilities or embeddings), got "
                             f"{type(candidates).__name__}. Tokenize texts with loss.encode_texts(texts).")
        b = candidates.shape[0]
        ref_ids, groups = self._reference_ids(references, b, reference_mask)
        if b == 0:  # nothing to score; still connected to the candidates, so that backward() works
            input_kind(candidates, input_type, self.vocab_size, self.hidden_size, self.scorer.spec.name)
            empty = torch.zeros(0, dtype=self.dtype, device=candidates.device)
            if candidates.requires_grad:
                empty = empty + 0 * candidates.sum().to(self.dtype)
            return BERTScoreOutput(empty, empty, empty)
        vec = self._weight_vector(ref_ids)
        cand, cand_mask, cand_w, cand_empty = self._candidates(candidates, attention_mask, input_type, weights, vec)
        ref, ref_mask = ops.pad_sequences(self._reference_vectors(ref_ids))
        ref_id_pad, _ = ops.pad_sequences([torch.from_numpy(x) for x in ref_ids], value=0)
        ref_id_pad = ref_id_pad.to(self.device)
        ref_w = vec[ref_id_pad] * ref_mask.to(self.dtype)
        ref_special = torch.zeros_like(ref_mask)
        for s in self.special_ids:
            ref_special |= ref_id_pad == s
        ref_empty = ~(ref_mask & ~ref_special).any(dim=1)
        pair_cand = torch.as_tensor([i for i, (s, e) in enumerate(groups) for _ in range(e - s)],
                                    dtype=torch.long, device=self.device)
        single = all(e - s == 1 for s, e in groups)
        if not single:
            cand, cand_mask, cand_w, cand_empty = (cand[pair_cand], cand_mask[pair_cand], cand_w[pair_cand],
                                                   cand_empty[pair_cand])
        p, r, f = ops.bertscore(cand, cand_mask, cand_w, ref, ref_mask, ref_w, temperature=self.temperature,
                                cand_empty=cand_empty, ref_empty=ref_empty)
        scores = torch.stack([p, r, f], dim=1)
        if not single:
            scores, _ = ops.multi_reference_max(scores, groups)
        if self.baseline is not None:
            scores = ops.rescale(scores, self.baseline)
        scores = scores.to(candidates.device)  # the caller's device (a no-op when it is the loss's)
        return BERTScoreOutput(scores[:, 0], scores[:, 1], scores[:, 2])

    def forward(self, candidates: torch.Tensor, references, attention_mask: torch.Tensor | None = None,
                input_type: str = "auto", weights: torch.Tensor | None = None,
                reference_mask: torch.Tensor | None = None) -> torch.Tensor:
        """``1 - S`` for the chosen metric S, reduced; arguments as for :meth:`scores`. An empty batch gives an
        empty tensor (``"none"``), 0 (``"sum"``) or NaN (``"mean"``, the mean of nothing, as torch's losses)."""
        s = getattr(self.scores(candidates, references, attention_mask, input_type, weights, reference_mask),
                    self.metric)
        loss = 1 - s
        if self.reduction == "mean":
            return loss.mean()
        if self.reduction == "sum":
            return loss.sum()
        return loss

    def extra_repr(self) -> str:
        return (f"model={self.scorer.spec.name!r}, layer={self.layer}, idf={self.scorer.idf}, "
                f"rescaled={self.baseline is not None}, temperature={self.temperature}, metric={self.metric!r}, "
                f"reduction={self.reduction!r}, train_scorer={self.train_scorer}")
