"""Scoring on Ray against scoring in one process, on this machine, measured in one run.

Pairs: sentences of ``data/newstest2017-english`` paired with other sentences of it, each text made unique with a
counter (`` #17``) so that no embedding cache hides work; one reference per candidate, one system, the bundled
model at its default layer, no idf.

* in-process: ``Scorer().score(candidates, references)`` with all of torch's threads (embedding cache emptied).
* Ray, 1 worker: :func:`bertscore_viz.distributed.jobs.score_files` on a local Ray instance, one actor with every CPU as
  torch threads, input read from a Parquet file, output written as Parquet parts and merged.
* Ray, 2 workers: two actors with half the CPUs each.

The three run in rotating order in each round; times are wall clock including input/output, the ratio is
in-process throughput / Ray throughput turned around (above 1 = Ray faster). Ray's start-up (``ray.init``) and the
actor pool's start-up (model load, until the first block) are reported separately, and the steady state without
them.

Per-block overhead: the same pairs as 1 block and as 40 blocks (1 worker); (difference) / (extra blocks).

Memory (``--memory-pairs``, default 100,000): a fresh driver process (it has loaded no model, unlike this one)
joins the same Ray instance and scores the pairs with 2 workers; it prints the largest peak RSS of a worker process
(reported by the worker: model, one block, its embedding cache), its own peak RSS, what it held before reading the
input (Python, pyarrow, transformers and torch imported for the configuration check, Ray's client), and the
difference per pair: the driver's memory per pair.

Run:  python bench/bench_ray.py                 (20,000 pairs, 1 round, memory at 100,000 pairs)
      python bench/bench_ray.py --quick         (a smoke run: 400 pairs, memory at 1,000 pairs, small blocks)
      python bench/bench_ray.py --pairs 2000 --memory-pairs 5000 --rounds 3
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import NEWSTEST, ROOT  # noqa: E402 (sets the import path and offline mode first)

from bertscore_viz.distributed.options import ScoreOptions  # noqa: E402 (no Ray, no torch: a light module)


def make_pairs(n: int) -> tuple[list[str], list[str]]:
    from bertscore_viz.rescaling import baseline_compute as bc

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


def _rss_mb() -> float:
    """This process's peak RSS, MB (the engine's measure: VmHWM on Linux, not inherited from the parent)."""
    from bertscore_viz.distributed.pool import peak_rss_mb

    return peak_rss_mb()


def memory_run(src: Path, out: Path, address: str, pairs: int, block_segments: int, cpus: int) -> int:
    """The driver of the memory measurement (a fresh process): joins ``address``, scores ``src`` with 2 workers."""
    from bertscore_viz.distributed import jobs as distributed

    distributed.connect(address)
    import pyarrow.parquet  # noqa: F401  what score_files imports anyway (transformers brings torch): the fixed part
    from transformers import AutoConfig  # noqa: F401  (the lazy module loads torch here)

    before = _rss_mb()
    t = time.perf_counter()
    run = distributed.score_files(src, out, ScoreOptions(workers=2, cpus_per_worker=max(1, cpus // 2),
                                                         block_segments=block_segments))
    peak = _rss_mb()
    print(f"{pairs:,} pairs, 2 workers: {time.perf_counter() - t:.0f} s")
    print(f"peak RSS per worker: {run.worker_peak_rss_mb:,.0f} MB (embedding cache bound "
          f"{distributed.DEFAULT_WORKER_CACHE_MB} MB)")
    print(f"driver: peak RSS {peak:,.0f} MB; {before:,.0f} MB before reading the input (Python, Ray client, pyarrow, "
          f"transformers and torch); "
          f"{(peak - before) * 2**20 / pairs:,.0f} bytes per pair above that")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", type=int, default=20_000)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--block-segments", type=int, default=1000)
    ap.add_argument("--memory-pairs", type=int, default=100_000, help="pairs for the peak-memory run (0: skip)")
    ap.add_argument("--quick", action="store_true", help="a smoke run: 400 pairs, memory at 1,000, blocks of 100")
    ap.add_argument("--memory-run", nargs=3, metavar=("SRC", "OUT", "ADDRESS"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    cpus = os.cpu_count() or 1
    if args.quick:
        args.pairs, args.memory_pairs, args.block_segments = 400, 1000, 100
    if args.memory_run:
        src, out, address = args.memory_run
        return memory_run(Path(src), Path(out), address, args.memory_pairs, args.block_segments, cpus)

    import ray
    import torch

    from bertscore_viz.distributed import jobs as distributed
    from bertscore_viz.engine.cache import CACHE
    from bertscore_viz.engine.scorer import Scorer

    tmp = Path(tempfile.mkdtemp(prefix="bench_ray_"))
    cands, refs = make_pairs(args.pairs)
    src = write_parquet(tmp / "pairs.parquet", cands, refs)
    print(f"{args.pairs:,} pairs (newstest2017 sentences, unique texts), bundled model, default layer; "
          f"{cpus} CPUs, torch threads in-process {torch.get_num_threads()}; blocks of {args.block_segments:,}")

    t = time.perf_counter()
    ray.init(address="local", num_cpus=cpus, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    distributed.connect()
    print(f"Ray start-up (ray.init, a local instance): {time.perf_counter() - t:.1f} s")

    scorer = Scorer()
    scorer.score(cands[:16], refs[:16])  # model loaded: in-process timing excludes the load, as Ray's steady state
    times: dict[str, list[float]] = {"in-process": [], "ray-1": [], "ray-2": []}
    steady: dict[str, list[float]] = {"ray-1": [], "ray-2": []}
    startup: dict[str, list[float]] = {"ray-1": [], "ray-2": []}
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
                run = distributed.score_files(src, out, ScoreOptions(
                    workers=w, cpus_per_worker=max(1, cpus // w), block_segments=args.block_segments))
                startup[who].append(run.startup_seconds)
                steady[who].append(run.seconds - run.startup_seconds)
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

    # per-block overhead: the same pairs as 1 block and as 40 blocks, one worker, start-up left out
    n_small = min(2000, args.pairs)
    small = write_parquet(tmp / "small.parquet", cands[:n_small], refs[:n_small])
    per: dict[int, list[float]] = {}
    many = max(1, n_small // 40)
    for segs in (n_small, many, n_small, many):
        out = tmp / f"blocks-{segs}"
        run = distributed.score_files(small, out, ScoreOptions(workers=1, cpus_per_worker=cpus, block_segments=segs))
        per.setdefault(segs, []).append(run.seconds - run.startup_seconds)
        shutil.rmtree(out, ignore_errors=True)
    one, split = statistics.median(per[n_small]), statistics.median(per[many])
    extra = -(-n_small // many) - 1
    print(f"per-block overhead: {n_small:,} pairs as 1 block {one:.1f} s, as {extra + 1} blocks {split:.1f} s -> "
          f"{(split - one) / max(1, extra) * 1000:.0f} ms per extra block")

    if args.memory_pairs:
        mc, mr = make_pairs(args.memory_pairs)
        big = write_parquet(tmp / "big.parquet", mc, mr)
        del mc, mr
        address = ray.get_runtime_context().gcs_address
        cmd = [sys.executable, str(Path(__file__).resolve()), "--memory-run", str(big), str(tmp / "big-out"), address,
               "--memory-pairs", str(args.memory_pairs), "--block-segments", str(args.block_segments)]
        proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
        print(proc.stdout, end="")
        if proc.returncode:
            print(f"memory run failed ({proc.returncode}): {proc.stderr[-2000:]}")
    shutil.rmtree(tmp, ignore_errors=True)
    ray.shutdown()
    print("(other processes were running on this machine; the ratios come from one run, alternating)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
