"""A large upload through the real app: N systems x M rows on the Compare page of a server started here (127.0.0.1,
its own port), driven by Debian's Chromium, near the server's upload limits. Prints the figures docs/DEPLOY.md
records: the limits used, the time to the answer, the progress bar as it advanced, the server's peak resident
memory, and the system table against the Python API for the same file.

    python bench/bench_load.py               # 8 systems x 20,000 rows (the issue's size; tens of minutes on 2 cores)
    python bench/bench_load.py --rows 300    # a smoke run (a minute or two)

After the app, ``Scorer.score`` scores the file's first ``--engine-rows`` rows (all systems) in a fresh process, and
the app's throughput is printed as a share of the engine's (the issue's target: at least 80%).

"Near the limits": the server runs with ``BERTSCORE_VIZ_UPLOAD_MB`` just above the file's size and
``BERTSCORE_VIZ_UPLOAD_ROWS`` equal to its rows (``--default-limits`` keeps the defaults, 50 MB and 200,000 rows).
References are newstest2017 English sentences (19,021 lines, cycled past that), each system a variant of them.
The temporary folder (the CSV) is removed at the end, also after an error or Ctrl-C.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import re
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

import common  # noqa: F401  (import path, offline hub)
from playwright.async_api import async_playwright, expect

from bertscore_viz.serving import config
from tests.load import sessions as S
from tests.load.conftest import Server, launch_browser, wide_csv

PROGRESS = re.compile(r"([\d,]+) / ([\d,]+) sentences")


def _count(text: str) -> tuple[int, int] | None:
    found = PROGRESS.search(text)
    return None if found is None else (int(found.group(1).replace(",", "")), int(found.group(2).replace(",", "")))


def run(args, tmp: Path) -> None:
    path = tmp / f"{args.systems}x{args.rows}.csv"
    path.write_bytes(wide_csv(args.systems, args.rows, prefix="sys", corpus="news"))
    size_mb = path.stat().st_size / 2**20
    # the limit just above the file as the browser counts it (the uploader's MB are 10^6 bytes: docs/DEPLOY.md)
    env = {} if args.default_limits else {"BERTSCORE_VIZ_UPLOAD_MB": str(math.ceil(path.stat().st_size / 10**6)),
                                          "BERTSCORE_VIZ_UPLOAD_ROWS": str(args.rows),
                                          "BERTSCORE_VIZ_SESSION_UPLOAD_MB": str(math.ceil(size_mb) + 1)}
    print(f"file {path.name}: {size_mb:.2f} MB, {args.rows:,} rows, {args.systems} systems; server limits: "
          + (", ".join(f"{k}={v}" for k, v in env.items()) or "the defaults (50 MB, 200,000 rows)"), flush=True)
    config.load_policy(dict(os.environ, **env))  # as the image does: unusable limits stop here, not in the page
    server = Server(env, "bench-load")
    samples: list[tuple[float, str]] = []

    async def drive():
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
                except Exception:  # noqa: BLE001  the bar went away between the two calls
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
            errors = list(page.errors)
            await browser.close()
            return took, table, errors

    try:
        server.start()
        took, table, errors = asyncio.run(drive())
        peak = server.peak_rss_mb()
    finally:
        server.stop()
    counts = [c for c in (_count(t) for _, t in samples) if c is not None]
    done = [d for d, _ in counts]
    monotone = all(a <= b for a, b in zip(done, done[1:]))
    pairs = args.systems * args.rows
    print(f"answer after {took:.1f} s ({pairs / took:.0f} pairs/s through the app)")
    print(f"progress: {len(samples)} distinct texts seen, counts {'rising' if monotone else 'NOT rising'} from "
          f"{done[0] if done else '-'} to {done[-1] if done else '-'} of {counts[-1][1] if counts else '-'} "
          f"sentences; first after {samples[0][0]:.1f} s, last after {samples[-1][0]:.1f} s" if samples else
          "progress: no progress text seen")
    print(f"server peak RSS {peak:.0f} MB; page errors: {errors or 'none'}; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (other processes may be running)")
    if args.engine_rows:
        engine_rate = _engine_rate(path, args.engine_rows)
        print(f"engine: Scorer.score on the first {args.engine_rows:,} rows' {args.systems * args.engine_rows:,} pairs "
              f"in a fresh process (model loaded first): {engine_rate:.0f} pairs/s; the app reached "
              f"{pairs / took / engine_rate:.0%} of it")
    if not args.no_check:
        expected, _ = S.api_compare(path.read_bytes())
        assert set(table) == set(expected), f"systems {sorted(table)} instead of {sorted(expected)}"
        worst = max(abs(float(table[s][k]) - v) for s, prf in expected.items() for k, v in zip(("P", "R", "F1"), prf))
        print(f"system table against the Python API: max |d| {worst:.1e} "
              f"({'equal within 1e-5' if worst < 1e-5 else 'DIFFERENT'})")


ENGINE_CHILD = """
import sys, time
sys.path.insert(0, sys.argv[1])
import common  # noqa: F401
from bertscore_viz import Scorer
try:
    from bertscore_viz.files import upload
except ImportError:
    from bertscore_viz import upload
ds = upload.parse_upload(open(sys.argv[2], "rb").read(), "x.csv")
n = int(sys.argv[3])
cands = [c for name in ds.systems for c in ds.systems[name][:n]]
refs = [g for _ in ds.systems for g in ds.references[:n]]
scorer = Scorer()
_ = scorer.encoder
t0 = time.perf_counter()
scorer.score(cands, refs)
print(len(cands) / (time.perf_counter() - t0))
"""


def _engine_rate(path: Path, rows: int) -> float:
    """Pairs per second of ``Scorer.score`` on the file's first ``rows`` rows (every system), in a fresh process
    with the model loaded before the clock starts, as the server has it."""
    import subprocess

    here = str(Path(__file__).resolve().parent)
    out = subprocess.run([sys.executable, "-c", ENGINE_CHILD, here, str(path), str(rows)], check=True,
                         capture_output=True, text=True, env=dict(os.environ, HF_HUB_OFFLINE="1"))
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--systems", type=int, default=8)
    ap.add_argument("--rows", type=int, default=20_000)
    ap.add_argument("--default-limits", action="store_true", help="keep the server's default upload limits")
    ap.add_argument("--no-check", action="store_true", help="skip the API comparison (it scores everything again)")
    ap.add_argument("--engine-rows", type=int, default=2500,
                    help="rows of the file scored by Scorer.score in a fresh process for the app/engine ratio "
                         "(0: skip)")
    args = ap.parse_args()
    S.LONG = 4 * 3600 * 1000
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # `timeout` or kill: still stop the server, tidy up
    tmp = Path(tempfile.mkdtemp(prefix="bench-load-"))
    try:
        run(args, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
