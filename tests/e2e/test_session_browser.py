"""The app in a user's hands, in a real server and Debian's Chromium: work survives page changes (a typed pair, and a
real file upload with its scores: no second model pass), the open tab stays put after an A/B change, a click on a
segment row opens the drill-down of A and B, and the significance sentences, clusters and Holm read the way their
numbers are (a constructed set of four systems where the answer is known)."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import expect

from bertscore_viz import Scorer
from bertscore_viz.evaluation import compare
from bertscore_viz.figures import tables
from bertscore_viz.files import upload

from .conftest import ARTIFACTS

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "bertscore_viz" / "examples" / "systems_example.csv"
TYPED = "A typed candidate that must survive a visit to Compare."


def _go(page, title: str) -> None:
    page.get_by_role("link", name=title).click()
    expect(page.get_by_role("heading", name=title)).to_be_visible(timeout=60_000)


SETTLED = "[data-testid='stApp'][data-test-script-state='notRunning']"


def _select(page, label: str, option: str) -> None:
    """Pick ``option`` in the selectbox labelled ``label``, once the app is idle (a click during a re-render can
    land on the box without opening its list: then press Escape and click again)."""
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


def _tab(page, name: str):
    return page.get_by_role("tab", name=name, exact=True)


def _first_by_difference(a: str, b: str) -> str:
    """The segment id at the top of the example's segment table sorted by |A − B| (default layer, no idf)."""
    ds = upload.parse_upload(EXAMPLE.read_bytes(), EXAMPLE.name)
    scorer = Scorer()
    comparison = compare.results_for(scorer, compare.score_dataset(scorer, ds), scorer.layer, False)
    return str(tables.sort_by_difference(tables.segment_table(ds, comparison), comparison, a, b)["Segment"].iloc[0])


def test_round_trip_keeps_work_and_the_tab_and_drill_down_follow_a_b(page, app_url):
    page.goto(app_url)
    _go_first = page.get_by_role("heading", name="Inspect a pair")
    expect(_go_first).to_be_visible(timeout=90_000)
    box = page.get_by_role("textbox", name="Candidate", exact=True)
    box.fill(TYPED)
    box.press("Control+Enter")
    ref = page.get_by_role("textbox", name="Reference", exact=True).input_value()
    f1_first = f"{Scorer().explain(TYPED, ref).f1:.4f}"
    expect(page.locator("[data-testid='stMetricValue']").nth(2)).to_have_text(f1_first, timeout=90_000)

    _go(page, "Compare systems")
    uploader = page.locator("[data-testid='stFileUploaderDropzoneInput']")
    uploader.set_input_files(str(EXAMPLE))  # a real upload, as a user drops a file
    expect(page.get_by_text("Best: literal", exact=False).first).to_be_visible(timeout=180_000)
    expect(page.get_by_text("Model pass:", exact=False)).to_be_visible()

    _go(page, "Inspect a pair")
    expect(page.get_by_role("textbox", name="Candidate", exact=True)).to_have_value(TYPED, timeout=30_000)
    expect(page.locator("[data-testid='stMetricValue']").nth(2)).to_have_text(f1_first, timeout=60_000)

    _go(page, "Compare systems")
    expect(page.get_by_text("Best: literal", exact=False).first).to_be_visible(timeout=30_000)
    expect(page.get_by_text("no model pass", exact=False)).to_be_visible()  # the scores of the first visit
    expect(page.get_by_text("Model pass:", exact=False)).to_have_count(0)
    # the uploader is empty after a page change; the kept file is named, with a way to forget it
    expect(page.locator("[data-testid='stFileUploaderFile']")).to_have_count(0)
    expect(page.get_by_text(f"File: {EXAMPLE.name}", exact=False)).to_contain_text("kept in this session")
    expect(page.get_by_role("button", name="Forget")).to_be_visible()

    # Segments tab: an A/B change keeps the tab open and re-sorts by the new difference.
    _tab(page, "Segments").click()
    expect(page.get_by_text("of 30 segments", exact=False)).to_be_visible(timeout=30_000)
    _select(page, "System A", "paraphrase")
    expect(_tab(page, "Segments")).to_have_attribute("aria-selected", "true")
    page.wait_for_timeout(300)  # a late full rerun would switch tabs back; check again after it
    expect(_tab(page, "Segments")).to_have_attribute("aria-selected", "true")
    expect(page.get_by_text("of 30 segments", exact=False)).to_be_visible()

    # A click on the first row's checkbox opens Drill-down with A and B side by side.
    grid = page.locator("[data-testid='stDataFrame']").last
    grid.scroll_into_view_if_needed()
    bb = grid.bounding_box()
    page.mouse.click(bb["x"] + 18, bb["y"] + 35 + 17)
    expect(_tab(page, "Drill-down")).to_have_attribute("aria-selected", "true", timeout=30_000)
    expect(page.get_by_text("A: paraphrase", exact=False)).to_be_visible(timeout=60_000)
    # B was not chosen: it follows the ranking, the best system other than A
    expect(page.get_by_text("B: literal", exact=False)).to_be_visible()
    expect(page.get_by_text("On this segment: paraphrase − literal = F1", exact=False)).to_be_visible()
    # the row clicked: the first of the table sorted by |A − B|, as the engine sorts it
    expect(page.get_by_text(f"Segment id {_first_by_difference('paraphrase', 'literal')},", exact=False)) \
        .to_be_visible()
    page.screenshot(path=str(ARTIFACTS / "compare-drilldown.png"), full_page=True)
    expect(page.locator("[data-testid='stException']")).to_have_count(0)
    assert not page.errors


#: Four systems where the answer is known: sys10 copies the reference (F1 = 1 on every segment), sys2 and sys11
#: give the same paraphrase (equal scores: one cluster, tied; natural order puts sys2 first), sys1 is one unrelated
#: sentence. Every segment orders them the same way, so every p is the smallest there is (1/1001; 6/1001 with Holm
#: over the 6 pairs) except sys2 against sys11 (p = 1). Clusters: 1. sys10 (3 wins) > 2. sys2, sys11 (1) > 3. sys1.
REFS = ["The cat sat on the mat near the door.", "It rained all day in the old city.",
        "The committee approved the new budget today.", "She plays the violin every evening at home.",
        "Prices rose sharply across the country last month.", "The train left the station on time.",
        "He painted the garden fence white last summer.", "The museum opens at nine on weekdays.",
        "The children built a sandcastle on the beach.", "Our neighbours adopted a small brown dog.",
        "The bakery sells fresh bread every morning.", "A storm closed the airport for two hours."]
PARA = ["A cat was sitting on the mat by the door.", "Rain fell the whole day in the old town.",
        "Today the committee passed the new budget.", "Every evening she plays violin at home.",
        "Last month prices went up sharply nationwide.", "The train departed from the station on schedule.",
        "Last summer he painted the garden fence white.", "On weekdays the museum opens at nine.",
        "On the beach the kids made a sandcastle.", "A little brown dog was adopted by our neighbours.",
        "Every morning the bakery sells fresh bread.", "For two hours a storm shut the airport."]
UNRELATED = "Quantum tunnelling enables flash memory."


def _constructed(path: Path) -> Path:
    import csv

    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["reference", "sys1", "sys2", "sys10", "sys11"])
        w.writerows(zip(REFS, [UNRELATED] * len(REFS), PARA, REFS, PARA))
    return path


def test_significance_reads_as_its_numbers_on_a_constructed_set(page, app_url, tmp_path):
    scorer = Scorer()
    f1 = {name: float(scorer.score(out, REFS).f1.mean()) for name, out in
          (("sys10", REFS), ("sys2", PARA), ("sys1", [UNRELATED] * len(REFS)))}
    top_vs_para = f"+{f1['sys10'] - f1['sys2']:.4f}"
    para_vs_unrelated = f"+{f1['sys2'] - f1['sys1']:.4f}"
    page.goto(app_url)
    expect(page.get_by_role("heading", name="Inspect a pair")).to_be_visible(timeout=90_000)
    _go(page, "Compare systems")
    page.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(str(_constructed(tmp_path / "c.csv")))
    answer = page.locator("[data-testid='stAlert']").filter(has_text="Best: sys10").first
    expect(answer).to_be_visible(timeout=180_000)
    expect(answer).to_contain_text("above sys2 (2nd): significant, p = 0.001, uncorrected, one of 6 comparisons")
    expect(page.get_by_text("Ranking by F1", exact=False).first).to_contain_text(
        "1. sys10 (3) > 2. sys2 (1), sys11 (1) > 3. sys1 (0)")
    main = page.locator("[data-testid='stMain']")
    for sentence in (f"sys10 is better than sys2 on F1: sys10 − sys2 = {top_vs_para} (p = 0.001, uncorrected, one "
                     "of 6 comparisons)",
                     f"sys10 is better than sys11 on F1: sys10 − sys11 = {top_vs_para} (p = 0.001",
                     "sys10 is better than sys1 on F1: sys10 − sys1 = +"):
        expect(main.get_by_text(sentence, exact=False).first).to_be_visible(timeout=30_000)
    expect(page.get_by_text("Tests made: 3 against the baseline, among the 6 pairwise", exact=False).first) \
        .to_be_visible()

    # Another baseline: the better system is named first whichever side the baseline is on, the sign follows it.
    _select(page, "Baseline system", "sys2")
    for sentence in (f"sys10 is better than sys2 on F1: sys10 − sys2 = {top_vs_para} (p = 0.001",
                     "sys11 and sys2 are not significantly different on F1: sys11 − sys2 = +0.0000 (p = 1.000",
                     f"sys2 is better than sys1 on F1: sys2 − sys1 = {para_vs_unrelated} (p = 0.001"):
        expect(main.get_by_text(sentence, exact=False).first).to_be_visible(timeout=30_000)

    # Holm over the 6 pairs (2,000 resamples then, so that a pair can be significant): the answer, its metric and
    # the sentence give the pair one p and name the family.
    page.get_by_text("Holm correction for multiple comparisons").click()
    expect(answer).to_contain_text("significant, p = 0.003, Holm-adjusted over 6 comparisons", timeout=60_000)
    expect(main.get_by_text("p, best vs 2nd").first).to_be_visible()
    expect(main.get_by_text(f"sys10 is better than sys2 on F1: sys10 − sys2 = {top_vs_para} (p = 0.003, "
                            "Holm-adjusted over 6 comparisons)", exact=False).first).to_be_visible(timeout=30_000)
    expect(main.get_by_text("smallest attainable adjusted p is 0.003", exact=False).first).to_be_visible()
    expect(page.locator("[data-testid='stException']")).to_have_count(0)
    assert not page.errors


def test_unknown_tokens_are_flagged_on_a_japanese_pair(page, app_url):
    page.goto(app_url)
    expect(page.get_by_role("heading", name="Inspect a pair")).to_be_visible(timeout=90_000)
    for label, text in (("Candidate", "猫がマットの上に座った。"), ("Reference", "マットの上に猫が座っている。")):
        box = page.get_by_role("textbox", name=label, exact=True)
        box.fill(text)
        box.press("Control+Enter")
    warning = page.get_by_text("is outside the languages of all-MiniLM-L6-v2", exact=False).first
    expect(warning).to_be_visible(timeout=90_000)
    expect(warning).to_contain_text("[UNK]")
    expect(warning).to_contain_text("multilingual-e5-small")
    expect(page.get_by_role("combobox", name="Example pair")).not_to_contain_text("Paraphrase")
    assert not page.errors
