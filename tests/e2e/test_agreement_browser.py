"""The Agreement page in a real server and Chromium (issue 22): the WMT16 DA example in one click gives the table,
the lead, the layer curve and the scatter; the screenshot is the README's."""

from playwright.sync_api import expect

from .conftest import ARTIFACTS


def test_the_example_shows_the_table_the_lead_and_the_layer_curve(page, app_url):
    page.goto(app_url)
    expect(page.get_by_text("Settings", exact=True)).to_be_visible(timeout=60_000)
    page.get_by_role("link", name="Agreement with humans").click()
    expect(page.get_by_role("heading", name="Agreement with human scores")).to_be_visible(timeout=60_000)
    page.get_by_role("button", name="Load the example", exact=False).click()
    expect(page.get_by_text("3,360 rated outputs (plain layout", exact=False).first).to_be_visible(timeout=300_000)
    expect(page.get_by_text("BERTScore-F1 leads", exact=False).first).to_be_visible(timeout=120_000)
    expect(page.get_by_role("heading", name="Correlation by layer")).to_be_visible()
    expect(page.get_by_role("heading", name="By group")).to_be_visible()
    expect(page.locator("[data-testid='stPlotlyChart']").first).to_be_visible()
    expect(page.locator("[data-testid='stException']")).to_have_count(0)
    page.set_viewport_size({"width": 1400, "height": 1500})
    page.mouse.move(700, 400)
    page.mouse.wheel(0, -10_000)
    page.wait_for_timeout(1500)  # let the charts draw (not a sync point)
    page.screenshot(path=str(ARTIFACTS / "agreement.png"))
    assert not page.errors
