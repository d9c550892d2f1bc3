"""Issue 40 in a real server and Chromium: on Inspect a 77 x 85-token WMT16 de-en pair is drawn within its column
(the plot no wider than the column, the colour bar inside the viewport); Compare's drill-down says how A and B are
laid out and does what it says."""

from playwright.sync_api import expect

from .conftest import fill

REF = ('"Not infrequently, too, many services provided by insurers are not used because the complexity of the '
       'insurance is so difficult to understand," the new manager, Jutta Weigand, who as head of the services '
       "division for old people's welfare is also responsible for the Antonistift and the Bürgerspital as well as "
       'for "Amadeus" outpatient services, explained.')
MT = ('"Also, not infrequently, be taken many benefits of the funds, because of the complexity of the insurance is '
      'poorly understood," explained the new house mistress Jutta Weigand, the head of the Business division '
      'old-age assistance is also available for the Antoni pen and the civic hospital as well as for the outpatient '
      'service "Amadeus".')

#: Each drawn plot of the heatmap tab: its width, its column's width, and its colour bar's box in the viewport.
MEASURE = """() => [...document.querySelectorAll('[class*="st-key-inspect_heatmap_box"] .js-plotly-plot,'
  + ' [class*="st-key-inspect_region_box"] .js-plotly-plot')].map(gd => {
  const column = gd.closest('[data-testid="stMainBlockContainer"]') || document.body;
  const bar = gd.querySelector('.colorbar');
  const b = bar ? bar.getBoundingClientRect() : null;
  return {plot: gd.getBoundingClientRect().width, svg: gd.querySelector('.main-svg').getBoundingClientRect().right,
          column: column.getBoundingClientRect().right, columnWidth: column.getBoundingClientRect().width,
          bar: b && [b.left, b.right], viewport: window.innerWidth,
          scroll: [gd.closest('[class*="_box"]').scrollWidth, gd.closest('[class*="_box"]').clientWidth]};
})"""


def test_a_long_pair_fits_the_column_with_its_colour_bar_in_view(page, app_url):
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.goto(app_url)
    expect(page.get_by_role("textbox", name="Candidate", exact=True)).to_be_visible(timeout=90_000)
    fill(page, "Candidate", MT)
    fill(page, "Reference", REF)
    page.get_by_role("tab", name="Heatmap").click()
    expect(page.locator('[class*="st-key-inspect_region_box"] .js-plotly-plot .colorbar')).to_be_attached(
        timeout=120_000)
    page.wait_for_timeout(500)
    plots = page.evaluate(MEASURE)
    assert len(plots) == 2, plots  # the overview and the region below it
    for p in plots:
        assert p["plot"] <= p["columnWidth"] - 32 + 1, p  # inside the column (its padding excluded)
        assert p["scroll"][0] <= p["scroll"][1] + 1, p  # no horizontal scrolling
        assert p["bar"] is not None and p["bar"][0] >= 0 and p["bar"][1] <= p["viewport"], p
        assert p["svg"] <= p["column"], p
    expect(page.locator("[data-testid='stException']")).to_have_count(0)
    assert not page.errors, page.errors
