"""Figures of a pair explanation: heatmap cells, greedy-maximum markers, hover, rescaling, escaping, sizes,
alignment lines, and the ``show`` command."""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import pytest

from bertscore_viz import Scorer
from bertscore_viz.cli import entry as cli
from bertscore_viz.engine.baseline import format_baseline
from bertscore_viz.figures import plots

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


def test_long_pair_figure_grows(scorer):
    words = ("the committee agreed new rules after long talks and they apply to every member state "
             "from next year onwards without any exception at all").split()
    cand = " ".join(words[k % len(words)] for k in range(300))
    ref = " ".join(words[(3 * k) % len(words)] for k in range(290))
    pair = scorer.explain(cand, ref)
    n_c, n_r = int((~pair.cand.special).sum()), int((~pair.ref.special).sum())
    assert n_c >= 290 and n_r >= 280
    fig = plots.heatmap_figure(pair)
    size = plots.heatmap_size(n_c, n_r)
    assert size["cell"] >= 14
    assert fig.layout.height >= n_c * size["cell"] and fig.layout.width >= n_r * size["cell"]
    assert plots.figure_height(300) > plots.figure_height(40) > plots.figure_height(8)
    align = plots.alignment_figure(pair)
    assert align.layout.width > 300 * 25
    # on the page: a legible window on the matrix (same cell size), panning to the rest
    shown = plots.heatmap_figure(pair, max_width=1000, max_height=1100)
    assert shown.layout.width == 1000 and shown.layout.height == 1100
    vis_r, vis_c = shown.layout.meta["window"]
    assert shown.layout.meta["windowed"] and shown.layout.meta["shape"] == [n_c, n_r]
    assert 20 <= vis_r < n_c and 20 <= vis_c < n_r
    assert tuple(shown.layout.xaxis.range) == (-0.5, vis_c - 0.5)
    assert tuple(shown.layout.yaxis.range) == (vis_r - 0.5, -0.5)
    assert shown.layout.dragmode == "pan"
    assert np.asarray(_heat(shown).z).shape == (n_c, n_r)  # every cell is there to pan to
    window = plots.alignment_figure(pair, max_width=1000)
    assert window.layout.width == 1000 and window.layout.meta["windowed"]
    short = plots.heatmap_figure(scorer.explain(CAND, REF), max_width=1000, max_height=1100)
    assert not short.layout.meta["windowed"]


def test_alignment_lines_go_to_the_best_match(pair):
    fig = plots.alignment_figure(pair)
    nodes = [t for t in fig.data if t.mode == "markers+text"]
    lines = [t for t in fig.data if t.mode == "lines"]
    # precision panel (y 2..3): one line per real candidate token; recall panel (y 0..1): per reference token
    segs_p = sum(1 for t in lines for y in t.y if y == 3.0)
    segs_r = sum(1 for t in lines for y in t.y if y == 0.0)
    assert segs_p == int((~pair.cand.special).sum())
    assert segs_r == int((~pair.ref.special).sum())
    cand_nodes = next(t for t in nodes if t.y[0] == 3.0)
    ref_nodes = next(t for t in nodes if t.y[0] == 2.0)
    x_of_cand = {txt: x for txt, x in zip(cand_nodes.text, cand_nodes.x)}
    x_of_ref = dict(zip(ref_nodes.text, ref_nodes.x))
    # "players" (candidate) goes to "Players" (reference)
    j = int(pair.cand_best_index[2])
    target = pair.ref.display[j]
    found = False
    for t in lines:
        for k in range(0, len(t.x), 3):
            if t.y[k] == 3.0 and t.x[k] == x_of_cand["players"]:
                assert t.x[k + 1] == x_of_ref[target]
                found = True
    assert found
    hover = " ".join(cand_nodes.hovertext)
    assert "contribution to P" in hover and "best match" in hover


def test_alignment_marks_weak_matches(scorer):
    pair = scorer.explain("The cat sat on the mat near a quantum chromodynamics lecture.",
                          "There is a cat sitting on the mat.")
    fig = plots.alignment_figure(pair)
    cand_nodes = next(t for t in fig.data if t.mode == "markers+text" and t.y[0] == 3.0)
    red = [txt for txt, col in zip(cand_nodes.text, cand_nodes.textfont.color) if col == "#c0392b"]
    assert red, "the weakest matches should be labelled in red"
    weakest = min((float(pair.cand_best[i]), pair.cand.display[i]) for i in np.flatnonzero(~pair.cand.special))
    assert weakest[1] in red


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
