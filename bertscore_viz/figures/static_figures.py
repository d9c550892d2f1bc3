"""Static figures (PNG, SVG, PDF) of one pair with matplotlib, which installs everywhere (no browser, no kaleido).

``heatmap_image`` draws what ``bert-score-show`` draws: the similarity matrix, candidate tokens as rows, reference
tokens as columns, the value printed in each cell; plus our markers of each row's (○, precision) and column's
(×, recall) best match, and a title with the scores and the signature. ``alignment_image`` draws the tokens of
both sides with a line from each to its best match, coloured by similarity. Both use matplotlib's object API
(no pyplot, no global backend state), so they are safe in a server with several sessions.

User text is drawn as typed: every text element has math parsing off (``$x$`` stays ``$x$``; ``$^$`` does not
raise), and with "merge word pieces" the axes are labelled with words, as on the page. Characters the default
font lacks (Chinese, Japanese, Korean) are drawn with an installed font that has them (Noto CJK, WenQuanYi,
Droid Sans Fallback, IPA ... whatever ``fc-list`` finds); when no installed font has them, the figure says so
under the title instead of showing unexplained boxes. Fonts are never downloaded.
"""

from __future__ import annotations

import html
import io
import threading
from functools import lru_cache

import numpy as np

from bertscore_viz.engine.results import PairExplanation, TokenSide
from bertscore_viz.figures.cells import _axis, _label, _shown, cell_values

FORMATS = ("png", "svg", "pdf")
#: Font families tried first for characters the default font lacks (then every other installed font).
FALLBACK_FAMILIES = ("Noto Sans CJK JP", "Noto Sans CJK SC", "Noto Sans CJK TC", "Noto Sans CJK KR", "Noto Sans JP",
                     "Noto Sans SC", "Source Han Sans", "WenQuanYi Zen Hei", "WenQuanYi Micro Hei",
                     "Droid Sans Fallback", "IPAexGothic", "IPAGothic", "TakaoGothic", "Unifont")
#: Fonts whose "glyphs" are placeholder boxes for any character (matplotlib ships Last Resort): never a fallback.
PLACEHOLDER_FONTS = ("Last Resort",)
#: What to install when no font has the characters (a Debian package; any font with the glyphs will do).
FONT_PACKAGE = "fonts-noto-cjk"
_LOCK = threading.Lock()


# --- fonts ----------------------------------------------------------------------------------------------------------
@lru_cache(maxsize=None)
def _charmap(path: str) -> frozenset:
    """The code points a font file has glyphs for (empty when the file cannot be read)."""
    from matplotlib.ft2font import FT2Font

    try:
        return frozenset(FT2Font(path).get_charmap())
    except (OSError, RuntimeError, ValueError):
        return frozenset()


def _installed_fonts() -> list[tuple[str, str]]:
    """``(family, file)`` of every font matplotlib knows on this machine (the fallback families first)."""
    from matplotlib import font_manager

    seen, fonts = set(), []
    for f in font_manager.fontManager.ttflist:
        if f.name.startswith(PLACEHOLDER_FONTS):  # a box with the code point for every character: not a glyph
            continue
        if f.fname not in seen:
            seen.add(f.fname)
            fonts.append((f.name, f.fname))
    rank = {name: i for i, name in enumerate(FALLBACK_FAMILIES)}
    return sorted(fonts, key=lambda nf: rank.get(nf[0], len(rank)))


def choose_fonts(chars: set[str], default: frozenset, fonts: list[tuple[str, frozenset]]
                 ) -> tuple[list[str], set[str]]:
    """Fallback families for the characters ``default`` lacks (pure, for tests).

    Args:
        chars: characters to draw; default: the default font's code points; fonts: ``(family, code points)`` in
            order of preference.

    Returns:
        ``(families to add after the default, in order; characters no font has)``.
    """
    missing = {c for c in chars if not c.isspace() and ord(c) not in default}
    families: list[str] = []
    for family, cmap in fonts:
        if not missing:
            break
        covered = {c for c in missing if ord(c) in cmap}
        if covered and family not in families:
            families.append(family)
            missing -= covered
    return families, missing


def _font_plan(texts: list[str]) -> tuple[list[str], set[str]]:
    """``(font families to draw with, characters no installed font has)`` for these texts."""
    from matplotlib import font_manager

    default_path = font_manager.findfont(font_manager.FontProperties())
    default_family = font_manager.FontProperties(fname=default_path).get_name()
    chars = set("".join(texts))
    default = _charmap(default_path)
    if all(c.isspace() or ord(c) in default for c in chars):
        return [default_family], set()
    fonts = [(name, _charmap(path)) for name, path in _installed_fonts() if path != default_path]
    extra, missing = choose_fonts(chars, default, fonts)
    return [default_family] + extra, missing


def _missing_note(missing: set[str]) -> str:
    """Which characters show as boxes, by script (the characters themselves would be boxes too)."""
    from bertscore_viz.engine.languages import script_of

    kinds = sorted({script_of(c) or "symbol" for c in missing})
    return (f"No installed font has {len(missing)} character(s) of this pair ({', '.join(kinds)}): they show as "
            f"boxes. Install a font that has them (e.g. Debian's {FONT_PACKAGE}) to draw them.")


# --- drawing --------------------------------------------------------------------------------------------------------
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


def _plain(label: str) -> str:
    """A Plotly tick label (HTML-escaped) back to the text typed."""
    return html.unescape(label)


def _word_labels(side: TokenSide, pos: np.ndarray, merge_words: bool) -> list[str]:
    """One label per token shown; merged: the word on its first piece, nothing on the others."""
    out, last = [], None
    for p in pos:
        w = side.word_index[p]
        if merge_words and w >= 0:
            out.append("" if w == last else "".join(_label(side, int(q)) for q in np.flatnonzero(side.word_index == w)))
        else:
            out.append(_label(side, int(p)))
        last = w
    return out


def heatmap_image(pair: PairExplanation, fmt: str = "png", show_special: bool = False,
                  merge_words: bool = False) -> bytes:
    """The similarity heatmap as image bytes, each cell's value printed (as bert-score-show does).

    Cells are rescaled with the F baseline when the explanation is rescaled (as bert-score-show does). With
    ``merge_words`` the axes are labelled with words (cells stay pieces), lines between words, as on the page.
    """
    from matplotlib.figure import Figure

    values, _ = cell_values(pair)
    ya, xa = _axis(pair.cand, show_special, merge_words), _axis(pair.ref, show_special, merge_words)
    rows, cols = ya.positions, xa.positions
    sub = values[np.ix_(rows, cols)]
    xlabels, ylabels = [_plain(t) for t in xa.ticktext], [_plain(t) for t in ya.ticktext]
    title = _title(pair)
    families, missing = _font_plan(xlabels + ylabels + [title])
    n_r, n_c = max(1, len(rows)), max(1, len(cols))
    cell = 0.55
    fig = Figure(figsize=(max(4.0, 1.6 + cell * n_c), max(3.0, 1.6 + cell * n_r)))
    ax = fig.add_subplot()
    im = ax.imshow(sub, cmap="Blues", vmin=min(0.0, float(sub.min()) if sub.size else 0.0), vmax=1.0,
                   aspect="equal")
    ax.set_xticks(xa.tickvals, xlabels, rotation=75, ha="right", parse_math=False, fontfamily=families)
    ax.set_yticks(ya.tickvals, ylabels, parse_math=False, fontfamily=families)
    for b in xa.word_bounds:
        ax.axvline(b, color="black", alpha=0.25, lw=0.8)
    for b in ya.word_bounds:
        ax.axhline(b, color="black", alpha=0.25, lw=0.8)
    ax.set_xlabel("reference tokens" + (" (words)" if merge_words else ""))
    ax.set_ylabel("candidate tokens" + (" (words)" if merge_words else ""))
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
    ax.set_title(title + (f"\n{_missing_note(missing)}" if missing else ""), fontsize=8, parse_math=False,
                 fontfamily=families, wrap=True)
    fig.colorbar(im, ax=ax, shrink=0.7, label="rescaled similarity" if pair.rescaled is not None else "cosine")
    with _LOCK:  # matplotlib's font cache and text layout are shared by every session of the server
        return _save(fig, fmt)


def alignment_image(pair: PairExplanation, fmt: str = "png", show_special: bool = False,
                    merge_words: bool = False) -> bytes:
    """Candidate tokens on top, reference tokens below, a line from each token to its best match (with
    ``merge_words``, each word labelled once, on its first piece)."""
    from matplotlib import colormaps
    from matplotlib.figure import Figure

    cand, ref = _shown(pair.cand, show_special), _shown(pair.ref, show_special)
    c_lab, r_lab = _word_labels(pair.cand, cand, merge_words), _word_labels(pair.ref, ref, merge_words)
    title = _title(pair) + ("\nsolid: candidate → best reference token (P); dashed: reference → best candidate "
                            "token (R); blue = similar, red = dissimilar")
    families, missing = _font_plan(c_lab + r_lab + [title])
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
    for (p, x), text in zip(xc.items(), c_lab):
        ax.text(x, 1.04, text, rotation=60, ha="left", va="bottom", fontsize=8, parse_math=False,
                fontfamily=families)
    for (p, x), text in zip(xr.items(), r_lab):
        ax.text(x, -0.04, text, rotation=60, ha="right", va="top", fontsize=8, parse_math=False,
                fontfamily=families)
    ax.set_ylim(-0.6, 1.6)
    ax.set_xlim(-0.8, n - 0.2)
    ax.axis("off")
    ax.text(-0.8, 1.0, "candidate", ha="right", va="center", fontsize=8, style="italic")
    ax.text(-0.8, 0.0, "reference", ha="right", va="center", fontsize=8, style="italic")
    ax.set_title(title + (f"\n{_missing_note(missing)}" if missing else ""), fontsize=8, parse_math=False,
                 fontfamily=families)
    with _LOCK:
        return _save(fig, fmt)
