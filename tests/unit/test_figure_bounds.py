"""Issue 19, class 8: figures have bounded work. One click on "Heatmap (PNG)" for a 512-token pair drew a
42,000 x 42,000 pixel figure with a value in every cell; the server grew to 18.8 GB and the kernel killed it.

The memory test runs in a child process under an address-space limit, so that a regression fails the test
cheaply (MemoryError) instead of taking the machine down.
"""

from __future__ import annotations

import json
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from bertscore_viz import Scorer
from bertscore_viz.figures import static_figures
from bertscore_viz.figures.plots import MINIMAL_HOVER_CELLS, heatmap_figure

ROOT = Path(__file__).resolve().parents[2]
WORDS = "the cat sat on a mat while rain fell over old city streets and people walked home slowly".split()


def _long_pair(n_words: int):
    cand = " ".join(WORDS[i % len(WORDS)] + str(i % 7) for i in range(n_words))
    ref = " ".join(WORDS[(i * 3) % len(WORDS)] for i in range(n_words))
    return Scorer().explain(cand, ref)


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


@pytest.fixture(scope="module")
def longest():
    pair = _long_pair(600)
    assert len(pair.cand) == len(pair.ref) == 512  # truncated to the model's maximum length
    return pair


@pytest.mark.slow
def test_the_longest_pair_draws_within_3_gb_of_address_space():
    code = textwrap.dedent(f"""
        import resource, struct, sys
        sys.path.insert(0, {str(ROOT)!r})
        resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30))
        from tests.unit.test_figure_bounds import _long_pair
        from bertscore_viz.figures.static_figures import heatmap_image, alignment_image
        pair = _long_pair(600)
        data = heatmap_image(pair, "png")
        # the peak of this process's own memory (VmHWM; ru_maxrss would count the forking pytest process's)
        hwm = next(int(x.split()[1]) for x in open("/proc/self/status") if x.startswith("VmHWM"))
        print(*struct.unpack(">II", data[16:24]), len(alignment_image(pair, "png")), hwm // 1024)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    width, height, _, peak_mb = map(int, proc.stdout.split()[-4:])
    assert max(width, height) <= 4500 and peak_mb < 2500


def test_pngs_stay_under_the_pixel_budget_and_drop_cell_values_when_cells_are_small(longest):
    limit = static_figures.MAX_INCHES * static_figures.PNG_DPI * 1.1  # tight bounding box: a little margin
    for pair, values in ((_long_pair(12), True), (longest, False)):
        width, height = _png_size(static_figures.heatmap_image(pair, "png"))
        assert max(width, height) <= limit
        cell = static_figures.cell_inches(max(len(pair.cand), len(pair.ref)) - 2)
        assert (cell >= static_figures.MIN_VALUE_CELL_INCHES) is values
        width, _ = _png_size(static_figures.alignment_image(pair, "png"))
        assert width <= limit


def test_vector_formats_of_the_longest_pair_stay_small(longest):
    for fmt in ("svg", "pdf"):
        assert len(static_figures.heatmap_image(longest, fmt)) < 5_000_000
        assert len(static_figures.alignment_image(longest, fmt)) < 5_000_000


def test_beyond_the_ceiling_a_figure_is_refused_with_a_message_and_pages_ask_first(longest):
    with pytest.raises(static_figures.FigureTooLarge, match="at most 1100 a side"):
        static_figures._check_size(1200, 10)
    assert static_figures.refusal(longest) is None
    with pytest.raises(static_figures.InputError, match="Unknown image format"):
        static_figures.heatmap_image(longest, "gif")


def test_the_interactive_heatmap_of_a_long_pair_has_no_per_cell_text(longest):
    fig = heatmap_figure(longest)
    assert len(longest.cand) ** 2 > MINIMAL_HOVER_CELLS and fig.layout.meta["hover"] == "positions"
    assert fig.data[0].text is None and "%{z:.4f}" in fig.data[0].hovertemplate
    assert len(fig.to_json()) < 6_000_000  # was 35 MB
    short = heatmap_figure(_long_pair(12))
    assert short.layout.meta["hover"] == "tokens" and short.data[0].text is not None


def test_show_writes_a_bounded_png_for_the_longest_pair(tmp_path, capsys):
    from bertscore_viz.cli.entry import main

    cand = " ".join(WORDS[i % len(WORDS)] for i in range(600))
    out = tmp_path / "long.png"
    assert main(["show", "-c", cand, "-r", cand[::-1], "-o", str(out)]) == 0
    width, height = _png_size(out.read_bytes())
    assert max(width, height) <= static_figures.MAX_INCHES * static_figures.PNG_DPI * 1.1
    assert json.dumps(capsys.readouterr().out)


#: docs/BOUNDARIES.md: what a page draws for one pair (heatmap, or overview and region, and the alignment) is built
#: and serialised within this many seconds (measured: 0.1 s for 128 x 128 and 510 x 510).
PAGE_FIGURES_S = 1.5


def _page_figures(pair) -> int:
    """What Inspect draws for a pair, serialised as Streamlit sends it: its size in bytes."""
    from bertscore_viz.figures import plots

    if plots.needs_overview(pair):
        figs = [plots.overview_figure(pair, region=((0, 128), (0, 128))),
                plots.heatmap_figure(pair, rows=(0, 128), cols=(0, 128), max_width=1100)]
    else:
        figs = [plots.heatmap_figure(pair, max_width=1100)]
    return sum(len(f.to_json()) for f in figs + [plots.alignment_figure(pair, max_width=1100)])


def test_the_page_figures_of_a_128_and_of_the_longest_pair_build_within_their_bound(longest):
    import time

    from .test_plots import mt_pair

    sc = Scorer()
    for pair in (sc.explain(*mt_pair(sc, 128)), longest):
        seconds = []
        for _ in range(3):  # the best of three: the machine is shared
            start = time.perf_counter()
            size = _page_figures(pair)
            seconds.append(time.perf_counter() - start)
        assert min(seconds) < PAGE_FIGURES_S and size < 6_000_000
