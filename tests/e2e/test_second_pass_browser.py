"""Issue 23's items in a real server and Chromium (a refresh: test_refresh_browser.py; significance under Holm:
test_session_browser.py; the server log: test_zz_server_log.py): one row numbering, the sidebar naming the baseline
in use and its compact model picker, the idf source in the signature, the Baselines page on the loaded data, the
baseline-language warning."""

from __future__ import annotations

from playwright.sync_api import expect

from .conftest import ARTIFACTS

SETTLED = "[data-testid='stApp'][data-test-script-state='notRunning']"


def _go(page, title: str, heading: str | None = None) -> None:
    page.wait_for_selector(SETTLED, timeout=120_000)
    page.get_by_role("link", name=title).click()
    expect(page.get_by_role("heading", name=heading or title)).to_be_visible(timeout=60_000)


def test_the_second_pass_items_in_a_browser(page, app_url, tmp_path):
    rows = tmp_path / "rows.csv"
    rows.write_text("reference,sysA,sysB\nThe cat sat on the mat.,A cat sat on the mat.,The cat sat.\n"
                    "It is cold today.,,Cold today.\nHe went home.,He left.,He went home early.\n", encoding="utf-8")
    page.goto(app_url)
    expect(page.get_by_text("Settings", exact=True)).to_be_visible(timeout=60_000)
    # the model picker: the models not offered here are one collapsed line, not a standing paragraph
    expect(page.get_by_text("more model(s) not offered here", exact=False).first).to_be_visible()

    # one row numbering: the scoring warning names the file's row 3, as the problems table does
    _go(page, "Compare systems")
    page.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(str(rows))
    expect(page.get_by_text("Best:", exact=False).first).to_be_visible(timeout=180_000)
    page.get_by_text("Scoring warnings", exact=False).first.click()
    expect(page.get_by_text("sysA: 1 empty candidate(s), scored 0: row 3.", exact=False).first).to_be_visible()

    # the Baselines page shows rescaling on the loaded data, and with rescaling on the sidebar names the baseline
    _go(page, "Baselines and layers")
    expect(page.get_by_text("from the Compare dataset (2 systems x 3 segments)", exact=False).first) \
        .to_be_visible(timeout=120_000)
    page.get_by_text("Rescale with baseline").click()
    expect(page.get_by_text("Baseline in use: baselines/en/all-MiniLM-L6-v2.tsv (shipped)", exact=False).first) \
        .to_be_visible(timeout=60_000)

    # Inspect: a Japanese pair rescaled with the English baseline says so
    _go(page, "Inspect a pair")
    for label, text in (("Candidate", "猫がマットの上に座った。"), ("Reference", "マットの上に猫が座っている。")):
        box = page.get_by_role("textbox", name=label, exact=True)
        box.fill(text)
        box.press("Control+Enter")
    expect(page.get_by_text("Rescaling uses the English (en) baseline, but the reference is in", exact=False)
           .first).to_be_visible(timeout=90_000)

    # idf from a pasted corpus is named in the signature
    page.get_by_text("Rescale with baseline").click()
    page.get_by_text("idf weighting").click()
    page.get_by_text("A pasted corpus", exact=True).click()
    corpus = page.get_by_role("textbox", name="Corpus for idf (one sentence per line)")
    corpus.fill("The cat sat.\nIt rained.\nHe left early.")
    corpus.press("Control+Enter")
    expect(page.get_by_text("_idf-corpus-3-", exact=False).first).to_be_visible(timeout=90_000)
    expect(page.locator("[data-testid='stException']")).to_have_count(0)
    assert not page.errors


def test_empty_references_are_one_warning_and_leaving_them_out_is_said_in_the_answer(page, app_url, tmp_path):
    """Issue 30, item 4: empty references were one warning per system and could not be left out; a long problem was
    cut off in the problems table."""
    rows = tmp_path / "empty_refs.csv"
    rows.write_text("reference,sysA,sysB\nThe cat sat on the mat.,A cat sat on the mat.,The cat sat.\n"
                    ",It is cold.,Cold today.\nHe went home.,He left.,He went home early.\n"
                    "She sings well.,She sings.,She is a good singer.\n"
                    "Too,many,cells,in,this,row,for,the,header,of,three,columns\n", encoding="utf-8")
    page.goto(app_url)
    expect(page.get_by_text("Settings", exact=True)).to_be_visible(timeout=60_000)
    _go(page, "Compare systems")
    page.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(str(rows))
    expect(page.get_by_text("Best:", exact=False).first).to_be_visible(timeout=180_000)
    warning = page.get_by_text("1 of 4 segments have an empty reference (row 3): every system scores 0", exact=False)
    expect(warning).to_have_count(1)
    page.get_by_text("Scoring warnings", exact=False).first.click()
    expect(page.get_by_text("every system (2): 1 empty reference(s), scored 0: row 3.", exact=False)).to_have_count(1)
    page.get_by_text("Leave out segments with an empty reference").click()
    expect(page.get_by_text("they are left out for every system, so every mean, interval and test is over the "
                            "other 3 segments", exact=False).first).to_be_visible(timeout=120_000)
    expect(page.get_by_text("Model pass:", exact=False).first).to_be_visible()
    expect(page.get_by_text("empty reference(s), scored 0", exact=False)).to_have_count(0)
    problems = page.get_by_text("Problems (", exact=False).first
    problems.click()
    table = page.locator("[data-testid='stExpander']").filter(has_text="Problems (").locator(
        "[data-testid='stDataFrame']")
    expect(table).to_be_visible(timeout=30_000)
    box = table.bounding_box()
    assert box is not None and box["height"] >= 2 * 72  # the header and the wrapped rows, not one line each
    table.screenshot(path=str(ARTIFACTS / "compare_problems.png"))
    expect(page.locator("[data-testid='stException']")).to_have_count(0)
    assert not page.errors
