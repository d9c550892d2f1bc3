"""The Compare page in a real server and Chromium: every system ranked, chrF/BLEU/TER beside BERTScore, the example's
explanation with its link to the stress test, the LaTeX download equal to ``latex_table`` computed here, and a WMT
test set uploaded as an mt-metrics-eval zip whose downloaded metric-score files read back (with our reader of that
layout) as the F1 ``Scorer.score`` gives. Screenshots for the docs: docs/images/compare*.png."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import numpy as np
import pytest
from playwright.sync_api import expect

from bertscore_viz import Scorer
from bertscore_viz.evaluation import compare
from bertscore_viz.evaluation.latex import latex_table
from bertscore_viz.files import mtme, upload

from .conftest import screenshot

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "bertscore_viz" / "examples" / "systems_example.csv"
SYSTEMS = ["paraphrase", "literal", "drops_content", "errors"]
DATA = ROOT / "data" / "wmt16-da-to-english"


def _open_compare(page, app_url) -> None:
    page.goto(app_url)
    expect(page.get_by_text("Settings", exact=True)).to_be_visible(timeout=60_000)
    page.get_by_role("link", name="Compare systems").click()
    expect(page.get_by_role("heading", name="Compare systems")).to_be_visible(timeout=60_000)


SETTLED = "[data-testid='stApp'][data-test-script-state='notRunning']"


def _select(page, label: str, option: str) -> None:
    """Pick ``option`` in the selectbox labelled ``label`` once the app is idle (a click during a re-render can land
    on the box without opening its list: then Escape and click again)."""
    item = page.get_by_role("option", name=option, exact=True)
    for attempt in range(3):
        page.wait_for_selector(SETTLED, timeout=60_000)
        page.get_by_test_id("stSelectbox").filter(has_text=label).first.click()
        try:
            item.wait_for(timeout=10_000)
            break
        except Exception:  # noqa: BLE001  playwright's TimeoutError
            if attempt == 2:
                raise
            page.keyboard.press("Escape")
    item.click()


def _shot(page, locator, name: str) -> None:
    """A screenshot of one part of the page for the docs (and the test's artifacts)."""
    page.set_viewport_size({"width": 1400, "height": 2400})  # the app scrolls inside: all of it in view
    locator.scroll_into_view_if_needed()
    page.wait_for_timeout(800)  # let a table canvas repaint after the resize (not a sync point)
    screenshot(locator, name)
    page.set_viewport_size({"width": 1400, "height": 1000})


def test_upload_csv_ranks_every_system_with_chrf_beside_it(page, app_url, tmp_path):
    _open_compare(page, app_url)
    page.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(str(EXAMPLE))
    answer = page.get_by_text("Best: literal", exact=False)
    expect(answer.first).to_be_visible(timeout=180_000)
    ranking = page.get_by_text("Ranking by F1", exact=False).first
    expect(ranking).to_be_visible()
    for name in SYSTEMS:
        expect(ranking).to_contain_text(name)
    why = page.get_by_text("Why is “paraphrase” last", exact=False).first
    expect(why).to_be_visible()
    link = page.get_by_role("link", name="Is the metric fooled? The stress test of the metric")
    expect(link).to_have_attribute("href", "audit")  # the app's own page, in this session
    expect(page.get_by_text("chrF2|nrefs:1|case:mixed", exact=False).first).to_be_visible(timeout=60_000)
    expect(page.get_by_text("Also show chrF, BLEU, TER", exact=False)).to_be_visible()
    expect(page.get_by_text("is better than", exact=False).first).to_be_attached()
    expect(page.locator("[data-testid='stException']")).to_have_count(0)
    _shot(page, page.locator("[data-testid='stMainBlockContainer']"), "compare.png")

    page.get_by_role("tab", name="Segments").click()
    expect(page.get_by_text("of 30 segments", exact=False)).to_be_visible(timeout=60_000)
    expect(page.get_by_text("signature: all-MiniLM-L6-v2_L4", exact=False).first).to_be_visible()

    page.get_by_role("tab", name="Significance").click()
    expect(page.get_by_text("Paired bootstrap resampling as sacrebleu", exact=False)).to_be_visible(timeout=60_000)
    expect(page.get_by_text("Statistical power", exact=False)).to_be_visible(timeout=60_000)
    expect(page.get_by_text("Every metric against literal", exact=False)).to_be_visible()
    _shot(page, page.locator("[data-testid='stTabs']"), "compare_significance.png")

    page.get_by_role("tab", name="Charts").click()
    expect(page.get_by_text("BERTScore-F1 and chrF rank every system the same", exact=False)) \
        .to_be_visible(timeout=60_000)
    expect(page.locator(".js-plotly-plot").nth(3)).to_be_visible(timeout=60_000)  # box, buckets, scatter, ranks
    _select(page, "Ranks by BERTScore-F1 against", "BLEU")  # BLEU ranks two systems otherwise than BERTScore
    expect(page.get_by_text("Ranked differently (2 of 4)", exact=False)).to_be_visible(timeout=60_000)
    _shot(page, page.locator("[data-testid='stTabs']"), "compare_charts.png")

    page.get_by_role("tab", name="Downloads").click()
    button = page.get_by_role("button", name="LaTeX table (booktabs)")
    expect(button).to_be_visible(timeout=60_000)
    with page.expect_download(timeout=60_000) as info:
        button.click()
    tex = Path(info.value.path()).read_text(encoding="utf-8")
    ds = upload.parse_upload(EXAMPLE.read_bytes(), EXAMPLE.name)
    sc = Scorer()
    comparison = compare.results_for(sc, compare.score_dataset(sc, ds), 4, False,
                                     labels=compare.segment_labels(ds))
    assert tex == latex_table(comparison, compare.significance(comparison))
    expect(page.locator("[data-testid='stException']")).to_have_count(0)
    link.click()  # the stress test, in the same session
    page.wait_for_url("**/audit**", timeout=60_000)
    assert not page.errors


def _lines(kind: str, lp: str, start: int = 0, n: int = 8) -> list[str]:
    return (DATA / f"DAseg-newstest2016.{kind}.{lp}").read_text(encoding="utf-8").splitlines()[start:start + n]


def _test_set(root: Path) -> dict[str, list[str]]:
    """A test set in the mt-metrics-eval layout from real WMT16 fi-en lines (not used by the other browser tests):
    one reference, three systems."""
    files = {"wmt16/sources/fi-en.txt": _lines("source", "fi-en", 400),
             "wmt16/references/fi-en.refA.txt": _lines("reference", "fi-en", 400),
             "wmt16/system-outputs/fi-en/sysA.txt": _lines("mt-system", "fi-en", 400),
             "wmt16/system-outputs/fi-en/sysB.txt": _lines("mt-system", "fi-en", 420),
             "wmt16/system-outputs/fi-en/sysC.txt": [x.lower() for x in _lines("mt-system", "fi-en", 400)]}
    for path, lines in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text("".join(f"{x}\n" for x in lines), encoding="utf-8")
    return files


def test_a_wmt_zip_goes_in_and_its_scores_come_back_as_mt_metrics_eval_files(page, app_url, tmp_path):
    files = _test_set(tmp_path)
    archive = tmp_path / "wmt16.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for path in files:
            zf.write(tmp_path / path, path)
    _open_compare(page, app_url)
    page.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(str(archive))
    expect(page.get_by_text("Best:", exact=False).first).to_be_visible(timeout=180_000)
    expect(page.get_by_text("mt-metrics-eval: wmt16 fi-en, 8 segments, 3 systems against refA", exact=False)) \
        .to_be_visible()
    page.get_by_role("tab", name="Downloads").click()
    button = page.get_by_role("button", name="Scores as mt-metrics-eval files (zip)")
    expect(button).to_be_visible(timeout=60_000)
    with page.expect_download(timeout=60_000) as info:
        button.click()
    with zipfile.ZipFile(io.BytesIO(Path(info.value.path()).read_bytes())) as zf:
        assert sorted(zf.namelist()) == ["wmt16/metric-scores/fi-en/BERTScore-refA.seg.score",
                                         "wmt16/metric-scores/fi-en/BERTScore-refA.sys.score"]
        zf.extractall(tmp_path)  # beside the test set, as mt-metrics-eval keeps metric scores
    evalset = mtme.read_evalset(tmp_path / "wmt16", "fi-en")
    seg = evalset.metric_scores["BERTScore-refA"]["seg"]
    refs = [[r] for r in _lines("reference", "fi-en", 400)]
    for system in ("sysA", "sysB", "sysC"):
        expected = Scorer().score(list(evalset.systems[system]), refs).f1
        np.testing.assert_allclose(seg[system], expected, atol=1e-6)
    expect(page.locator("[data-testid='stException']")).to_have_count(0)
    assert not page.errors
