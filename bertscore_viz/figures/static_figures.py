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
from matplotlib import colormaps, font_manager
from matplotlib.cm import ScalarMappable
from matplotlib.collections import LineCollection
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.ft2font import FT2Font

from bertscore_viz.engine.languages import script_of
from bertscore_viz.engine.results import PairExplanation, TokenSide
from bertscore_viz.errors import InputError
from bertscore_viz.figures.cells import (
    WINDOW_RGB,
    axis_for,
    cell_values,
    shown_positions,
    token_label,
    window_cut_cells,
)
from bertscore_viz.figures.plots import ALIGN_SCALE, COL_MAX_COLOR, ROW_MAX_COLOR

FORMATS = ("png", "svg", "pdf")
#: Resolution of PNG output (dots per inch).
PNG_DPI = 150
#: Largest side of a figure, in inches (at :data:`PNG_DPI`, 4,050 pixels): a pair of the model's maximum length
#: (512 tokens a side) was drawn 283 inches (42,000 px) wide and took 18.8 GB; now every figure fits in this.
MAX_INCHES = 27.0
#: Inches per token while a pair is small enough; above, the cells shrink to fit :data:`MAX_INCHES`.
CELL_INCHES = 0.55
#: Cells smaller than this get no printed value (it would not be legible); the title says so.
MIN_VALUE_CELL_INCHES = 0.3
#: Most tokens a side a static figure draws; beyond, it is refused with a message (the page and the HTML figure
#: show any pair). Twice the catalog models' maximum length, so that every pair the engine can score is drawn.
MAX_TOKENS = 1100
#: Most tick labels per axis; above, every k-th token is labelled.
MAX_TICK_LABELS = 160
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

    try:
        return frozenset(FT2Font(path).get_charmap())
    except (OSError, RuntimeError, ValueError):
        return frozenset()


def _installed_fonts() -> list[tuple[str, str]]:
    """``(family, file)`` of every font matplotlib knows on this machine (the fallback families first)."""

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

    kinds = sorted({script_of(c) or "symbol" for c in missing})
    return (f"No installed font has {len(missing)} character(s) of this pair ({', '.join(kinds)}): they show as "
            f"boxes. Install a font that has them (e.g. Debian's {FONT_PACKAGE}) to draw them.")


# --- drawing --------------------------------------------------------------------------------------------------------
class FigureTooLarge(InputError):
    """A pair too long to draw as a static figure (see :data:`MAX_TOKENS`)."""


def _check_format(fmt: str) -> str:
    fmt = fmt.lower().lstrip(".")
    if fmt not in FORMATS:
        raise InputError(f"Unknown image format {fmt!r}; use one of {', '.join(FORMATS)}.")
    return fmt


def _check_size(n_rows: int, n_cols: int) -> None:
    if max(n_rows, n_cols) > MAX_TOKENS:
        raise FigureTooLarge(
            f"This pair has {n_rows} x {n_cols} tokens; a static figure (PNG, SVG, PDF) draws at most {MAX_TOKENS} "
            "a side. Use the interactive figure (HTML) or the token table, or explain a shorter excerpt.")


def refusal(pair: PairExplanation, show_special: bool = False) -> str | None:
    """Why this pair cannot be drawn as a static figure (the message of :class:`FigureTooLarge`), or None: pages
    ask before offering the download, so that a click never fails."""
    try:
        _check_size(len(shown_positions(pair.cand, show_special)), len(shown_positions(pair.ref, show_special)))
    except FigureTooLarge as exc:
        return str(exc)
    return None


def cell_inches(n_tokens: int) -> float:
    """Inches per token on a heatmap axis: :data:`CELL_INCHES`, smaller above ~46 tokens so that the figure
    stays within :data:`MAX_INCHES`."""
    return min(CELL_INCHES, (MAX_INCHES - 2.0) / max(1, n_tokens))


def _tick_step(n: int) -> int:
    return max(1, -(-n // MAX_TICK_LABELS))


def _save(fig, fmt: str) -> bytes:
    fmt = _check_format(fmt)
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, dpi=PNG_DPI if fmt == "png" else None, bbox_inches="tight")
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
            word = "".join(token_label(side, int(q)) for q in np.flatnonzero(side.word_index == w))
            out.append("" if w == last else word)
        else:
            out.append(token_label(side, int(p)))
        last = w
    return out


def heatmap_image(pair: PairExplanation, fmt: str = "png", show_special: bool = False,
                  merge_words: bool = False) -> bytes:
    """The similarity heatmap as image bytes, each cell's value printed (as bert-score-show does) while cells are
    large enough to read it.

    Cells are rescaled with the F baseline when the explanation is rescaled (as bert-score-show does). With
    ``merge_words`` the axes are labelled with words (cells stay pieces), lines between words, as on the page.
    Bounded work: the figure is at most :data:`MAX_INCHES` a side (cells shrink for long pairs; values, and then
    some tick labels, are left out, and the title says so); a pair over :data:`MAX_TOKENS` tokens a side is
    refused with :class:`FigureTooLarge`.
    """

    fmt = _check_format(fmt)
    values, _ = cell_values(pair)
    ya, xa = axis_for(pair.cand, show_special, merge_words), axis_for(pair.ref, show_special, merge_words)
    rows, cols = ya.positions, xa.positions
    _check_size(len(rows), len(cols))
    sub = values[np.ix_(rows, cols)]
    title = _title(pair)
    n_r, n_c = max(1, len(rows)), max(1, len(cols))
    cell = cell_inches(max(n_r, n_c))
    step_x, step_y = _tick_step(len(xa.tickvals)), _tick_step(len(ya.tickvals))
    xticks = (xa.tickvals[::step_x], [_plain(t) for t in xa.ticktext[::step_x]])
    yticks = (ya.tickvals[::step_y], [_plain(t) for t in ya.ticktext[::step_y]])
    label_size = 8 if cell >= 0.2 else max(3.0, cell * 72 * 0.8)
    with_values = cell >= MIN_VALUE_CELL_INCHES
    notes = []
    if not with_values:
        notes.append("cell values not printed at this size (the interactive figure and the token table have them)")
    if step_x > 1 or step_y > 1:
        notes.append(f"every {max(step_x, step_y)}th token labelled")
    families, missing = _font_plan(xticks[1] + yticks[1] + [title])
    fig = Figure(figsize=(max(4.0, 2.0 + cell * n_c), max(3.0, 2.0 + cell * n_r)))
    ax = fig.add_subplot()
    im = ax.imshow(sub, cmap="Blues", vmin=min(0.0, float(sub.min()) if sub.size else 0.0), vmax=1.0,
                   aspect="equal", interpolation="nearest")
    ax.set_xticks(xticks[0], xticks[1], rotation=75, ha="right", parse_math=False, fontfamily=families,
                  fontsize=label_size)
    ax.set_yticks(yticks[0], yticks[1], parse_math=False, fontfamily=families, fontsize=label_size)
    for b in xa.word_bounds:
        ax.axvline(b, color="black", alpha=0.25, lw=0.8 if cell >= 0.2 else 0.3)
    for b in ya.word_bounds:
        ax.axhline(b, color="black", alpha=0.25, lw=0.8 if cell >= 0.2 else 0.3)
    col_cuts, row_cuts = window_cut_cells(pair.ref, cols), window_cut_cells(pair.cand, rows)
    window_rgb = tuple(c / 255 for c in WINDOW_RGB)
    for b in col_cuts:  # window mode: where a long text's vectors start coming from the next window
        ax.axvline(b, color=window_rgb, ls="--", lw=1.5)
    for b in row_cuts:
        ax.axhline(b, color=window_rgb, ls="--", lw=1.5)
    if col_cuts or row_cuts:
        notes.append("dashed: window boundaries (window mode)")
    ax.set_xlabel("reference tokens" + (" (words)" if merge_words else ""))
    ax.set_ylabel("candidate tokens" + (" (words)" if merge_words else ""))
    ax.tick_params(length=0)
    mid = 0.5 * (float(sub.max()) + float(sub.min())) if sub.size else 0.5
    row_pos = {int(p): k for k, p in enumerate(rows)}
    col_pos = {int(p): k for k, p in enumerate(cols)}
    if with_values:
        for a in range(sub.shape[0]):
            for b in range(sub.shape[1]):
                ax.text(b, a, f"{sub[a, b]:.3f}", ha="center", va="center", fontsize=7,
                        color="white" if sub[a, b] > mid else "black")
    # best matches: one scatter per kind (not one artist per marker), sized to the cell
    pts = cell * 72  # points per cell
    p_marks = [(col_pos[int(j)], row_pos[i]) for i, j in enumerate(pair.cand_best_index)
               if i in row_pos and int(j) in col_pos]
    r_marks = [(col_pos[j], row_pos[int(i)]) for j, i in enumerate(pair.ref_best_index)
               if j in col_pos and int(i) in row_pos]
    # the page's colours (figures/plots.py): a ring for a row's maximum (precision), a cross for a column's
    # (recall); with values printed, the cross sits in the cell's top-right corner so that it covers no value
    if p_marks:
        x, y = zip(*p_marks)
        ax.scatter(x, y, s=(0.92 * pts) ** 2, facecolors="none", edgecolors=ROW_MAX_COLOR,
                   linewidths=min(1.5, pts / 12), marker="o", label="row max (precision)")
    if r_marks:
        x, y = zip(*r_marks)
        shift = 0.3 if with_values else 0.0
        ax.scatter([v + shift for v in x], [v - shift for v in y], s=((0.25 if with_values else 0.6) * pts) ** 2,
                   c=COL_MAX_COLOR, linewidths=min(1.5, pts / 14), marker="x", label="column max (recall)")
    if p_marks or r_marks:
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12 if cell >= 0.2 else -0.05), ncol=2, fontsize=7,
                  frameon=False, markerscale=min(1.0, 14 / max(pts, 1e-6)))
    note = "\n" + "; ".join(notes) if notes else ""
    ax.set_title(title + note + (f"\n{_missing_note(missing)}" if missing else ""), fontsize=8, parse_math=False,
                 fontfamily=families, wrap=True)
    fig.colorbar(im, ax=ax, shrink=0.7, label="rescaled similarity" if pair.rescaled is not None else "cosine")
    with _LOCK:  # matplotlib's font cache and text layout are shared by every session of the server
        return _save(fig, fmt)


def alignment_image(pair: PairExplanation, fmt: str = "png", show_special: bool = False,
                    merge_words: bool = False) -> bytes:
    """Candidate tokens on top, reference tokens below, a line from each token to its best match (with
    ``merge_words``, each word labelled once, on its first piece)."""

    fmt = _check_format(fmt)
    cand, ref = shown_positions(pair.cand, show_special), shown_positions(pair.ref, show_special)
    _check_size(len(cand), len(ref))
    c_lab, r_lab = _word_labels(pair.cand, cand, merge_words), _word_labels(pair.ref, ref, merge_words)
    title = _title(pair) + ("\nsolid: candidate → best reference token (P); dashed: reference → best candidate "
                            "token (R); blue = similar, red = dissimilar")
    families, missing = _font_plan(c_lab + r_lab + [title])
    n = max(len(cand), len(ref), 1)
    width = min(MAX_INCHES, max(5.0, 0.75 * n))  # bounded: labels shrink, then thin out, for long pairs
    per_token = width / n
    label_size = 8 if per_token >= 0.3 else max(3.0, per_token * 72 * 0.9)
    step = max(1, -(-n // MAX_TICK_LABELS))
    fig = Figure(figsize=(width, 3.2))
    ax = fig.add_subplot()
    xc = {int(p): k * (n - 1) / max(1, len(cand) - 1) for k, p in enumerate(cand)}
    xr = {int(p): k * (n - 1) / max(1, len(ref) - 1) for k, p in enumerate(ref)}
    cmap = colormaps[ALIGN_SCALE]
    # the page's colours: each match's value (rescaled with the F baseline when the pair is, as the heatmap), on the
    # range of the real tokens' best matches (red = weak, blue = strong)
    sims, _ = cell_values(pair)
    n_c, n_r = sims.shape
    c_best = sims[np.arange(n_c), pair.cand_best_index] if n_c else np.zeros(0)
    r_best = sims[pair.ref_best_index, np.arange(n_r)] if n_r else np.zeros(0)
    real = np.concatenate([c_best[~pair.cand.special], r_best[~pair.ref.special]])
    lo = float(real.min()) if real.size else 0.0
    span = max(1e-6, (float(real.max()) if real.size else 1.0) - lo)

    solid = [((xc[i], 1), (xr[int(j)], 0), sims[i, int(j)]) for i, j in enumerate(pair.cand_best_index)
             if i in xc and int(j) in xr]
    dashed = [((xc[int(i)], 1), (xr[j], 0), sims[int(i), j]) for j, i in enumerate(pair.ref_best_index)
              if j in xr and int(i) in xc]
    for lines, lw, ls, alpha in ((solid, 1.4, "solid", 0.9), (dashed, 0.8, "dashed", 0.7)):
        if lines:  # one collection per kind, not one artist per line
            ax.add_collection(LineCollection([(a, b) for a, b, _ in lines], colors=[cmap((v - lo) / span)
                                                                                    for *_, v in lines],
                                             linewidths=lw if n <= 200 else lw / 2, linestyles=ls, alpha=alpha))
    for k, ((p, x), text) in enumerate(zip(xc.items(), c_lab)):
        if k % step == 0:
            ax.text(x, 1.04, text, rotation=60, ha="left", va="bottom", fontsize=label_size, parse_math=False,
                    fontfamily=families)
    for k, ((p, x), text) in enumerate(zip(xr.items(), r_lab)):
        if k % step == 0:
            ax.text(x, -0.04, text, rotation=60, ha="right", va="top", fontsize=label_size, parse_math=False,
                    fontfamily=families)
    if step > 1:
        title += f"\nevery {step}th token labelled"
    ax.set_ylim(-0.6, 1.6)
    ax.set_xlim(-0.8, n - 0.2)
    ax.axis("off")
    ax.text(-0.8, 1.0, "candidate", ha="right", va="center", fontsize=8, style="italic")
    ax.text(-0.8, 0.0, "reference", ha="right", va="center", fontsize=8, style="italic")
    ax.set_title(title + (f"\n{_missing_note(missing)}" if missing else ""), fontsize=8, parse_math=False,
                 fontfamily=families, wrap=True)

    fig.colorbar(ScalarMappable(Normalize(lo, lo + span), cmap), ax=ax, shrink=0.8, pad=0.01,
                 label="rescaled similarity" if pair.rescaled is not None else "cosine")
    with _LOCK:
        return _save(fig, fmt)
