"""The first hour's Compare upload (issue 40): a 16 systems x 100 segments upload of summary-length texts in a real
browser, from the upload to BERTScore's full results (answer, system table, tabs), against ``Scorer.score`` of the
same 1,600 pairs in this process (the engine's own time); then until sacrebleu's chrF, BLEU and TER have joined
the page or been left out with their reason (they run in the background with a progress bar).

The target: results within 1.25x the engine's time (before issue 40: 366 s against 12.2 s, 0.03 of the engine's
speed, while TER ran first). Engine and page run in the same invocation, the engine first (its model load not
counted), then the page on a fresh server (its model load not counted: the page is opened and settled first).

Run:  python bench/bench_compare_first_hour.py                          (16 x 100 x 70 words)
      python bench/bench_compare_first_hour.py --systems 4 --segments 20 (quick)
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from common import ROOT  # noqa: E402,F401 (sets the import path and offline mode first)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_app_browser import settle, start, write_csv  # noqa: E402
from bench_compare import run_engine  # noqa: E402

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def page_times(url: str, csv_path: Path) -> dict[str, float]:
    from playwright.sync_api import expect, sync_playwright

    out: dict[str, float] = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
        page.goto(url)
        page.get_by_role("link", name="Compare systems").click(timeout=120_000)
        page.get_by_role("heading", name="Compare systems").wait_for(timeout=120_000)
        settle(page)
        main = page.locator("[data-testid='stMain']")
        t0 = time.perf_counter()
        page.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(str(csv_path))
        expect(page.get_by_text("Best:", exact=False).first).to_be_visible(timeout=900_000)
        expect(main.get_by_role("tab", name="Segments")).to_be_visible(timeout=900_000)
        out["results_s"] = time.perf_counter() - t0
        progress = main.get_by_text("in the background", exact=False)
        out["progress_shown"] = float(progress.count() > 0)
        deadline = time.perf_counter() + 1800
        while time.perf_counter() < deadline:
            if progress.count() == 0:
                break
            page.wait_for_timeout(500)
        settle(page, 900_000)
        out["sentence_metrics_s"] = time.perf_counter() - t0
        text = main.inner_text()
        out["ter_left_out"] = float("TER was not computed" in text or "TER was stopped" in text)
        out["chrf_shown"] = float("chrF2|" in text)
        browser.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--systems", type=int, default=16)
    ap.add_argument("--segments", type=int, default=100)
    ap.add_argument("--words", type=int, default=70)
    args = ap.parse_args()
    engine = run_engine(args.systems, args.segments, args.words)["engine_score_s"]
    print(f"engine: Scorer.score of {args.systems * args.segments:,} pairs: {engine:.1f} s", flush=True)
    kept = log = None
    with tempfile.TemporaryDirectory() as tmp:
        csv_path = Path(tmp) / "summaries.csv"
        write_csv(csv_path, args.systems, args.segments, args.words)
        proc, url = start(ROOT, Path(tmp) / "server.log")
        try:
            t = page_times(url, csv_path)
        finally:
            proc.terminate()
            proc.wait(30)
        log = (Path(tmp) / "server.log").read_text(encoding="utf-8", errors="replace")
        kept = ROOT / "bench" / "results" / "first_hour_server.log"
        kept.parent.mkdir(exist_ok=True)
        kept.write_text(log, encoding="utf-8")
    print(f"page: upload to full BERTScore results (answer, table, tabs): {t['results_s']:.1f} s "
          f"= {t['results_s'] / engine:.2f}x the engine (target <= 1.25x)")
    print(f"page: sentence metrics progress shown: {bool(t['progress_shown'])}; done or left out after "
          f"{t['sentence_metrics_s']:.1f} s; chrF shown: {bool(t['chrf_shown'])}; TER left out with its reason: "
          f"{bool(t['ter_left_out'])}")
    print(f"server log ({kept}): {len(log.splitlines())} lines, {log.count('missing ScriptRunContext')} of them "
          f"'missing ScriptRunContext', {log.count('detokenize')} sacrebleu detokenize warnings, "
          f"{log.count('Traceback')} tracebacks")


if __name__ == "__main__":
    main()
