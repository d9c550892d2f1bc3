"""Scoring on Ray against scoring in one process, on this machine, measured in one run.

Pairs: sentences of ``data/newstest2017-english`` paired with other sentences of it, each text made unique with a
counter (`` #17``) so that no embedding cache hides work; one reference per candidate, one system, the bundled
model at its default layer, no idf.

* in-process: ``Scorer().score(candidates, references)`` with all of torch's threads (embedding cache emptied).
* Ray, 1 worker: :func:`bertscore_viz.distributed.score_files` on a local Ray instance, one actor with every CPU as
  torch threads, input read from a Parquet file, output written as Parquet parts and merged.
* Ray, 2 workers: two actors with one thread each.
The three run in rotating order in each round; times are wall clock including input/output, the ratio is
in-process time / Ray time (above 1 = Ray faster). Ray's start-up (``ray.init``) and the actor pool's start-up
(model load, until the first block) are reported separately, and the steady state without them.

Per-block overhead: the same pairs as 1 block and as many small blocks (1 worker); (difference) / (extra blocks).
Peak memory per worker: the largest peak RSS of a worker process (reported by the worker) for ``--memory-pairs``.

Run:  python bench/bench_ray.py                       (20,000 pairs, 1 round, memory at 100,000 pairs)
      python bench/bench_ray.py --pairs 2000 --memory-pairs 5000   (quick check)
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from common import NEWSTEST  # noqa: E402 (sets the import path and offline mode first)


def make_pairs(n: int) -> tuple[list[str], list[str]]:
    from bertscore_viz import baseline_compute as bc

    sents = list(bc.read_corpus(NEWSTEST).sentences)
    m = len(sents)
    cands = [f"{sents[i % m]} #{i}" for i in range(n)]
    refs = [f"{sents[(7 * i + 1) % m]} #{i}" for i in range(n)]
    return cands, refs


def write_parquet(path: Path, cands: list[str], refs: list[str]) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"reference": refs, "candidate": cands}), path)
    return path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", type=int, default=20_000)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--block-segments", type=int, default=1000)
    ap.add_argument("--memory-pairs", type=int, default=100_000, help="pairs for the peak-memory run (0: skip)")
    args = ap.parse_args()

    import os

    import ray
    import torch

    from bertscore_viz import distributed
    from bertscore_viz.encoder import CACHE
    from bertscore_viz.scorer import Scorer

    cpus = os.cpu_count() or 1
    tmp = Path(tempfile.mkdtemp(prefix="bench_ray_"))
    cands, refs = make_pairs(args.pairs)
    src = write_parquet(tmp / "pairs.parquet", cands, refs)
    print(f"{args.pairs:,} pairs (newstest2017 sentences, unique texts), bundled model, default layer; "
          f"{cpus} CPUs, torch threads in-process {torch.get_num_threads()}; blocks of {args.block_segments:,}")

    t = time.perf_counter()
    ray.init(num_cpus=cpus, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    distributed.connect()
    ray_init = time.perf_counter() - t
    print(f"ray.init (local instance): {ray_init:.1f} s")

    scorer = Scorer()
    scorer.score(cands[:16], refs[:16])  # model loaded: in-process timing excludes the load, as Ray's steady state
    times: dict[str, list[float]] = {"in-process": [], "ray-1": [], "ray-2": []}
    steady: dict[str, list[float]] = {"ray-1": [], "ray-2": []}
    startup: dict[str, list[float]] = {"ray-1": [], "ray-2": []}
    rss: dict[str, float] = {}
    runs = ["in-process", "ray-1", "ray-2"]
    for rnd in range(args.rounds):
        order = runs[rnd % 3:] + runs[:rnd % 3]
        for who in order:
            CACHE.clear()
            out = tmp / f"out-{who}-{rnd}"
            t = time.perf_counter()
            if who == "in-process":
                scorer.score(cands, refs)
            else:
                w = int(who[-1])
                run = distributed.score_files(src, out, workers=w, cpus_per_worker=max(1, cpus // w),
                                              block_segments=args.block_segments)
                startup[who].append(run.startup_seconds)
                steady[who].append(run.seconds - run.startup_seconds)
                rss[who] = run.worker_peak_rss_mb
            times[who].append(time.perf_counter() - t)
            shutil.rmtree(out, ignore_errors=True)
        print(f"round {rnd + 1}: " + ", ".join(f"{k} {v[-1]:.1f} s" for k, v in times.items()))
    med = {k: statistics.median(v) for k, v in times.items()}
    rate = {k: args.pairs / v for k, v in med.items()}
    print(f"\nthroughput (pairs/s, median of {args.rounds} round(s)): "
          + ", ".join(f"{k} {v:,.0f}" for k, v in rate.items()))
    print(f"Ray 1 worker / in-process throughput: {med['in-process'] / med['ray-1']:.2f} "
          f"(steady state, without actor start-up: {med['in-process'] / statistics.median(steady['ray-1']):.2f})")
    print(f"Ray 2 workers / Ray 1 worker throughput: {med['ray-1'] / med['ray-2']:.2f} "
          f"(steady state: {statistics.median(steady['ray-1']) / statistics.median(steady['ray-2']):.2f})")
    print(f"actor pool start-up (model load, until the first block): 1 worker "
          f"{statistics.median(startup['ray-1']):.1f} s, 2 workers {statistics.median(startup['ray-2']):.1f} s")
    print("peak RSS per worker: " + ", ".join(f"{k} {v:,.0f} MB" for k, v in rss.items()))

    # per-block overhead: 2,000 pairs as 1 block and as 40 blocks of 50, one worker
    small = write_parquet(tmp / "small.parquet", cands[:2000], refs[:2000])
    per = {}
    for segs in (2000, 50, 2000, 50):
        out = tmp / f"blocks-{segs}"
        t = time.perf_counter()
        run = distributed.score_files(small, out, workers=1, cpus_per_worker=cpus, block_segments=segs)
        per.setdefault(segs, []).append(time.perf_counter() - t - run.startup_seconds)
        shutil.rmtree(out, ignore_errors=True)
    one, many = statistics.median(per[2000]), statistics.median(per[50])
    print(f"per-block overhead: 2,000 pairs as 1 block {one:.1f} s, as 40 blocks {many:.1f} s -> "
          f"{(many - one) / 39 * 1000:.0f} ms per extra block")

    if args.memory_pairs:
        mc, mr = make_pairs(args.memory_pairs)
        big = write_parquet(tmp / "big.parquet", mc, mr)
        t = time.perf_counter()
        run = distributed.score_files(big, tmp / "big-out", workers=2, cpus_per_worker=max(1, cpus // 2),
                                      block_segments=args.block_segments)
        driver = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"{args.memory_pairs:,} pairs, 2 workers: {time.perf_counter() - t:.0f} s, peak RSS per worker "
              f"{run.worker_peak_rss_mb:,.0f} MB (embedding cache bound {distributed.DEFAULT_WORKER_CACHE_MB} MB), "
              f"driver peak RSS {driver:,.0f} MB")
    shutil.rmtree(tmp, ignore_errors=True)
    ray.shutdown()
    print("(other processes were running on this machine; the ratios come from one run, alternating)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
