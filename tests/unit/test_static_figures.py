"""PNG/SVG/PDF of the heatmap and the alignment with matplotlib, the ``show`` command's static outputs, and the
HTML download: titled, with the texts, and a light variant that loads plotly.js from the CDN."""

import subprocess
import sys

import numpy as np
import pytest

from bertscore_viz import plots, static_figures


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


@pytest.mark.parametrize("suffix, magic", [("png", b"\x89PNG"), ("svg", b"<?xml")])
def test_show_writes_static_images_without_kaleido(tmp_path, suffix, magic):
    out = tmp_path / f"pair.{suffix}"
    proc = subprocess.run([sys.executable, "-m", "bertscore_viz", "show", "-c", "The cat sat.", "-r",
                           "A cat sat.", "-o", str(out)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes().startswith(magic)
