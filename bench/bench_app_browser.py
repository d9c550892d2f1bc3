"""Browser re-render times of the Compare page at 16 systems x 100 segments, this branch against the old page.

Two real Streamlit servers (127.0.0.1): this working tree, and ``--old REV`` (default ``main``) exported with
``git archive`` into a temporary directory. Debian's Chromium, driven by Playwright, does the same steps on each,
alternating old and new in every round so that the ratio survives other processes on the machine:

  upload     cold upload of the CSV to the answer and the system table (the model pass: 16 x 100 x all layers);
  idf on/off the sidebar's idf toggle, until the new signature is shown and the run is over;
  tab        opening the Segments tab;
  A change   a new "System A" on the Segments tab, until the run is over.

"Over" = the app's ``data-test-script-state`` is ``notRunning`` and no element is stale. Each server loads the
model once; a fresh browser context per round (new session: the upload is a real model pass, the embedding cache
of the server process is warm from round 2 on, as for a second user).

Run:  python bench/bench_app_browser.py --old REV            (16 x 100 x 60 words, 3 rounds; REV = the commit
                                                            before the change, e.g. 5417a50 for issue 11)
      python bench/bench_app_browser.py --systems 4 --segments 20 --rounds 1   (quick)
"""

from __future__ import annotations

import argparse
import csv
import os
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


def one_round(browser, url: str, csv_path: Path, a_option: str) -> dict[str, float]:
    from playwright.sync_api import expect

    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = ctx.new_page()
    out: dict[str, float] = {}
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
        idf = page.locator("[data-testid='stSidebar']").get_by_text("idf weighting")

        def idf_on():
            idf.click()
            expect(page.locator("[data-testid='stMain']").get_by_text("_idf_", exact=False).first) \
                .to_be_visible(timeout=120_000)
            settle(page)

        def idf_off():
            idf.click()
            expect(page.locator("[data-testid='stMain']").get_by_text("_no-idf_", exact=False).first) \
                .to_be_visible(timeout=120_000)
            settle(page)

        out["idf on"] = timed(idf_on)
        out["idf off"] = timed(idf_off)

        def tab():
            page.get_by_role("tab", name="Segments", exact=True).click()
            page.get_by_test_id("stSelectbox").filter(has_text="System A").first.wait_for(timeout=120_000)
            settle(page)

        out["tab"] = timed(tab)

        page.get_by_test_id("stSelectbox").filter(has_text="System A").first.click()
        option = page.get_by_role("option", name=a_option, exact=True)
        option.wait_for()

        def a_change():  # from the choice of the option (opening the list is not the app's work)
            option.click()
            settle(page)

        out["A change"] = timed(a_change)
    except Exception:
        page.screenshot(path=str(Path(tempfile.gettempdir()) / "bench_app_browser_failure.png"), full_page=True)
        raise
    finally:
        ctx.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--systems", type=int, default=16)
    ap.add_argument("--segments", type=int, default=100)
    ap.add_argument("--words", type=int, default=60)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--old", default="main", help="git revision of the old page (default main; once a change is merged, give the commit before it)")
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
                    for step, t in one_round(browser, apps[name][1], csv_path,
                                                     f"M{args.systems // 2}").items():
                        times[name].setdefault(step, []).append(t)
                    print(f"round {r + 1} {name}: " + ", ".join(f"{k} {v[-1]:.2f} s"
                                                             for k, v in times[name].items()), flush=True)
            browser.close()
        print(f"\n{args.systems} systems x {args.segments} segments, {args.rounds} rounds, median seconds "
              f"(old = {args.old}, new = this tree; other processes may be running):")
        print(f"{'step':<10} {'old':>8} {'new':>8} {'old/new':>8}")
        for step in times["new"]:
            o, n = statistics.median(times["old"][step]), statistics.median(times["new"][step])
            print(f"{step:<10} {o:8.2f} {n:8.2f} {o / n:8.2f}")
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
