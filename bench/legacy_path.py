"""The scoring path before issue 10 (main at 5417a50), kept verbatim for before/after measurements only.

After each forward pass it stacked every layer 0..L into a new tensor, normalised it, copied it to host numpy,
cut one contiguous ``(L + 1, n_tokens, dim)`` array per sentence and cached it; then it matched the pairs one by
one in numpy. Used by ``bench/bench_host.py`` and by ``tests/unit/test_device_path.py`` (the "before" side). It
runs the model through the current :class:`~bertscore_viz.engine.encoder.Encoder` (same tokenizer, same truncated
views), so only what happens after the forward pass differs.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np


class LegacyCache:
    """The old cache: ``(encoder key, ids)`` -> float32 ``(n_layers, n_tokens, dim)``, LRU, bounded by bytes."""

    def __init__(self, max_bytes: int = 4 * 2**30):
        self.max_bytes = int(max_bytes)
        self._data: OrderedDict[tuple, np.ndarray] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: tuple, min_layers: int) -> np.ndarray | None:
        with self._lock:
            value = self._data.get(key)
            if value is None or value.shape[0] < min_layers:
                return None
            self._data.move_to_end(key)
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

    @property
    def nbytes(self) -> int:
        return self._bytes


def legacy_forward(enc, id_lists: list[np.ndarray], depth: int) -> list[np.ndarray]:
    """The old ``Encoder._forward``: every layer 0..depth stacked, normalised, copied to host, cut per sentence."""
    import torch

    lengths = [len(x) for x in id_lists]
    width = max(lengths)
    ids = torch.full((len(id_lists), width), enc.pad_id, dtype=torch.long)
    mask = torch.zeros((len(id_lists), width), dtype=torch.long)
    for row, x in enumerate(id_lists):
        ids[row, : len(x)] = torch.from_numpy(x)
        mask[row, : len(x)] = 1
    model = enc._view(max(depth, 1))
    with torch.inference_mode():
        out = model(input_ids=ids.to(enc.device), attention_mask=mask.to(enc.device),
                    output_hidden_states=True)
        hidden = torch.stack(out.hidden_states[: depth + 1], dim=0)  # (layers, batch, tokens, dim): a new tensor
        if hidden.dtype != torch.float32:
            hidden = hidden.float()
        hidden.div_(torch.linalg.vector_norm(hidden, dim=-1, keepdim=True))  # in place: no second copy
        hidden = hidden.cpu().numpy()
    return [np.ascontiguousarray(hidden[:, row, :n, :]) for row, n in enumerate(lengths)]


def legacy_embed(enc, texts, layer: int, cache: LegacyCache, batch_size: int = 64,
                 token_budget: int = 4096) -> list[np.ndarray]:
    """The old ``Encoder.embed``: sentences sorted by length, batches of ``batch_size`` within ``token_budget``."""
    depth = int(layer)
    result: list[np.ndarray | None] = [None] * len(texts)
    toks = enc.encode(texts)
    missing: dict[bytes, list[int]] = {}
    for i, tok in enumerate(toks):
        key = tok.ids.tobytes()
        hit = None if key in missing else cache.get((enc.key, key), depth + 1)
        if hit is None:
            missing.setdefault(key, []).append(i)
        else:
            result[i] = hit
    if missing:
        uniq = list(missing)
        first = [toks[missing[k][0]].ids for k in uniq]
        order = sorted(range(len(uniq)), key=lambda k: len(first[k]), reverse=True)
        start = 0
        while start < len(order):
            longest = len(first[order[start]])
            n = max(1, min(batch_size, token_budget // max(longest, 1)))
            batch = order[start:start + n]
            start += n
            arrays = legacy_forward(enc, [first[k] for k in batch], depth)
            for k, arr in zip(batch, arrays):
                cache.put((enc.key, uniq[k]), arr)
                for i in missing[uniq[k]]:
                    result[i] = arr
    return result  # type: ignore[return-value]


def legacy_match(enc, candidates: list[str], references: list[str], layer: int, cache: LegacyCache,
                 batch_size: int = 64) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The old ``Scorer.match`` for one reference per candidate and one layer: per pair ``(1, n)`` maxima."""
    texts = list(dict.fromkeys(candidates + references))
    embs = dict(zip(texts, legacy_embed(enc, texts, layer, cache, batch_size=batch_size)))
    sel = np.asarray([layer])
    cand_best, ref_best = [], []
    for c_text, r_text in zip(candidates, references):
        c = embs[c_text][sel]
        r = embs[r_text][sel]
        s = np.matmul(c, np.swapaxes(r, -1, -2))  # (layers, n_cand, n_ref)
        cand_best.append(s.max(axis=-1))
        ref_best.append(s.max(axis=-2))
    return cand_best, ref_best
