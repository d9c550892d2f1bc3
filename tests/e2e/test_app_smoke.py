"""The app starts in a real server and a real browser, shows the sidebar settings and no exception."""

from playwright.sync_api import expect

from .conftest import ARTIFACTS


def test_app_loads_with_sidebar_and_signature(page, app_url):
    page.goto(app_url)
    expect(page.get_by_text("Settings", exact=True)).to_be_visible(timeout=60_000)
    expect(page.get_by_text("all-MiniLM-L6-v2_L4_no-idf", exact=False).first).to_be_visible(timeout=60_000)
    expect(page.locator("[data-testid='stException']")).to_have_count(0)
    page.screenshot(path=str(ARTIFACTS / "app-start.png"), full_page=True)
    assert not page.errors
