"""Static figures (PNG, SVG, PDF) of one pair with matplotlib, which installs everywhere (no browser, no kaleido).

``heatmap_image`` draws what ``bert-score-show`` draws: the similarity matrix, candidate tokens as rows, reference
tokens as columns, the value printed in each cell; plus our markers of each row's (○, precision) and column's
(×, recall) best match, and a title with the scores and the signature. ``alignment_image`` draws the tokens of
both sides, wrapped onto bands as the page's alignment is, with a line from each to its best match, coloured by
similarity. Both draw the whole pair (every token labelled while labels fit) within :data:`MAX_INCHES`. Both use
matplotlib's object API (no pyplot, no global backend state), so they are safe in a server with several sessions.

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
from functools import cache

import numpy as np
from matplotlib import colormaps, font_manager
from matplotlib.cm import ScalarMappable
from matplotlib.collections import LineCollection
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.ft2font import FT2Font

from bertscore_viz.engine.languages import script_of
from bertscore_viz.engine.results import PairExplanation
from bertscore_viz.errors import InputError
from bertscore_viz.figures.cells import (
    WINDOW_RGB,
    alignment_layout,
    axis_for,
    cell_values,
    link_rgb,
    score_text,
    shown_positions,
    window_cut_cells,
)
from bertscore_viz.figures.plots import ALIGN_SCALE, COL_MAX_COLOR, ROW_MAX_COLOR

__all__ = ["ALIGN_FONT", "FORMATS", "FigureTooLarge", "LINK_MIN_POINTS", "MAX_INCHES", "MAX_TICK_LABELS", "MAX_TOKENS",
           "PNG_DPI", "alignment_image", "cell_inches", "choose_fonts", "heatmap_image", "refusal"]

FORMATS = ("png", "svg", "pdf")
#: The alignment image's thinnest link, in points, however small its font gets (a line of 0.5 pt at 0.7 alpha in a
#: pale colour was hard to see).
LINK_MIN_POINTS = 1.0
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
@cache
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


def _check_size(n_rows: int, n_cols: int, max_tokens: int = MAX_TOKENS) -> None:
    if max(n_rows, n_cols) > max_tokens:
        raise FigureTooLarge(
            f"This pair has {n_rows} x {n_cols} tokens; a static figure (PNG, SVG, PDF) draws at most {max_tokens} "
            "a side. Use the interactive figure (HTML) or the token table, or explain a shorter excerpt.")


def refusal(pair: PairExplanation, show_special: bool = False, max_tokens: int = MAX_TOKENS) -> str | None:
    """Why this pair cannot be drawn as a static figure of at most ``max_tokens`` a side (the message of
    :class:`FigureTooLarge`), or None: pages ask before offering the download, so that a click never fails."""
    try:
        _check_size(len(shown_positions(pair.cand, show_special)), len(shown_positions(pair.ref, show_special)),
                    max_tokens)
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
    p, r, f = pair.scores
    kind = "rescaled " if pair.rescaled is not None else ""
    return f"BERTScore {kind}P {score_text(p)}  R {score_text(r)}  F1 {score_text(f)}\n{pair.signature}"


def _nothing_to_draw(n_rows: int, n_cols: int) -> str | None:
    """Why a figure of ``n_rows`` x ``n_cols`` shown tokens has no cells (a side without a token to show), or None."""
    empty = [side for side, n in (("candidate", n_rows), ("reference", n_cols)) if n == 0]
    if not empty:
        return None
    said = (f"the {empty[0]} has no tokens (an empty text)" if len(empty) == 1 else
            "the candidate and the reference have no tokens (empty texts)")
    return (f"Nothing to draw: {said}, so there is no token to match (the title has the scores).\n"
            "Show the special tokens to draw their matches.")


def _note_figure(title: str, note: str, fmt: str) -> bytes:
    """A figure of the title and one note in place of the cells (a matrix with an empty side is no figure)."""
    fig = Figure(figsize=(6.0, 2.0))
    ax = fig.add_subplot()
    ax.axis("off")
    ax.set_title(title, fontsize=8, parse_math=False)
    ax.text(0.5, 0.5, note, ha="center", va="center", fontsize=9, wrap=True, parse_math=False,
            transform=ax.transAxes)
    with _LOCK:
        return _save(fig, fmt)


def _plain(label: str) -> str:
    """A Plotly tick label (HTML-escaped) back to the text typed."""
    return html.unescape(label)


# --- the heatmap ---------------------------------------------------------------------------------------------------
def _draw_bounds(ax, pair: PairExplanation, xa, ya, cell: float) -> bool:
    """Lines between words (merged view) and dashed window boundaries; whether there was a window boundary."""
    for b in xa.word_bounds:
        ax.axvline(b, color="black", alpha=0.25, lw=0.8 if cell >= 0.2 else 0.3)
    for b in ya.word_bounds:
        ax.axhline(b, color="black", alpha=0.25, lw=0.8 if cell >= 0.2 else 0.3)
    col_cuts, row_cuts = window_cut_cells(pair.ref, xa.positions), window_cut_cells(pair.cand, ya.positions)
    window_rgb = tuple(c / 255 for c in WINDOW_RGB)
    for b in col_cuts:  # window mode: where a long text's vectors start coming from the next window
        ax.axvline(b, color=window_rgb, ls="--", lw=1.5)
    for b in row_cuts:
        ax.axhline(b, color=window_rgb, ls="--", lw=1.5)
    return bool(col_cuts or row_cuts)


def _draw_values(ax, sub: np.ndarray) -> None:
    """The value of every cell, white on dark cells (as bert-score-show prints them)."""
    mid = 0.5 * (float(sub.max()) + float(sub.min())) if sub.size else 0.5
    for a in range(sub.shape[0]):
        for b in range(sub.shape[1]):
            ax.text(b, a, f"{sub[a, b]:.3f}", ha="center", va="center", fontsize=7,
                    color="white" if sub[a, b] > mid else "black")


def _draw_markers(ax, pair: PairExplanation, rows: np.ndarray, cols: np.ndarray, cell: float,
                  with_values: bool) -> None:
    """The page's markers (figures/plots.py colours): a ring on each row's maximum (precision), a cross on each
    column's (recall); with values printed the cross sits in the cell's top-right corner, covering no value. One
    scatter per kind (not one artist per marker), sized to the cell."""
    row_pos = {int(p): k for k, p in enumerate(rows)}
    col_pos = {int(p): k for k, p in enumerate(cols)}
    pts = cell * 72  # points per cell
    p_marks = [(col_pos[int(j)], row_pos[i]) for i, j in enumerate(pair.cand_best_index)
               if i in row_pos and int(j) in col_pos]
    r_marks = [(col_pos[j], row_pos[int(i)]) for j, i in enumerate(pair.ref_best_index)
               if j in col_pos and int(i) in row_pos]
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


def heatmap_image(pair: PairExplanation, fmt: str = "png", show_special: bool = False,
                  merge_words: bool = False, max_tokens: int = MAX_TOKENS) -> bytes:
    """The similarity heatmap as image bytes, each cell's value printed (as bert-score-show does) while cells are
    large enough to read it.

    Cells are rescaled with the F baseline when the explanation is rescaled (as bert-score-show does). With
    ``merge_words`` the axes are labelled with words (cells stay pieces), lines between words, as on the page.
    The whole pair is drawn and every token labelled up to :data:`MAX_TICK_LABELS` a side (every k-th above, the
    title says so). Bounded work: the figure is at most :data:`MAX_INCHES` a side (cells shrink for long pairs;
    values are left out below :data:`MIN_VALUE_CELL_INCHES`, the title says so).

    Raises:
        FigureTooLarge: over ``max_tokens`` tokens a side (:data:`MAX_TOKENS` by default).
        InputError: an unknown format.
    """
    fmt = _check_format(fmt)
    ya, xa = axis_for(pair.cand, show_special, merge_words), axis_for(pair.ref, show_special, merge_words)
    rows, cols = ya.positions, xa.positions
    _check_size(len(rows), len(cols), max_tokens)
    title = _title(pair)
    if nothing := _nothing_to_draw(len(rows), len(cols)):
        return _note_figure(title, nothing, fmt)
    values, _ = cell_values(pair)
    sub = values[np.ix_(rows, cols)]
    n_r, n_c = len(rows), len(cols)
    cell = cell_inches(max(n_r, n_c))
    step_x, step_y = _tick_step(len(xa.tickvals)), _tick_step(len(ya.tickvals))
    xticks = (xa.tickvals[::step_x], [_plain(t) for t in xa.ticktext[::step_x]])
    yticks = (ya.tickvals[::step_y], [_plain(t) for t in ya.ticktext[::step_y]])
    # labels fit their cell (80 % of its height in points), at most 8 pt, never below 3 pt
    label_size = min(8.0, max(3.0, cell * 72 * 0.8))
    with_values = cell >= MIN_VALUE_CELL_INCHES
    notes = []
    if not with_values:
        notes.append("cell values not printed at this size (the interactive figure and the token table have them)")
    if step_x > 1 or step_y > 1:
        notes.append(f"every {max(step_x, step_y)}th token labelled")
    families, missing = _font_plan(xticks[1] + yticks[1] + [title])
    fig = Figure(figsize=(max(4.0, 2.0 + cell * n_c), max(3.0, 2.0 + cell * n_r)))
    ax = fig.add_subplot()
    im = ax.imshow(sub, cmap="Blues", vmin=min(0.0, float(sub.min())), vmax=1.0,
                   aspect="equal", interpolation="nearest")
    ax.set_xticks(xticks[0], xticks[1], rotation=75, ha="right", parse_math=False, fontfamily=families,
                  fontsize=label_size)
    ax.set_yticks(yticks[0], yticks[1], parse_math=False, fontfamily=families, fontsize=label_size)
    if _draw_bounds(ax, pair, xa, ya, cell):
        notes.append("dashed: window boundaries (window mode)")
    ax.set_xlabel("reference tokens" + (" (words)" if merge_words else ""))
    ax.set_ylabel("candidate tokens" + (" (words)" if merge_words else ""))
    ax.tick_params(length=0)
    if with_values:
        _draw_values(ax, sub)
    _draw_markers(ax, pair, rows, cols, cell, with_values)
    note = "\n" + "; ".join(notes) if notes else ""
    ax.set_title(title + note + (f"\n{_missing_note(missing)}" if missing else ""), fontsize=8, parse_math=False,
                 fontfamily=families, wrap=True)
    fig.colorbar(im, ax=ax, shrink=0.7, label="rescaled similarity" if pair.rescaled is not None else "cosine")
    with _LOCK:  # matplotlib's font cache and text layout are shared by every session of the server
        return _save(fig, fmt)


# --- the alignment -------------------------------------------------------------------------------------------------
#: The alignment's label size (points) while it fits; smaller (down to 3 pt) when the bands would exceed
#: :data:`MAX_INCHES`.
ALIGN_FONT = 8.0
#: The alignment's lines wrap at this width (inches) while the bands fit the height.
ALIGN_WRAP_INCHES = 16.0


def _align_fit(pair: PairExplanation, show_special: bool, merge_words: bool):
    """The wrapped layout (units: points) and its font size: lines of :data:`ALIGN_WRAP_INCHES` (up to
    :data:`MAX_INCHES` - 2 when the bands would not fit the height otherwise), bands within :data:`MAX_INCHES` in
    height, the font shrinking (down to 3 pt) until they do."""
    size = ALIGN_FONT
    while True:
        for wrap in (ALIGN_WRAP_INCHES * 72, (MAX_INCHES - 2.0) * 72):
            lay = alignment_layout(pair, show_special, merge_words, wrap=wrap, char=0.62 * size, gap=0.9 * size,
                                   piece=1.4 * size)
            if lay.n_lines * _band_pt(size) <= (MAX_INCHES - 2.0) * 72:
                return lay, size
        if size <= 3.0:
            return lay, size
        size = max(3.0, size * 0.85)


def _band_pt(size: float) -> float:
    """Height of one band in points: a label line above the candidate row, the links, a label line below the
    reference row, a gap."""
    return 2 * 1.6 * size + 36 + 16


def _align_values(pair: PairExplanation):
    """Each match's value (rescaled with the F baseline when the pair is, as the heatmap) and the colour range of
    the real tokens' best matches: ``(values, lo, span)``."""
    sims, _ = cell_values(pair)
    n_c, n_r = sims.shape
    c_best = sims[np.arange(n_c), pair.cand_best_index] if n_c else np.zeros(0)
    r_best = sims[pair.ref_best_index, np.arange(n_r)] if n_r else np.zeros(0)
    real = np.concatenate([c_best[~pair.cand.special], r_best[~pair.ref.special]])
    lo = float(real.min()) if real.size else 0.0
    return sims, lo, max(1e-6, (float(real.max()) if real.size else 1.0) - lo)


def _align_axes(width: float, height: float, size: float):
    """A figure whose axes draw one data unit as one point (the layout's units: labels spaced as measured), with
    room for the row names on the left and the colour bar on the right: ``(figure, axes, colour bar axes)``."""
    left, right, below, title = 70.0, 80.0, 1.6 * size + 8, 64.0
    fig_w, fig_h = left + width + 8 + right, height + below + 8 + title
    fig = Figure(figsize=(fig_w / 72, fig_h / 72))
    plot_h = (height + below + 8) / fig_h
    ax = fig.add_axes((left / fig_w, 0.0, (width + 8) / fig_w, plot_h))
    ax.set_xlim(-4, width + 4)
    ax.set_ylim(-below, height + 8)
    bar_h = min(height + below, 200.0) / fig_h
    cax = fig.add_axes(((left + width + 24) / fig_w, plot_h - bar_h, 10 / fig_w, bar_h))
    return fig, ax, cax


def alignment_image(pair: PairExplanation, fmt: str = "png", show_special: bool = False,
                    merge_words: bool = False, max_tokens: int = MAX_TOKENS) -> bytes:
    """The two sentences wrapped onto bands (as on the page), the candidate's line above the reference's in each,
    a solid line from each candidate token to its best reference token (P) and a dashed one from each reference
    token to its best candidate token (R), coloured by similarity. Every token is labelled (with ``merge_words``
    each word once, on its first piece); at most :data:`MAX_INCHES` a side.

    Raises:
        FigureTooLarge: over ``max_tokens`` tokens a side (:data:`MAX_TOKENS` by default).
        InputError: an unknown format.
    """
    fmt = _check_format(fmt)
    n_rows, n_cols = len(shown_positions(pair.cand, show_special)), len(shown_positions(pair.ref, show_special))
    _check_size(n_rows, n_cols, max_tokens)
    if nothing := _nothing_to_draw(n_rows, n_cols):
        return _note_figure(_title(pair), nothing, fmt)
    lay, size = _align_fit(pair, show_special, merge_words)
    title = _title(pair) + ("\nsolid: candidate → best reference token (P); dashed: reference → best candidate "
                            "token (R); blue = similar, red = dissimilar")
    families, missing = _font_plan(list(lay.cand.labels) + list(lay.ref.labels) + [title])
    band = _band_pt(size)
    height = lay.n_lines * band
    y_c = [height - b * band - 1.6 * size for b in range(lay.n_lines)]
    y_r = [y - 36 for y in y_c]
    fig, ax, cax = _align_axes(lay.width, height, size)
    sims, lo, span = _align_values(pair)
    cmap = colormaps[ALIGN_SCALE]
    at_c = {int(p): (float(x), y_c[int(b)]) for p, x, b in zip(lay.cand.nodes, lay.cand.x, lay.cand.line)}
    at_r = {int(p): (float(x), y_r[int(b)]) for p, x, b in zip(lay.ref.nodes, lay.ref.x, lay.ref.line)}
    solid = [(at_c[i], at_r[int(j)], sims[i, int(j)]) for i, j in enumerate(pair.cand_best_index)
             if i in at_c and int(j) in at_r and not pair.cand.special[i]]
    dashed = [(at_c[int(i)], at_r[j], sims[int(i), j]) for j, i in enumerate(pair.ref_best_index)
              if j in at_r and int(i) in at_c and not pair.ref.special[j]]
    for lines, lw, ls in ((solid, 1.2, "solid"), (dashed, 1.0, "dashed")):
        if lines:  # one collection per kind, not one artist per line; opaque, pale colours darkened (link_rgb)
            ax.add_collection(LineCollection([(a, b) for a, b, _ in lines], linestyles=ls, alpha=1.0,
                                             colors=[link_rgb(cmap((v - lo) / span)) for *_, v in lines],
                                             linewidths=max(LINK_MIN_POINTS, lw * min(1.0, size / ALIGN_FONT))))
    for side, at, va, dy in ((lay.cand, at_c, "bottom", 0.3 * size), (lay.ref, at_r, "top", -0.3 * size)):
        specials = pair.cand.special if side is lay.cand else pair.ref.special
        for p, text in zip(side.nodes.tolist(), side.labels):
            if text:
                x, y = at[p]
                ax.text(x, y + dy, text, ha="center", va=va, fontsize=size, parse_math=False, fontfamily=families,
                        color="#888888" if specials[p] else "#262730")
    for b in range(lay.n_lines):
        ax.text(-6, y_c[b], "candidate", ha="right", va="center", fontsize=min(7.0, size), style="italic")
        ax.text(-6, y_r[b], "reference", ha="right", va="center", fontsize=min(7.0, size), style="italic")
    ax.axis("off")
    ax.set_title(title + (f"\n{_missing_note(missing)}" if missing else ""), fontsize=8, parse_math=False,
                 fontfamily=families, loc="left")
    bar = fig.colorbar(ScalarMappable(Normalize(lo, lo + span), cmap), cax=cax)
    bar.set_label("rescaled similarity" if pair.rescaled is not None else "cosine", fontsize=8)
    cax.tick_params(labelsize=7)
    with _LOCK:
        return _save(fig, fmt)
