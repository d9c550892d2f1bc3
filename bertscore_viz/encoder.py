"""The only module that runs transformers: tokenization, the forward pass, and the embedding cache.

Tokenization matches bert-score 0.3.13's ``sent_encode``: the sentence is stripped, then encoded with special
tokens and truncated to the model's maximum length (head kept). GPT-2/RoBERTa-style BPE tokenizers are loaded with
``add_prefix_space=True`` so that they tokenize as the reference does under transformers 5.

Layer ``L`` is ``hidden_states[L]`` (0 = embedding output). For architectures whose blocks sit in
``model.encoder.layer`` (BERT, RoBERTa, ELECTRA, XLM-R, DeBERTa) or ``model.transformer.layer`` (DistilBERT), the
model runs only as deep as the deepest layer asked for, as bert-score's truncated model does; the blocks are
shared, not copied.
"""

from __future__ import annotations

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
    1 and 4 GiB. A sentence costs about (layers computed) x tokens x hidden x 4 bytes (about 230 kB for 30
    tokens at layer 4 of the bundled model): 4 GiB keeps a few thousand references and their systems' outputs."""
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

    Keys are ``(encoder key, token ids as bytes)``: the model sees only the ids, so texts that tokenize alike
    (case variants under an uncased model, different outer whitespace) share one entry. Values are float32
    arrays ``(n_layers, n_tokens, dim)`` of L2-normalised token vectors for layers ``0 .. n_layers - 1``.
    """

    def __init__(self, max_bytes: int = DEFAULT_CACHE_BYTES):
        self.max_bytes = int(max_bytes)
        self._data: OrderedDict[tuple, np.ndarray] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: tuple, min_layers: int) -> np.ndarray | None:
        """The cached array when it holds at least ``min_layers`` layers, else None."""
        with self._lock:
            value = self._data.get(key)
            if value is None or value.shape[0] < min_layers:
                self.misses += 1
                return None
            self._data.move_to_end(key)
            self.hits += 1
            return value

    def put(self, key: tuple, value: np.ndarray) -> None:
        if value.nbytes > self.max_bytes:
            return
        with self._lock:
            old = self._data.pop(key, None)
            if old is not None:
                self._bytes -= old.nbytes
            self._data[key] = value
            self._bytes += value.nbytes
            while self._bytes > self.max_bytes and self._data:
                _, evicted = self._data.popitem(last=False)
                self._bytes -= evicted.nbytes

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self._bytes = 0
            self.hits = self.misses = 0

    @property
    def nbytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._data)


#: The process-wide embedding cache.
CACHE = EmbeddingCache()


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


class Encoder:
    """A loaded tokenizer and model for one (model, device, precision); thread-safe and loaded once per process.

    Use :func:`get_encoder` rather than constructing it directly.
    """

    def __init__(self, spec: ModelSpec, device: str | None = None, precision: str = "fp32",
                 cache: EmbeddingCache | None = None):
        import torch
        import transformers
        from transformers import AutoModel, AutoTokenizer

        if precision not in PRECISIONS:
            raise ModelError(f"Unknown precision {precision!r}. Expected one of {', '.join(PRECISIONS)}.")
        self.spec = spec
        self.device = resolve_device(device)
        if precision == "fp16" and not self.device.startswith("cuda"):
            raise ModelError("fp16 needs a CUDA device; on the CPU use precision='bf16' (or the exact 'fp32').")
        self.precision = precision
        self.cache = cache if cache is not None else CACHE
        self.transformers_version = transformers.__version__
        kwargs = {"local_files_only": True} if spec.local else {}
        transformers.utils.logging.set_verbosity_error()
        transformers.utils.logging.disable_progress_bar()
        try:
            tokenizer = AutoTokenizer.from_pretrained(spec.source, **kwargs)
            if isinstance(tokenizer, _bpe_prefix_classes()):
                tokenizer = AutoTokenizer.from_pretrained(spec.source, add_prefix_space=True, **kwargs)
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
        # One full pass now also makes transformers 5 install its hidden-state hooks on the full model before
        # any truncated view exists: views copy its "installed" flag. A view run first would hook the shared
        # blocks itself, the full model would hook them again, and its hidden_states would repeat layers.
        with torch.inference_mode():
            out = self.model(input_ids=torch.tensor([tokenizer("a")["input_ids"]], device=self.device),
                             output_hidden_states=True)
        if n is None:
            n = len(out.hidden_states) - 1
        self.num_layers = int(n)
        max_len = getattr(tokenizer, "model_max_length", None) or FALLBACK_MAX_LENGTH
        self.max_length = int(max_len) if max_len < 100_000 else FALLBACK_MAX_LENGTH
        self.special_ids = frozenset(
            i for i in (tokenizer.cls_token_id, tokenizer.sep_token_id) if i is not None
        )
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        self.key = (spec.name, spec.source, self.device, precision)
        self._views: dict[int, object] = {}
        self._views_lock = threading.Lock()
        self._tok_cache: OrderedDict[str, Tokenized] = OrderedDict()
        self._tok_lock = threading.Lock()

    # --- tokenization -----------------------------------------------------------------------------------------
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

    def is_special(self, ids: np.ndarray) -> np.ndarray:
        """Boolean mask of the CLS/SEP positions (weight 0, still match candidates)."""
        return np.isin(ids, list(self.special_ids))

    # --- embeddings -------------------------------------------------------------------------------------------
    def _view(self, depth: int):
        with self._views_lock:
            if depth not in self._views:
                self._views[depth] = _truncated_view(self.model, depth) or self.model
            return self._views[depth]

    def embed(self, texts: Sequence[str], layer: int | None = None, *, batch_size: int = 64,
              token_budget: int = DEFAULT_TOKEN_BUDGET, progress: ProgressFn | None = None) -> list[np.ndarray]:
        """Normalised token vectors of each text for layers ``0 .. layer`` (all layers when None).

        Args:
            texts: sentences (raw; stripped here as in the reference).
            layer: deepest layer needed; the model runs only that deep where the architecture allows.
            batch_size: most sentences in one forward batch.
            token_budget: most padded cells (sentences x longest) in one forward batch.
            progress: called as ``progress(done, total)`` with counts of sentences embedded.

        Returns:
            One float32 array ``(n_layers, n_tokens, dim)`` per text, with ``n_layers >= layer + 1``; unit
            vectors along the last axis. Arrays are shared with the cache: do not modify them.
        """
        depth = self.num_layers if layer is None else int(layer)
        if not 0 <= depth <= self.num_layers:
            raise ModelError(
                f"Layer {layer} does not exist in {self.spec.name}: it has layers 0 to {self.num_layers} "
                "(0 = embeddings)."
            )
        result: list[np.ndarray | None] = [None] * len(texts)
        # The cache and the deduplication are keyed by token ids: equal ids give equal embeddings.
        toks = self.encode(texts)
        missing: dict[bytes, list[int]] = {}
        for i, tok in enumerate(toks):
            key = tok.ids.tobytes()
            hit = None if key in missing else self.cache.get((self.key, key), depth + 1)
            if hit is None:
                missing.setdefault(key, []).append(i)
            else:
                result[i] = hit
        total = len(missing)
        if progress:
            progress(0, total)
        if missing:
            uniq = list(missing)
            first = [toks[missing[k][0]].ids for k in uniq]
            order = sorted(range(len(uniq)), key=lambda k: len(first[k]), reverse=True)
            done = 0
            start = 0
            while start < len(order):
                longest = len(first[order[start]])
                n = max(1, min(batch_size, token_budget // max(longest, 1)))
                batch = order[start:start + n]
                start += n
                arrays = self._forward([first[k] for k in batch], depth)
                for k, arr in zip(batch, arrays):
                    self.cache.put((self.key, uniq[k]), arr)
                    for i in missing[uniq[k]]:
                        result[i] = arr
                done += len(batch)
                if progress:
                    progress(done, total)
        return result  # type: ignore[return-value]

    def _forward(self, id_lists: list[np.ndarray], depth: int) -> list[np.ndarray]:
        import torch

        lengths = [len(x) for x in id_lists]
        width = max(lengths)
        ids = torch.full((len(id_lists), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(id_lists), width), dtype=torch.long)
        for row, x in enumerate(id_lists):
            ids[row, : len(x)] = torch.from_numpy(x)
            mask[row, : len(x)] = 1
        # transformers 5 records hidden_states[0] from the first block's input: a model cut to 0 blocks returns none
        model = self._view(max(depth, 1))
        with torch.inference_mode():
            out = model(input_ids=ids.to(self.device), attention_mask=mask.to(self.device),
                        output_hidden_states=True)
            hidden = torch.stack(out.hidden_states[: depth + 1], dim=0)  # (layers, batch, tokens, dim): a new tensor
            if hidden.dtype != torch.float32:
                hidden = hidden.float()
            hidden.div_(torch.linalg.vector_norm(hidden, dim=-1, keepdim=True))  # in place: no second copy
            hidden = hidden.cpu().numpy()
        return [np.ascontiguousarray(hidden[:, row, :n, :]) for row, n in enumerate(lengths)]


def _bpe_prefix_classes() -> tuple[type, ...]:
    """Tokenizer classes that bert-score encodes with ``add_prefix_space=True`` (GPT-2 and RoBERTa BPE)."""
    import transformers

    names = ("GPT2Tokenizer", "GPT2TokenizerFast", "RobertaTokenizer", "RobertaTokenizerFast")
    return tuple(c for c in (getattr(transformers, n, None) for n in names) if isinstance(c, type))


_ENCODERS: dict[tuple, Encoder] = {}
_ENCODERS_LOCK = threading.Lock()


def get_encoder(spec: ModelSpec, device: str | None = None, precision: str = "fp32") -> Encoder:
    """The process-wide encoder for this model, device and precision, loaded on first use."""
    key = (spec.name, spec.source, resolve_device(device), precision)
    with _ENCODERS_LOCK:
        enc = _ENCODERS.get(key)
        if enc is None:
            enc = Encoder(spec, device=key[2], precision=precision)
            _ENCODERS[key] = enc
        return enc


def loaded_encoders() -> Iterable[Encoder]:
    return list(_ENCODERS.values())
