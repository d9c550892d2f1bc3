"""Static figures (PNG, SVG, PDF) of one pair with matplotlib, which installs everywhere (no browser, no kaleido).

``heatmap_image`` draws what ``bert-score-show`` draws: the similarity matrix, candidate tokens as rows, reference
tokens as columns, the value printed in each cell; plus our markers of each row's (○, precision) and column's
(×, recall) best match, and a title with the scores and the signature. ``alignment_image`` draws the tokens of
both sides with a line from each to its best match, coloured by similarity. Both use matplotlib's object API
(no pyplot, no global backend state), so they are safe in a server with several sessions.
"""

from __future__ import annotations

import io

import numpy as np

from .plots import _label, _shown, cell_values
from .results import PairExplanation

FORMATS = ("png", "svg", "pdf")


def _save(fig, fmt: str) -> bytes:
    fmt = fmt.lower().lstrip(".")
    if fmt not in FORMATS:
        raise ValueError(f"Unknown image format {fmt!r}; use one of {', '.join(FORMATS)}.")
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, dpi=150 if fmt == "png" else None, bbox_inches="tight")
    return buf.getvalue()


def _title(pair: PairExplanation) -> str:
    p, r, f = (float(x) for x in pair.scores)
    kind = "rescaled " if pair.rescaled is not None else ""
    return f"BERTScore {kind}P {p:.4f}  R {r:.4f}  F1 {f:.4f}\n{pair.signature}"


def heatmap_image(pair: PairExplanation, fmt: str = "png", show_special: bool = False) -> bytes:
    """The similarity heatmap as image bytes, each cell's value printed (as bert-score-show does).

    Cells are rescaled with the F baseline when the explanation is rescaled (as bert-score-show does).
    """
    from matplotlib.figure import Figure

    values, _ = cell_values(pair)
    rows, cols = _shown(pair.cand, show_special), _shown(pair.ref, show_special)
    sub = values[np.ix_(rows, cols)]
    n_r, n_c = max(1, len(rows)), max(1, len(cols))
    cell = 0.55
    fig = Figure(figsize=(max(4.0, 1.6 + cell * n_c), max(3.0, 1.6 + cell * n_r)))
    ax = fig.add_subplot()
    im = ax.imshow(sub, cmap="Blues", vmin=min(0.0, float(sub.min()) if sub.size else 0.0), vmax=1.0,
                   aspect="equal")
    ax.set_xticks(range(len(cols)), [_label(pair.ref, int(j)) for j in cols], rotation=75, ha="right")
    ax.set_yticks(range(len(rows)), [_label(pair.cand, int(i)) for i in rows])
    ax.set_xlabel("reference tokens")
    ax.set_ylabel("candidate tokens")
    ax.tick_params(length=0)
    mid = 0.5 * (float(sub.max()) + float(sub.min())) if sub.size else 0.5
    row_pos = {int(p): k for k, p in enumerate(rows)}
    col_pos = {int(p): k for k, p in enumerate(cols)}
    for a in range(sub.shape[0]):
        for b in range(sub.shape[1]):
            ax.text(b, a, f"{sub[a, b]:.3f}", ha="center", va="center", fontsize=7,
                    color="white" if sub[a, b] > mid else "black")
    for i, j in enumerate(pair.cand_best_index):
        if i in row_pos and int(j) in col_pos:
            ax.plot(col_pos[int(j)], row_pos[i], marker="o", mfc="none", mec="orange", ms=14, mew=1.5)
    for j, i in enumerate(pair.ref_best_index):
        if j in col_pos and int(i) in row_pos:
            ax.plot(col_pos[j], row_pos[int(i)], marker="x", color="red", ms=10, mew=1.2)
    ax.set_title(_title(pair), fontsize=8)
    fig.colorbar(im, ax=ax, shrink=0.7, label="rescaled similarity" if pair.rescaled is not None else "cosine")
    return _save(fig, fmt)


def alignment_image(pair: PairExplanation, fmt: str = "png", show_special: bool = False) -> bytes:
    """Candidate tokens on top, reference tokens below, a line from each token to its best match."""
    from matplotlib import colormaps
    from matplotlib.figure import Figure

    cand, ref = _shown(pair.cand, show_special), _shown(pair.ref, show_special)
    n = max(len(cand), len(ref), 1)
    fig = Figure(figsize=(max(5.0, 0.75 * n), 3.2))
    ax = fig.add_subplot()
    xc = {int(p): k * (n - 1) / max(1, len(cand) - 1) for k, p in enumerate(cand)}
    xr = {int(p): k * (n - 1) / max(1, len(ref) - 1) for k, p in enumerate(ref)}
    cmap = colormaps["RdYlBu"]
    sims = np.asarray(pair.similarity, dtype=np.float64)
    lo = float(sims.min()) if sims.size else 0.0
    span = max(1e-9, 1.0 - lo)
    for i, j in enumerate(pair.cand_best_index):
        if i in xc and int(j) in xr:
            s = sims[i, int(j)]
            ax.plot([xc[i], xr[int(j)]], [1, 0], color=cmap((s - lo) / span), lw=1.4, alpha=0.9)
    for j, i in enumerate(pair.ref_best_index):
        if j in xr and int(i) in xc:
            s = sims[int(i), j]
            ax.plot([xc[int(i)], xr[j]], [1, 0], color=cmap((s - lo) / span), lw=0.8, ls="--", alpha=0.7)
    for p, x in xc.items():
        ax.text(x, 1.04, _label(pair.cand, p), rotation=60, ha="left", va="bottom", fontsize=8)
    for p, x in xr.items():
        ax.text(x, -0.04, _label(pair.ref, p), rotation=60, ha="right", va="top", fontsize=8)
    ax.set_ylim(-0.6, 1.6)
    ax.set_xlim(-0.8, n - 0.2)
    ax.axis("off")
    ax.text(-0.8, 1.0, "candidate", ha="right", va="center", fontsize=8, style="italic")
    ax.text(-0.8, 0.0, "reference", ha="right", va="center", fontsize=8, style="italic")
    ax.set_title(_title(pair) + "\nsolid: candidate → best reference token (P); dashed: reference → best "
                 "candidate token (R); blue = similar, red = dissimilar", fontsize=8)
    return _save(fig, fmt)
