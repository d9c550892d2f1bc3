"""Issue 23, item 2 in a real server and Chromium: a refresh in the middle of a session brings back the upload,
its scores (no model pass) and the settings; the same link in a second tab opens the same work."""

from pathlib import Path

from playwright.sync_api import expect

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "bertscore_viz" / "examples" / "systems_example.csv"


def test_a_refresh_keeps_the_upload_its_scores_and_the_settings(page, app_url, browser):
    page.goto(app_url)
    expect(page.get_by_text("Settings", exact=True)).to_be_visible(timeout=60_000)
    page.get_by_role("link", name="Compare systems").click()
    expect(page.get_by_role("heading", name="Compare systems")).to_be_visible(timeout=60_000)
    page.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(str(EXAMPLE))
    expect(page.get_by_text("Best: literal", exact=False).first).to_be_visible(timeout=180_000)
    expect(page.get_by_text("Model pass:", exact=False).first).to_be_visible()
    page.get_by_text("idf weighting").click()  # a setting, changed before the refresh
    expect(page.get_by_text("_L4_idf_version", exact=False).first).to_be_visible(timeout=60_000)
    assert "s=" in page.url  # the session's key is in the link

    page.reload()
    expect(page.get_by_text("Best: literal", exact=False).first).to_be_visible(timeout=120_000)
    expect(page.get_by_text("no model pass", exact=False).first).to_be_visible()
    expect(page.get_by_text("Model pass:", exact=False)).to_have_count(0)
    expect(page.get_by_text("_L4_idf_version", exact=False).first).to_be_visible()

    second = browser.new_page()  # the same link in a second tab: the same work, no model pass
    second.goto(page.url)
    expect(second.get_by_text("Best: literal", exact=False).first).to_be_visible(timeout=120_000)
    expect(second.get_by_text("Model pass:", exact=False)).to_have_count(0)
    second.close()
    expect(page.locator("[data-testid='stException']")).to_have_count(0)
    assert not page.errors
