"""Tokenization as the reference does it: a model's tokenizer loaded as bert-score loads it, and token ids as its
``sent_encode`` gives them (stripped text, special tokens, cut at the model's maximum length), cached per text."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import transformers
from transformers import AutoTokenizer

from bertscore_viz.errors import ModelError
from bertscore_viz.models.folder import LOAD_ERRORS, load_error
from bertscore_viz.models.hub import hub_kwargs
from bertscore_viz.models.spec import ModelSpec

__all__ = ["FALLBACK_MAX_LENGTH", "ENCODE_CHUNK", "Tokenized", "load_tokenizer", "special_layout",
           "tokenizer_max_length", "TextTokenizer"]

#: Used when a tokenizer reports no real maximum (DeBERTa-v3 says 1e30), as truncation would overflow.
FALLBACK_MAX_LENGTH = 512
#: Texts tokenized per call into the tokenizer: the longest another thread waits for the tokenizer is one chunk
#: (about 0.05 s here).
ENCODE_CHUNK = 2048


@dataclass(frozen=True)
class Tokenized:
    """One sentence as the model sees it.

    Attributes:
        ids: token ids with special tokens, shape ``(n_tokens,)``.
        truncated: True when the sentence was longer than the model's maximum and its tail was dropped.
        dropped: how many tokens were dropped (0 unless ``truncated``).
        length: the sentence's length in tokens with its special tokens, before any cut.
    """

    ids: np.ndarray
    truncated: bool
    dropped: int = 0
    length: int = -1


def load_tokenizer(spec: ModelSpec, kwargs: dict):
    """The model's tokenizer as the reference tokenizes: a GPT-2/RoBERTa BPE tokenizer with ``add_prefix_space=True``.
    ``kwargs``: ``from_pretrained``'s (``local_files_only`` or the hub's).

    Raises:
        ModelError: the tokenizer cannot be loaded, or cannot tokenize a word (one line, whatever raised it)."""

    try:
        tokenizer = AutoTokenizer.from_pretrained(spec.source, **kwargs)
        if isinstance(tokenizer, _bpe_prefix_classes()):
            tokenizer = AutoTokenizer.from_pretrained(spec.source, add_prefix_space=True, **kwargs)
    except LOAD_ERRORS as exc:
        raise load_error("the tokenizer of", spec.name, spec.source, exc) from None
    try:  # a tokenizer that loads but cannot tokenize (an empty vocab.txt: "Missing [UNK] token") fails here
        ids = tokenizer("a", add_special_tokens=False)["input_ids"]
    except Exception as exc:  # noqa: BLE001  tokenizers raises a bare Exception; any failure means the same
        raise ModelError(f"The tokenizer of {spec.name!r} cannot tokenize text ({str(exc).strip()[:200]}); check "
                         "its files (tokenizer.json, vocab.txt).") from None
    if not ids:
        raise ModelError(f"The tokenizer of {spec.name!r} gives no token for the text 'a'; check its files "
                         "(tokenizer.json, vocab.txt).")
    return tokenizer


def special_layout(tokenizer) -> tuple[list[int], list[int]]:
    """The ids the tokenizer puts before and after the content of a sentence (``[CLS]`` / ``[SEP]`` for BERT).

    Raises:
        ModelError: when the content cannot be found inside the encoded sentence."""
    full = list(tokenizer("a", add_special_tokens=True)["input_ids"])
    content = list(tokenizer("a", add_special_tokens=False)["input_ids"])
    for start in range(len(full) - len(content) + 1):
        if full[start:start + len(content)] == content:
            return full[:start], full[start + len(content):]
    raise ModelError(f"Cannot tell where the tokenizer {type(tokenizer).__name__} puts its special tokens "
                     f"({full} around {content}).")


def tokenizer_max_length(tokenizer) -> int:
    """The longest input in tokens: the tokenizer's ``model_max_length``, or :data:`FALLBACK_MAX_LENGTH` when it
    has none (transformers uses a huge sentinel for "unset")."""
    max_len = getattr(tokenizer, "model_max_length", None) or FALLBACK_MAX_LENGTH
    return int(max_len) if max_len < 100_000 else FALLBACK_MAX_LENGTH


class TextTokenizer:
    """A model's tokenizer, loaded as the reference loads it, giving token ids as bert-score's ``sent_encode``
    does (stripped text, special tokens added, cut at the model's maximum length; whole in window mode), cached per
    text. The :class:`Encoder` tokenizes through one; an idf pass that needs ids and not the model's weights uses one
    alone (:func:`get_tokenizer`).

    Args:
        spec: the model; tokenizer: an already loaded tokenizer (else loaded here, offline for local models).
    """

    def __init__(self, spec: ModelSpec, tokenizer=None):
        if tokenizer is None:

            kwargs = {"local_files_only": True} if spec.local else hub_kwargs(spec)
            transformers.utils.logging.set_verbosity_error()
            tokenizer = load_tokenizer(spec, kwargs)  # its errors are ModelErrors
        self.spec = spec
        self.tokenizer = tokenizer
        self.max_length = tokenizer_max_length(tokenizer)
        self._layout: tuple[list[int], list[int]] | None = None
        self._tok_cache: OrderedDict[tuple[bool, str], Tokenized] = OrderedDict()
        self._tok_lock = threading.Lock()  # the cache
        self._call_lock = threading.Lock()  # the tokenizer itself

    @property
    def special_layout(self) -> tuple[list[int], list[int]]:
        """The ids before and after a sentence's content (:func:`special_layout`), found once."""
        if self._layout is None:
            self._layout = special_layout(self.tokenizer)
        return self._layout

    def encode_one(self, text: str, long_texts: str = "truncate") -> Tokenized:
        return self.encode([text], long_texts)[0]

    def encode(self, texts: Sequence[str], long_texts: str = "truncate") -> list[Tokenized]:
        """Token ids of each text, as bert-score's ``sent_encode`` gives them (cached). ``long_texts="window"``:
        a text longer than the model's maximum keeps all its tokens (window mode embeds it in windows).

        Texts not cached are tokenized :data:`ENCODE_CHUNK` at a time, so that another thread's short call (an
        Inspect pair beside a corpus being scored in a shared server) waits for one chunk, not for the corpus."""
        whole = long_texts == "window"
        out: list[Tokenized | None] = [None] * len(texts)
        todo: dict[str, list[int]] = {}
        for start in range(0, len(texts), ENCODE_CHUNK):
            with self._tok_lock:
                for i in range(start, min(start + ENCODE_CHUNK, len(texts))):
                    hit = self._tok_cache.get((whole, texts[i]))
                    if hit is None:
                        todo.setdefault(texts[i], []).append(i)
                    else:
                        out[i] = hit
        uniq = list(todo)
        for start in range(0, len(uniq), ENCODE_CHUNK):
            chunk = uniq[start:start + ENCODE_CHUNK]
            made = self._tokenize(chunk, whole)
            with self._tok_lock:
                for text, tok in zip(chunk, made):
                    self._tok_cache[(whole, text)] = tok
                    for i in todo[text]:
                        out[i] = tok
                while len(self._tok_cache) > 200_000:
                    self._tok_cache.popitem(last=False)
        return out  # type: ignore[return-value]

    def _tokenize(self, texts: list[str], whole: bool) -> list[Tokenized]:
        stripped = [t.strip() for t in texts]
        nonempty = [s for s in stripped if s]
        with self._call_lock:
            encoded = iter(self.tokenizer(nonempty, add_special_tokens=True, truncation=False)["input_ids"]
                           if nonempty else [])
            empty_ids = self.tokenizer("", add_special_tokens=True)["input_ids"]
        made = []
        for s in stripped:
            ids = next(encoded) if s else empty_ids
            length = len(ids)
            truncated = length > self.max_length and not whole
            if truncated:
                with self._call_lock:
                    ids = self.tokenizer.encode(s, add_special_tokens=True, max_length=self.max_length,
                                                truncation=True)
            made.append(Tokenized(np.asarray(ids, dtype=np.int64), truncated, length - len(ids), length))
        return made

    def with_offsets(self, stripped: str, max_length: int | None):
        """The tokenizer's encoding of one (stripped) text with character offsets and word ids, cut at
        ``max_length`` (None: whole). Every call into the tokenizer goes through one lock: a fast tokenizer's
        truncation setting is state that a concurrent call would otherwise find changed ("Already borrowed")."""
        cut = {"truncation": True, "max_length": max_length} if max_length is not None else {}
        with self._call_lock:
            return self.tokenizer(stripped, add_special_tokens=True, return_offsets_mapping=True, **cut)


def _bpe_prefix_classes() -> tuple[type, ...]:
    """Tokenizer classes that bert-score encodes with ``add_prefix_space=True`` (GPT-2 and RoBERTa BPE)."""

    names = ("GPT2Tokenizer", "GPT2TokenizerFast", "RobertaTokenizer", "RobertaTokenizerFast")
    return tuple(c for c in (getattr(transformers, n, None) for n in names) if isinstance(c, type))
