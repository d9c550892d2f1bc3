"""Upload a CSV on the Compare page in a real server and Chromium: every system appears, no exception."""

from pathlib import Path

from playwright.sync_api import expect

from .conftest import ARTIFACTS

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "bertscore_viz" / "examples" / "systems_example.csv"
SYSTEMS = ["paraphrase", "literal", "drops_content", "errors"]


def test_upload_csv_ranks_every_system(page, app_url):
    page.goto(app_url)
    expect(page.get_by_text("Settings", exact=True)).to_be_visible(timeout=60_000)
    page.get_by_role("link", name="Compare systems").click()
    expect(page.get_by_role("heading", name="Compare systems")).to_be_visible(timeout=60_000)
    page.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(str(EXAMPLE))
    answer = page.get_by_text("Best: literal", exact=False)
    expect(answer.first).to_be_visible(timeout=180_000)
    ranking = page.get_by_text("Ranking by F1", exact=False).first
    expect(ranking).to_be_visible()
    for name in SYSTEMS:
        expect(ranking).to_contain_text(name)
    expect(page.get_by_text("is better than", exact=False).first).to_be_attached()
    expect(page.locator("[data-testid='stException']")).to_have_count(0)
    page.get_by_role("tab", name="Segments").click()
    expect(page.get_by_text("of 30 segments", exact=False)).to_be_visible()
    expect(page.locator("[data-testid='stDataFrame']").first).to_be_visible()
    expect(page.get_by_text("signature: all-MiniLM-L6-v2_L4", exact=False).first).to_be_visible()
    page.get_by_role("tab", name="Significance").click()
    expect(page.get_by_text("Paired bootstrap resampling as sacrebleu", exact=False)).to_be_visible()
    page.set_viewport_size({"width": 1400, "height": 1900})  # the app scrolls inside; show the whole answer
    page.mouse.move(700, 400)
    page.mouse.wheel(0, -10_000)
    page.wait_for_timeout(800)  # let the table canvas repaint after the resize (not a sync point)
    page.screenshot(path=str(ARTIFACTS / "compare.png"), full_page=True)
    assert not page.errors
