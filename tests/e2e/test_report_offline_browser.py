"""The HTML report opens from disk in Debian's Chromium with the network off and every request refused: every figure
is drawn (plotly's SVG, heatmap images, the alignments' lines), nothing but the file itself is requested, no script
error, no content-security-policy violation, and the system name ``<script>alert(...)</script>`` shows as text
(no dialog opens)."""

from __future__ import annotations

import numpy as np
import pytest

from bertscore_viz import Scorer
from bertscore_viz.evaluation import compare
from bertscore_viz.figures.report import build_report, scorer_explainer
from bertscore_viz.files.dataset import Dataset
from bertscore_viz.stats.randomization import paired_randomization

EVIL = '<script>alert("x")</script>'
REFS = ["The cat sat on the mat.", "A quick brown fox jumps over the lazy dog.", "It rained all day in the city.",
        "She bought fresh bread at the market.", "The meeting was moved to Friday."]
OUTPUTS = {"good": ["The cat sat on a mat.", "A fast brown fox jumped over a lazy dog.", "It rained all day in town.",
                    "She bought bread at the market.", "The meeting moved to Friday."],
           EVIL: ["<script>alert(1)</script> cat", "fox <img src=x onerror=alert(2)>", "rain city day",
                  "market bread fresh she", "Friday meeting"],
           "close": ["The cat sat on the mat.", "A quick brown fox jumps over a lazy dog.", "It rained in the city.",
                     "She bought fresh bread.", "The meeting was moved."]}


@pytest.fixture(scope="module")
def report_file(tmp_path_factory):
    ds = Dataset({k: list(v) for k, v in OUTPUTS.items()}, [[r] for r in REFS], None, [str(i + 1) for i in range(5)],
                 list(range(2, 7)), [], None)
    sc = Scorer()
    comparison = compare.results_for(sc, compare.score_dataset(sc, ds))
    sig = compare.significance(comparison)
    ar = paired_randomization({s: comparison.scores()[s] for s in sig.systems}, sig.baseline, n_trials=2000)
    report = build_report(ds, comparison, sig, explain=scorer_explainer(sc, ds, comparison), pair=("good", EVIL),
                          n_segments=3, randomization=ar)
    path = tmp_path_factory.mktemp("report") / "report.html"
    path.write_text(report.html, encoding="utf-8")
    return path, report


def test_the_report_draws_every_figure_offline(browser, report_file):
    path, report = report_file
    context = browser.new_context(viewport={"width": 1300, "height": 1000}, offline=True)
    requests, refused = [], []

    def route(r):
        requests.append(r.request.url)
        if r.request.url.startswith("file://"):
            r.continue_()
        else:  # anything else would be a fetch from the network: refused, and the test fails below
            refused.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    page = context.new_page()
    errors, console, dialogs = [], [], []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda m: console.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None)
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    try:
        page.goto(path.as_uri())
        # the renderer marks <html> when done (a selector: the page's policy forbids the eval of wait_for_function)
        page.wait_for_selector("html[data-figures='drawn']", state="attached", timeout=120_000)
        n_figures = report.html.count('class="fig"')
        assert n_figures == 4 + 4 * len(report.segments) == 16
        assert page.get_attribute("html", "data-drawn") == str(n_figures)
        assert page.get_attribute("html", "data-failed") == "0"
        assert page.locator(".js-plotly-plot").count() == n_figures
        assert page.locator(".js-plotly-plot .main-svg").count() >= 2 * n_figures
        # the p-value matrix and 2 heatmaps per segment are drawn as images; every alignment has its lines
        assert page.locator(".js-plotly-plot .hm image").count() == 1 + 2 * len(report.segments)
        assert page.locator(".js-plotly-plot .scatterlayer .trace path.js-line").count() > 0
        sizes = [page.locator(f"#fig-{k} .main-svg").first.bounding_box() for k in range(1, n_figures + 1)]
        assert all(b is not None and b["width"] > 200 and b["height"] > 100 for b in sizes)
        table = page.locator("table").first.inner_text()
        assert EVIL in table and not dialogs
        assert requests == [path.as_uri()] and not refused
        assert not errors and not console, (errors, console)
    finally:
        context.close()


def test_the_names_and_texts_read_as_typed(browser, report_file):
    path, _ = report_file
    context = browser.new_context(offline=True)
    context.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file://") else r.abort())
    page = context.new_page()
    try:
        page.goto(path.as_uri())
        page.wait_for_selector("html[data-figures='drawn']", state="attached", timeout=120_000)
        body = page.locator("main").inner_text()
        assert "<script>alert(1)</script> cat" in body or "fox <img src=x onerror=alert(2)>" in body
        assert page.locator("main img").count() == 0 and page.locator("main script:not([type])").count() == 0
        legend = " ".join(page.locator("#fig-2 .xtick text").all_text_contents())
        assert EVIL in legend  # plotly shows the escaped name literally
    finally:
        context.close()


def test_numbers_on_the_page_are_the_reports(report_file, browser):
    path, report = report_file
    context = browser.new_context(offline=True)
    page = context.new_page()
    try:
        page.goto(path.as_uri())
        page.wait_for_selector("html[data-figures='drawn']", state="attached", timeout=120_000)
        rows = page.locator("table").first.locator("tbody tr")
        f1 = [float(rows.nth(i).locator("td").nth(7).inner_text()) for i in range(rows.count())]
        assert f1 == sorted(f1, reverse=True) and len(f1) == 3 and np.all(np.isfinite(f1))
    finally:
        context.close()
