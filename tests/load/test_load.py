"""Load and fault tests against a real server and real browsers (deselected by default: ``python -m pytest -m load
-s``). Each prints its figures; docs/DEPLOY.md records them.

- six browser sessions at once, doing different things, each get the API's numbers and only their own data;
- the health check and a small Inspect stay under 2 s while a 16 x 100 upload scores;
- killing the server in the middle of scoring and starting it again works.
The 8 systems x 20,000 rows run is ``bench/bench_load.py`` (many minutes on 2 cores).
"""

from __future__ import annotations

import asyncio
import os
import threading
import time

import numpy as np
import pytest
from playwright.async_api import async_playwright, expect

from bertscore_viz.engine.baseline import BaselineTable, format_baseline

from . import sessions as S
from .conftest import ARTIFACTS, health_seconds, launch_browser, wide_csv

pytestmark = pytest.mark.load

PAIRS = [("The cat sat on the mat.", "There is a cat sitting on the mat."),
         ("The committee approved the budget on Friday.", "On Friday the budget was approved by the committee."),
         ("He plays the violin every evening.", "Every night he practises his violin."),
         ("Prices rose sharply in the last quarter.", "In the final quarter, prices increased steeply."),
         ("The train was delayed by snow.", "Snow held up the train.")]
CUSTOM = BaselineTable(np.array([[0.30 + 0.02 * i] * 3 for i in range(7)]), "load test")


def _check_compare(name: str, got: dict, expected: dict, sig_part: str, not_in_sig: str | None = None) -> float:
    """The session's system table equals the API's, holds only its own systems, and carries its settings."""
    assert set(got) == set(expected), f"{name}: systems {sorted(got)} instead of {sorted(expected)}"
    worst = 0.0
    for system, (p, r, f) in expected.items():
        row = got[system]
        assert sig_part in row["signature"], (name, row["signature"])
        if not_in_sig:
            assert not_in_sig not in row["signature"], (name, row["signature"])
        for key, value in (("P", p), ("R", r), ("F1", f)):
            worst = max(worst, abs(float(row[key]) - value))
    assert worst < 1e-5, f"{name}: max |difference| to the API {worst:.2e}"
    return worst


def _figures(values: list[float], scale: float, unit: str) -> str:
    """Median, 95th and 99th percentiles and maximum, as the README records them."""
    p50, p95, p99 = (float(np.percentile(values, q)) * scale for q in (50, 95, 99))
    digits = 0 if unit == "ms" else 2
    return (f"median {p50:.{digits}f} {unit}, 95th percentile {p95:.{digits}f} {unit}, 99th {p99:.{digits}f} {unit}, "
            f"max {max(values) * scale:.{digits}f} {unit}")


def test_six_sessions_at_once_get_the_api_numbers_and_only_their_own_data(make_server, tmp_path):
    server = make_server("six", BERTSCORE_VIZ_MAX_JOBS=1)
    files = {}
    for k, name in enumerate(["plain", "idf_layer5", "rescaled", "custom"]):
        files[name] = tmp_path / f"{name}.csv"
        files[name].write_bytes(wide_csv(3, 60, offset=700 * k, prefix=f"{name}"))
    baseline_file = tmp_path / "mine.tsv"
    baseline_file.write_text(format_baseline(CUSTOM.values))
    expected = {
        "plain": S.api_compare(files["plain"].read_bytes())[0],
        "idf_layer5": S.api_compare(files["idf_layer5"].read_bytes(), layer=5, idf=True)[0],
        "rescaled": S.api_compare(files["rescaled"].read_bytes(), rescale=True)[0],
        "custom": S.api_compare(files["custom"].read_bytes(), layer=3, rescale=True, table=CUSTOM)[0],
    }
    inspect_expected = [S.api_inspect(*PAIRS[0]), S.api_inspect(*PAIRS[1], layer=5)]

    async def inspect_session(browser, k: int, layer: int):
        page = await S.open_session(browser, server.url)
        await S.settings(page, layer=layer)
        shown, took = await S.inspect(page, *PAIRS[k], inspect_expected[k][2])
        return page, shown, took

    async def compare_session(browser, name: str, **kw):
        page = await S.open_session(browser, server.url)
        await S.settings(page, **kw)
        return (page, *await S.compare_upload(page, files[name]))

    async def custom_session(browser):
        page = await S.open_session(browser, server.url)
        await S.go(page, "Baselines and layers", "Baselines and layers")
        await S.upload_file(page, baseline_file, index=1)
        await expect(page.get_by_text("uploaded mine.tsv", exact=False).first).to_be_visible(timeout=S.LONG)
        await S.settings(page, layer=3, rescale=True)
        await expect(page.locator("[data-testid='stSidebar'] code").first).to_contain_text("custom-rescaled")
        return (page, *await S.compare_upload(page, files["custom"]))

    async def run():
        async with async_playwright() as pw:
            browser = await launch_browser(pw)
            start = time.monotonic()
            results = await asyncio.gather(
                inspect_session(browser, 0, 4), inspect_session(browser, 1, 5),
                compare_session(browser, "plain"), compare_session(browser, "idf_layer5", layer=5, idf=True),
                compare_session(browser, "rescaled", rescale=True), custom_session(browser))
            wall = time.monotonic() - start
            errors = [e for r in results for e in r[0].errors]
            await results[5][0].screenshot(path=str(ARTIFACTS / "load-six-custom.png"), full_page=True)
            await browser.close()
            return results, wall, errors

    results, wall, errors = asyncio.run(run())
    peak = server.peak_rss_mb()
    assert not errors, errors
    for k in (0, 1):
        assert results[k][1] == inspect_expected[k], (k, results[k][1], inspect_expected[k])
    worst = max(_check_compare("plain", results[2][1], expected["plain"], "_L4_no-idf_", "rescaled"),
                _check_compare("idf_layer5", results[3][1], expected["idf_layer5"], "_L5_idf_", "rescaled"),
                _check_compare("rescaled", results[4][1], expected["rescaled"], "-rescaled", "custom"),
                _check_compare("custom", results[5][1], expected["custom"], "_L3_no-idf_"))
    assert all("-custom-rescaled" in row["signature"] for row in results[5][1].values())
    queued = [r[3] for r in results[2:]]
    assert max(queued) >= 1, f"with one job slot and four uploads at once, nobody saw the queue ({queued})"
    print(f"\n[six sessions] wall {wall:.1f} s; Compare answers after "
          f"{', '.join(f'{r[2]:.1f}' for r in results[2:])} s; Inspect {results[0][2]:.1f} / {results[1][2]:.1f} s; "
          f"most jobs ahead seen in the queue per upload {queued}; max |d| to the API {worst:.1e}; "
          f"server peak RSS {peak:.0f} MB")


def test_health_and_a_small_inspect_stay_fast_while_a_large_upload_scores(make_server, tmp_path):
    server = make_server("responsive")
    big = tmp_path / "big.csv"
    big.write_bytes(wide_csv(16, 100, offset=100, prefix="big"))
    expected = [S.api_inspect(*p) for p in PAIRS]
    health: list[float] = []
    stop = threading.Event()

    def probe():
        while not stop.is_set():
            t = health_seconds(server.url, timeout=10)
            health.append(float("inf") if t is None else t)
            time.sleep(0.25)

    async def run():
        async with async_playwright() as pw:
            browser = await launch_browser(pw)
            uploader = await S.open_session(browser, server.url)
            viewer = await S.open_session(browser, server.url)
            await S.inspect(viewer, *PAIRS[0], expected[0][2])  # warm: the model is loaded before timing
            await S.go(uploader, "Compare systems", "Compare systems")
            await S.upload_file(uploader, big)
            progress = uploader.get_by_text("Embedding 16 systems", exact=False).first
            await expect(progress).to_be_visible(timeout=S.LONG)
            scoring_started = time.monotonic()
            thread = threading.Thread(target=probe)
            thread.start()
            timings, wrong = [], []
            answer = uploader.get_by_text("Best:", exact=False).first
            k = 1
            while not await answer.is_visible() and time.monotonic() - scoring_started < 600:
                pair = PAIRS[k % len(PAIRS)]
                shown, took = await S.inspect(viewer, *pair, expected[k % len(PAIRS)][2])
                during = not await answer.is_visible()
                if shown != expected[k % len(PAIRS)]:
                    wrong.append((pair, shown))
                if during:
                    timings.append(took)
                k += 1
                await asyncio.sleep(0.5)
            await expect(answer).to_be_visible(timeout=S.LONG)
            scoring = time.monotonic() - scoring_started
            stop.set()
            thread.join(15)
            await browser.close()
            return timings, wrong, scoring

    timings, wrong, scoring = asyncio.run(run())
    assert not wrong, wrong
    assert timings, "the upload finished before a single Inspect could be timed"
    print(f"\n[responsiveness] 16 x 100 upload scored in {scoring:.1f} s after its progress bar appeared; during "
          f"it: {len(health)} health checks, {_figures(health, 1000, 'ms')}; {len(timings)} Inspect pairs, "
          f"{_figures(timings, 1, 's')}; machine load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    # The target, on every request measured: each health check and each small Inspect under 2 s.
    assert max(health) < 2.0, f"a health check took {max(health):.2f} s while the upload scored"
    assert max(timings) < 2.0, f"an Inspect pair took {max(timings):.2f} s while the upload scored"


def test_killing_the_server_mid_score_and_starting_it_again_works(make_server, tmp_path):
    server = make_server("restart")
    big = tmp_path / "big.csv"
    big.write_bytes(wide_csv(16, 100, offset=2000, prefix="kill"))
    small = tmp_path / "small.csv"
    small.write_bytes(wide_csv(3, 40, offset=2500, prefix="after"))
    expected, _ = S.api_compare(small.read_bytes())

    async def run():
        async with async_playwright() as pw:
            browser = await launch_browser(pw)
            page = await S.open_session(browser, server.url)
            await S.go(page, "Compare systems", "Compare systems")
            await S.upload_file(page, big)
            await expect(page.get_by_text("Embedding 16 systems", exact=False).first).to_be_visible(timeout=S.LONG)
            server.kill()  # SIGKILL in the middle of the model pass
            killed = time.monotonic()
            assert health_seconds(server.url, 2) is None
            restart = server.start()
            # the open tab reconnects by itself to the new server
            await expect(page.get_by_text("Settings", exact=True)).to_be_visible(timeout=S.LONG)
            await page.goto(server.url)
            await expect(page.get_by_text("Settings", exact=True)).to_be_visible(timeout=S.LONG)
            got, took, _ = await S.compare_upload(page, small)
            errors = page.errors
            await browser.close()
            return got, restart, time.monotonic() - killed, took, errors

    got, restart, back, took, errors = asyncio.run(run())
    assert not errors, f"the page raised in the browser across the kill and restart: {errors}"
    worst = _check_compare("after restart", got, expected, "_L4_no-idf_")
    assert server.proc.poll() is None
    print(f"\n[kill and restart] server healthy {restart:.1f} s after the restart command; an upload scored "
          f"{back:.1f} s after the kill ({took:.1f} s for the upload itself); max |d| to the API {worst:.1e}; "
          "no page errors")


#: The slowest files to read found at the default limits (50 MB, 200,000 rows, 500 columns; JSON 64 levels deep):
#: every one is read in a worker process (serving/isolated.py). Each is a name and a function making its bytes.
WORST_UPLOADS = {
    # 200,000 JSON Lines records, each with a value nested 60 levels (the depth limit is 64): the slowest per byte
    "nested.jsonl": lambda: b"".join(b'{"reference": "x", "sysA": ' + b"[" * 60 + b"1" + b"]" * 60 + b"}\n"
                                     for _ in range(200_000)),
    # one CSV line of `,"x` repeated to 49 MB: 58 s in csv.Sniffer before (the issue's case, now at the byte limit)
    "quotes.csv": lambda: b"reference,sysA\n" + b',"x' * (49 * 2**20 // 3),
}


def _responsive_while(server, busy, done, timeout: float = 1200):
    """Health checks (every 0.25 s) and Inspect pairs (one after the other, in a second browser session) while
    ``busy(page)`` keeps one session working until ``done(page)`` is true. Returns the health seconds, the Inspect
    seconds, wrong Inspect answers and the busy seconds."""
    expected = [S.api_inspect(*p) for p in PAIRS]
    health: list[float] = []
    stop = threading.Event()

    def probe():
        while not stop.is_set():
            t = health_seconds(server.url, timeout=10)
            health.append(float("inf") if t is None else t)
            time.sleep(0.25)

    async def run():
        async with async_playwright() as pw:
            browser = await launch_browser(pw)
            worker = await S.open_session(browser, server.url)
            viewer = await S.open_session(browser, server.url)
            await S.inspect(viewer, *PAIRS[0], expected[0][2])  # warm: the model is loaded before timing
            await busy(worker)
            started = time.monotonic()
            thread = threading.Thread(target=probe)
            thread.start()
            timings, wrong, k = [], [], 1
            while not await done(worker) and time.monotonic() - started < timeout:
                shown, took = await S.inspect(viewer, *PAIRS[k % len(PAIRS)], expected[k % len(PAIRS)][2])
                if shown != expected[k % len(PAIRS)]:
                    wrong.append(shown)
                timings.append(took)
                k += 1
                await asyncio.sleep(0.5)
            busy_seconds = time.monotonic() - started
            stop.set()
            thread.join(15)
            errors = worker.errors + viewer.errors
            await browser.close()
            return timings, wrong, busy_seconds, errors

    timings, wrong, busy_seconds, errors = asyncio.run(run())
    return health, timings, wrong, busy_seconds, errors


@pytest.mark.parametrize("name", sorted(WORST_UPLOADS))
def test_health_and_inspect_stay_fast_while_the_worst_upload_is_read(make_server, tmp_path, name):
    server = make_server(f"worst-{name}")
    path = tmp_path / name
    path.write_bytes(WORST_UPLOADS[name]())

    async def busy(page):
        await S.go(page, "Compare systems", "Compare systems")
        await S.upload_file(page, path)

    async def done(page):  # the file is read: its mapping control, its problems or its answer shows
        for text in ("Column mapping", "problem(s)", "Best:", "could not be read"):
            if await page.get_by_text(text, exact=False).first.is_visible():
                return True
        return False

    health, timings, wrong, busy_seconds, errors = _responsive_while(server, busy, done)
    assert not wrong and not errors, (wrong, errors)
    assert timings, "the file was read before a single Inspect could be timed"
    print(f"\n[worst upload {name}, {path.stat().st_size / 2**20:.1f} MB] read in {busy_seconds:.1f} s; during it: "
          f"{len(health)} health checks, {_figures(health, 1000, 'ms')}; {len(timings)} Inspect pairs, "
          f"{_figures(timings, 1, 's')}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    assert max(health) < 2.0, f"a health check took {max(health):.2f} s while {name} was read"
    assert max(timings) < 2.0, f"an Inspect pair took {max(timings):.2f} s while {name} was read"


def test_health_and_inspect_stay_fast_while_8_x_20000_pairs_score(make_server, tmp_path):
    """The issue's second case: one session scores 8 systems x 20,000 segments (minutes), another uses Inspect.
    ``BERTSCORE_VIZ_LOAD_ROWS`` sets the segments (default 20,000)."""
    rows = int(os.environ.get("BERTSCORE_VIZ_LOAD_ROWS", "20000"))
    big = tmp_path / "big.csv"
    big.write_bytes(wide_csv(8, rows, offset=0, prefix="big", corpus="news"))
    server = make_server("eight", BERTSCORE_VIZ_UPLOAD_MB=max(50, big.stat().st_size / 10**6 + 1),
                         BERTSCORE_VIZ_UPLOAD_ROWS=rows + 10)

    async def busy(page):
        await S.go(page, "Compare systems", "Compare systems")
        await S.upload_file(page, big)
        await expect(page.get_by_text("Embedding 8 systems", exact=False).first).to_be_visible(timeout=S.LONG)

    async def done(page):
        return await page.get_by_text("Best:", exact=False).first.is_visible()

    health, timings, wrong, busy_seconds, errors = _responsive_while(server, busy, done, timeout=3600)
    assert not wrong and not errors, (wrong, errors)
    print(f"\n[8 x {rows:,} scoring] {busy_seconds:.0f} s after its progress bar appeared; during it: {len(health)} "
          f"health checks, {_figures(health, 1000, 'ms')}; {len(timings)} Inspect pairs, {_figures(timings, 1, 's')};"
          f" server peak RSS {server.peak_rss_mb():.0f} MB; load average {os.getloadavg()[0]:.1f}")
    assert max(health) < 2.0, f"a health check took {max(health):.2f} s while 8 x {rows} pairs scored"
    assert max(timings) < 2.0, f"an Inspect pair took {max(timings):.2f} s while 8 x {rows} pairs scored"
