"""The Agreement page's work on the WMT16 DA example (3,360 rated translations, six language pairs), timed.

  first verdict: read the file, one model pass at every layer of the bundled model, sentence chrF and BLEU, and
                 the report (correlations at every level, overall and per language pair, with their bootstrap);
  seed change:   the report again with another seed, from the kept scores (what the page recomputes when only
                 the seed or the number of resamples changes: no model pass, no sentence metric);
  bootstrap:     of that, the resampled statistics alone (every metric, 3 statistics, 1,000 resamples, overall
                 and per language pair).

With ``--app`` the seed change is also timed through the real page (Streamlit's AppTest: the page run that follows
a change of the seed widget, with its tables and figures).

Run:  python bench/bench_agreement.py [--resamples 1000] [--repeat 3] [--threads 1] [--app]
Prints one JSON object with the wall and CPU seconds (and the machine's load average: on a shared machine the wall
time also counts the time other processes held the cores; the CPU time is what a quiet core would take).
"""

from __future__ import annotations

import argparse
import json
import os
import time

T_START = time.perf_counter()
import numpy as np  # noqa: E402
import torch  # noqa: E402
from common import ROOT  # noqa: E402 (sets the import path and offline mode first)

from bertscore_viz.engine.scorer import Scorer  # noqa: E402
from bertscore_viz.evaluation import human_agreement as ha  # noqa: E402
from bertscore_viz.evaluation.correlation import agreement  # noqa: E402
from bertscore_viz.files.human_scores import parse_human_scores  # noqa: E402
from bertscore_viz.locations import EXAMPLES_DIR  # noqa: E402

EXAMPLE = EXAMPLES_DIR / "wmt16_da_to_english.csv"


def first_verdict(n_samples: int):
    start, start_cpu = time.perf_counter(), time.process_time()
    rated = parse_human_scores(EXAMPLE.read_bytes(), EXAMPLE.name)
    scorer = Scorer()
    t_model = time.perf_counter()
    scores = ha.layer_scores(scorer, rated.candidates, rated.references)
    t_sentence = time.perf_counter()
    sentence = ha.sentence_metric_scores(rated.candidates, rated.references)
    t_report = time.perf_counter()
    report = ha.report_at(scores, scorer.layer, rated.human, rated.systems, rated.groups, sentence, n_samples, 1)
    end = time.perf_counter()
    return rated, scores, sentence, scorer.layer, report, {
        "first_verdict_s": end - start, "first_verdict_cpu_s": time.process_time() - start_cpu,
        "model_pass_s": t_sentence - t_model, "sentence_metrics_s": t_report - t_sentence, "report_s": end - t_report}


def seed_change(rated, scores, sentence, layer, n_samples: int, repeat: int) -> dict:
    """Wall and CPU seconds (``time.process_time``: all of this process's threads; on a shared machine the wall
    time also counts the time other processes held the cores)."""
    times, cpu, boot, boot_cpu = [], [], [], []
    metrics = dict(zip(ha.BERTSCORE_METRICS, scores.values[layer]))
    metrics.update(sentence)
    human, groups = np.asarray(rated.human), np.asarray(rated.groups, dtype=object)
    for seed in range(2, 2 + repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        ha.report_at(scores, layer, rated.human, rated.systems, rated.groups, sentence, n_samples, seed)
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
        start, start_cpu = time.perf_counter(), time.process_time()
        agreement(metrics, human, n_samples=n_samples, seed=seed)
        for g in sorted(set(rated.groups)):
            agreement({k: np.asarray(v)[groups == g] for k, v in metrics.items()}, human[groups == g],
                      n_samples=n_samples, seed=seed)
        boot.append(time.perf_counter() - start)
        boot_cpu.append(time.process_time() - start_cpu)
    return {"seed_change_s": min(times), "seed_change_cpu_s": min(cpu), "seed_change_all_s": times,
            "bootstrap_s": min(boot), "bootstrap_cpu_s": min(boot_cpu)}


def app_seed_change(repeat: int) -> dict:
    """The page run after a seed change, through AppTest (real app, model and navigation)."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=900)
    at.run()
    at.switch_page(str(ROOT / "bertscore_viz" / "app" / "app_pages" / "agreement" / "page.py"))
    at.run()
    start = time.perf_counter()
    at.button(key="agr_example").click().run()
    first = time.perf_counter() - start
    times = []
    for seed in range(2, 2 + repeat):
        at.number_input(key="agr_seed").set_value(seed)
        start = time.perf_counter()
        at.run()
        times.append(time.perf_counter() - start)
    assert not at.exception, at.exception
    return {"app_first_verdict_s": first, "app_seed_change_s": min(times), "app_seed_change_all_s": times}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--app", action="store_true", help="also time the page through Streamlit's AppTest")
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's own setting)")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    rated, scores, sentence, layer, report, out = first_verdict(args.resamples)
    out.update(seed_change(rated, scores, sentence, layer, args.resamples, args.repeat))
    if args.app:
        out.update(app_seed_change(args.repeat))
    out.update(outputs=len(rated), groups=len(set(rated.groups)), metrics=len(report.scores),
               resamples=args.resamples, torch_threads=torch.get_num_threads(), load_average=os.getloadavg(),
               cpus=os.cpu_count(),
               since_start_s=time.perf_counter() - T_START)
    print(json.dumps({k: (round(v, 3) if isinstance(v, float) else v) for k, v in out.items()}))


if __name__ == "__main__":
    main()
