"""Runs that last in a real server and Chromium: a run saved on the Compare page, the page opened again with a new
upload, the earlier run picked under "Earlier runs", and its systems shown in the system table beside the new one.

The server here is this module's own, local (127.0.0.1) and given a runs folder of the test's through
``BERTSCORE_VIZ_RUNS``, so that no run is read from or written to the user's ``~/.cache``."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from playwright.sync_api import expect

from bertscore_viz.files.runs import list_runs

from .conftest import app_server, screenshot

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
REFS = ["The cat sat on the mat.", "A dog barked loudly at the postman.", "It is raining in the city today.",
        "The committee approved the budget.", "She finished the marathon in four hours."]
OUT = {
    "alpha": ["The cat sat on a mat.", "A dog barked at the postman.", "It rains in the city today.",
              "The committee passed the budget.", "She ran the marathon in four hours."],
    "beta": ["A cat is on the mat.", "The dog was loud to the mailman.", "Today the city has rain.",
             "The budget was approved by the committee.", "In four hours she finished the marathon."],
    "gamma": ["Cat mat sat.", "Dog postman barked.", "Rain city today is.", "Committee budget.", "Marathon hours she."],
}
SETTLED = "[data-testid='stApp'][data-test-script-state='notRunning']"


def _write_csv(path: Path, systems: list[str]) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["reference", *systems])
        for i, ref in enumerate(REFS):
            w.writerow([ref, *(OUT[s][i] for s in systems)])
    return path


@pytest.fixture(scope="module")
def runs_server(tmp_path_factory):
    """A local server of its own whose runs folder is the test's."""
    folder = tmp_path_factory.mktemp("runs")
    with app_server("streamlit-runs-server.log", BERTSCORE_VIZ_RUNS=str(folder), BERTSCORE_VIZ_STORE="off") as url:
        yield url, folder


@pytest.fixture
def tab(browser, runs_server):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    pg.errors = errors
    yield pg
    context.close()


def _open_compare(page, url: str) -> None:
    page.goto(url)
    expect(page.get_by_text("Settings", exact=True)).to_be_visible(timeout=60_000)
    page.get_by_role("link", name="Compare systems").click()
    expect(page.get_by_role("heading", name="Compare systems")).to_be_visible(timeout=60_000)


def _upload(page, path: Path, best: str) -> None:
    page.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(str(path))
    expect(page.get_by_text(f"Best: {best}", exact=False).first).to_be_visible(timeout=180_000)
    page.wait_for_selector(SETTLED, timeout=60_000)


def test_an_earlier_run_stands_beside_a_new_upload(tab, runs_server, tmp_path):
    url, folder = runs_server
    page = tab
    _open_compare(page, url)
    _upload(page, _write_csv(tmp_path / "first.csv", ["alpha", "beta"]), "alpha")
    name = page.get_by_role("textbox", name="Run name", exact=True)
    name.fill("baseline-run")
    name.press("Enter")
    page.wait_for_selector(SETTLED, timeout=60_000)
    page.get_by_role("button", name="Save this run").click()
    expect(page.get_by_text("Saved the run", exact=False).first).to_be_visible(timeout=60_000)
    assert [r.name for r in list_runs(folder).runs] == ["baseline-run"]

    page.reload()  # a new visit: a new upload of the new system alone
    _open_compare(page, url)
    _upload(page, _write_csv(tmp_path / "second.csv", ["gamma"]), "gamma")
    page.get_by_test_id("stMultiSelect").filter(has_text="Earlier runs").first.click()
    page.get_by_role("option", name="baseline-run", exact=False).first.click()
    page.keyboard.press("Escape")
    expect(page.get_by_text("Best: alpha @ baseline-run", exact=False).first).to_be_visible(timeout=120_000)
    ranking = page.get_by_text("Ranking by F1", exact=False).first
    for system in ("alpha @ baseline-run", "beta @ baseline-run", "gamma"):
        expect(ranking).to_contain_text(system)
    table = page.get_by_test_id("stDataFrame").first
    table.scroll_into_view_if_needed()
    expect(table).to_be_visible()
    for system in ("alpha @ baseline-run", "beta @ baseline-run", "gamma"):
        expect(table).to_contain_text(system)  # the grid's accessible cells
    screenshot(table, "compare-runs.png")
    assert not page.errors, page.errors
