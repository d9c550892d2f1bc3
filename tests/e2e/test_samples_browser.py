"""The "Many samples" page in a real server and Debian's Chromium (issue 34, item 4): the example in one click gives
the table of choices, the heatmap ordered by consensus, the chosen sample with its expected utility, the tokens
coloured by support and the pair view; a click on a heatmap cell opens that pair, a click on a row of the table
opens that input. The numbers are the engine's. The screenshot is the docs' (docs/images/samples.png).

The page is reached by its URL path, ``/samples`` (``st.Page`` names it after ``app_pages/samples/page.py``).
"""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import expect

from bertscore_viz import Scorer
from bertscore_viz.consensus import consensus
from bertscore_viz.files.samples import read_groups

from .conftest import screenshot

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "bertscore_viz" / "examples" / "samples_example.jsonl"
#: Positions of the example's glide-data-grid rows: the header and each row are 35 px high.
ROW_PX = 35


def _metric(page, label: str):
    """The value of the metric labelled exactly ``label``."""
    return (page.locator("[data-testid='stMetric']").filter(has=page.get_by_text(label, exact=True))
            .locator("[data-testid='stMetricValue']"))


def test_the_example_in_the_browser(page, app_url):
    ids, groups, refs = read_groups(EXAMPLE)
    scorer = Scorer()
    result = consensus(groups, references=refs, scorer=scorer, ids=ids)
    first, fifth = result[0], result[5]

    page.set_viewport_size({"width": 1400, "height": 1500})
    page.goto(app_url + "/samples")
    expect(page.get_by_role("heading", name="Many samples")).to_be_visible(timeout=90_000)
    page.get_by_role("button", name="Load example").click()

    # the table of choices, the chosen sample of the first input with its expected utility
    expect(page.get_by_role("heading", name="Choices")).to_be_visible(timeout=300_000)
    expect(_metric(page, "Chosen sample")).to_have_text(f"#{first.chosen}", timeout=120_000)
    expect(_metric(page, "Expected utility (F1)")).to_have_text(f"{first.chosen_utility:.4f}")
    expect(_metric(page, "Gap")).to_have_text(f"{first.gap:.4f}")
    expect(page.locator("[data-testid='stCode']").filter(has_text=first.chosen_text)).to_be_visible()

    # the heatmap, ordered by consensus: the chosen sample's label first
    heatmap = page.locator(".st-key-samples_heatmap_box [data-testid='stPlotlyChart']")
    expect(heatmap).to_be_visible(timeout=60_000)
    expect(heatmap.locator(".heatmaplayer").first).to_be_attached(timeout=30_000)
    expect(heatmap.get_by_text(f"★ #{first.chosen} · {first.chosen_utility:.4f}")).to_be_attached()

    # the tokens coloured by support, and the per-sentence table
    support = page.locator(".st-key-samples_support_box [data-testid='stPlotlyChart']")
    expect(support).to_be_visible(timeout=60_000)
    expect(support.locator(".bars .point").first).to_be_attached(timeout=30_000)
    expect(support.get_by_text("Queensland").first).to_be_attached()
    expect(page.get_by_role("heading", name="Support by sentence")).to_be_visible()

    # the pair view opens on the chosen sample and the next by consensus
    a, b = first.chosen, int(first.order[1])
    expect(page.get_by_text(f"In the matrix: #{a} against #{b}")).to_be_visible(timeout=60_000)
    f1 = scorer.score([first.samples[a]], [first.samples[b]]).f1[0]
    expect(_metric(page, "F1")).to_have_text(f"{f1:.4f}", timeout=60_000)

    # a click on a cell: row 2, column 4 of the ordered matrix
    row, col = 1, 3
    cell = heatmap.locator(".scatterlayer .point").nth(row * (len(first) - 1) + col - 1)
    cell.scroll_into_view_if_needed()
    box = cell.bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    a, b = int(first.order[row]), int(first.order[col])
    expect(page.get_by_text(f"In the matrix: #{a} against #{b}")).to_be_visible(timeout=60_000)
    f1 = scorer.score([first.samples[a]], [first.samples[b]]).f1[0]
    expect(_metric(page, "F1")).to_have_text(f"{f1:.4f}", timeout=60_000)
    expect(page.locator("[data-testid='stException']")).to_have_count(0)

    # the screenshot of the docs: from the open input's heading to the end of the support view
    page.set_viewport_size({"width": 1400, "height": 3200})
    page.get_by_role("heading", name=f"Input {first.id}").scroll_into_view_if_needed()
    top = page.get_by_role("heading", name=f"Input {first.id}").bounding_box()
    bottom = support.bounding_box()
    page.mouse.move(5, 5)  # no hover label on the heatmap
    page.wait_for_timeout(1000)  # let the charts finish drawing (not a sync point)
    main = page.locator("[data-testid='stMainBlockContainer']").bounding_box()
    clip = {"x": main["x"], "y": top["y"] - 10, "width": main["width"],
            "height": bottom["y"] + bottom["height"] - top["y"] + 20}
    screenshot(page, "samples.png", clip=clip)

    # a click on a row of the table of choices opens that input
    table = page.locator("[data-testid='stDataFrame']").first
    table.scroll_into_view_if_needed()
    grid = table.bounding_box()
    page.mouse.click(grid["x"] + 16, grid["y"] + ROW_PX * (5 + 1) + ROW_PX / 2)  # the checkbox column of row 5
    expect(page.get_by_role("heading", name=f"Input {fifth.id}")).to_be_visible(timeout=120_000)
    expect(_metric(page, "Chosen sample")).to_have_text(f"#{fifth.chosen}", timeout=60_000)
    expect(page.locator("[data-testid='stException']")).to_have_count(0)
    assert not page.errors, page.errors
