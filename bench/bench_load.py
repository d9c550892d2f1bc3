"""A large upload through the real app: N systems x M rows on the Compare page of a server started here (127.0.0.1,
its own port), driven by Debian's Chromium. Prints the progress bar as it advances, the time to the answer, the
server's peak resident memory, and checks the system table against the Python API.

    python bench/bench_load.py                      # 8 systems x 20,000 rows (the issue's size; tens of minutes on 2 cores)
    python bench/bench_load.py --rows 2000          # scaled down

References are newstest2017 English sentences (19,021 lines, cycled past that), each system a variant of them.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path

import common  # noqa: F401  (import path, offline hub)

from playwright.async_api import async_playwright, expect

from tests.load import sessions as S
from tests.load.conftest import Server, launch_browser, wide_csv


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--systems", type=int, default=8)
    ap.add_argument("--rows", type=int, default=20_000)
    ap.add_argument("--no-check", action="store_true", help="skip the API comparison (it scores everything again)")
    args = ap.parse_args()
    S.LONG = 4 * 3600 * 1000
    tmp = Path(tempfile.mkdtemp(prefix="bench-load-"))
    path = tmp / f"{args.systems}x{args.rows}.csv"
    path.write_bytes(wide_csv(args.systems, args.rows, prefix="sys", corpus="news"))
    print(f"file {path.name}: {path.stat().st_size / 2**20:.1f} MB, {args.rows:,} rows, {args.systems} systems")
    server = Server({}, "bench-load")
    server.start()
    samples: list[tuple[float, str]] = []

    async def run():
        async with async_playwright() as pw:
            browser = await launch_browser(pw)
            page = await S.open_session(browser, server.url)
            await S.go(page, "Compare systems", "Compare systems")
            start = time.monotonic()
            await S.upload_file(page, path)
            bar = page.get_by_text("Embedding", exact=False).first
            await expect(bar).to_be_visible(timeout=S.LONG)
            answer = page.get_by_text("Best:", exact=False).first
            last = ""
            while not await answer.is_visible():
                try:
                    text = (await bar.inner_text(timeout=2000)).strip() if await bar.count() else last
                except Exception:  # the bar went away between the two calls
                    text = last
                if text != last:
                    samples.append((time.monotonic() - start, text))
                    if len(samples) % 10 == 1:
                        print(f"  {samples[-1][0]:7.1f} s  {text}  (server RSS peak {server.peak_rss_mb():.0f} MB)",
                              flush=True)
                    last = text
                await asyncio.sleep(1.0)
            took = time.monotonic() - start
            table = await S.system_table(page)
            await browser.close()
            return took, table

    try:
        took, table = asyncio.run(run())
        peak = server.peak_rss_mb()
    finally:
        server.stop()
    pairs = args.systems * args.rows
    print(f"answer after {took:.1f} s ({pairs / took:.0f} pairs/s through the app), {len(samples)} distinct "
          f"progress texts, last: {samples[-1][1] if samples else '-'}; server peak RSS {peak:.0f} MB; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (other processes running)")
    if not args.no_check:
        expected, _ = S.api_compare(path.read_bytes())
        worst = max(abs(float(table[s][k]) - v) for s, prf in expected.items() for k, v in zip(("P", "R", "F1"), prf))
        print(f"system table against the Python API: max |d| {worst:.1e}")


if __name__ == "__main__":
    main()
