"""The Inspect page in a real server and Debian's Chromium: type a pair, see the heatmap and the engine's
P/R/F1, toggle rescaling, see what it does; no exception, no page error; a screenshot is kept."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from bertscore_viz import Scorer
from bertscore_viz.engine.baseline import shipped_baseline_path
from bertscore_viz.models.spec import resolve_model

from .conftest import ARTIFACTS, fill

CAND = "A man is playing a guitar on stage."
REF = "Someone performs music with a guitar."


def _metric_values(page) -> list[str]:
    return [v.strip() for v in page.locator("[data-testid='stMetricValue']").all_inner_texts()]


def test_inspect_pair_in_the_browser(page, app_url):
    page.set_viewport_size({"width": 1400, "height": 1500})
    page.goto(app_url)
    nav = page.get_by_role("link", name=re.compile("Inspect"))
    expect(nav.first).to_be_visible(timeout=90_000)
    nav.first.click()
    expect(page.get_by_role("heading", name=re.compile("Inspect"))).to_be_visible(timeout=60_000)
    expect(page.get_by_role("textbox", name="Candidate", exact=True)).to_be_visible(timeout=60_000)

    fill(page, "Candidate", CAND)
    fill(page, "Reference", REF)
    ex = Scorer().explain(CAND, REF)
    raw = [f"{ex.precision:.4f}", f"{ex.recall:.4f}", f"{ex.f1:.4f}"]
    metrics = page.locator("[data-testid='stMetricValue']")
    expect(metrics.nth(2)).to_have_text(raw[2], timeout=90_000)
    assert _metric_values(page) == raw

    chart = page.locator("[data-testid='stPlotlyChart']").first
    expect(chart).to_be_visible(timeout=60_000)
    expect(chart.locator(".hm, .heatmaplayer image, .heatmaplayer").first).to_be_attached(timeout=30_000)
    expect(chart.get_by_text("guitar").first).to_be_attached()

    page.locator("[data-testid='stSidebar']").get_by_text("Rescale with baseline").click()
    if shipped_baseline_path("en", resolve_model(None).name).is_file():
        scaled = Scorer(rescale_with_baseline=True).explain(CAND, REF).rescaled
        expect(metrics.nth(2)).to_have_text(f"{scaled[2]:.4f}", timeout=60_000)
        assert _metric_values(page) == [f"{x:.4f}" for x in scaled] != raw
        expect(page.get_by_text("F1 (rescaled)")).to_be_visible()
    else:
        # no baseline shipped yet for the bundled model: the engine's message, and the raw numbers stay
        expect(page.get_by_text("No rescaling baseline", exact=False).first).to_be_visible(timeout=60_000)
        assert _metric_values(page) == raw
    expect(page.locator("[data-testid='stException']")).to_have_count(0)
    page.wait_for_timeout(500)  # let the figure finish drawing before the screenshot
    page.screenshot(path=str(ARTIFACTS / "inspect.png"), full_page=True)
    assert not page.errors, page.errors
