"""The only module that runs transformers: tokenization, the forward pass, and the embedding cache.

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
from collections import OrderedDict
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

import numpy as np

from .errors import ModelError
from .models import ModelSpec

PRECISIONS = ("fp32", "fp16", "bf16")
#: Used when a tokenizer reports no real maximum (DeBERTa-v3 says 1e30), as truncation would overflow.
FALLBACK_MAX_LENGTH = 512


def default_cache_bytes() -> int:
    """The embedding cache's bound: ``BERTSCORE_VIZ_CACHE_MB`` when set, else a sixth of physical memory, between
    1 and 4 GiB; the entries a CUDA encoder keeps on its device are also bounded by a quarter of the device's
    memory (:meth:`EmbeddingCache.limit_device`), without lowering this bound for CPU entries. A sentence costs
    tokens x hidden x 4 bytes per layer kept: 123 kB for 30 tokens at layer 17 of roberta-large (one layer), about
    230 kB at layer 4 of the bundled model (layers 0-4, as it is small): 4 GiB keeps tens of thousands."""
    env = os.environ.get("BERTSCORE_VIZ_CACHE_MB")
    if env:
        return int(float(env) * 2**20)
    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # not available on this platform
        physical = 8 * 2**30
    return int(min(4 * 2**30, max(2**30, physical // 6)))


DEFAULT_CACHE_BYTES = default_cache_bytes()
#: Padded cells (sentences x longest length) allowed in one forward batch.
DEFAULT_TOKEN_BUDGET = 4096
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

ProgressFn = Callable[[int, int], None]


@dataclass(frozen=True)
class Tokenized:
    """One sentence as the model sees it.

    Attributes:
        ids: token ids with special tokens, shape ``(n_tokens,)``.
        truncated: True when the sentence was longer than the model's maximum and its tail was dropped.
    """

    ids: np.ndarray
    truncated: bool


class EmbeddingCache:
    """Thread-safe LRU cache bounded by bytes, shared by every encoder of the process.

    Keys are ``(encoder key, layer, token ids as bytes)``: one entry per sentence **and layer**, so a request for
    layer 17 of a 24-layer model caches one layer, not 18. The model sees only the ids, so texts that tokenize
    alike (case variants under an uncased model, different outer whitespace) share one entry. Values are float32
    torch tensors ``(n_tokens, dim)`` of L2-normalised token vectors on the encoder's device (CUDA memory when
    the encoder runs there); numpy arrays are accepted too (only ``nbytes`` and ``device`` are used).

    Two bounds, both enforced at once when lowered (not at the next put): ``max_bytes`` over every entry, and an
    optional bound per device (:meth:`limit_device`) over the entries that live there, so that a CUDA encoder keeps
    its device-resident vectors to a share of the device's memory without shrinking what CPU encoders may cache.
    Eviction is least recently used, within the device for a device bound.
    """

    def __init__(self, max_bytes: int = DEFAULT_CACHE_BYTES):
        self._lock = threading.Lock()
        self._data: OrderedDict[tuple, tuple[object, str, int]] = OrderedDict()  # key -> (value, device, bytes)
        self._by_device: dict[str, OrderedDict[tuple, None]] = {}  # device -> its keys, least recently used first
        self._device_bytes: dict[str, int] = {}
        self._device_limits: dict[str, int] = {}
        self._bytes = 0
        self._max_bytes = int(max_bytes)
        self.hits = 0
        self.misses = 0

    @property
    def max_bytes(self) -> int:
        """The bound over every entry; setting a lower one evicts at once."""
        return self._max_bytes

    @max_bytes.setter
    def max_bytes(self, value: int) -> None:
        with self._lock:
            self._max_bytes = int(value)
            self._evict()

    def limit_device(self, device: str, max_bytes: int | None) -> None:
        """Bound the bytes of the entries on ``device`` (e.g. ``"cuda:0"``, as ``str(tensor.device)``); None removes
        the bound. Evicts that device's least recently used entries at once when over it."""
        with self._lock:
            if max_bytes is None:
                self._device_limits.pop(device, None)
            else:
                self._device_limits[device] = int(max_bytes)
            self._evict()

    def device_limit(self, device: str) -> int | None:
        """The bound of ``device``'s entries, None when only ``max_bytes`` applies."""
        return self._device_limits.get(device)

    @property
    def device_limits(self) -> dict[str, int]:
        return dict(self._device_limits)

    def device_nbytes(self, device: str) -> int:
        """Bytes held by the entries on ``device``."""
        return self._device_bytes.get(device, 0)

    def get(self, key: tuple):
        """The cached value, or None."""
        with self._lock:
            entry = self._data.get(key)
            if entry is None:
                self.misses += 1
                return None
            self._data.move_to_end(key)
            self._by_device[entry[1]].move_to_end(key)
            self.hits += 1
            return entry[0]

    def put(self, key: tuple, value) -> None:
        size = int(value.nbytes)
        device = _device_of(value)
        limit = self._device_limits.get(device)
        if size > self._max_bytes or (limit is not None and size > limit):
            return
        with self._lock:
            self._pop(key)
            self._data[key] = (value, device, size)
            self._by_device.setdefault(device, OrderedDict())[key] = None
            self._device_bytes[device] = self._device_bytes.get(device, 0) + size
            self._bytes += size
            self._evict()

    def remove_encoder(self, encoder_key: tuple) -> int:
        """Drop every entry of one encoder (keys ``(encoder_key, ...)``); the number of entries dropped."""
        with self._lock:
            keys = [k for k in self._data if k and k[0] == encoder_key]
            for k in keys:
                self._pop(k)
            return len(keys)

    def _pop(self, key: tuple) -> None:
        """Remove one entry if present (lock held)."""
        entry = self._data.pop(key, None)
        if entry is None:
            return
        _, device, size = entry
        del self._by_device[device][key]
        self._device_bytes[device] -= size
        self._bytes -= size

    def _evict(self) -> None:
        """Least recently used entries out until both bounds hold (lock held)."""
        for device, limit in self._device_limits.items():
            order = self._by_device.get(device)
            while order and self._device_bytes.get(device, 0) > limit:
                self._pop(next(iter(order)))
        while self._bytes > self._max_bytes and self._data:
            self._pop(next(iter(self._data)))

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self._by_device.clear()
            self._device_bytes.clear()
            self._bytes = 0
            self.hits = self.misses = 0

    @property
    def nbytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._data)


def _device_of(value) -> str:
    """Where a cached value lives: ``str(tensor.device)`` (``"cuda:0"``), ``"cpu"`` for numpy arrays."""
    device = getattr(value, "device", None)
    return "cpu" if device is None else str(device)


#: The process-wide embedding cache.
CACHE = EmbeddingCache()


_LIBC_TRIM = None


def release_free_memory() -> None:
    """Give memory the process has freed back to the operating system (glibc's ``malloc_trim``; a no-op where the C
    library has none). A long pass frees many token-vector blocks of varying sizes, which glibc otherwise keeps
    with the process: scoring 16,000 sentences grew a process by about 1 GB more than its cache held."""
    global _LIBC_TRIM
    if _LIBC_TRIM is None:
        try:
            import ctypes
            import ctypes.util

            _LIBC_TRIM = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
        except (OSError, AttributeError, TypeError):
            _LIBC_TRIM = False
    if _LIBC_TRIM:
        _LIBC_TRIM(0)


def resolve_device(device: str | None) -> str:
    import torch

    if device is None or device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if str(device).startswith("cuda") and not torch.cuda.is_available():
        raise ModelError(f"Device {device!r} was asked for, but CUDA is not available here. Use device='cpu'.")
    return str(device)


def _layer_container(model) -> tuple[object, str] | None:
    """The module holding the list of transformer blocks, for architectures where truncation is exact."""
    import torch

    for parent_name, attr in (("encoder", "layer"), ("transformer", "layer")):
        parent = getattr(model, parent_name, None)
        if parent is not None and isinstance(getattr(parent, attr, None), torch.nn.ModuleList):
            if hasattr(parent, "albert_layer_groups"):
                return None
            return parent, attr
    return None


def _truncated_view(model, depth: int):
    """A shallow copy of ``model`` that runs only its first ``depth`` blocks (parameters are shared)."""
    import torch

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
    import torch

    ref = input_ids if input_ids is not None else inputs_embeds
    with torch.autocast(ref.device.type, dtype=autocast or torch.float32, enabled=autocast is not None):
        out = net(input_ids=input_ids, inputs_embeds=inputs_embeds, attention_mask=attention_mask,
                  output_hidden_states=True)
    return out.hidden_states[layer]


def load_tokenizer(spec: ModelSpec, kwargs: dict):
    """The model's tokenizer as the reference tokenizes: a GPT-2/RoBERTa BPE tokenizer with ``add_prefix_space=True``.
    ``kwargs``: ``from_pretrained``'s (``local_files_only`` or the hub's); loading errors propagate to the caller."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(spec.source, **kwargs)
    if isinstance(tokenizer, _bpe_prefix_classes()):
        tokenizer = AutoTokenizer.from_pretrained(spec.source, add_prefix_space=True, **kwargs)
    return tokenizer


def tokenizer_max_length(tokenizer) -> int:
    """The longest input in tokens: the tokenizer's ``model_max_length``, or :data:`FALLBACK_MAX_LENGTH` when it
    has none (transformers uses a huge sentinel for "unset")."""
    max_len = getattr(tokenizer, "model_max_length", None) or FALLBACK_MAX_LENGTH
    return int(max_len) if max_len < 100_000 else FALLBACK_MAX_LENGTH


class TextTokenizer:
    """A model's tokenizer, loaded as the reference loads it, giving token ids as bert-score's ``sent_encode``
    does (stripped text, special tokens added, cut at the model's maximum length), cached per text. The
    :class:`Encoder` tokenizes through one; an idf pass that needs ids and not the model's weights uses one alone
    (:func:`get_tokenizer`).

    Args:
        spec: the model; tokenizer: an already loaded tokenizer (else loaded here, offline for local models).
    """

    def __init__(self, spec: ModelSpec, tokenizer=None):
        if tokenizer is None:
            import transformers

            kwargs = {"local_files_only": True} if spec.local else _hub_kwargs(spec)
            transformers.utils.logging.set_verbosity_error()
            try:
                tokenizer = load_tokenizer(spec, kwargs)
            except (OSError, ValueError, ImportError) as exc:
                raise ModelError(f"Could not load the tokenizer of {spec.name!r} from {spec.source!r}: "
                                 f"{str(exc).splitlines()[0][:300]}.") from None
        self.spec = spec
        self.tokenizer = tokenizer
        self.max_length = tokenizer_max_length(tokenizer)
        self._tok_cache: OrderedDict[str, Tokenized] = OrderedDict()
        self._tok_lock = threading.Lock()

    def encode_one(self, text: str) -> Tokenized:
        return self.encode([text])[0]

    def encode(self, texts: Sequence[str]) -> list[Tokenized]:
        """Token ids of each text, as bert-score's ``sent_encode`` gives them (cached)."""
        out: list[Tokenized | None] = [None] * len(texts)
        todo: dict[str, list[int]] = {}
        with self._tok_lock:
            for i, t in enumerate(texts):
                hit = self._tok_cache.get(t)
                if hit is None:
                    todo.setdefault(t, []).append(i)
                else:
                    out[i] = hit
        if todo:
            uniq = list(todo)
            stripped = [t.strip() for t in uniq]
            nonempty = [s for s in stripped if s]
            encoded = iter(self.tokenizer(nonempty, add_special_tokens=True, truncation=False)["input_ids"]
                           if nonempty else [])
            empty_ids = self.tokenizer("", add_special_tokens=True)["input_ids"]
            with self._tok_lock:
                for text, s in zip(uniq, stripped):
                    ids = next(encoded) if s else empty_ids
                    truncated = len(ids) > self.max_length
                    if truncated:
                        ids = self.tokenizer.encode(s, add_special_tokens=True, max_length=self.max_length,
                                                    truncation=True)
                    tok = Tokenized(np.asarray(ids, dtype=np.int64), truncated)
                    self._tok_cache[text] = tok
                    for i in todo[text]:
                        out[i] = tok
                while len(self._tok_cache) > 200_000:
                    self._tok_cache.popitem(last=False)
        return out  # type: ignore[return-value]



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
        # Before importing torch: an unreachable hub is known in at most HUB_PROBE_SECONDS.
        kwargs = {"local_files_only": True} if spec.local else _hub_kwargs(spec)
        import torch
        import transformers
        from transformers import AutoModel

        if precision not in PRECISIONS:
            raise ModelError(f"Unknown precision {precision!r}. Expected one of {', '.join(PRECISIONS)}.")
        self.spec = spec
        self.device = resolve_device(device)
        if precision == "fp16" and not self.device.startswith("cuda"):
            raise ModelError("fp16 needs a CUDA device; on the CPU use precision='bf16' (or the exact 'fp32').")
        self.precision = precision
        self._local = threading.local()
        self.cache = cache if cache is not None else CACHE
        if self.device.startswith("cuda") and not os.environ.get("BERTSCORE_VIZ_CACHE_MB"):
            # The cache then holds device tensors: by default, the entries on this device are kept to a quarter of
            # its memory (evicted at once if over it); entries elsewhere (CPU encoders) keep the cache's own bound.
            dev = torch.device(self.device)
            if dev.index is None:
                dev = torch.device("cuda", torch.cuda.current_device())
            quarter = torch.cuda.get_device_properties(dev).total_memory // 4
            current = self.cache.device_limit(str(dev))
            self.cache.limit_device(str(dev), quarter if current is None else min(current, quarter))
        self.transformers_version = transformers.__version__
        transformers.utils.logging.set_verbosity_error()
        transformers.utils.logging.disable_progress_bar()
        try:
            tokenizer = load_tokenizer(spec, kwargs)
            if "t5" in spec.source.lower():
                from transformers import T5EncoderModel

                model = T5EncoderModel.from_pretrained(spec.source, **kwargs)
            else:
                model = AutoModel.from_pretrained(spec.source, **kwargs)
        except (OSError, ValueError, ImportError) as exc:
            raise ModelError(
                f"Could not load model {spec.name!r} from {spec.source!r}: {str(exc).splitlines()[0][:300]}. "
                "A hub name needs internet access or a copy in the Hugging Face cache; otherwise give a local "
                "directory holding config.json, the tokenizer and the weights, or use the bundled model "
                "'all-MiniLM-L6-v2'."
            ) from exc
        if hasattr(model, "decoder") and hasattr(model, "encoder"):
            model = model.encoder
        model.eval()
        dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[precision]
        self.model = model.to(device=self.device, dtype=dtype)
        self.tokenizer = tokenizer
        config = getattr(self.model, "config", None)
        n = getattr(config, "num_hidden_layers", None) or getattr(config, "n_layers", None)
        self._select_hidden_states = _install_hidden_state_hooks(self.model)
        if n is None or self._select_hidden_states is None:
            # Hooks could not be installed without a pass (or the depth is unknown): one full pass does both.
            with torch.no_grad():
                out = self.model(input_ids=torch.tensor([tokenizer("a")["input_ids"]], device=self.device),
                                 output_hidden_states=True)
            n = n if n is not None else len(out.hidden_states) - 1
            self._select_hidden_states = False
        self.num_layers = int(n)
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
        self.keep_computed_layers = 0 < (self.num_layers + 1) * hidden * 4 <= SMALL_MODEL_BYTES_PER_TOKEN
        #: Close a batch early when the next sentence is much shorter (:func:`plan_batches`'s ``shrink``). It pays
        #: for small models on a CPU (95% real cells against 68-71% at 250-560 pairs). For wider models the smaller
        #: batches cost more than the padding they save: a random roberta-large-shaped model on this 2-core CPU
        #: scored 96 WMT16 pairs in 27-30 s with early closing, 17.5-21 s without (bert-score 22.5-26 s); and a
        #: GPU is fastest on full batches. So only on a CPU, and only up to EARLY_CLOSE_MAX_HIDDEN.
        self.close_batches_early = self.device == "cpu" and 0 < hidden <= EARLY_CLOSE_MAX_HIDDEN
        self._views: dict[int, object] = {}
        self._views_lock = threading.Lock()
        self.text_tokenizer = TextTokenizer(spec, tokenizer)

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

    def encode_one(self, text: str) -> Tokenized:
        return self.text_tokenizer.encode_one(text)

    def encode(self, texts: Sequence[str]) -> list[Tokenized]:
        """Token ids of each text, as bert-score's ``sent_encode`` gives them (cached):
        :meth:`TextTokenizer.encode`."""
        return self.text_tokenizer.encode(texts)

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
                     progress: ProgressFn | None = None) -> list[list]:
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

        Returns:
            Per text, a list with one float32 torch tensor ``(n_tokens, dim)`` of unit vectors per layer, in the
            order of ``layers``. Tensors are shared with the cache: do not modify them.
        """
        layers = self.check_layers(layers)
        result: list[list | None] = [None] * len(texts)
        toks = self.encode(texts)
        missing: dict[bytes, list[int]] = {}
        for i, tok in enumerate(toks):
            key = tok.ids.tobytes()
            if key in missing:
                missing[key].append(i)
                continue
            hits = [self.cache.get((self.key, layer, key)) for layer in layers]
            if any(h is None for h in hits):
                missing[key] = [i]
            else:
                result[i] = hits
        total = len(missing)
        if progress:
            progress(0, total)
        if missing:
            uniq = list(missing)
            first = [toks[missing[k][0]].ids for k in uniq]
            order = sorted(range(len(uniq)), key=lambda k: len(first[k]), reverse=True)
            done = 0
            shrink = PAD_SHRINK if self.close_batches_early else 0.0  # 0: a batch closes only when full
            for start, stop in plan_batches([len(first[k]) for k in order], batch_size, token_budget, shrink):
                batch = order[start:stop]
                for k, vecs in zip(batch, self._forward([first[k] for k in batch], layers)):
                    for i in missing[uniq[k]]:
                        result[i] = vecs
                done += len(batch)
                if progress:
                    progress(done, total)
        return result  # type: ignore[return-value]

    def embed(self, texts: Sequence[str], layer: int | None = None, *, batch_size: int = 64,
              token_budget: int = DEFAULT_TOKEN_BUDGET, progress: ProgressFn | None = None) -> list[np.ndarray]:
        """Normalised token vectors of each text for layers ``0 .. layer`` (all layers when None), as numpy.

        A convenience over :meth:`embed_layers` (which the scoring path uses): it copies every layer to the host.

        Returns:
            One float32 array ``(layer + 1, n_tokens, dim)`` per text (new arrays).
        """
        depth = self.num_layers if layer is None else int(layer)
        self.check_layers([depth])
        per_text = self.embed_layers(texts, range(depth + 1), batch_size=batch_size, token_budget=token_budget,
                                     progress=progress)
        return [np.stack([t.cpu().numpy() for t in vecs]) for vecs in per_text]

    def _forward(self, id_lists: list[np.ndarray], layers: Sequence[int]) -> list[list]:
        """One forward batch: per sentence, a ``(n_tokens, dim)`` unit-vector tensor per layer of ``layers``.

        The model runs only as deep as the deepest layer; only the layers asked for (all computed ones for a small
        model) are normalised, cut per sentence and cached. Nothing is stacked or copied to the host.
        """
        import torch

        layers = tuple(layers)
        lengths = [len(x) for x in id_lists]
        width = max(lengths)
        ids = torch.full((len(id_lists), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(id_lists), width), dtype=torch.long)
        for row, x in enumerate(id_lists):
            ids[row, : len(x)] = torch.from_numpy(x)
            mask[row, : len(x)] = 1
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
    would repeat layers. The encoder used to run one full warm-up pass to install them, which touched (made
    resident) every layer's weights of a large model; installing them directly touches none.

    Returns:
        True: hooks installed, and the pass can select hidden states by index; False: this transformers records
        hidden states without hooks (4.x), nothing to do; None: hooks are used but could not be installed here
        (the caller runs a warm-up pass instead).
    """
    try:
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


#: Seconds to wait for the hub before calling it unreachable (a name lookup plus a TCP connection).
HUB_PROBE_SECONDS = 2.0
#: Seconds a probe's answer is reused: an app rerun, or another load, within this time does not probe again.
HUB_PROBE_TTL = 60.0
_HUB_PROBES: dict[tuple[str, int], tuple[float, bool]] = {}
_HUB_PROBES_LOCK = threading.Lock()


def _hub_in_cache(source: str) -> bool:
    """The model's config is in the local Hugging Face cache (then it loads without the network)."""
    try:
        from huggingface_hub import try_to_load_from_cache

        return isinstance(try_to_load_from_cache(source, "config.json"), str)
    except Exception:  # noqa: BLE001  an odd name or an old huggingface_hub: simply not known to be cached
        return False


def hub_probe_target() -> tuple[str, int, bool]:
    """``(host, port, via_proxy)``: where the hub is reached first, the hub itself (``HF_ENDPOINT``, default
    huggingface.co) or the proxy the environment routes it through (``HTTPS_PROXY`` / ``HTTP_PROXY`` /
    ``ALL_PROXY``, upper or lower case, unless ``NO_PROXY`` exempts the hub's host), as huggingface_hub's HTTP
    client does. Credentials in a proxy URL are never part of the answer."""
    import urllib.request
    from urllib.parse import urlparse

    url = urlparse(os.environ.get("HF_ENDPOINT", "https://huggingface.co"))
    scheme = url.scheme or "https"
    host, port = url.hostname or "huggingface.co", url.port or (443 if scheme == "https" else 80)
    proxies = urllib.request.getproxies_environment()
    proxy = proxies.get(scheme) or proxies.get("all")
    if proxy and not urllib.request.proxy_bypass_environment(host, proxies):
        p = urlparse(proxy if "://" in proxy else f"http://{proxy}")
        if p.hostname:
            default = {"https": 443, "socks5": 1080, "socks5h": 1080, "socks4": 1080}.get(p.scheme, 80)
            return p.hostname, p.port or default, True
    return host, port, False


def hub_reachable(timeout: float = HUB_PROBE_SECONDS) -> bool:
    """Whether the hub (or the proxy in front of it, :func:`hub_probe_target`) answers a TCP connection within
    ``timeout`` seconds, name lookup included. ``HF_HUB_OFFLINE=1`` means no.

    Run in a daemon thread: a name lookup is not bounded by socket timeouts, and an offline machine may otherwise
    hang in it. The answer, yes or no, is reused for :data:`HUB_PROBE_TTL` seconds per target, so that each rerun
    of the app with an unreachable hub name does not wait again. Through a proxy only the proxy is probed: whether
    it can reach the hub is then up to huggingface_hub's own timeouts.
    """
    if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on"):
        return False
    import socket
    import time

    host, port, _ = hub_probe_target()
    now = time.monotonic()
    with _HUB_PROBES_LOCK:
        seen = _HUB_PROBES.get((host, port))
    if seen is not None and now - seen[0] < HUB_PROBE_TTL:
        return seen[1]
    result = [False]

    def probe() -> None:
        try:
            with socket.create_connection((host, port), timeout=timeout):
                result[0] = True
        except OSError:
            pass

    t = threading.Thread(target=probe, daemon=True)
    t.start()
    t.join(timeout)
    with _HUB_PROBES_LOCK:
        _HUB_PROBES[(host, port)] = (time.monotonic(), result[0])
    return result[0]


def _hub_kwargs(spec: ModelSpec) -> dict:
    """For a hub name: load from the cache when it is there; fail at once when it is not and the hub cannot
    be reached (instead of transformers' retries, about 50 s offline)."""
    if _hub_in_cache(spec.source):
        return {"local_files_only": True}
    if not hub_reachable():
        host, port, via_proxy = hub_probe_target()
        what = f"the proxy {host}:{port} (from HTTPS_PROXY/HTTP_PROXY)" if via_proxy else f"{host}:{port}"
        raise ModelError(
            f"Could not load model {spec.name!r}: it is not in the Hugging Face cache and the hub cannot be "
            f"reached ({what} did not answer within {HUB_PROBE_SECONDS:g} s; offline?). Connect to the internet, "
            "copy the model into a local directory and give its path, or use the bundled model "
            "'all-MiniLM-L6-v2'.")
    return {}


def _bpe_prefix_classes() -> tuple[type, ...]:
    """Tokenizer classes that bert-score encodes with ``add_prefix_space=True`` (GPT-2 and RoBERTa BPE)."""
    import transformers

    names = ("GPT2Tokenizer", "GPT2TokenizerFast", "RobertaTokenizer", "RobertaTokenizerFast")
    return tuple(c for c in (getattr(transformers, n, None) for n in names) if isinstance(c, type))


_ENCODERS: dict[tuple, Encoder] = {}
_ENCODERS_LOCK = threading.Lock()


def get_encoder(spec: ModelSpec, device: str | None = None, precision: str = "fp32") -> Encoder:
    """The process-wide encoder for this model, device and precision, loaded on first use."""
    if not spec.local and not any(k[:2] == (spec.name, spec.source) for k in _ENCODERS):
        _hub_kwargs(spec)  # an unreachable hub fails here, before torch is imported to pick the device
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
