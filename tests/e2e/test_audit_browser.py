"""The "Is the metric fooled?" page in a real server and Chromium (issue 32, item 2): opened at its URL path
``/audit``, run on 10 pairs of the example, it shows the table, the chart by layer, and, one click on an example's
row away, the original's and the perturbed candidate's heatmaps side by side. The screenshot of the table and the
chart is the docs' (docs/images/audit.png); the examples' is kept in tests/artifacts/.

The page must be in the app's navigation (``bertscore_viz/app/main.py``'s PAGES) for the server to serve
``/audit``.
"""

from pathlib import Path

from playwright.sync_api import expect

from .conftest import ARTIFACTS, screenshot

ROOT = Path(__file__).resolve().parents[2]
PAIRS = 10
#: Streamlit's table: header and rows 35 px high; the row-selection checkboxes are its first column.
ROW_PX = 35


def _clip(page, top_locator, bottom_locator) -> dict:
    main = page.locator("[data-testid='stMainBlockContainer']").bounding_box()
    top, bottom = top_locator.bounding_box(), bottom_locator.bounding_box()
    return {"x": main["x"], "y": top["y"] - 10, "width": main["width"],
            "height": bottom["y"] + bottom["height"] - top["y"] + 20}


def test_the_example_audited_in_the_browser_with_an_examples_heatmaps(page, app_url):
    page.goto(app_url + "/audit")
    expect(page.get_by_role("heading", name="Is the metric fooled?")).to_be_visible(timeout=120_000)
    pairs = page.get_by_role("spinbutton", name="Pairs to audit")
    pairs.fill(str(PAIRS))
    pairs.press("Enter")
    expect(page.get_by_text(f"To audit: {PAIRS} pairs, a random sample of the 3,360", exact=False)) \
        .to_be_visible(timeout=120_000)
    page.get_by_role("button", name="Run the audit").click()
    expect(page.get_by_text(f"Audited {PAIRS} pairs", exact=False)).to_be_visible(timeout=900_000)
    table_heading = page.get_by_role("heading", name="Each perturbation at layer 4", exact=False)
    expect(table_heading).to_be_visible(timeout=60_000)
    chart = page.locator("[data-testid='stPlotlyChart']").first
    expect(chart).to_be_visible(timeout=60_000)
    expect(chart.locator(".legendtext", has_text="omission").first).to_be_visible(timeout=60_000)
    expect(page.locator("[data-testid='stException']")).to_have_count(0)

    # the docs' picture: the table at the sidebar's layer and the chart by layer
    page.set_viewport_size({"width": 1400, "height": 2400})
    table_heading.scroll_into_view_if_needed()
    page.mouse.move(5, 5)  # no hover label on the chart
    page.wait_for_timeout(1000)  # let the chart finish drawing (not a sync point)
    clip = _clip(page, table_heading, chart)
    screenshot(page, "audit.png", clip=clip)

    # one click on the first row of the most fooled pairs opens both explanations, heatmaps first
    grid = page.locator(".st-key-audit_fooled_box [data-testid='stDataFrame']")
    grid.scroll_into_view_if_needed()
    expect(grid).to_be_visible(timeout=60_000)
    box = grid.bounding_box()
    page.mouse.click(box["x"] + 18, box["y"] + ROW_PX + ROW_PX / 2)
    expect(page.get_by_role("heading", name="Segment ", exact=False)).to_be_visible(timeout=300_000)
    original = page.locator(".st-key-audit_original_heatmap_box [data-testid='stPlotlyChart']")
    perturbed = page.locator(".st-key-audit_perturbed_heatmap_box [data-testid='stPlotlyChart']")
    expect(original).to_be_visible(timeout=300_000)
    expect(perturbed).to_be_visible(timeout=300_000)
    expect(page.get_by_text("Original · raw F1 at layer 4", exact=False)).to_be_visible()
    expect(page.get_by_text("Perturbed · raw F1 at layer 4", exact=False)).to_be_visible()
    expect(page.locator("[data-testid='stException']")).to_have_count(0)
    page.get_by_role("heading", name="Segment ", exact=False).scroll_into_view_if_needed()
    page.mouse.move(5, 5)
    page.wait_for_timeout(1000)  # let the heatmaps finish drawing (not a sync point)
    page.screenshot(path=str(ARTIFACTS / "audit-example.png"),
                    clip=_clip(page, page.get_by_role("heading", name="Segment ", exact=False), perturbed))
    assert not page.errors, page.errors
