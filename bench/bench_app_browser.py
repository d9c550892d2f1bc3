"""Browser re-render times of the Compare page at 16 systems x 100 segments, this tree against the old page.

Two real Streamlit servers (127.0.0.1): this working tree, and ``--old REV`` (default ``b76e346``, the commit before
issue 11's app work) exported with ``git archive`` into a temporary directory. Debian's Chromium, driven by
Playwright, does the same steps on each, alternating old and new in every round so that the ratio survives other
processes on the machine:

  upload          cold upload of the CSV to the answer and the system table (the model pass: 16 x 100 x all layers);
  idf on/off      the sidebar's idf toggle, until the new signature is shown and the run is over;
  rescale on/off  the sidebar's rescaling toggle, until the signature ends (or no longer ends) in -rescaled;
  Holm on/off     the Holm toggle under the answer, until "Holm-adjusted" is shown (gone) (new page only);
  baseline        another baseline system on the Significance tab (the first tab);
  metric          the Significance tab's metric set to P, until the sentences are about P;
  tab             opening the Segments tab;
  A change        a new "System A" on the Segments tab, until the run is over;
  B change        a new "System B" on the Segments tab;
  drill tab       opening the Drill-down tab (one segment explained: A and B side by side on the new page);
  drill A         a new "System A" in the drill-down (the old page: its "System" choice), until the run is over.

"Over" = the app's ``data-test-script-state`` is ``notRunning`` and no element is stale. A step the page does not
have (Holm on the old page) is shown as n/a. Each server loads the model once; a fresh browser context per round
(new session: the upload is a real model pass, the embedding cache of the server process is warm from round 2 on, as
for a second user).

Run:  python bench/bench_app_browser.py                      (16 x 100 x 60 words, 3 rounds, old = b76e346)
      python bench/bench_app_browser.py --old REV            (another old revision, e.g. main)
      python bench/bench_app_browser.py --systems 4 --segments 20 --rounds 1   (quick)
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request
from pathlib import Path

from common import ROOT  # noqa: E402 (sets the import path and offline mode first)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_compare import make_dataset  # noqa: E402

SETTLED = "[data-testid='stApp'][data-test-script-state='notRunning']"


def write_csv(path: Path, n_systems: int, n_segments: int, words: int) -> None:
    ds = make_dataset(n_systems, n_segments, words)
    names = {old: f"M{k}" for k, old in enumerate(ds.systems)}  # M0..M15: natural order matters
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["segment_id", "reference"] + list(names.values()))
        for i in range(n_segments):
            w.writerow([f"d{i + 1}", ds.references[i][0]] + [ds.systems[old][i] for old in names])


def export_old(rev: str, into: Path) -> Path:
    """The app at ``rev`` as plain files (no worktree, nothing written into the repository)."""
    archive = into / "old.tar"
    with archive.open("wb") as f:
        subprocess.run(["git", "-C", str(ROOT), "archive", rev], stdout=f, check=True)
    with tarfile.open(archive) as t:
        t.extractall(into / "old", filter="data")
    return into / "old"


def start(app_dir: Path, log: Path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", PYTHONPATH=str(app_dir))
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(app_dir / "app.py"), "--server.headless", "true",
         "--server.port", str(port), "--server.address", "127.0.0.1", "--server.fileWatcherType", "none",
         "--browser.gatherUsageStats", "false"],
        cwd=app_dir, stdout=log.open("w"), stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2):
                return proc, url
        except OSError:
            time.sleep(0.5)
    proc.kill()
    raise SystemExit(f"server in {app_dir} did not start; see {log}")


def settle(page, timeout: float = 300_000) -> None:
    page.wait_for_timeout(50)  # let the click reach the server before testing for "not running"
    page.wait_for_selector(SETTLED, timeout=timeout)
    page.wait_for_function("document.querySelectorAll('[data-stale=\"true\"]').length === 0", timeout=timeout)


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def choose(page, label: str, option: str, until=None) -> float:
    """Seconds from the click on ``option`` of the visible selectbox labelled ``label`` to the end of the run
    (opening the list is not the app's work); ``until``: a locator that must then be visible."""
    from playwright.sync_api import expect

    box = page.get_by_test_id("stSelectbox").filter(has=page.get_by_text(label, exact=True)).filter(visible=True)
    item = page.get_by_role("option", name=option, exact=True)
    for attempt in range(3):  # a click during a late re-render can land on the box without opening its list
        settle(page)
        box.first.click()
        try:
            item.wait_for(timeout=10_000)
            break
        except Exception:  # noqa: BLE001  playwright's TimeoutError: press Escape and click again
            if attempt == 2:
                raise
            page.keyboard.press("Escape")
    t0 = time.perf_counter()
    item.click()
    if until is not None:
        expect(until).to_be_visible(timeout=120_000)
    settle(page)
    return time.perf_counter() - t0


def one_round(browser, url: str, csv_path: Path, n_systems: int) -> dict[str, float | None]:
    from playwright.sync_api import expect

    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = ctx.new_page()
    out: dict[str, float | None] = {}
    main = page.locator("[data-testid='stMain']")
    sidebar = page.locator("[data-testid='stSidebar']")
    signature = main.locator("[data-testid='stCode']").filter(has_text="signature:")
    try:
        page.goto(url)
        page.get_by_role("link", name="Compare systems").click(timeout=120_000)
        page.get_by_role("heading", name="Compare systems").wait_for(timeout=120_000)
        settle(page)

        def upload():
            page.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(str(csv_path))
            expect(page.get_by_text("Best:", exact=False).first).to_be_visible(timeout=600_000)
            settle(page, 600_000)

        out["upload"] = timed(upload)

        def toggle(where, label: str, shown, present: bool):
            def step():
                where.get_by_text(label, exact=True).click()
                if present:
                    expect(shown.first).to_be_visible(timeout=120_000)
                else:
                    expect(shown).to_have_count(0, timeout=120_000)
                settle(page)
            return step

        out["idf on"] = timed(toggle(sidebar, "idf weighting", main.get_by_text("_idf_", exact=False), True))
        out["idf off"] = timed(toggle(sidebar, "idf weighting", main.get_by_text("_no-idf_", exact=False), True))
        rescaled = signature.filter(has_text="-rescaled")
        out["rescale on"] = timed(toggle(sidebar, "Rescale with baseline", rescaled, True))
        out["rescale off"] = timed(toggle(sidebar, "Rescale with baseline", rescaled, False))
        holm = main.get_by_text("Holm correction for multiple comparisons", exact=True)
        if holm.count():
            adjusted = main.get_by_text("Holm-adjusted over", exact=False)
            out["Holm on"] = timed(toggle(main, "Holm correction for multiple comparisons", adjusted, True))
            out["Holm off"] = timed(toggle(main, "Holm correction for multiple comparisons", adjusted, False))
        else:
            out["Holm on"] = out["Holm off"] = None
        out["baseline"] = choose(page, "Baseline system", f"M{n_systems - 1}")
        out["metric"] = choose(page, "Metric", "P", until=main.get_by_text(re.compile(r" on P[ :]")).first)

        def tab(name: str, ready: str):
            def step():
                page.get_by_role("tab", name=name, exact=True).click()
                page.get_by_test_id("stSelectbox").filter(has=page.get_by_text(ready, exact=True)) \
                    .filter(visible=True).first.wait_for(timeout=120_000)
                settle(page)
            return step

        out["tab"] = timed(tab("Segments", "System A"))
        out["A change"] = choose(page, "System A", f"M{n_systems // 2}")
        out["B change"] = choose(page, "System B", f"M{(n_systems // 2 + 1) % n_systems}")
        page.get_by_role("tab", name="Drill-down", exact=True).click()
        page.get_by_text("Segment", exact=True).filter(visible=True).first.wait_for(timeout=120_000)
        has_ab = page.get_by_test_id("stSelectbox").filter(has=page.get_by_text("System A", exact=True)) \
            .filter(visible=True).count() > 0
        page.get_by_role("tab", name="Segments", exact=True).click()
        settle(page)
        out["drill tab"] = timed(tab("Drill-down", "System A" if has_ab else "System"))
        out["drill A"] = choose(page, "System A" if has_ab else "System", f"M{(n_systems // 2 + 2) % n_systems}")
    except Exception:
        page.screenshot(path=str(Path(tempfile.gettempdir()) / "bench_app_browser_failure.png"), full_page=True)
        raise
    finally:
        ctx.close()
    return out


def _median(values: list) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--systems", type=int, default=16)
    ap.add_argument("--segments", type=int, default=100)
    ap.add_argument("--words", type=int, default=60)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--old", default="b76e346",
                    help="git revision of the old page (default b76e346: the commit before issue 11's app work)")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    tmp = Path(tempfile.mkdtemp(prefix="bench_app_browser_"))
    procs = []
    try:
        csv_path = tmp / f"systems_{args.systems}x{args.segments}.csv"
        write_csv(csv_path, args.systems, args.segments, args.words)
        old_dir = export_old(args.old, tmp)
        apps = {"old": start(old_dir, tmp / "old.log"), "new": start(ROOT, tmp / "new.log")}
        procs = [p for p, _ in apps.values()]
        times: dict[str, dict[str, list[float]]] = {k: {} for k in apps}
        chromium = shutil.which("chromium") or shutil.which("chromium-browser")
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, args=[
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
            for r in range(args.rounds):
                for name in (("old", "new") if r % 2 == 0 else ("new", "old")):
                    for step, t in one_round(browser, apps[name][1], csv_path, args.systems).items():
                        times[name].setdefault(step, []).append(t)
                    print(f"round {r + 1} {name}: " + ", ".join(f"{k} {_fmt(v[-1])}"
                                                             for k, v in times[name].items()), flush=True)
            browser.close()
        print(f"\n{args.systems} systems x {args.segments} segments, {args.rounds} rounds, median seconds "
              f"(old = {args.old}, new = this tree; other processes may be running):")
        print(f"{'step':<12} {'old':>8} {'new':>8} {'old/new':>8}")
        for step in times["new"]:
            o, n = _median(times["old"].get(step, [])), _median(times["new"][step])
            ratio = f"{o / n:8.2f}" if o is not None and n else f"{'n/a':>8}"
            print(f"{step:<12} {_fmt(o):>8} {_fmt(n):>8} {ratio}")
    finally:
        for p in procs:
            p.terminate()
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
