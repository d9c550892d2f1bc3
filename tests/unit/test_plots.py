"""Figures of a pair explanation: heatmap cells, greedy-maximum markers, hover, rescaling, escaping, sizes,
alignment lines, and the ``show`` command."""

from __future__ import annotations

import html
import json

import numpy as np
import plotly.graph_objects as go
import pytest

from bertscore_viz import Scorer
from bertscore_viz.cli import entry as cli
from bertscore_viz.engine.baseline import format_baseline
from bertscore_viz.figures import cells, plots
from tests.conftest import DATA

from .pair_example import CAND, REF, TABLE


def _heat(fig) -> go.Heatmap:
    return next(t for t in fig.data if t.type == "heatmap")


def _markers(fig, word: str):
    return next(t for t in fig.data if t.type == "scatter" and word in (t.name or ""))


def test_heatmap_cells_are_the_similarity_without_specials(pair):
    fig = plots.heatmap_figure(pair)
    z = np.asarray(_heat(fig).z)
    rows, cols = np.flatnonzero(~pair.cand.special), np.flatnonzero(~pair.ref.special)
    np.testing.assert_allclose(z, pair.similarity[np.ix_(rows, cols)])
    assert list(fig.layout.yaxis.ticktext) == [pair.cand.display[i] for i in rows]
    assert list(fig.layout.xaxis.ticktext) == [pair.ref.display[j] for j in cols]
    assert "cosine" in fig.layout.title.text or "P " in fig.layout.title.text
    assert _heat(fig).colorbar.title.text == "cosine similarity"


def test_special_tokens_shown_on_request(pair):
    fig = plots.heatmap_figure(pair, show_special=True)
    z = np.asarray(_heat(fig).z)
    np.testing.assert_allclose(z, pair.similarity)
    assert fig.layout.yaxis.ticktext[0] == "[CLS]" and fig.layout.xaxis.ticktext[-1] == "[SEP]"


@pytest.mark.parametrize("show_special", [False, True])
def test_row_and_column_maxima_are_marked(pair, show_special):
    fig = plots.heatmap_figure(pair, show_special=show_special)
    z = np.asarray(_heat(fig).z)
    rows = np.arange(len(pair.cand)) if show_special else np.flatnonzero(~pair.cand.special)
    cols = np.arange(len(pair.ref)) if show_special else np.flatnonzero(~pair.ref.special)
    row_m, col_m = _markers(fig, "row max"), _markers(fig, "column max")
    # every marked row maximum is the largest cell of its row in the full matrix (greedy matching)
    for x, y in zip(row_m.x, row_m.y):
        i, j = rows[int(y)], cols[int(x)]
        assert pair.cand_best_index[i] == j
        assert z[int(y), int(x)] == pytest.approx(pair.similarity[i].max())
    for x, y in zip(col_m.x, col_m.y):
        i, j = rows[int(y)], cols[int(x)]
        assert pair.ref_best_index[j] == i
    # a row has no marker only when its best match is a hidden special token
    unmarked_rows = set(range(len(rows))) - {int(y) for y in row_m.y}
    for k in unmarked_rows:
        assert pair.ref.special[pair.cand_best_index[rows[k]]] and not show_special
    if show_special:
        assert len(row_m.x) == len(pair.cand) and len(col_m.x) == len(pair.ref)


def test_hover_gives_tokens_similarity_weights_and_maxima(pair):
    fig = plots.heatmap_figure(pair)
    text = _heat(fig).text
    rows, cols = np.flatnonzero(~pair.cand.special), np.flatnonzero(~pair.ref.special)
    k = list(rows).index(2)  # "players"
    j = int(pair.cand_best_index[2])
    c = list(cols).index(j)
    cell = text[k][c]
    assert "players" in cell and pair.ref.display[j] in cell
    assert f"{pair.similarity[2, j]:.4f}" in cell
    assert "idf 1.000" in cell
    assert "row max" in cell
    other = text[k][(c + 1) % len(cols)]
    assert "row max" not in other or pair.cand_best_index[2] == cols[(c + 1) % len(cols)]


def test_hidden_special_best_match_is_named(scorer):
    pair = scorer.explain("The cat sat on the mat.", "There is a cat sitting on the mat.")
    fig = plots.heatmap_figure(pair)
    cols = np.flatnonzero(~pair.ref.special)
    c = [pair.ref.display[j] for j in cols].index("There")
    assert "hidden [SEP]" in _heat(fig).text[0][c]
    assert pair.special_best_matches()


def test_rescaled_cells_use_the_f_baseline(scorer):
    sc = Scorer(rescale_with_baseline=True, baseline_table=TABLE)
    pair = sc.explain(CAND, REF)
    b_f = TABLE.values[sc.layer][2]
    fig = plots.heatmap_figure(pair)
    rows, cols = np.flatnonzero(~pair.cand.special), np.flatnonzero(~pair.ref.special)
    np.testing.assert_allclose(np.asarray(_heat(fig).z), (pair.similarity[np.ix_(rows, cols)] - b_f) / (1 - b_f))
    title = _heat(fig).colorbar.title.text
    assert "F baseline" in title and f"{b_f:.3f}" in title
    assert "rescaled" in fig.layout.title.text
    raw = plots.heatmap_figure(pair, rescaled=False)
    np.testing.assert_allclose(np.asarray(_heat(raw).z), pair.similarity[np.ix_(rows, cols)])
    with pytest.raises(Exception, match="no baseline"):
        plots.heatmap_figure(scorer.explain(CAND, REF), rescaled=True)


def test_user_text_is_escaped_and_never_typeset(scorer):
    pair = scorer.explain("<script>alert(1)</script> **bold** $x$", "<b>bold</b> text")
    fig = plots.heatmap_figure(pair)
    labels = list(fig.layout.yaxis.ticktext) + list(fig.layout.xaxis.ticktext)
    assert "&lt;" in labels and "<" not in labels
    assert all("<" not in t for t in labels)
    hover = json.dumps(_heat(fig).text)
    assert "<script" not in hover and "&lt;" in hover
    html = plots.figure_html(fig)
    assert '"typesetMath": false' in html
    assert "<script>alert" not in html
    align = plots.alignment_figure(pair, merge_words=True)
    texts = [t for tr in align.data if tr.text is not None for t in tr.text]
    assert "&lt;" in texts and all("<" not in t for t in texts)


def test_merged_words_label_the_axes(pair):
    fig = plots.heatmap_figure(pair, merge_words=True)
    assert "unbelievably" in fig.layout.yaxis.ticktext
    n_words = len(pair.cand.words())
    assert len(fig.layout.yaxis.ticktext) == n_words
    # the cells stay pieces, and the pieces are in the hover
    assert np.asarray(_heat(fig).z).shape[0] == int((~pair.cand.special).sum())
    assert any("##bel" in cell for row in _heat(fig).text for cell in row)


# --- the whole pair (issue 30) --------------------------------------------------------------------------------
def exact_tokens(scorer, words: list[str], n: int) -> str:
    """Words of real text, in order, making exactly ``n`` tokens (CLS/SEP aside) with the scorer's tokenizer: a
    word that would overshoot is skipped."""
    out: list[str] = []
    for w in words:
        k = len(scorer.encoder.tokenizer(" ".join(out + [w]), add_special_tokens=False)["input_ids"])
        if k == n:
            return " ".join(out + [w])
        if k < n:
            out.append(w)
    raise AssertionError(f"not enough words for {n} tokens")


def mt_pair(scorer, n: int, start: int = 0) -> tuple[str, str]:
    """A machine translation and its reference (WMT16 de-en, consecutive segments from ``start``), each cut to
    exactly ``n`` tokens: ``(candidate, reference)``."""
    folder = DATA / "wmt16-da-to-english"
    mt = (folder / "DAseg-newstest2016.mt-system.de-en").read_text(encoding="utf-8").splitlines()[start:start + 40]
    ref = (folder / "DAseg-newstest2016.reference.de-en").read_text(encoding="utf-8").splitlines()[start:start + 40]
    return exact_tokens(scorer, " ".join(mt).split(), n), exact_tokens(scorer, " ".join(ref).split(), n)


@pytest.fixture(scope="module")
def pair128(scorer):
    """A 128 x 128-token pair: WMT16 machine translations against their references."""
    pair = scorer.explain(*mt_pair(scorer, 128))
    assert int((~pair.cand.special).sum()) == int((~pair.ref.special).sum()) == 128
    assert pair.f1 < 0.95  # not the same text
    return pair


def _tokens(side) -> list[str]:
    return [side.display[i] for i in np.flatnonzero(~side.special)]


def test_a_128_token_pair_is_drawn_whole_at_a_legible_size(pair128):
    fig = plots.heatmap_figure(pair128)
    assert not plots.needs_overview(pair128)
    np.testing.assert_allclose(np.asarray(_heat(fig).z), pair128.similarity[1:-1, 1:-1])
    # every token labelled, on an axis that shows all of them
    assert list(fig.layout.yaxis.ticktext) == _tokens(pair128.cand)
    assert list(fig.layout.xaxis.ticktext) == _tokens(pair128.ref)
    assert tuple(fig.layout.xaxis.range) == (-0.5, 127.5) and tuple(fig.layout.yaxis.range) == (127.5, -0.5)
    meta = fig.layout.meta
    assert meta["shape"] == meta["full_shape"] == [128, 128] and meta["region"] is None and not meta["windowed"]
    # square cells of at least 16 px; the figure is as large as its cells and margins (the page scrolls)
    cell = meta["cell"]
    assert cell >= 16 and fig.layout.width == fig.layout.margin.l + fig.layout.margin.r + 128 * cell
    assert fig.layout.height == fig.layout.margin.t + fig.layout.margin.b + 128 * cell
    # margins hold the longest label (12 px font, ~7.2 px a character; column labels vertical at 16 px cells)
    longest = max(len(t) for t in _tokens(pair128.ref))
    assert plots.x_angle(cell) == -90 and fig.layout.margin.t >= 74 + longest * plots.CHAR_PX
    assert fig.layout.margin.l >= 34 + max(len(t) for t in _tokens(pair128.cand)) * plots.CHAR_PX
    # every row and column maximum marked
    assert len(_markers(fig, "row max").x) + sum(pair128.ref.special[pair128.cand_best_index[1:-1]]) == 128


def test_cells_shrink_to_the_page_width_but_never_below_16_px(scorer, pair128):
    cand, ref = mt_pair(scorer, 44)[0], mt_pair(scorer, 40)[1]
    pair = scorer.explain(cand, ref)
    natural = plots.heatmap_figure(pair)
    fitted = plots.heatmap_figure(pair, max_width=1100)
    assert natural.layout.width > 1100 >= fitted.layout.width
    assert natural.layout.meta["cell"] == 22 > fitted.layout.meta["cell"] >= plots.MIN_CELL_PX == 16
    cell = fitted.layout.meta["cell"]
    assert fitted.layout.width == fitted.layout.margin.l + fitted.layout.margin.r + 40 * cell  # square, all 40
    assert list(fitted.layout.xaxis.ticktext) == _tokens(pair.ref)
    wide = plots.heatmap_figure(pair128, max_width=1100)  # 128 columns cannot fit: 16 px cells, the page scrolls
    assert wide.layout.meta["cell"] == 16 and wide.layout.width > 2000


def test_a_region_is_drawn_at_full_resolution_in_the_whole_matrixs_coordinates(pair128):
    fig = plots.heatmap_figure(pair128, rows=(40, 90), cols=(10, 30))
    rows, cols = np.arange(41, 91), np.arange(11, 31)  # token positions (CLS is 0)
    np.testing.assert_allclose(np.asarray(_heat(fig).z), pair128.similarity[np.ix_(rows, cols)])
    assert (_heat(fig).x0, _heat(fig).y0) == (10, 40)
    assert list(fig.layout.yaxis.tickvals) == list(range(40, 90))
    assert list(fig.layout.yaxis.ticktext) == [pair128.cand.display[i] for i in rows]
    assert tuple(fig.layout.xaxis.range) == (9.5, 29.5) and tuple(fig.layout.yaxis.range) == (89.5, 39.5)
    assert fig.layout.meta["region"] == {"rows": [40, 90], "cols": [10, 30]}
    assert "tokens 41–90 of 128 × 11–30 of 128" in fig.layout.title.text
    # a marker only where the best match lies inside the region, at the whole matrix's coordinates
    row_m = _markers(fig, "row max")
    inside = [(int(pair128.cand_best_index[i]) - 1, i - 1) for i in rows if int(pair128.cand_best_index[i]) in cols]
    assert sorted(zip(row_m.x, row_m.y)) == sorted(inside)
    k = next(a for a, i in enumerate(rows) if int(pair128.cand_best_index[i]) not in cols
             and not pair128.ref.special[pair128.cand_best_index[i]])
    assert "is outside this region" in _heat(fig).text[k][0]


def test_the_overview_is_the_block_maximum_of_the_whole_matrix(scorer):
    words = (DATA / "newstest2017-english" / "newstest2017-deen-ref.en").read_text(encoding="utf-8").split()
    pair = Scorer(long_texts="window").explain(" ".join(words[:420]), " ".join(words[200:650]))
    n_r, n_c = int((~pair.cand.special).sum()), int((~pair.ref.special).sum())
    assert max(n_r, n_c) > plots.WHOLE_TOKENS and plots.needs_overview(pair)
    fig = plots.overview_figure(pair, region=((0, 128), (100, 228)))
    block = fig.layout.meta["block"]
    assert block == -(-max(n_r, n_c) // plots.OVERVIEW_CELLS) and fig.layout.meta["aggregate"] == "max"
    sub = pair.similarity[np.ix_(np.flatnonzero(~pair.cand.special), np.flatnonzero(~pair.ref.special))]
    z = np.asarray(_heat(fig).z)
    assert z.shape == (-(-n_r // block), -(-n_c // block))
    for a in range(z.shape[0]):  # plain loops: the largest value of each block of tokens
        for b in range(z.shape[1]):
            assert z[a, b] == sub[a * block:(a + 1) * block, b * block:(b + 1) * block].max()
    assert (_heat(fig).x0, _heat(fig).dx) == ((block - 1) / 2, block)  # cells at the tokens' coordinates
    rect = next(sh for sh in fig.layout.shapes if sh.type == "rect")
    assert (rect.x0, rect.x1, rect.y0, rect.y1) == (99.5, 227.5, -0.5, 127.5)
    # window mode: the boundaries at the same coordinates as on the full heatmap
    full = plots.heatmap_figure(pair)
    assert fig.layout.meta["window_cuts"] == full.layout.meta["window_cuts"]
    assert fig.layout.meta["window_cuts"]["cols"]
    assert fig.layout.width <= 560 + plots.OVERVIEW_PX


def test_block_max_pads_the_last_blocks():
    values = np.arange(35, dtype=float).reshape(5, 7)
    np.testing.assert_array_equal(cells.block_max(values, 3), [[16, 19, 20], [30, 33, 34]])  # row 4, column 6
    np.testing.assert_array_equal(cells.block_max(values, 1), values)
    assert cells.block_max(np.zeros((0, 4)), 2).shape == (0, 2)


def _nodes(fig, name: str):
    return next(t for t in fig.data if t.name == name)


def _links(fig, letter: str) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    out = []
    for t in fig.data:
        if t.mode == "lines" and t.name == f"{letter} links":
            out += [((t.x[k], t.y[k]), (t.x[k + 1], t.y[k + 1])) for k in range(0, len(t.x), 3)]
    return out


@pytest.mark.parametrize("letter", ["P", "R"])
def test_alignment_lines_go_to_the_best_match(pair128, letter):
    fig = plots.alignment_figure(pair128, max_width=1000)
    src_is_cand = letter == "P"
    cand, ref = _nodes(fig, f"{letter} candidate"), _nodes(fig, f"{letter} reference")
    at_c = {(x, y): i for i, x, y in zip(range(1, 129), cand.x, cand.y)}  # no special is drawn here
    at_r = {(x, y): j for j, x, y in zip(range(1, 129), ref.x, ref.y)}
    assert len(cand.x) == len(ref.x) == 128 and len(at_c) == len(at_r) == 128
    links = _links(fig, letter)
    assert len(links) == 128  # one per real token of the source side
    seen = set()
    for a, b in links:
        i, j = at_c[a if src_is_cand else b], at_r[b if src_is_cand else a]
        if src_is_cand:
            assert pair128.cand_best_index[i] == j
            seen.add(i)
        else:
            assert pair128.ref_best_index[j] == i
            seen.add(j)
    assert seen == set(range(1, 129))


def test_alignment_wraps_to_its_width_keeping_every_token_and_line_in_view(pair128):
    for width, merge in ((1100, False), (600, False), (600, True)):
        fig = plots.alignment_figure(pair128, max_width=width, merge_words=merge)
        assert fig.layout.width <= width and fig.layout.meta["lines"] > 1
        x0, x1 = fig.layout.xaxis.range
        y0, y1 = fig.layout.yaxis.range
        for t in fig.data:
            for x, y in zip(t.x, t.y):
                if x is not None:
                    assert x0 <= x <= x1 and y0 <= y <= y1
            if t.mode == "markers+text":  # each label (7.2 px a character) within the plot, none cut
                for x, text in zip(t.x, t.text):
                    half = len(html.unescape(text)) * plots.CHAR_PX / 2
                    assert x0 <= x - half and x + half <= x1
        labels = [t for t in _nodes(fig, "P candidate").text if t]
        if merge:
            assert "".join(labels) == "".join(w.replace(" ", "") for w in pair128.candidate.split())
        else:
            assert [html.unescape(t) for t in labels] == _tokens(pair128.cand)
    # the recall panel below the precision panel, the candidate's row above the reference's in every band
    rows = fig.layout.meta["rows"]
    assert min(rows["P"]["ref"]) > max(rows["R"]["cand"])
    assert all(c > r for c, r in zip(rows["P"]["cand"], rows["P"]["ref"]))


def test_wrapped_lines_never_overlap_their_labels_nor_split_a_word(pair128):
    lay = cells.alignment_layout(pair128, merge_words=True, wrap=500.0, char=7.0, gap=10.0, piece=16.0)
    assert lay.n_lines > 3 and lay.width <= 500.0
    for side, tokens in ((lay.cand, pair128.cand), (lay.ref, pair128.ref)):
        assert list(side.line) == sorted(side.line)  # lines in reading order
        for b in range(lay.n_lines):
            on = [k for k in range(len(side.nodes)) if side.line[k] == b]
            labelled = [k for k in on if side.labels[k]]
            for k, q in zip(labelled, labelled[1:]):  # neighbouring labels at least `gap` apart
                assert side.x[q] - side.label_width[q] / 2 >= side.x[k] + side.label_width[k] / 2 + 10 - 1e-9
            assert all(side.x[k] - side.label_width[k] / 2 >= 0 and side.x[k] + side.label_width[k] / 2
                       <= lay.width + 1e-9 for k in on)
        lines_of_word = {}
        for p, b in zip(side.nodes, side.line):
            lines_of_word.setdefault(int(tokens.word_index[p]), set()).add(int(b))
        assert all(len(v) == 1 for w, v in lines_of_word.items() if w >= 0)  # no word across two lines
    assert cells.wrap_units(np.array([0.0, 10, 20, 30]), np.array([8.0, 18, 28, 38]), 2) == [2]
    assert cells.wrap_units(np.array([0.0]), np.array([8.0]), 3) == []


def test_alignment_marks_weak_matches(scorer):
    pair = scorer.explain("The cat sat on the mat near a quantum chromodynamics lecture.",
                          "There is a cat sitting on the mat.")
    fig = plots.alignment_figure(pair)
    cand_nodes = _nodes(fig, "P candidate")
    red = [txt for txt, col in zip(cand_nodes.text, cand_nodes.textfont.color) if col == "#c0392b"]
    assert red, "the weakest matches should be labelled in red"
    weakest = min((float(pair.cand_best[i]), pair.cand.display[i]) for i in np.flatnonzero(~pair.cand.special))
    assert weakest[1] in red


def test_an_undefined_score_is_written_n_a_as_on_the_tiles():
    """Issue 30, item 4: with idf from one reference, recall is NaN; the title said "R nan"."""
    pair = Scorer(idf=True).explain("The cat sat on the mat.", "There is a cat sitting on the mat.")
    assert np.isnan(pair.recall)
    for fig in (plots.heatmap_figure(pair), plots.overview_figure(pair)):
        assert "R n/a" in fig.layout.title.text and "nan" not in fig.layout.title.text
    assert "R n/a" in plots.figure_html(plots.heatmap_figure(pair), pair=pair, light=True)
    assert cells.score_text(float("nan")) == "n/a" and cells.score_text(0.91234) == "0.9123"


def test_show_command_writes_html(tmp_path, capsys):
    out = tmp_path / "pair.html"
    rc = cli.main(["show", "-c", CAND, "-r", REF, "-o", str(out)])
    assert rc == 0
    html = out.read_text(encoding="utf-8")
    assert "plotly" in html.lower() and "unbelievably"[:2] in html and "Players" in html
    printed = capsys.readouterr()
    assert "P: " in printed.out and "wrote" in printed.err


def test_show_command_rescaled_with_custom_baseline(tmp_path, capsys):
    base = tmp_path / "base.tsv"
    base.write_text(format_baseline(TABLE.values))
    out = tmp_path / "pair.html"
    rc = cli.main(["show", "-c", CAND, "-r", REF, "-o", str(out), "--rescale_with_baseline", "--baseline_path",
                   str(base), "-l", "6", "--show-special"])
    assert rc == 0
    html = out.read_text(encoding="utf-8")
    assert "F baseline" in html and "[CLS]" in html and "custom-rescaled" in capsys.readouterr().out


def test_show_command_writes_png_on_a_fresh_install(tmp_path, capsys):
    out = tmp_path / "pair.png"
    rc = cli.main(["show", "-c", CAND, "-r", REF, "-o", str(out)])
    assert rc == 0 and out.read_bytes()[:4] == b"\x89PNG"  # matplotlib: no kaleido needed


def test_show_command_rejects_unknown_output(tmp_path, capsys):
    rc = cli.main(["show", "-c", CAND, "-r", REF, "-o", str(tmp_path / "pair.txt")])
    assert rc == 2 and ".html" in capsys.readouterr().err


def test_column_labels_turn_vertical_where_slanted_ones_would_touch():
    """Issue 23, item 11: with the 16 px cells of long pairs, labels at -50 degrees overlapped."""
    assert plots.x_angle(34) == plots.x_angle(22) == -50  # 34 * sin(50) = 26 px, 22 -> 17 px between lines
    assert plots.x_angle(16) == -90  # 12 px between slanted lines: vertical ones are 16 px apart
