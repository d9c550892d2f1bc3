"""The Agreement page in a real server and Chromium (issues 22, 30, 32): a SummEval-style upload shows the verdict at
every level with the best of each column marked, a click on a disagreement row explains the pair on the page; then
"Load the example" empties the uploader (no earlier file shown), its label is whole, and the WMT16 DA example gives
the table, the lead and the layer curve; a seed change redraws from the kept scores. The pairwise accuracy section
(issue 44) shows, for the upload, the API's best metric of each statistic with its value and interval, and which
differences are significant. Screenshots: the README's docs/images/agreement.png, and
docs/images/agreement_levels.png, agreement_meta.png and agreement_disagreements.png for docs/APP.md."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pandas as pd
import pytest
from playwright.sync_api import expect

from bertscore_viz.app.app_pages.agreement.meta_view import META_HEADING, significance_lines
from bertscore_viz.engine.scorer import Scorer
from bertscore_viz.evaluation.human_agreement import run_agreement
from bertscore_viz.evaluation.layer_tuning import read_da
from bertscore_viz.evaluation.levels import document_keys
from bertscore_viz.evaluation.meta_evaluation import meta_evaluate
from bertscore_viz.files.human_scores import parse_human_scores

from .conftest import ARTIFACTS, screenshot

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
CS_EN = read_da(ROOT / "data" / "wmt16-da-to-english", ["cs-en"])[0]
#: The model pass over the 3,360 example outputs on a shared CPU machine.
EXAMPLE_TIMEOUT = 1_200_000


def summeval_like(path: Path) -> Path:
    """12 documents x 4 systems (the MT output, its words reversed, half the reference, another segment's output),
    human scores from WMT16's DA lowered per system."""
    rows = []
    for d in range(12):
        ref = CS_EN.references[d]
        outputs = [CS_EN.candidates[d], " ".join(CS_EN.candidates[d].split()[::-1]),
                   " ".join(ref.split()[:len(ref.split()) // 2]), CS_EN.candidates[d + 20]]
        for s, text in enumerate(outputs):
            rows.append({"segment_id": f"doc{d}", "system": f"sys{s}", "summary": text, "reference": ref,
                         "human": float(CS_EN.human[d * 4 + s]) - 0.3 * s})
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def _shot_from(page, locator, name: str) -> None:
    """A screenshot of the page from ``locator`` down (1400 x 1500), for the docs and the test's artifacts."""
    page.set_viewport_size({"width": 1400, "height": 1500})
    locator.evaluate("e => e.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(800)  # let table canvases and figures repaint after the scroll (not a sync point)
    screenshot(page, name)
    page.set_viewport_size({"width": 1400, "height": 1000})


def expected_meta_lines(path: Path) -> list[str]:
    """The section's sentences for the file, from the API (the page's settings: the bundled model at its tuned
    layer, seed 12345)."""
    rated = parse_human_scores(path.read_bytes(), path.name)
    documents = document_keys(rated.segment_ids, rated.groups)
    report = run_agreement(Scorer(), rated.candidates, rated.references, rated.human, rated.systems, rated.groups,
                           documents=documents)
    first = ["BERTScore-F1", "BERTScore-P", "BERTScore-R"]
    scores = {m: report.scores[m] for m in first + [m for m in report.scores if m not in first]}
    return significance_lines(meta_evaluate(scores, report.human, rated.systems, documents, seed=12345))


def _click_first_row(page, table) -> None:
    """A click in the first body row of a dataframe (its canvas: row height and header height are Streamlit's
    35 px)."""
    box = table.bounding_box()
    page.mouse.click(box["x"] + 12, box["y"] + 35 + 17)


def test_levels_disagreements_then_the_example(page, app_url, tmp_path):
    page.goto(app_url)
    expect(page.get_by_text("Settings", exact=True)).to_be_visible(timeout=60_000)
    page.get_by_role("link", name="Agreement with humans").click()
    expect(page.get_by_role("heading", name="Agreement with human scores")).to_be_visible(timeout=60_000)

    rated = summeval_like(tmp_path / "summeval_like.csv")
    page.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(str(rated))
    expect(page.get_by_text("Summary level (mean over 12 documents)", exact=False).first).to_be_visible(
        timeout=300_000)
    expect(page.get_by_text("System level (4 systems)", exact=False).first).to_be_visible()
    shown_file = page.get_by_role("button", name="Remove summeval_like.csv")  # the uploader shows the file
    expect(shown_file).to_be_visible()
    levels = page.locator("[data-testid='stDataFrame']").first
    expect(levels).to_be_visible()
    _shot_from(page, page.get_by_text("48 rated outputs (long layout", exact=False).first, "agreement_levels.png")

    meta = page.get_by_role("heading", name=META_HEADING)
    expect(meta).to_be_visible(timeout=120_000)
    lines = expected_meta_lines(rated)
    assert [line.split(":")[0] for line in lines] == ["acc_eq", "soft pairwise accuracy", "system pairwise accuracy"]
    for line in lines:  # the best metric's value and interval, and the significant differences, as the API says
        expect(page.get_by_text(line, exact=False).first).to_be_visible(timeout=60_000)
    expect(page.get_by_text("acc_eq grouped by item", exact=False).first).to_be_visible()
    _shot_from(page, meta, "agreement_meta.png")

    expect(page.get_by_role("heading", name="Where the metric and the humans disagree")).to_be_visible()
    # the levels table, the pairwise accuracy table, then the disagreements
    table = page.locator("[data-testid='stDataFrame']").filter(has=page.locator("canvas")).nth(2)
    table.scroll_into_view_if_needed()
    _click_first_row(page, table)
    expect(page.get_by_text("percentile points", exact=False).first).to_be_visible(timeout=120_000)
    expect(page.get_by_role("tab", name="Heatmap")).to_be_visible(timeout=120_000)
    _shot_from(page, page.get_by_role("heading", name="Where the metric and the humans disagree"),
               "agreement_disagreements.png")

    button = page.get_by_role("button", name="Load the example")
    expect(button).to_be_visible()
    assert button.evaluate("b => b.scrollWidth <= b.clientWidth")  # the label is whole, not cut ("...")
    button.click()
    expect(page.get_by_text("3,360 rated outputs (plain layout", exact=False).first).to_be_visible(
        timeout=EXAMPLE_TIMEOUT)
    expect(shown_file).to_have_count(0)  # the uploader no longer shows the earlier file
    expect(page.get_by_text("BERTScore-F1 leads", exact=False).first).to_be_visible(timeout=120_000)
    # the example names no system: acc_eq over all pairs of a seeded sample of its outputs, no system level
    expect(page.get_by_text("acc_eq grouped globally", exact=False).first).to_be_visible(timeout=120_000)
    expect(page.get_by_text("a seeded sample of 500 of the 3,360 outputs", exact=False).first).to_be_visible()
    expect(page.get_by_role("heading", name="Correlation by layer")).to_be_visible(timeout=60_000)
    expect(page.get_by_role("heading", name="By group")).to_be_visible(timeout=60_000)
    expect(page.locator("[data-testid='stPlotlyChart']").first).to_be_visible()

    seed = page.get_by_label("Seed")
    seed.fill("7")
    start = time.monotonic()
    seed.press("Enter")
    expect(page.get_by_text("(seed 7)", exact=False).first).to_be_visible(timeout=120_000)
    redraw = time.monotonic() - start
    (ARTIFACTS / "agreement_seed_change.json").write_text(json.dumps({"seconds": round(redraw, 2)}))
    expect(page.locator("[data-testid='stException']")).to_have_count(0)
    page.set_viewport_size({"width": 1400, "height": 1500})
    page.mouse.move(700, 400)
    page.mouse.wheel(0, -10_000)
    page.wait_for_timeout(1500)  # let the charts draw (not a sync point)
    screenshot(page, "agreement.png")
    assert not page.errors
