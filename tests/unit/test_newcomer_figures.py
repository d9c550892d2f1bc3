"""Issue 40 ("the newcomer's list"), pure parts: heatmaps fit the column they are drawn in, alignment links stay
visible, the token table's best match carries its position, where a calibration applies."""

import numpy as np
import pytest
from matplotlib import colormaps

from bertscore_viz import Scorer
from bertscore_viz.engine import explain_table
from bertscore_viz.evaluation.calibration import LENGTH_MARGIN, calibration_applies
from bertscore_viz.figures import cells, plots, static_figures

#: A WMT16 de-en pair (newstest2016): 77 x 85 tokens with the bundled model.
REF = ('"Not infrequently, too, many services provided by insurers are not used because the complexity of the '
       'insurance is so difficult to understand," the new manager, Jutta Weigand, who as head of the services '
       "division for old people's welfare is also responsible for the Antonistift and the Bürgerspital as well as "
       'for "Amadeus" outpatient services, explained.')
MT = ('"Also, not infrequently, be taken many benefits of the funds, because of the complexity of the insurance is '
      'poorly understood," explained the new house mistress Jutta Weigand, the head of the Business division '
      'old-age assistance is also available for the Antoni pen and the civic hospital as well as for the outpatient '
      'service "Amadeus".')


@pytest.fixture(scope="module")
def pairs():
    sc = Scorer()
    return sc.explain(MT, REF), sc.explain("The cat sat on the mat.", "There is a cat sitting on the mat.")


@pytest.mark.parametrize("width", [462, 600, 940, 1100])
def test_a_heatmap_that_fits_is_never_wider_than_its_column(width):
    for n_cols in range(1, plots.fit_columns(width, 12) + 1):
        size = plots.heatmap_size(30, n_cols, 12, 12, width)
        assert plots.heatmap_fits(n_cols, 12, width)
        assert size["width"] <= width and size["cell"] >= plots.MIN_CELL_PX, (width, n_cols, size)
        assert size["left"] + size["right"] + n_cols * size["cell"] <= width  # the colour bar inside
    over = plots.fit_columns(width, 12) + 1
    assert not plots.heatmap_fits(over, 12, width)
    assert plots.heatmap_size(30, over, 12, 12, width)["width"] > width  # hence the overview, below


def test_a_long_pair_opens_on_the_overview_fitted_to_the_column(pairs):
    long, short = pairs
    assert not plots.needs_overview(long)  # no width: the downloads draw it whole
    assert plots.heatmap_figure(long).layout.width > 940
    assert plots.needs_overview(long, max_width=940) and not plots.needs_overview(short, max_width=462)
    assert plots.overview_figure(long, max_width=940).layout.width <= 940
    fit = plots.fit_columns(940, plots.longest_labels(long)[0])
    region = plots.heatmap_figure(long, rows=(0, 60), cols=(0, fit), max_width=940)
    assert region.layout.width <= 940 and region.layout.meta["cell"] >= plots.MIN_CELL_PX
    assert plots.heatmap_figure(short, max_width=462).layout.width <= 462


def _luminance(rgb) -> float:
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def test_alignment_links_have_a_visible_minimum(pairs):
    for pair in pairs:
        fig = plots.alignment_figure(pair, max_width=940)
        links = [t for t in fig.data if t.mode == "lines"]
        assert links
        for t in links:
            rgb = [float(v) / 255 for v in t.line.color[4:-1].split(",")]
            contrast = 1.05 / (_luminance(rgb) + 0.05)
            assert contrast >= 3.0, t.line.color  # against the white background: mid-range yellow was ~1.1
            assert t.line.width >= cells.LINK_MIN_WIDTH and (t.opacity is None or t.opacity >= 1.0)
    for v in np.linspace(0, 1, 21):  # the static image's colours, the same rule
        assert _luminance(cells.link_rgb(colormaps[plots.ALIGN_SCALE](v))) <= cells.LINK_MAX_LUMINANCE + 1e-9
    dark = (0.1, 0.2, 0.5)
    assert cells.link_rgb(dark) == pytest.approx(dark)  # already dark: unchanged
    assert static_figures.LINK_MIN_POINTS >= 1.0


def test_the_reading_table_names_the_best_match_and_its_position(pairs):
    pair = pairs[1]
    for side in explain_table.SIDES:
        csv = explain_table.token_table(pair, side, show_special=False)
        shown = explain_table.reading_table(pair, side)
        assert list(shown["best match"]) == [f"{m} (#{q})" for m, q in zip(csv["best match"],
                                                                           csv["best match position"])]
        assert shown["contribution"].sum() == pytest.approx([pair.precision, pair.recall][side == "reference"])
        words = explain_table.reading_table(pair, side, merge_words=True)
        assert all("(#" in m for m in words["best match"])


def test_a_calibration_applies_within_its_lengths_widened_by_the_margin():
    assert calibration_applies(18, 6, 40) and calibration_applies(40 * LENGTH_MARGIN, 6, 40)
    assert not calibration_applies(87, 6, 40)  # the summaries of the issue
    assert not calibration_applies(40 * LENGTH_MARGIN + 0.5, 6, 40)
    assert calibration_applies(6 / LENGTH_MARGIN, 6, 40) and not calibration_applies(1, 6, 40)
    assert not calibration_applies(30, 6, 10, margin=2.0) and calibration_applies(20, 6, 10, margin=2.0)
