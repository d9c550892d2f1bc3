"""The walkthrough page in a real server and Chromium (issue 20): the default batch shows each step with its
shapes and the identical pair's 1.000000; the screenshot is the README's."""

from playwright.sync_api import expect

from .conftest import ARTIFACTS


def test_the_default_batch_walks_through_every_step(page, app_url):
    page.goto(app_url)
    expect(page.get_by_text("Settings", exact=True)).to_be_visible(timeout=60_000)
    page.get_by_role("link", name="How BERTScore is computed").click()
    expect(page.get_by_role("heading", name="How BERTScore is computed")).to_be_visible(timeout=60_000)
    for step in ("2. Tokens", "4. Similarity", "5. Greedy matching", "7. P, R, F1 and rescaling",
                 "8. The formula for one pair", "10. As a training signal"):
        expect(page.get_by_role("heading", name=step)).to_be_attached(timeout=120_000)
    expect(page.get_by_text("[B, Tc, Tr] = [4, 9, 10]", exact=False).first).to_be_visible()
    expect(page.get_by_text("F1 = 2PR / (P + R)", exact=False).first).to_be_visible()
    expect(page.locator("[data-testid='stException']")).to_have_count(0)
    page.set_viewport_size({"width": 1400, "height": 1500})
    page.get_by_role("heading", name="4. Similarity").scroll_into_view_if_needed()
    page.wait_for_timeout(1500)  # let the matrix draw (not a sync point)
    page.screenshot(path=str(ARTIFACTS / "walkthrough.png"))
    assert not page.errors
