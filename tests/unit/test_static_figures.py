"""PNG/SVG/PDF of the heatmap and the alignment with matplotlib, the ``show`` command's static outputs, and the
HTML download: titled, with the texts, and a light variant that loads plotly.js from the CDN. User text is drawn as
typed (no maths), merged words label the axes, characters the default font lacks get an installed font that has
them or a note in the figure, and ``show -o`` writes atomically."""

import struct
import subprocess
import sys

import numpy as np
import pytest

from bertscore_viz.cli import show as show_cli
from bertscore_viz.figures import plots, static_figures


def test_heatmap_prints_every_cell_value(pair, monkeypatch):
    seen = []
    from matplotlib.axes import Axes

    original = Axes.text
    monkeypatch.setattr(Axes, "text", lambda self, x, y, s, *a, **k: (seen.append(s), original(self, x, y, s, *a,
                                                                                                 **k))[1])
    png = static_figures.heatmap_image(pair, "png")
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    rows, cols = np.flatnonzero(~pair.cand.special), np.flatnonzero(~pair.ref.special)
    expected = {f"{pair.similarity[i, j]:.3f}" for i in rows for j in cols}
    assert expected <= set(seen) and len(seen) == len(rows) * len(cols)


@pytest.mark.parametrize("fmt, magic", [("png", b"\x89PNG"), ("svg", b"<?xml"), ("pdf", b"%PDF")])
def test_both_figures_in_every_format(pair, fmt, magic):
    assert static_figures.heatmap_image(pair, fmt).startswith(magic)
    assert static_figures.alignment_image(pair, fmt).startswith(magic)
    with pytest.raises(ValueError, match="Unknown image format"):
        static_figures.heatmap_image(pair, "bmp")


def test_html_is_titled_with_the_texts_and_a_light_variant(scorer):
    pair = scorer.explain("<b>The cat</b> sat.", "A cat sat on the mat.")
    fig = plots.heatmap_figure(pair)
    full = plots.figure_html(fig, "BERTScore heatmap", pair)
    light = plots.figure_html(fig, "BERTScore heatmap", pair, light=True)
    for page in (full, light):
        assert "<title>BERTScore heatmap</title>" in page and "&lt;b&gt;The cat&lt;/b&gt; sat." in page
        assert "A cat sat on the mat." in page and str(pair.signature) in page and "<b>The cat" not in page
    assert len(full) > 3_000_000 and len(light) < 200_000 and "cdn.plot.ly" in light


@pytest.mark.slow
@pytest.mark.parametrize("suffix, magic", [("png", b"\x89PNG"), ("svg", b"<?xml")])
def test_show_writes_static_images_without_kaleido(tmp_path, suffix, magic):
    out = tmp_path / f"pair.{suffix}"
    proc = subprocess.run([sys.executable, "-m", "bertscore_viz", "show", "-c", "The cat sat.", "-r",
                           "A cat sat.", "-o", str(out)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes().startswith(magic)


# --- user text drawn as typed; merged words; fonts ------------------------------------------------------------------
@pytest.fixture
def drawn(monkeypatch):
    """The matplotlib figures the functions save, for a look at their texts."""
    from matplotlib.figure import Figure

    figures = []
    original = Figure.savefig
    monkeypatch.setattr(Figure, "savefig", lambda self, *a, **k: (figures.append(self), original(self, *a, **k))[1])
    return figures


def _texts(fig) -> list:
    ax = fig.axes[0]
    return list(ax.get_xticklabels()) + list(ax.get_yticklabels()) + list(ax.texts) + [ax.title]


@pytest.mark.parametrize("image", [static_figures.heatmap_image, static_figures.alignment_image])
def test_dollar_signs_are_drawn_as_typed_not_as_maths(scorer, drawn, image):
    pair = scorer.explain("It costs $^$ or $x$ dollars.", "The price is $x$.")
    assert image(pair, "png")[:4] == b"\x89PNG"  # `$^$` made matplotlib raise before: the download failed
    texts = _texts(drawn[-1])
    assert "$x$" in "".join(t.get_text() for t in texts)
    assert all(not t.get_parse_math() for t in texts if "$" in t.get_text())


def test_merged_word_pieces_label_the_static_figures_with_words(scorer, drawn):
    pair = scorer.explain("The players were playing unbelievably.", "Players played incredibly well.")
    static_figures.heatmap_image(pair, "png")
    pieces = [t.get_text() for t in drawn[-1].axes[0].get_yticklabels()]
    static_figures.heatmap_image(pair, "png", merge_words=True)
    words = [t.get_text() for t in drawn[-1].axes[0].get_yticklabels()]
    assert "unbelievably" not in pieces and "unbelievably" in words and len(words) < len(pieces)
    static_figures.alignment_image(pair, "png", merge_words=True)
    assert "unbelievably" in [t.get_text() for t in drawn[-1].axes[0].texts]


def test_fallback_fonts_are_chosen_for_the_characters_the_default_lacks():
    latin = frozenset(map(ord, "abcdefghijklmnopqrstuvwxyz"))
    fonts = [("Latin Extra", frozenset(map(ord, "é"))), ("Noto Sans CJK JP", frozenset(map(ord, "猫が"))),
             ("Another CJK", frozenset(map(ord, "猫がマ")))]
    assert static_figures.choose_fonts(set("cat 猫がマ"), latin, fonts) == (["Noto Sans CJK JP", "Another CJK"], set())
    assert static_figures.choose_fonts(set("cat"), latin, fonts) == ([], set())
    assert static_figures.choose_fonts(set("猫🍕"), latin, fonts) == (["Noto Sans CJK JP"], {"🍕"})


def test_a_japanese_pair_uses_a_cjk_font_or_says_none_is_installed(scorer, drawn):
    pair = scorer.explain("猫がマットの上に座った。", "マットの上に猫が座っている。")
    static_figures.heatmap_image(pair, "png")
    families, missing = static_figures._font_plan(["猫"])
    title = drawn[-1].axes[0].title.get_text()
    if missing:  # this machine (Debian without fonts-noto-cjk): the figure says so instead of unexplained boxes
        assert "No installed font has" in title and "fonts-noto-cjk" in title and "Han" in title
    else:
        assert len(families) > 1 and "No installed font" not in title
        label = drawn[-1].axes[0].get_yticklabels()[0]
        assert label.get_fontfamily()[1:] == families[1:]


@pytest.mark.parametrize("suffix", ["png", "html"])
def test_show_writes_atomically(tmp_path, monkeypatch, suffix):
    """Interrupted at the last moment (the rename), ``show -o`` leaves the earlier file as it was and no
    temporary file (write_text/write_bytes would have replaced it half-written)."""
    from bertscore_viz.cli import entry as cli
    from bertscore_viz.files import fileio

    out = tmp_path / f"pair.{suffix}"
    out.write_bytes(b"an earlier figure")

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(fileio.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        show_cli.run(cli.build_parser().parse_args(["show", "-c", "The cat sat.", "-r", "A cat sat.", "-o",
                                                          str(out)]))
    assert out.read_bytes() == b"an earlier figure" and [p.name for p in tmp_path.iterdir()] == [out.name]
    assert not hasattr(plots, "write_figure") and not hasattr(plots, "figure_png")  # no kaleido code left


def test_markers_use_the_pages_colours_and_file_names_say_what_they_hold():
    """Issue 23, item 10: the PNG's ring and cross had the page's colours swapped, and downloads were all
    'heatmap.png'."""
    from matplotlib.figure import Figure

    from bertscore_viz import Scorer
    from bertscore_viz.app.shared.explain_view import download_stem
    from bertscore_viz.figures.plots import COL_MAX_COLOR, ROW_MAX_COLOR

    pair = Scorer().explain("The cat sat on the mat.", "A cat was sitting on the mat.")
    figures = []
    original = Figure.savefig

    def keep(self, *a, **k):
        figures.append(self)
        return original(self, *a, **k)

    Figure.savefig = keep
    try:
        static_figures.heatmap_image(pair, "png")
    finally:
        Figure.savefig = original
    (ax,) = [a for a in figures[0].axes if a.get_label() != "<colorbar>"][:1]
    colours = {c.get_label(): c for c in ax.collections}
    import matplotlib.colors as mc

    assert mc.to_hex(colours["row max (precision)"].get_edgecolor()[0]) == ROW_MAX_COLOR
    assert mc.to_hex(colours["column max (recall)"].get_facecolor()[0]) == COL_MAX_COLOR
    assert download_stem(pair) == "bertscore_all-MiniLM-L6-v2_L4_The-cat-sat-on"
    assert static_figures.heatmap_image(pair, "pdf").startswith(b"%PDF")


# --- the whole pair (issue 30) --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def pair128(scorer):
    from .test_plots import mt_pair

    return scorer.explain(*mt_pair(scorer, 128))


def _real(side) -> list[str]:
    return [side.display[i] for i in np.flatnonzero(~side.special)]


def test_the_static_heatmap_labels_every_token_of_a_128_token_pair(pair128, drawn):
    static_figures.heatmap_image(pair128, "png")
    ax = drawn[-1].axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == _real(pair128.cand)
    assert [t.get_text() for t in ax.get_xticklabels()] == _real(pair128.ref)
    # labels fit their cells: at most 8 pt and at most 80 % of a cell (0.195 in = 14 pt here)
    cell_pt = static_figures.cell_inches(128) * 72
    assert all(t.get_fontsize() <= min(8.0, 0.8 * cell_pt) + 1e-9 for t in ax.get_yticklabels())


def test_the_static_alignment_wraps_and_labels_every_token_without_overlap(pair128, drawn):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    png = static_figures.alignment_image(pair128, "png")
    width, height = struct.unpack(">II", png[16:24])
    limit = static_figures.MAX_INCHES * static_figures.PNG_DPI * 1.1
    assert width <= limit and height <= limit
    fig = drawn[-1]
    ax = fig.axes[0]
    renderer = FigureCanvasAgg(fig).get_renderer()
    labels = [t for t in ax.texts if t.get_text() not in ("candidate", "reference")]
    rows = {}
    for t in labels:
        rows.setdefault(round(t.get_position()[1], 3), []).append(t)
    assert len(rows) >= 4  # wrapped: at least two bands of a candidate and a reference line
    # every token, in reading order: the candidate's lines from the top, the reference's likewise
    by_side = {"bottom": [], "top": []}
    for y in sorted(rows, reverse=True):
        line = sorted(rows[y], key=lambda t: t.get_position()[0])
        by_side[line[0].get_va()] += [t.get_text() for t in line]
        boxes = [t.get_window_extent(renderer) for t in line]
        assert all(a.x1 <= b.x0 for a, b in zip(boxes, boxes[1:])), "labels of a line overlap"
        x0, x1 = ax.get_xlim()
        assert all(x0 <= t.get_position()[0] <= x1 for t in line)
    assert by_side["bottom"] == _real(pair128.cand) and by_side["top"] == _real(pair128.ref)
    # one solid line per real candidate token (P), one dashed per real reference token (R)
    solid, dashed = ax.collections[:2]
    assert len(solid.get_segments()) + sum(pair128.ref.special[pair128.cand_best_index[1:-1]]) == 128
    assert len(dashed.get_segments()) + sum(pair128.cand.special[pair128.ref_best_index[1:-1]]) == 128


def test_an_undefined_score_is_written_n_a_in_static_figures(drawn):
    from bertscore_viz import Scorer

    pair = Scorer(idf=True).explain("The cat sat on the mat.", "There is a cat sitting on the mat.")
    for image in (static_figures.heatmap_image, static_figures.alignment_image):
        image(pair, "png")
        title = drawn[-1].axes[0].get_title() or drawn[-1].axes[0].get_title(loc="left")
        assert "R n/a" in title and "nan" not in title


@pytest.mark.parametrize("image", [static_figures.heatmap_image, static_figures.alignment_image])
@pytest.mark.parametrize("cand, ref, said", [("", "The cat sat.", "the candidate has no tokens"),
                                             ("The cat sat.", "  ", "the reference has no tokens"),
                                             ("", "", "the candidate and the reference have no tokens")])
def test_an_empty_side_draws_a_note_not_an_empty_matrix(scorer, drawn, image, cand, ref, said):
    """An empty text has no token to draw: the figure says so under the title (the scores) instead of a matrix
    of zero rows, which matplotlib warned about ("identical low and high ylims") and drew as a flat strip. With
    the special tokens shown there are cells again."""
    import warnings

    pair = scorer.explain(cand, ref)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert image(pair, "png")[:4] == b"\x89PNG"
    texts = [t.get_text() for t in _texts(drawn[-1])]
    assert any(t.startswith(f"Nothing to draw: {said}") for t in texts), texts
    assert str(pair.signature) in drawn[-1].axes[0].title.get_text()
    image(pair, "png", show_special=True)
    assert not any("Nothing to draw" in t.get_text() for t in _texts(drawn[-1]))
