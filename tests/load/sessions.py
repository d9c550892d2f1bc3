"""What a browser session does in the load tests (Playwright's async API), and the numbers the Python API gives
for the same input and settings."""

from __future__ import annotations

import asyncio
import contextlib
import csv
import io
import re
import time
from pathlib import Path

from playwright.async_api import expect

from bertscore_viz.engine.baseline import BaselineTable
from bertscore_viz.engine.scorer import Scorer
from bertscore_viz.evaluation import compare
from bertscore_viz.files import upload

LONG = 300_000  # ms: the longest wait for one step on a shared 2-core machine


async def open_session(browser, url: str):
    ctx = await browser.new_context(viewport={"width": 1400, "height": 1200}, accept_downloads=True)
    page = await ctx.new_page()
    page.set_default_timeout(LONG)
    page.errors = []
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))
    await page.goto(url)
    await expect(page.get_by_text("Settings", exact=True)).to_be_visible(timeout=LONG)
    return page


async def signature(page) -> str:
    return (await page.locator("[data-testid='stSidebar'] code").first.inner_text()).strip()


async def settings(page, layer: int = 4, idf: bool = False, rescale: bool = False) -> None:
    """Set the sidebar (from the defaults: layer 4, idf off, rescaling off) and wait for its signature."""
    sb = page.locator("[data-testid='stSidebar']")
    code = sb.locator("code").first
    if idf:
        await sb.get_by_text("idf weighting").click()
        await expect(code).to_contain_text("_idf_", timeout=LONG)
    if rescale:
        await sb.get_by_text("Rescale with baseline").click()
        await expect(code).to_contain_text("rescaled", timeout=LONG)
    if layer != 4:
        slider = sb.get_by_role("slider").first
        await slider.focus()
        for _ in range(abs(layer - 4)):
            await slider.press("ArrowRight" if layer > 4 else "ArrowLeft")
        await expect(code).to_contain_text(f"_L{layer}_", timeout=LONG)


async def go(page, link: str, heading: str) -> None:
    await page.get_by_role("link", name=link).click()
    await expect(page.get_by_role("heading", name=heading)).to_be_visible(timeout=LONG)


async def fill(page, label: str, text: str) -> None:
    box = page.get_by_role("textbox", name=label, exact=True)
    await box.fill(text)
    await box.press("Control+Enter")


async def inspect(page, cand: str, ref: str, expected_f1: str) -> tuple[list[str], float]:
    """Type a pair on Inspect; returns the P, R, F1 shown and the seconds until F1 showed ``expected_f1``."""
    await expect(page.get_by_role("textbox", name="Candidate", exact=True)).to_be_visible(timeout=LONG)
    await fill(page, "Candidate", cand)
    start = time.monotonic()
    await fill(page, "Reference", ref)
    metrics = page.locator("[data-testid='stMetricValue']")
    with contextlib.suppress(AssertionError):  # compared (and reported) by the caller
        await expect(metrics.nth(2)).to_have_text(expected_f1, timeout=LONG)
    took = time.monotonic() - start
    return [v.strip() for v in await metrics.all_inner_texts()][:3], took


async def upload_file(page, path: Path, index: int = 0) -> None:
    await page.locator("[data-testid='stFileUploaderDropzoneInput']").nth(index).set_input_files(str(path))


WAITING = re.compile(r"(\d+) job\(s\) running, (\d+) waiting before yours")


async def compare_upload(page, path: Path, watch: list | None = None) -> tuple[dict, float, int]:
    """Upload on Compare, wait for the answer (noting "Waiting for a free slot: R job(s) running, W waiting before
    yours" when shown), and download the system table. Returns ``({system: row}, seconds, most jobs seen ahead
    (R + W) or -1 when the upload never waited)``."""
    await go(page, "Compare systems", "Compare systems")
    start = time.monotonic()
    await upload_file(page, path)
    answer = page.get_by_text("Best:", exact=False).first
    waiting = page.get_by_text("Waiting for a free slot", exact=False)
    most_ahead = -1
    while not await answer.is_visible():
        if await waiting.count():
            try:
                found = WAITING.search(await waiting.first.inner_text(timeout=1000))
                if found:
                    most_ahead = max(most_ahead, int(found.group(1)) + int(found.group(2)))
            except Exception:  # noqa: BLE001  the message went away meanwhile
                pass
        if watch is not None:
            watch.append(time.monotonic())
        if time.monotonic() - start > LONG / 1000:
            raise AssertionError(f"no answer for {path.name} within {LONG / 1000:.0f} s")
        await asyncio.sleep(0.2)
    took = time.monotonic() - start
    return await system_table(page), took, most_ahead


async def system_table(page) -> dict:
    await page.get_by_role("tab", name="Downloads").click()
    async with page.expect_download(timeout=LONG) as info:
        await page.get_by_text("System table (CSV)").click()
    download = await info.value
    text = Path(await download.path()).read_bytes().decode("utf-8-sig")
    return {row["System"]: row for row in csv.DictReader(io.StringIO(text))}


def api_compare(data: bytes, layer: int = 4, idf: bool = False, rescale: bool = False,
                table: BaselineTable | None = None) -> tuple[dict, str]:
    """What the Python API gives for the same file and settings: ``({system: (P, R, F1)}, signature)``."""
    ds = upload.parse_upload(data, "x.csv")
    assert ds.ok, ds.problems
    cstats = compare.score_dataset(Scorer(), ds, layers=[layer])
    sc = Scorer(layer=layer, idf=idf, rescale_with_baseline=rescale, baseline_table=table)
    comp = compare.results_for(sc, cstats, layer, idf, rescale)
    return {name: tuple(float(x) for x in res.mean()) for name, res in comp.results.items()}, comp.signature


def api_inspect(cand: str, ref: str, layer: int = 4) -> list[str]:
    ex = Scorer(layer=layer).explain(cand, ref)
    return [f"{ex.precision:.4f}", f"{ex.recall:.4f}", f"{ex.f1:.4f}"]
