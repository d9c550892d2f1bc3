"""Engine throughput against bert-score 0.3.13, same model, same layer, alternating in one process.

Pairs: real MT output against its reference, from ``data/wmt16-da-to-english`` (six language pairs,
560 segments each). Both scorers are loaded and warmed up before timing; each timed round runs bert-score's
``BERTScorer.score`` and our ``Scorer.score`` on the same pairs, in alternating order, and our embedding cache is
emptied before every one of our "fresh" calls so that no work is carried over between rounds.

  (a) fresh pairs: one call on pairs neither scorer has seen.
  (b) four systems against the same references: four calls (the MT output and three variants of it), as a user
      comparing systems would make them. bert-score embeds the references four times; we embed them once. One
      variant is the lower-cased output: under the uncased bundled model it has the same token ids as the original,
      so our id-keyed cache embeds it for free (a real saving, but a favourable one), hence also
  (b') the same with a fourth system that changes the tokens (punctuation removed) instead of the lower-cased one.
  (c) reduced precision (bf16 on CPU, fp16 on CUDA): speed and max |dF1| against exact fp32.
  (d) memory: peak resident memory of a fresh process scoring 20,000 pairs (ours and bert-score's).

Run:  python bench/bench_engine.py            (full: all 3,360 WMT16 pairs, 3 rounds)
      python bench/bench_engine.py --quick    (a few hundred pairs, 1 round: checks that it runs)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from common import NEWSTEST, WMT16  # noqa: E402 (sets the import path and offline mode first)

LPS = ["cs-en", "de-en", "fi-en", "ro-en", "ru-en", "tr-en"]


def read(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def wmt16_pairs() -> tuple[list[str], list[str]]:
    cands, refs = [], []
    for lp in LPS:
        cands += read(WMT16 / f"DAseg-newstest2016.mt-system.{lp}")
        refs += read(WMT16 / f"DAseg-newstest2016.reference.{lp}")
    return cands, refs


def variants(cands: list[str], token_changing: bool = False) -> list[list[str]]:
    """Three more 'systems' from the MT output: a word dropped, neighbours swapped, and lower-cased (or, with
    ``token_changing``, punctuation removed, so that every system gives other token ids)."""
    drop, swap, lower = [], [], []
    for i, c in enumerate(cands):
        w = c.split()
        drop.append(" ".join(w[:i % max(len(w), 1)] + w[i % max(len(w), 1) + 1:]) or c)
        s = list(w)
        for k in range(0, len(s) - 1, 3):
            s[k], s[k + 1] = s[k + 1], s[k]
        swap.append(" ".join(s))
        lower.append("".join(ch for ch in c if ch.isalnum() or ch.isspace()) if token_changing else c.lower())
    return [cands, drop, swap, lower]


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def alternate(r: int, run_theirs, run_ours, t_theirs: list, t_ours: list):
    """One timed round of both, bert-score first in even rounds and ours first in odd ones; their outputs."""
    order = [("theirs", run_theirs), ("ours", run_ours)]
    if r % 2:
        order.reverse()
    out = {}
    for name, fn in order:
        dt, out[name] = timed(fn)
        (t_theirs if name == "theirs" else t_ours).append(dt)
    return out["theirs"], out["ours"]


def memory_child(which: str, n: int, layer: int) -> None:
    """Runs in a fresh process: score ``n`` pairs, print the peak RSS in MB."""
    import resource

    sents = list(dict.fromkeys(s for f in sorted(NEWSTEST.glob("*.en")) for s in read(f) if s.strip()))
    cands, refs = wmt16_pairs()
    pool = sents + cands + refs
    rng = np.random.default_rng(0)
    a = rng.integers(0, len(pool), n)
    b = rng.integers(0, len(pool), n)
    c, r = [pool[i] for i in a], [pool[i] for i in b]
    if which == "ours":
        from bertscore_viz import Scorer

        res = Scorer(layer=layer).score(c, r)
        f = res.f1
    else:
        import bert_score

        from bertscore_viz.models.spec import bundled_model_path

        _, _, f = bert_score.BERTScorer(model_type=str(bundled_model_path()), num_layers=layer).score(c, r)
        f = f.numpy()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"which": which, "pairs": n, "peak_rss_mb": round(peak), "mean_f1": float(np.mean(f))}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small sizes, one round")
    ap.add_argument("--layer", type=int, default=None, help="layer (default: the bundled model's default)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--pairs", type=int, default=None, help="pairs per fresh call (default: all 3,360)")
    ap.add_argument("--batch-size", type=int, default=64, help="both scorers' batch size (bert-score's default)")
    ap.add_argument("--memory-pairs", type=int, default=20000)
    ap.add_argument("--skip-memory", action="store_true")
    ap.add_argument("--_memory-child", dest="memory_child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()

    import torch

    from bertscore_viz.models.spec import BUNDLED_DEFAULT_LAYER, bundled_model_path

    layer = BUNDLED_DEFAULT_LAYER if args.layer is None else args.layer
    if args.memory_child:
        memory_child(args.memory_child, args.memory_pairs, layer)
        return

    import importlib.metadata

    import bert_score
    import transformers

    from bertscore_viz import Scorer
    from bertscore_viz.engine.cache import CACHE

    rounds = 1 if args.quick else args.rounds
    cands, refs = wmt16_pairs()
    n = args.pairs or (300 if args.quick else len(cands))
    print(f"bertscore-viz engine benchmark: all-MiniLM-L6-v2, layer {layer}, batch size {args.batch_size}, "
          f"{torch.get_num_threads()} torch threads, torch {torch.__version__}, transformers "
          f"{transformers.__version__}, bert-score {importlib.metadata.version('bert-score')}")

    theirs = bert_score.BERTScorer(model_type=str(bundled_model_path()), num_layers=layer,
                                   batch_size=args.batch_size)
    ours = Scorer(layer=layer, batch_size=args.batch_size)
    # warm up both (model load, first-call allocations)
    theirs.score(cands[:64], refs[:64])
    ours.score(cands[:64], refs[:64])

    # (a) fresh pairs -------------------------------------------------------------------------------------------
    t_theirs, t_ours, max_df = [], [], 0.0
    for r in range(rounds):
        start = (r * n) % len(cands)
        c = (cands[start:] + cands[:start])[:n]
        rf = (refs[start:] + refs[:start])[:n]

        def run_theirs(c=c, rf=rf):
            return theirs.score(c, rf)[2].numpy()

        def run_ours(c=c, rf=rf):
            CACHE.clear()
            return ours.score(c, rf).f1

        f_theirs, f_ours = alternate(r, run_theirs, run_ours, t_theirs, t_ours)
        max_df = max(max_df, float(np.max(np.abs(f_theirs - f_ours))))
    a_ratio = statistics.median(t_theirs) / statistics.median(t_ours)
    print(f"(a) fresh pairs, {n:,} pairs per call, {rounds} round(s): bert-score "
          f"{n / statistics.median(t_theirs):,.0f} pairs/s, ours {n / statistics.median(t_ours):,.0f} pairs/s "
          f"-> {a_ratio:.2f}x   max|dF1| = {max_df:.2e}")

    # (b) four systems against the same references ---------------------------------------------------------------
    def four_systems(label: str, systems: list[list[str]]) -> None:
        rf = refs[:n]
        t_theirs, t_ours, max_df = [], [], 0.0
        for r in range(rounds):
            def run_theirs():
                return [theirs.score(s, rf)[2].numpy() for s in systems]

            def run_ours():
                CACHE.clear()
                return [ours.score(s, rf).f1 for s in systems]

            f_theirs, f_ours = alternate(r, run_theirs, run_ours, t_theirs, t_ours)
            max_df = max(max_df, max(float(np.max(np.abs(a - b))) for a, b in zip(f_theirs, f_ours)))
        ratio = statistics.median(t_theirs) / statistics.median(t_ours)
        total = 4 * n
        print(f"{label} 4 systems x {n:,} segments, same references: bert-score "
              f"{total / statistics.median(t_theirs):,.0f} pairs/s, ours {total / statistics.median(t_ours):,.0f} "
              f"pairs/s -> {ratio:.2f}x   max|dF1| = {max_df:.2e}")

    four_systems("(b) ", variants(cands[:n]))
    four_systems("(b')", variants(cands[:n], token_changing=True))

    # (c) reduced precision ------------------------------------------------------------------------------------
    reduced = "fp16" if torch.cuda.is_available() else "bf16"
    fast = Scorer(layer=layer, batch_size=args.batch_size, precision=reduced)
    fast.score(cands[:64], refs[:64])
    c, rf = cands[:n], refs[:n]
    t_fast, t_exact, max_df = [], [], 0.0
    for _ in range(rounds):
        CACHE.clear()
        dt, f_exact = timed(lambda: ours.score(c, rf).f1)
        t_exact.append(dt)
        CACHE.clear()
        dt, f_fast = timed(lambda: fast.score(c, rf).f1)
        t_fast.append(dt)
        max_df = max(max_df, float(np.max(np.abs(f_exact - f_fast))))
    exact, fast_t = statistics.median(t_exact), statistics.median(t_fast)
    print(f"(c) {reduced}: {n / fast_t:,.0f} pairs/s against fp32 {n / exact:,.0f} pairs/s -> {exact / fast_t:.2f}x"
          f"   max|dF1| vs fp32 = {max_df:.2e}")

    # (d) memory -----------------------------------------------------------------------------------------------
    if not args.skip_memory:
        m = 2000 if args.quick else args.memory_pairs
        from bertscore_viz.engine.cache import DEFAULT_CACHE_BYTES

        default_mb = f"default cache bound {DEFAULT_CACHE_BYTES / 2**20:,.0f} MB"
        for which, cache_mb, label in (("ours", None, default_mb), ("ours", "512", "BERTSCORE_VIZ_CACHE_MB=512"),
                                       ("bert-score", None, "")):
            env = dict(os.environ)
            env.pop("BERTSCORE_VIZ_CACHE_MB", None)
            if cache_mb:
                env["BERTSCORE_VIZ_CACHE_MB"] = cache_mb
            proc = subprocess.run([sys.executable, __file__, "--_memory-child", which, "--memory-pairs", str(m),
                                   "--layer", str(layer)], capture_output=True, text=True, check=True, env=env)
            rec = json.loads(proc.stdout.strip().splitlines()[-1])
            print(f"(d) {which}{', ' + label if label else ''}: peak RSS {rec['peak_rss_mb']:,} MB scoring {m:,} "
                  f"pairs in a fresh process (mean F1 {rec['mean_f1']:.6f})")


if __name__ == "__main__":
    main()
