"""Long texts in a real server and Chromium (issue 21): a passage past the model's 512 tokens on Inspect shows the
truncation warning and the switch beside it; switching window mode on gives the engine's window-mode F1 and dashed
window boundaries on the heatmap's axes. Issue 30: such a pair opens on the overview of its whole matrix (block
maxima, window boundaries) and a region picked with the sliders is drawn whole below it; screenshots are kept."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from bertscore_viz import Scorer
from bertscore_viz.app.shared.explain_view import MAX_WIDTH
from bertscore_viz.figures import plots
from tests.conftest import DATA

from .conftest import fill, screenshot


def _lines(n: int, start: int) -> list[str]:
    path = DATA / "newstest2017-english" / "newstest2017-deen-ref.en"
    return path.read_text(encoding="utf-8").splitlines()[start:start + n]


REF = " ".join(_lines(30, 1000))
CAND = " ".join(_lines(22, 1000) + _lines(8, 2500))


def test_long_pair_switches_to_window_mode(page, app_url):
    page.set_viewport_size({"width": 1400, "height": 1500})
    page.goto(app_url)
    expect(page.get_by_role("textbox", name="Candidate", exact=True)).to_be_visible(timeout=90_000)
    fill(page, "Candidate", CAND)
    fill(page, "Reference", REF)
    metrics = page.locator("[data-testid='stMetricValue']")
    cut = Scorer().explain(CAND, REF)
    expect(metrics.nth(2)).to_have_text(f"{cut.f1:.4f}", timeout=90_000)
    expect(page.get_by_text(re.compile(r"2 texts longer than the model's maximum of 512 tokens were truncated"))
           ).to_be_visible(timeout=60_000)
    page.get_by_text("Score long texts whole (window mode)").click()
    whole = Scorer(long_texts="window").explain(CAND, REF)
    expect(metrics.nth(2)).to_have_text(f"{whole.f1:.4f}", timeout=90_000)
    expect(page.get_by_text("are scored whole, in overlapping windows", exact=False)).to_be_visible()
    overview = page.locator(".st-key-inspect_heatmap_fig [data-testid='stPlotlyChart']")
    expect(overview).to_be_visible(timeout=60_000)
    expect(page.get_by_text("the whole matrix at a glance", exact=False)).to_be_visible()
    # plotly draws layout shapes as paths; the window boundaries are the dashed ones
    dashed = overview.locator(".shapelayer path[style*='stroke-dasharray']")
    expect(dashed.first).to_be_attached(timeout=30_000)
    assert dashed.count() >= 2  # one per axis
    # the region below the overview: its first 128 candidate tokens and as many reference tokens as fit the column
    # at 16 px cells (issue 40: never wider than its column), every one labelled
    fit = plots.fit_columns(MAX_WIDTH, plots.longest_labels(whole)[0])
    region = page.locator(".st-key-inspect_region_fig")
    expect(region.locator(".ytick text")).to_have_count(128, timeout=60_000)
    expect(region.locator(".xtick text")).to_have_count(min(128, fit))
    expect(page.locator("[data-testid='stException']")).to_have_count(0)
    page.locator(".st-key-inspect_heatmap_box").scroll_into_view_if_needed()
    page.mouse.wheel(0, -120)
    page.wait_for_timeout(800)  # the figures' paint after the scroll (not a sync point)
    screenshot(page, "long_pair_overview.png")
    assert not page.errors, page.errors
