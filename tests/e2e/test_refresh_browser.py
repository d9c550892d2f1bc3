"""Sessions in a real server and Chromium (issues 23 and 31): a refresh in the middle of a session brings back the
upload, its scores (no model pass) and the settings; a second tab of the same browser gets a copy; the same link in
another browser (another cookie jar) opens a fresh session and says so; a read-only link the user makes opens
their work as a copy anywhere, until revoked."""

from pathlib import Path

from playwright.sync_api import expect

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "bertscore_viz" / "examples" / "systems_example.csv"


def _fresh_page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    return context, context.new_page()


def test_a_refresh_keeps_the_work_and_another_browser_does_not_get_it(page, app_url, browser):
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
    link = page.url

    other_context, other = _fresh_page(browser)  # another browser: its own cookies
    other.goto(link)
    expect(other.get_by_text("not this browser's", exact=False).first).to_be_visible(timeout=60_000)
    expect(other.get_by_text("Best: literal", exact=False)).to_have_count(0)
    assert link.split("s=")[1] not in other.url
    other_context.close()

    page.reload()
    expect(page.get_by_text("Best: literal", exact=False).first).to_be_visible(timeout=120_000)
    expect(page.get_by_text("no model pass", exact=False).first).to_be_visible()
    expect(page.get_by_text("Model pass:", exact=False)).to_have_count(0)
    expect(page.get_by_text("_L4_idf_version", exact=False).first).to_be_visible()

    second = page.context.new_page()  # a second tab of the same browser: a copy of the work, no model pass
    second.goto(page.url)
    expect(second.get_by_text("Best: literal", exact=False).first).to_be_visible(timeout=120_000)
    expect(second.get_by_text("Model pass:", exact=False)).to_have_count(0)
    second.close()
    expect(page.locator("[data-testid='stException']")).to_have_count(0)
    assert not page.errors


def test_a_read_only_link_opens_a_copy_in_another_browser_until_revoked(page, app_url, browser):
    page.goto(app_url)
    page.get_by_role("link", name="Compare systems").click()
    expect(page.get_by_role("heading", name="Compare systems")).to_be_visible(timeout=60_000)
    page.get_by_role("button", name="Load example").click()
    expect(page.get_by_text("Best: literal", exact=False).first).to_be_visible(timeout=180_000)
    page.get_by_text("Share a read-only link").click()
    page.get_by_role("button", name="Make a read-only link").click()
    code = page.locator("[data-testid='stSidebar'] [data-testid='stCode']").filter(has_text="view=")
    expect(code).to_be_visible(timeout=60_000)
    link = code.inner_text().strip()
    assert "view=" in link and "s=" not in link.split("?", 1)[1]

    context, viewer = _fresh_page(browser)
    viewer.goto(link)
    expect(viewer.get_by_text("read-only copy", exact=False).first).to_be_visible(timeout=60_000)
    viewer.get_by_role("link", name="Compare systems").click()
    expect(viewer.get_by_text("Best: literal", exact=False).first).to_be_visible(timeout=120_000)
    expect(viewer.get_by_text("Model pass:", exact=False)).to_have_count(0)
    context.close()

    page.get_by_role("button", name="Revoke").click()
    expect(page.get_by_role("button", name="Make a read-only link")).to_be_visible(timeout=60_000)
    context, late = _fresh_page(browser)
    late.goto(link)
    expect(late.get_by_text("expired or was revoked", exact=False).first).to_be_visible(timeout=60_000)
    context.close()
    assert not page.errors
