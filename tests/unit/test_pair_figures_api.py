"""Drawing a pair from Python: ``bertscore_viz.figures.heatmap``, ``alignment`` and ``save_heatmap``, as
docs/API.md ("Draw a pair from Python") shows them; the example there is run as written. Real bundled model."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from bertscore_viz.errors import InputError
from bertscore_viz.extras import MissingExtraError
from bertscore_viz.figures import alignment, heatmap, save_heatmap

ROOT = Path(__file__).resolve().parents[2]
SECTION = "## Draw a pair from Python"


def _documented_example() -> str:
    text = (ROOT / "docs" / "API.md").read_text(encoding="utf-8")
    assert SECTION in text
    return re.search(r"```python\n(.*?)```", text[text.index(SECTION):], re.S).group(1)


def test_the_documented_example_runs_and_writes_its_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(_documented_example(), "docs/API.md", "exec"), namespace)  # noqa: S102 - our own docs
    fig = namespace["fig"]
    assert [t.type for t in fig.data][0] == "heatmap"
    assert "<html>" in (tmp_path / "pair.html").read_text(encoding="utf-8")[:200].lower()
    assert (tmp_path / "alignment.html").stat().st_size > 0
    png = (tmp_path / "pair.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 1000


def test_heatmap_is_the_pairs_matrix_with_its_tokens(pair):
    fig = heatmap(pair)
    trace = next(t for t in fig.data if t.type == "heatmap")
    shown = ~pair.cand.special, ~pair.ref.special  # special tokens hidden by default
    assert len(trace.z) == shown[0].sum() and len(trace.z[0]) == shown[1].sum()
    with_special = next(t for t in heatmap(pair, show_special=True).data if t.type == "heatmap")
    assert (len(with_special.z), len(with_special.z[0])) == pair.similarity.shape


def test_alignment_is_a_figure_of_both_sentences(pair):
    fig = alignment(pair)
    assert fig.data and fig.layout.height > 0


@pytest.mark.parametrize("suffix, magic", [(".svg", b"<svg"), (".pdf", b"%PDF"), (".PNG", b"\x89PNG")])
def test_save_heatmap_writes_the_format_of_the_suffix(pair, tmp_path, suffix, magic):
    path = save_heatmap(pair, str(tmp_path / f"pair{suffix}"))
    assert path == tmp_path / f"pair{suffix}"
    data = path.read_bytes()
    assert magic in data[:400]


def test_save_heatmap_refuses_an_unknown_suffix(pair, tmp_path):
    with pytest.raises(InputError, match=r"writes \.png, \.svg, \.pdf files, chosen by the suffix"):
        save_heatmap(pair, tmp_path / "pair.jpg")
    assert not (tmp_path / "pair.jpg").exists()


def test_several_references_are_drawn_one_pair_at_a_time(scorer):
    multi = scorer.explain("people like foreign cars", ["consumers prefer imported cars", "people like cars"])
    with pytest.raises(InputError, match="draw one of its .pairs"):
        heatmap(multi)
    assert heatmap(multi.pairs[int(multi.best_reference[2])]).data


def test_without_plotly_the_error_names_the_extra(pair, monkeypatch):
    monkeypatch.delitem(sys.modules, "bertscore_viz.figures.plots")  # imported again, as on a core install
    monkeypatch.setitem(sys.modules, "plotly", None)
    with pytest.raises(MissingExtraError, match=r"plotly is not installed.*pip install 'bertscore-viz\[app\]'"):
        heatmap(pair)
