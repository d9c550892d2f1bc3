"""Long texts in window mode: which overlapping windows of the model's maximum length a text is embedded in, and
which window each token's vector comes from (docs/SEMANTICS.md, section 10). Pure functions of lengths: the encoder
(:meth:`~bertscore_viz.engine.encoder.Encoder.embed_layers`) and the training loss run the windows through the model
and assemble the text's vectors with :func:`assemble`.

A text's token ids are ``prefix + content + suffix``: the tokenizer's special tokens (``[CLS]`` / ``[SEP]`` for BERT,
``<s>`` / ``</s>`` for RoBERTa) around ``N`` content tokens. With a maximum of ``L`` positions, a window holds the
prefix, ``C = L - len(prefix) - len(suffix)`` consecutive content tokens and the suffix, exactly as a text that fits
is encoded. Windows start every ``C // 2`` content tokens (half of each window overlaps the next); the last one
is moved back to end at the text's last token, so every window is full. The first window is the truncate mode's
input: what bert-score embeds.

Each content token takes its vector from the window where it has the most context on both sides: the window that
maximises ``min(tokens before it in the window, tokens after it in the window)``, where a window holding the
text's first (last) token counts as seeing all the context on that side. Ties go to the earlier window. The prefix
tokens come from the first window and the suffix tokens from the last, where they sit as in one pass. A text that
fits (``N <= C``) is one window: its ids and vectors are the truncate mode's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch


@dataclass(frozen=True)
class WindowPlan:
    """How one text of ``length`` positions is embedded.

    Attributes:
        length: positions of the text, special tokens included.
        starts: content index (0 = first token after the prefix) where each window's content begins.
        capacity: content tokens per window (``C``).
        n_prefix, n_suffix: special tokens before and after the content.
        window: ``(length,)`` the window each position's vector comes from.
        row: ``(length,)`` that position's row within its window.
    """

    length: int
    starts: tuple[int, ...]
    capacity: int
    n_prefix: int
    n_suffix: int
    window: np.ndarray
    row: np.ndarray

    @property
    def n_windows(self) -> int:
        return len(self.starts)

    def positions(self, k: int) -> np.ndarray:
        """Positions of the text (indices into its ids) that window ``k`` holds, in order."""
        if self.n_windows == 1:
            return np.arange(self.length, dtype=np.int64)
        a, z, s = self.n_prefix, self.n_suffix, self.starts[k]
        return np.concatenate([np.arange(a), a + s + np.arange(self.capacity),
                               np.arange(self.length - z, self.length)]).astype(np.int64)

    def window_ids(self, ids: np.ndarray) -> list[np.ndarray]:
        """The token ids of each window (views of ``ids`` gathered)."""
        return [np.asarray(ids)[self.positions(k)] for k in range(self.n_windows)]

    def boundaries(self) -> list[tuple[int, int]]:
        """``(first, last)`` position (inclusive) whose vector each window gives: the spans marked on the figures."""
        out = []
        for k in range(self.n_windows):
            where = np.flatnonzero(self.window == k)
            out.append((int(where[0]), int(where[-1])) if len(where) else (-1, -1))
        return out

    def cut_points(self) -> list[int]:
        """Positions where the window a vector comes from changes (the first position of windows 2, 3, ...)."""
        return [int(p) for p in np.flatnonzero(np.diff(self.window)) + 1]


def window_starts(n_content: int, capacity: int) -> tuple[int, ...]:
    """Content index where each window begins: every ``capacity // 2`` tokens, the last moved back to end at the
    text's last token. One window (start 0) when the content fits.

    >>> window_starts(10, 4)
    (0, 2, 4, 6)
    >>> window_starts(9, 4)
    (0, 2, 4, 5)
    >>> window_starts(4, 4)
    (0,)
    """
    if capacity < 1:
        raise ValueError(f"a window must hold at least one content token, got capacity {capacity}")
    if n_content <= capacity:
        return (0,)
    stride = max(1, capacity // 2)
    starts = list(range(0, n_content - capacity, stride))
    return tuple(starts) + (n_content - capacity,)


def plan_windows(length: int, max_length: int, n_prefix: int, n_suffix: int) -> WindowPlan:
    """The windows of a text of ``length`` positions (special tokens included) for a model of ``max_length``.

    >>> p = plan_windows(12, 6, 1, 1)          # [CLS] 10 tokens [SEP], 4 content tokens per window
    >>> p.starts, p.window.tolist()
    ((0, 2, 4, 6), [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 3, 3])
    """
    capacity = int(max_length) - n_prefix - n_suffix
    n_content = max(0, int(length) - n_prefix - n_suffix)
    starts = window_starts(n_content, capacity)
    window = np.zeros(length, dtype=np.int64)
    row = np.arange(length, dtype=np.int64)
    if len(starts) > 1:
        s = np.asarray(starts, dtype=np.int64)[None, :]                  # (1, W)
        p = np.arange(n_content, dtype=np.int64)[:, None]                # (N, 1)
        inside = (p >= s) & (p < s + capacity)
        big = n_content + 1  # a window holding the text's first (last) token sees all the context on that side
        before = np.where(s == 0, big, p - s)
        after = np.where(s + capacity >= n_content, big, s + capacity - 1 - p)
        context = np.where(inside, np.minimum(before, after), -1)
        owner = context.argmax(axis=1)                                   # the first of equals: the earlier window
        window[n_prefix:n_prefix + n_content] = owner
        row[n_prefix:n_prefix + n_content] = n_prefix + p[:, 0] - s[0, owner]
        window[n_prefix + n_content:] = len(starts) - 1
        row[n_prefix + n_content:] = n_prefix + capacity + np.arange(n_suffix)
    return WindowPlan(int(length), starts, capacity, n_prefix, n_suffix, window, row)


def min_context(plan: WindowPlan) -> int:
    """The fewest tokens any content token sees on its poorer side, not counting the text's own ends (how much
    context window mode guarantees: ``(C - C // 2) // 2`` or more when the text is longer than a window)."""
    if plan.n_windows == 1:
        return plan.length
    a = plan.n_prefix
    n_content = plan.length - a - plan.n_suffix
    best = []
    for p in range(n_content):
        k = int(plan.window[a + p])
        s = plan.starts[k]
        before = n_content if s == 0 else p - s
        after = n_content if s + plan.capacity >= n_content else s + plan.capacity - 1 - p
        best.append(min(before, after))
    return int(min(best))


def assemble(window_vectors, plan: WindowPlan):
    """The text's vectors ``(length, dim)`` from each window's ``(len_k, dim)`` tensors, as the plan says.

    Works for numpy arrays and torch tensors (differentiably: a gather)."""
    if plan.n_windows == 1:
        return window_vectors[0]
    lengths = np.array([len(v) for v in window_vectors], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    index = offsets[plan.window] + plan.row
    if isinstance(window_vectors[0], torch.Tensor):
        flat = torch.cat(list(window_vectors), dim=0)
        return flat.index_select(0, torch.as_tensor(index, device=flat.device))
    return np.concatenate(list(window_vectors), axis=0)[index]
