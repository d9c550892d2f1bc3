"""Multiple-comparison corrections: Holm's (1979) step-down method over a family of p values."""

from __future__ import annotations

import numpy as np

from bertscore_viz.errors import InputError, shorten

__all__ = ["CORRECTIONS", "check_correction", "holm", "holm_matrix"]

#: Multiple-comparison corrections offered: None (each test at alpha) or Holm's step-down.
CORRECTIONS = (None, "holm")


def check_correction(correction: str | None) -> None:
    """Raises :class:`~bertscore_viz.errors.InputError` for a correction not in :data:`CORRECTIONS`."""
    if correction not in CORRECTIONS:
        raise InputError(f"Unknown correction {shorten(correction)}; use one of {list(CORRECTIONS)}.")


def holm(p_values) -> np.ndarray:
    """Holm's step-down adjusted p values (same order as given), capped at 1.

    The i-th smallest p (1-based) is multiplied by ``m - i + 1`` and the result made non-decreasing along that
    order; rejecting where the adjusted p < alpha is Holm's procedure at family-wise level alpha.

    >>> [round(float(x), 3) for x in holm([0.01, 0.04, 0.03])]
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(p_values, dtype=np.float64)
    m = len(p)
    if m == 0:
        return p.copy()
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, p[order] * (m - np.arange(m)))
    adjusted = np.maximum.accumulate(scaled)
    out = np.empty(m)
    out[order] = adjusted
    return out


def holm_matrix(matrix: np.ndarray) -> np.ndarray:
    """A symmetric ``(k, k)`` matrix of pairwise p values Holm-adjusted over its k (k - 1) / 2 pairs (the upper
    triangle is the family), 1 on the diagonal."""
    k = len(matrix)
    iu = np.triu_indices(k, 1)
    out = np.ones_like(matrix)
    adj = holm(matrix[iu])
    out[iu] = adj
    out[(iu[1], iu[0])] = adj
    return out
