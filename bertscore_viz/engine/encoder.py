"""The only module that runs models: loading them (tokenizers: :mod:`bertscore_viz.engine.tokenizer`), the forward
pass, and the layers it keeps (in :mod:`bertscore_viz.engine.cache`).

Tokenization matches bert-score 0.3.13's ``sent_encode``: the sentence is stripped, then encoded with special
tokens and truncated to the model's maximum length (head kept). GPT-2/RoBERTa-style BPE tokenizers are loaded with
``add_prefix_space=True`` so that they tokenize as the reference does under transformers 5.

Only the layers a request needs leave the forward pass: each is normalised on the device, cut per sentence and
cached there as ``(model, layer, token ids) -> (n_tokens, dim)`` float32 tensor (docs/DEVICE.md); nothing is
stacked or copied to the host. Small models (the bundled MiniLM) keep every layer the pass computed, so that
another layer costs no pass.

Layer ``L`` is ``hidden_states[L]`` (0 = embedding output). For architectures whose blocks sit in
``model.encoder.layer`` (BERT, RoBERTa, ELECTRA, XLM-R, DeBERTa) or ``model.transformer.layer`` (DistilBERT), the
model runs only as deep as the deepest layer asked for, as bert-score's truncated model does; the blocks are
shared, not copied.
"""

from __future__ import annotations

import contextlib
import copy
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
import torch
import transformers
from safetensors import SafetensorError
from transformers import AutoConfig, AutoModel

from bertscore_viz.engine.arguments import DEFAULT_TOKEN_BUDGET, PRECISIONS
from bertscore_viz.engine.cache import CACHE, CUDA_MEMORY_SHARE, EmbeddingCache
from bertscore_viz.engine.devices import precision_dtype, resolve_device
from bertscore_viz.engine.store import EmbeddingStore, default_store, pass_store, read_into, write_from
from bertscore_viz.engine.tensor_ops import pad_sequences
from bertscore_viz.engine.tokenizer import (
    TextTokenizer,
    Tokenized,
    load_tokenizer,
    tokenizer_max_length,
)
from bertscore_viz.engine.windows import WindowPlan, assemble, plan_windows
from bertscore_viz.errors import ModelError
from bertscore_viz.models.folder import LOAD_ERRORS, load_error
from bertscore_viz.models.hub import hub_kwargs
from bertscore_viz.models.spec import ModelSpec

__all__ = ["PRECISIONS", "DEFAULT_TOKEN_BUDGET", "PAD_SHRINK", "EARLY_CLOSE_MAX_HIDDEN", "MIN_EARLY_BATCH",
           "SMALL_MODEL_BYTES_PER_TOKEN", "FLOAT32_BYTES", "ProgressFn", "model_through_layer", "layer_states",
           "windowed_layer_states", "get_tokenizer", "Encoder", "plan_batches", "get_encoder", "loaded_encoders",
           "release_encoder"]

#: A forward batch (sentences sorted longest first) is closed early when the next sentence is shorter than this
#: fraction of the batch's longest: padding it to the longest would waste more than it saves in batch overhead.
PAD_SHRINK = 0.9
#: Widest hidden size whose batches close early on a CPU (the bundled MiniLM and multilingual-e5-small: 384).
EARLY_CLOSE_MAX_HIDDEN = 384
#: Fewest sentences in a batch closed early by the rule above (tiny batches cost more in overhead than padding).
MIN_EARLY_BATCH = 8
#: Models whose every layer costs at most this many bytes per token (float32) count as small: their encoder caches
#: all the layers a pass computes. The bundled MiniLM (7 x 384 x 4 = 10.5 KiB) is small; mpnet-base (13 x 768)
#: and roberta-large (25 x 1024) are not.
SMALL_MODEL_BYTES_PER_TOKEN = 24 * 1024
#: Bytes of one float32 value: what a cached vector's every dimension costs.
FLOAT32_BYTES = 4

ProgressFn = Callable[[int, int], None]


def _layer_container(model) -> tuple[torch.nn.Module, str] | None:
    """The module holding the list of transformer blocks, for architectures where truncation is exact."""

    for parent_name, attr in (("encoder", "layer"), ("transformer", "layer")):
        parent = getattr(model, parent_name, None)
        if parent is not None and isinstance(getattr(parent, attr, None), torch.nn.ModuleList):
            if hasattr(parent, "albert_layer_groups"):
                return None
            return parent, attr
    return None


def _truncated_view(model, depth: int):
    """A shallow copy of ``model`` that runs only its first ``depth`` blocks (parameters are shared)."""

    found = _layer_container(model)
    if found is None:
        return None
    parent, attr = found
    blocks = getattr(parent, attr)
    if depth >= len(blocks):
        return model
    parent_copy = copy.copy(parent)
    parent_copy._modules = dict(parent._modules)
    parent_copy._modules[attr] = torch.nn.ModuleList(list(blocks)[:depth])
    model_copy = copy.copy(model)
    model_copy._modules = dict(model._modules)
    for name, module in model._modules.items():
        if module is parent:
            model_copy._modules[name] = parent_copy
    if "pooler" in model_copy._modules:
        model_copy._modules["pooler"] = None
    return model_copy


def model_through_layer(model, layer: int):
    """``model`` cut after block ``layer`` (a shallow copy sharing the parameters; the model itself when it cannot be
    cut): what a forward pass for that layer needs to run. transformers 5 records ``hidden_states[0]`` from the
    first block's input, so a model cut to no blocks would return none: at least one block is kept."""
    return _truncated_view(model, max(int(layer), 1)) or model


def layer_states(net, layer: int, *, input_ids=None, inputs_embeds=None, attention_mask=None, autocast=None):
    """Hidden states ``(b, t, H)`` of ``net`` (a model or :func:`model_through_layer`'s view) at ``layer``, with
    autograd as the caller has it (the training loss differentiates through them; scoring uses
    :meth:`Encoder.embed_layers`). ``autocast``: a reduced dtype (bf16, fp16) for the forward, or None."""

    ref = input_ids if input_ids is not None else inputs_embeds
    with torch.autocast(ref.device.type, dtype=autocast or torch.float32, enabled=autocast is not None):
        out = net(input_ids=input_ids, inputs_embeds=inputs_embeds, attention_mask=attention_mask,
                  output_hidden_states=True)
    return out.hidden_states[layer]


def windowed_layer_states(net, layer: int, plans: Sequence[WindowPlan], *, input_ids=None, inputs_embeds=None,
                          pad_id: int = 0, token_budget: int = DEFAULT_TOKEN_BUDGET, autocast=None):
    """Hidden states ``(b, t, H)`` at ``layer`` of right-padded rows some of which are longer than the model's
    maximum: row ``i`` (``plans[i].length`` real positions) is cut into its windows
    (:func:`~bertscore_viz.engine.windows.plan_windows`), the windows of all rows run in batches of at most
    ``token_budget`` cells, and each position takes its vector from the window the plan names. Not normalised.

    Differentiable with respect to ``inputs_embeds`` (the windows are gathered from it), for the training loss and
    the walkthrough's gradient; padding positions are 0."""

    x = input_ids if input_ids is not None else inputs_embeds
    b, t = x.shape[:2]
    owner = [i for i, plan in enumerate(plans) for _ in range(plan.n_windows)]
    positions = [plan.positions(k) for plan in plans for k in range(plan.n_windows)]
    index, is_real = pad_sequences(positions, 0, dtype=torch.long)
    mask = is_real.long()  # the models' attention mask: 1 on real positions
    width = index.shape[1]
    rows = torch.as_tensor(owner, dtype=torch.long)[:, None].expand(-1, width).to(x.device)
    index, mask = index.to(x.device), mask.to(x.device)
    gathered = x[rows, index]  # (windows, width[, H]): a gather, so gradients reach the inputs
    step = max(1, int(token_budget) // width)
    parts = []
    for start in range(0, len(positions), step):
        sl = slice(start, start + step)
        if input_ids is not None:
            ids = torch.where(mask[sl].bool(), gathered[sl], torch.full_like(gathered[sl], int(pad_id)))
            parts.append(layer_states(net, layer, input_ids=ids, attention_mask=mask[sl], autocast=autocast))
        else:
            emb = gathered[sl] * mask[sl, :, None].to(gathered.dtype)
            parts.append(layer_states(net, layer, inputs_embeds=emb, attention_mask=mask[sl], autocast=autocast))
    hidden = torch.cat(parts, dim=0)
    out = []
    w = 0
    for plan in plans:
        vecs = [hidden[w + k, :len(positions[w + k])] for k in range(plan.n_windows)]
        w += plan.n_windows
        row = assemble(vecs, plan)
        out.append(torch.nn.functional.pad(row, (0, 0, 0, t - row.shape[0])))
    return torch.stack(out)


_TOKENIZERS: dict[tuple[str, str], TextTokenizer] = {}
_TOKENIZERS_LOCK = threading.Lock()


def get_tokenizer(spec: ModelSpec) -> TextTokenizer:
    """The process-wide :class:`TextTokenizer` of a model: a loaded encoder's, else one loaded alone (no weights)."""
    key = (spec.name, spec.source)
    for enc in loaded_encoders():
        if enc.key[:2] == key:
            return enc.text_tokenizer
    with _TOKENIZERS_LOCK:
        tok = _TOKENIZERS.get(key)
        if tok is None:
            tok = _TOKENIZERS[key] = TextTokenizer(spec)
        return tok


class Encoder:
    """A loaded tokenizer and model for one (model, device, precision); thread-safe and loaded once per process.

    Use :func:`get_encoder` rather than constructing it directly.
    """

    def __init__(self, spec: ModelSpec, device: str | None = None, precision: str = "fp32",
                 cache: EmbeddingCache | None = None):
        # Before the device is looked at: an unreachable hub is known in at most HUB_PROBE_SECONDS.
        kwargs = {"local_files_only": True} if spec.local else hub_kwargs(spec)
        dtype = precision_dtype(precision)
        self.spec = spec
        self.device = resolve_device(device)
        if precision == "fp16" and not self.device.startswith("cuda"):
            raise ModelError("fp16 needs a CUDA device; on the CPU use precision='bf16' (or the exact 'fp32').")
        self.precision = precision
        self._local = threading.local()
        self.cache = cache if cache is not None else CACHE
        if self.device.startswith("cuda") and not os.environ.get("BERTSCORE_VIZ_CACHE_MB"):
            # The cache then holds device tensors: by default, the entries on this device are kept to a share of
            # its memory (evicted at once if over it); entries elsewhere (CPU encoders) keep the cache's own bound.
            dev = resolve_device(self.device, indexed=True)
            bound = torch.cuda.get_device_properties(dev).total_memory // CUDA_MEMORY_SHARE
            current = self.cache.device_limit(dev)
            self.cache.limit_device(dev, bound if current is None else min(current, bound))
        self.transformers_version = transformers.__version__
        transformers.utils.logging.set_verbosity_error()
        transformers.utils.logging.disable_progress_bar()
        tokenizer = load_tokenizer(spec, kwargs)  # a ModelError of its own for a tokenizer that cannot tokenize
        self.tokenizer = tokenizer
        self._load_kwargs, self._dtype = kwargs, dtype
        self._model: Any = None
        self._model_lock = threading.Lock()
        self._select_hidden_states: bool | None = None
        try:
            config = AutoConfig.from_pretrained(spec.source, **kwargs)
        except LOAD_ERRORS as exc:
            raise load_error("model", spec.name, spec.source, exc) from None
        n = getattr(config, "num_hidden_layers", None)
        n = getattr(config, "n_layers", None) if n is None else n  # 0 is a depth (refused below), not "unknown"
        # With a persistent store, the weights load at the first sentence the store does not have: a run the store
        # answers whole imports no model code and reads no weights (seconds of a short run). Without one, now.
        if n is None or default_store() is None:
            probed = self._load_model(need_depth=n is None)
            n = n if n is not None else probed
        self.num_layers = int(n or 0)
        if self.num_layers < 1:
            raise ModelError(f"The model {spec.name!r} has no transformer layer (num_hidden_layers = "
                             f"{self.num_layers}); BERTScore needs a model with at least one.")
        self.max_length = tokenizer_max_length(tokenizer)
        self.special_ids = frozenset(
            i for i in (tokenizer.cls_token_id, tokenizer.sep_token_id) if i is not None
        )
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        self.key = (spec.name, spec.source, self.device, precision)
        hidden = int(getattr(config, "hidden_size", 0) or getattr(config, "dim", 0) or 0)
        self.hidden_size = hidden
        #: Cache every layer a forward pass computes (0 .. deepest asked for), not only the layers asked for, so
        #: that another layer costs no model pass. On for small models only (see SMALL_MODEL_BYTES_PER_TOKEN):
        #: for a large model it would copy and keep, e.g., 18 layers of roberta-large to use one.
        self.keep_computed_layers = 0 < (self.num_layers + 1) * hidden * FLOAT32_BYTES <= SMALL_MODEL_BYTES_PER_TOKEN
        #: Close a batch early when the next sentence is much shorter (:func:`plan_batches`'s ``shrink``): on a CPU,
        #: for models up to EARLY_CLOSE_MAX_HIDDEN wide, where the padding saved outweighs the smaller batches. Wider
        #: models, and any GPU, run full batches (their smaller batches would cost more than the padding saved).
        self.close_batches_early = self.device == "cpu" and 0 < hidden <= EARLY_CLOSE_MAX_HIDDEN
        self._views: dict[int, object] = {}
        self._views_lock = threading.Lock()
        self.text_tokenizer = TextTokenizer(spec, tokenizer)
        #: The persistent store this encoder reads and writes: None = the process's default (``default_store()``,
        #: which follows ``BERTSCORE_VIZ_STORE``); False = none; or a given :class:`EmbeddingStore`.
        self.store: EmbeddingStore | bool | None = None
        #: Each store's key prefix for this encoder (:func:`~bertscore_viz.engine.store.encoder_prefix`).
        self.store_prefixes: dict[str, bytes | None] = {}

    @property
    def model(self):
        """The model, loaded on first use (see ``__init__``); thread-safe."""
        if self._model is None:
            with self._model_lock:
                if self._model is None:
                    self._load_model()
        return self._model

    @property
    def model_loaded(self) -> bool:
        """Whether the weights are loaded (a run the persistent store answers whole never loads them)."""
        return self._model is not None

    def _load_model(self, need_depth: bool = False) -> int | None:
        """Load the weights onto the device at the precision, and install the hidden-state hooks; the model's
        depth as a pass counts it when the hooks or ``need_depth`` (a configuration that does not say it) need a
        pass (None otherwise)."""
        spec, kwargs = self.spec, self._load_kwargs
        model: Any  # transformers types `.encoder` as Tensor | Module and wraps `.to` in a decorator mypy cannot call
        try:
            if "t5" in spec.source.lower():
                from transformers import T5EncoderModel  # here: importing it costs about a second at start-up

                model = T5EncoderModel.from_pretrained(spec.source, **kwargs)
            else:
                model = AutoModel.from_pretrained(spec.source, **kwargs)
        except LOAD_ERRORS + (SafetensorError,) as exc:  # a pickle that would run code, a cut file, ...: one line
            raise load_error("model", spec.name, spec.source, exc) from None
        if hasattr(model, "decoder") and hasattr(model, "encoder"):
            model = model.encoder
        model.eval()
        model = model.to(device=self.device, dtype=self._dtype)
        select = _install_hidden_state_hooks(model)
        depth = None
        if select is None or need_depth:
            # Hooks could not be installed without a pass (or the depth is unknown): one full pass does both.
            with torch.no_grad():
                out = model(input_ids=torch.tensor([self.tokenizer("a")["input_ids"]], device=self.device),
                            output_hidden_states=True)
            depth = len(out.hidden_states) - 1
            select = False
        self._select_hidden_states = select
        self._model = model
        return depth

    # --- tokenization -----------------------------------------------------------------------------------------
    @property
    def cache(self) -> EmbeddingCache:
        """The cache this thread uses: the shared one, or a private one inside :meth:`private_cache`."""
        private = getattr(self._local, "cache", None)
        return self._shared_cache if private is None else private

    @cache.setter
    def cache(self, value: EmbeddingCache) -> None:
        self._shared_cache = value

    @contextlib.contextmanager
    def private_cache(self):
        """Within the block, this thread embeds with a fresh, private cache: what it computes does not depend on
        what was embedded before (a forward pass rounds a sentence differently by a few 1e-8 in another batch), so
        a computation split into blocks gives the same bits in one process or spread over workers."""
        private = EmbeddingCache(self._shared_cache.max_bytes)
        for device, limit in self._shared_cache.device_limits.items():
            private.limit_device(device, limit)
        self._local.cache = private
        try:
            yield
        finally:
            self._local.cache = None

    def encode_one(self, text: str, long_texts: str = "truncate") -> Tokenized:
        return self.text_tokenizer.encode_one(text, long_texts)

    def encode(self, texts: Sequence[str], long_texts: str = "truncate") -> list[Tokenized]:
        """Token ids of each text, as bert-score's ``sent_encode`` gives them (cached), whole in window mode:
        :meth:`TextTokenizer.encode`."""
        return self.text_tokenizer.encode(texts, long_texts)

    def is_special(self, ids: np.ndarray) -> np.ndarray:
        """Boolean mask of the CLS/SEP positions (weight 0, still match candidates)."""
        return np.isin(ids, list(self.special_ids))

    # --- embeddings -------------------------------------------------------------------------------------------
    def _view(self, depth: int):
        with self._views_lock:
            if depth not in self._views:
                self._views[depth] = _truncated_view(self.model, depth) or self.model
            return self._views[depth]

    def check_layers(self, layers: Sequence[int] | str | int | None) -> tuple[int, ...]:
        """Layers as a tuple of ints: None or ``"all"`` = every layer ``0 .. num_layers``; one int = that layer.

        Raises:
            ModelError: a layer outside ``0 .. num_layers``.
        """
        if layers is None or (isinstance(layers, str) and layers == "all"):
            return tuple(range(self.num_layers + 1))
        if isinstance(layers, (int, np.integer)):
            layers = (int(layers),)
        layers = tuple(int(x) for x in layers)
        bad = [x for x in layers if not 0 <= x <= self.num_layers]
        if not layers or bad:
            raise ModelError(
                f"Layer {bad[0] if bad else '(none)'} does not exist in {self.spec.name}: it has layers 0 to "
                f"{self.num_layers} (0 = embeddings)."
            )
        return layers

    def embed_layers(self, texts: Sequence[str], layers: Sequence[int] | str | int | None, *,
                     batch_size: int = 64, token_budget: int = DEFAULT_TOKEN_BUDGET,
                     progress: ProgressFn | None = None, long_texts: str = "truncate") -> list[list]:
        """Normalised token vectors of each text at each of ``layers``, on the encoder's device.

        Only the layers asked for are copied out of the forward pass and cached (every layer the pass computed for
        a small model, see :attr:`keep_computed_layers`). Sentences are deduplicated by token ids, sorted by
        length and run in batches of at most ``batch_size`` sentences and ``token_budget`` padded cells; for a
        small model on a CPU a batch is closed early when the next sentence is much shorter (padding-aware
        batching, :attr:`close_batches_early`).

        Args:
            texts: sentences (raw; stripped here as in the reference).
            layers: hidden-state indices (0 = embeddings); None or ``"all"`` = every layer.
            batch_size: most sentences in one forward batch.
            token_budget: most padded cells (sentences x longest) in one forward batch.
            progress: called as ``progress(done, total)`` with counts of sentences embedded.
            long_texts: ``"truncate"`` (a text longer than the model's maximum is cut, as in bert-score) or
                ``"window"``: its windows are embedded like sentences (sharing batches with the others) and its
                vectors assembled from them (:mod:`bertscore_viz.engine.windows`).

        Returns:
            Per text, a list with one float32 torch tensor ``(n_tokens, dim)`` of unit vectors per layer, in the
            order of ``layers``. Tensors are shared with the cache: do not modify them.
        """
        layers = self.check_layers(layers)
        toks = self.encode(texts, long_texts)
        return self.embed_ids([t.ids for t in toks], layers, batch_size=batch_size, token_budget=token_budget,
                              progress=progress)

    def embed_ids(self, id_lists: Sequence[np.ndarray], layers: Sequence[int] | str | int | None, *,
                  batch_size: int = 64, token_budget: int = DEFAULT_TOKEN_BUDGET,
                  progress: ProgressFn | None = None) -> list[list]:
        """:meth:`embed_layers` of token ids (a segment with its document context: engine/context.py); one longer
        than the model's maximum is embedded in windows."""
        layers = self.check_layers(layers)
        # Each text is one sequence, or (window mode, longer than the model's maximum) its windows: sequences are
        # deduplicated by token ids and cached as (model, layer, ids), so a window is cached like any sentence.
        plans: list[WindowPlan | None] = []
        text_keys: list[list[bytes]] = []
        sequences: dict[bytes, np.ndarray] = {}
        for ids in id_lists:
            plan = self.window_plan(len(ids)) if len(ids) > self.max_length else None
            parts = plan.window_ids(ids) if plan is not None else [ids]
            keys = [x.tobytes() for x in parts]
            for key, x in zip(keys, parts):
                sequences.setdefault(key, x)
            plans.append(plan)
            text_keys.append(keys)
        vectors: dict[bytes, list] = {}
        missing: list[bytes] = []
        for key in sequences:
            hits = [self.cache.get((self.key, layer, key)) for layer in layers]
            if any(h is None for h in hits):
                missing.append(key)
            else:
                vectors[key] = hits
        store = pass_store(self)
        if missing and store is not None:
            missing = read_into(self, store, missing, layers, vectors)
        # progress counts texts (distinct, with something to embed), whatever their number of windows
        waiting = set(missing)
        total = len({b"".join(keys) for keys in text_keys if waiting.intersection(keys)})
        if progress:
            progress(0, total)
        if missing:
            first = [sequences[k] for k in missing]
            order = sorted(range(len(missing)), key=lambda k: len(first[k]), reverse=True)
            done = 0
            shrink = PAD_SHRINK if self.close_batches_early else 0.0  # 0: a batch closes only when full
            for start, stop in plan_batches([len(first[k]) for k in order], batch_size, token_budget, shrink):
                batch = order[start:stop]
                computed = self._forward([first[k] for k in batch], layers)
                for k, vecs in zip(batch, computed):
                    vectors[missing[k]] = vecs
                if store is not None:  # each batch committed on its own: a killed run keeps what it finished
                    write_from(self, store, [missing[k] for k in batch], computed, layers)
                done += len(batch)
                if progress:
                    progress(done * total // len(missing), total)
        result = []
        for plan, keys in zip(plans, text_keys):
            if plan is None:
                result.append(vectors[keys[0]])
            else:
                result.append([assemble([vectors[k][j] for k in keys], plan) for j in range(len(layers))])
        return result

    @property
    def in_private_cache(self) -> bool:
        """Whether this thread embeds inside :meth:`private_cache` (then no persistent store is read or written)."""
        return getattr(self._local, "cache", None) is not None

    def window_plan(self, length: int) -> WindowPlan:
        """How a text of ``length`` tokens (special tokens included) is embedded in window mode
        (:func:`~bertscore_viz.engine.windows.plan_windows`)."""
        prefix, suffix = self.text_tokenizer.special_layout
        return plan_windows(length, self.max_length, len(prefix), len(suffix))

    def embed(self, texts: Sequence[str], layer: int | None = None, *, batch_size: int = 64,
              token_budget: int = DEFAULT_TOKEN_BUDGET, progress: ProgressFn | None = None,
              long_texts: str = "truncate") -> list[np.ndarray]:
        """Normalised token vectors of each text for layers ``0 .. layer`` (all layers when None), as numpy: one new
        float32 array ``(layer + 1, n_tokens, dim)`` per text. A convenience over :meth:`embed_layers` (which the
        scoring path uses): it copies every layer to the host."""
        depth = self.num_layers if layer is None else int(layer)
        self.check_layers([depth])
        per_text = self.embed_layers(texts, range(depth + 1), batch_size=batch_size, token_budget=token_budget,
                                     progress=progress, long_texts=long_texts)
        return [np.stack([t.cpu().numpy() for t in vecs]) for vecs in per_text]

    def _forward(self, id_lists: list[np.ndarray], layers: Sequence[int]) -> list[list]:
        """One forward batch: per sentence, a ``(n_tokens, dim)`` unit-vector tensor per layer of ``layers``.

        The model runs only as deep as the deepest layer; only the layers asked for (all computed ones for a small
        model) are normalised, cut per sentence and cached. Nothing is stacked or copied to the host.
        """

        layers = tuple(layers)
        lengths = [len(x) for x in id_lists]
        ids, is_real = pad_sequences(id_lists, self.pad_id, dtype=torch.long)
        mask = is_real.long()
        depth = max(layers)
        keep = tuple(range(depth + 1)) if self.keep_computed_layers else tuple(sorted(set(layers)))
        # transformers 5 records hidden_states[0] from the first block's input: a model cut to 0 blocks returns none
        model = self._view(max(depth, 1))
        # Under transformers 5 hidden states can be selected by index: the others are not kept during the pass.
        select = list(keep) if self._select_hidden_states else True
        # no_grad, not inference_mode: cached vectors may later meet tensors that require grad (the loss).
        with torch.no_grad():
            out = model(input_ids=ids.to(self.device), attention_mask=mask.to(self.device),
                        output_hidden_states=select)
            vectors: dict[int, list] = {}
            for layer in keep:
                hidden = out.hidden_states[layer]  # (batch, tokens, dim) on the device
                if hidden.dtype != torch.float32:
                    hidden = hidden.float()
                norm = torch.linalg.vector_norm(hidden, dim=-1, keepdim=True)
                # One new tensor per sentence, cut to its length: what the cache holds, nothing more.
                vectors[layer] = [hidden[row, :n] / norm[row, :n] for row, n in enumerate(lengths)]
            del out
        out_rows = []
        for row, x in enumerate(id_lists):
            key = x.tobytes()
            for layer in keep:
                self.cache.put((self.key, layer, key), vectors[layer][row])
            out_rows.append([vectors[layer][row] for layer in layers])
        return out_rows


def plan_batches(lengths: Sequence[int], batch_size: int, token_budget: int, shrink: float = PAD_SHRINK,
                 min_early: int = MIN_EARLY_BATCH) -> list[tuple[int, int]]:
    """Split sentence lengths sorted longest first into forward batches ``[(start, stop), ...]``.

    A batch holds at most ``batch_size`` sentences and ``token_budget`` padded cells (sentences x its longest);
    once it holds ``min_early`` sentences it is also closed when the next sentence is shorter than ``shrink`` x its
    longest, so that short sentences are not padded to a long one's length.

    >>> plan_batches([40, 38, 20, 19, 18], batch_size=64, token_budget=4096, min_early=2)
    [(0, 2), (2, 5)]
    """
    out = []
    start = 0
    while start < len(lengths):
        longest = max(int(lengths[start]), 1)
        cap = max(1, min(batch_size, token_budget // longest))
        stop = start + 1
        while stop < len(lengths) and stop - start < cap:
            if stop - start >= min_early and lengths[stop] < shrink * longest:
                break
            stop += 1
        out.append((start, stop))
        start = stop
    return out


def _install_hidden_state_hooks(model) -> bool | None:
    """Install transformers 5's hidden-state hooks on the full model now, without a forward pass.

    transformers 5 records ``hidden_states`` with forward hooks that it installs on the first call asking for them,
    and marks the model "installed". Truncated views (shallow copies sharing the blocks) copy that mark: a view
    run first would hook the shared blocks itself, the full model would hook them again, and its hidden_states
    would repeat layers. Installing them directly touches no weights (a warm-up pass would make every layer's
    weights of a large model resident).

    Returns:
        True: hooks installed, and the pass can select hidden states by index; False: this transformers records
        hidden states without hooks (4.x), nothing to do; None: hooks are used but could not be installed here
        (the caller runs a warm-up pass instead).
    """
    try:  # here, not at the top: the module exists in transformers 5 only (4.x records hidden states without it)
        from transformers.utils import output_capturing as oc
    except ImportError:
        return False
    install = getattr(oc, "maybe_install_capturing_hooks", None)
    registry = getattr(oc, "_CAN_RECORD_REGISTRY", None)
    if install is None or registry is None:
        return None
    if not registry.get(model).get("hidden_states"):
        return None
    install(model)
    return hasattr(oc, "selected_hidden_states")


_ENCODERS: dict[tuple, Encoder] = {}
_ENCODERS_LOCK = threading.Lock()


def get_encoder(spec: ModelSpec, device: str | None = None, precision: str = "fp32") -> Encoder:
    """The process-wide encoder for this model, device and precision, loaded on first use."""
    if not spec.local and not any(k[:2] == (spec.name, spec.source) for k in _ENCODERS):
        hub_kwargs(spec)  # an unreachable hub fails here, before the device is resolved
    key = (spec.name, spec.source, resolve_device(device), precision)
    with _ENCODERS_LOCK:
        enc = _ENCODERS.get(key)
        if enc is None:
            enc = Encoder(spec, device=key[2], precision=precision)
            _ENCODERS[key] = enc
        return enc


def loaded_encoders() -> Iterable[Encoder]:
    return list(_ENCODERS.values())


def release_encoder(enc: Encoder) -> None:
    """Forget a loaded encoder and drop its cached vectors (its memory is freed once no job uses it; device memory
    too, for a CUDA encoder); the next use loads it again."""
    with _ENCODERS_LOCK:
        for key in [k for k, v in _ENCODERS.items() if v is enc]:
            del _ENCODERS[key]
    enc._shared_cache.remove_encoder(enc.key)
