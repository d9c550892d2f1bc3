"""bf16 against exact fp32 against bert-score 0.3.13, in one run: speed, the fp32 compute limit, and what bf16 costs in
agreement with human scores (issue 35).

Same pairs for the three, bundled all-MiniLM-L6-v2, layer 4, batch size 64, ONE torch thread by default
(``torch.set_num_threads(1)``; ``--threads`` to change), every scorer loaded and warmed up before timing, our
embedding cache emptied before each of our calls (nothing carried over), the three run in rotating order in every
round; the median round is printed, in wall time and in CPU time (at one thread the process's CPU time is the work
done, nearly independent of other processes: prefer it on a loaded machine).

  (1) one call: 560 WMT16 pairs (cs-en: 1,070 distinct texts, 26,972 tokens), ``BERTScorer.score`` /
      ``Scorer.score``.
  (2) four systems x 560 segments against the same references, as the Compare page scores them: bert-score
      called once per system; ours :func:`bertscore_viz.evaluation.compare.score_dataset` (one model pass, the
      references embedded once) and ``results_for``. The systems are the MT output and three variants that all
      change the tokens (a word dropped, neighbours swapped, punctuation removed).
  (3) the compute limit of exact fp32: the matrix-product operations of the forward over the call's distinct texts
      through the layers run (``2 * tokens * M + 4 * tokens^2 * A`` per text and block,
      :func:`bertscore_viz.serving.hardware.forward_flops`), over the fp32 matrix-product rate measured on the
      model's own shapes (:func:`bertscore_viz.serving.hardware.probe`); our share = limit / our time.
  (4) accuracy: segment-level Pearson of F1 with the human DA scores for each of the six language pairs of
      data/wmt16-da-to-english (3,360 pairs), fp32 and bf16, their mean, and the largest |F1(bf16) - F1(fp32)|.
      ``--data DIR`` points to another folder laid out the same way (DAseg-newstest2016.{mt-system,reference,
      human}.<lp>), e.g. data that is not in the repository.
  (5) :func:`bertscore_viz.serving.hardware.estimate_texts` for the one call against the measured CPU time.

Run:  python bench/bench_precision.py                  (3 rounds; about 3 minutes on a quiet machine)
      python bench/bench_precision.py --quick          (120 pairs, 1 round, two language pairs: checks that it runs)
      nice -n 19 python bench/bench_precision.py --rounds 1
"""

from __future__ import annotations

import argparse
import importlib.metadata
import statistics
import time
from pathlib import Path

# isort: off
from common import WMT16  # first: the repository on the import path, the model hub offline
from bench_engine import LPS, variants
# isort: on

import bert_score
import numpy as np
import torch
import transformers

from bertscore_viz import Scorer
from bertscore_viz.engine.cache import CACHE
from bertscore_viz.evaluation import compare
from bertscore_viz.files.dataset import Dataset
from bertscore_viz.models.spec import bundled_model_path
from bertscore_viz.serving import hardware

#: The issue's targets on this machine (one call, one thread).
TARGET_BF16_VS_FP32 = 2.5
TARGET_BF16_VS_BERT_SCORE = 3.5
TARGET_PEARSON_DIFF = 0.002


def read(folder: Path, kind: str, lp: str) -> list[str]:
    return (folder / f"DAseg-newstest2016.{kind}.{lp}").read_text(encoding="utf-8").splitlines()


def clocked(fn) -> tuple[float, float, object]:
    """(wall seconds, process CPU seconds, result) of one call."""
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - w, time.process_time() - c, out


def rounds_of(runs: dict, rounds: int) -> dict:
    """Each run ``rounds`` times, the order rotating every round: ``{name: (wall list, cpu list, last result)}``."""
    names = list(runs)
    out = {name: ([], [], None) for name in names}
    for r in range(rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            w, c, res = clocked(runs[name])
            out[name][0].append(w)
            out[name][1].append(c)
            out[name] = (out[name][0], out[name][1], res)
    return out


def fresh(fn):
    """Our call with an empty embedding cache (no vectors from an earlier round)."""
    def run():
        CACHE.clear()
        return fn()
    return run


def speed_table(title: str, n_pairs: int, timed: dict) -> dict:
    med = {k: (statistics.median(v[0]), statistics.median(v[1])) for k, v in timed.items()}
    print(f"\n{title}")
    print(f"  {'':<12}{'wall s':>9}{'pairs/s':>9}{'CPU s':>9}")
    for name, (w, c) in med.items():
        print(f"  {name:<12}{w:>9.2f}{n_pairs / w:>9.0f}{c:>9.2f}")
    for a, b in (("bf16", "fp32"), ("bf16", "bert-score"), ("fp32", "bert-score")):
        if a in med and b in med:
            print(f"  {a} vs {b}: {med[b][0] / med[a][0]:.2f}x wall, {med[b][1] / med[a][1]:.2f}x CPU")
    return med


def one_call(scorers: dict, cands: list[str], refs: list[str], rounds: int) -> dict:
    runs = {"bert-score": lambda: scorers["bert-score"].score(cands, refs)[2].numpy()}
    for p in ("fp32", "bf16"):
        runs[p] = fresh(lambda p=p: scorers[p].score(cands, refs).f1)
    timed = rounds_of(runs, rounds)
    med = speed_table(f"(1) one call, {len(cands):,} pairs:", len(cands), timed)
    f = {k: v[2] for k, v in timed.items()}
    print(f"  max|dF1| fp32 vs bert-score {np.max(np.abs(f['fp32'] - f['bert-score'])):.1e}, "
          f"bf16 vs fp32 {np.max(np.abs(f['bf16'] - f['fp32'])):.1e}")
    return med


def four_systems(scorers: dict, cands: list[str], refs: list[str], rounds: int) -> dict:
    systems = dict(zip(("mt", "drop", "swap", "nopunct"), variants(cands, token_changing=True)))
    n = len(refs)
    ds = Dataset(systems=systems, references=[[r] for r in refs], sources=None,
                 segment_ids=[str(i + 1) for i in range(n)], rows=list(range(2, n + 2)))

    def ours(p: str):
        sc = scorers[p]
        comparison = compare.results_for(sc, compare.score_dataset(sc, ds), sc.layer, idf=False)
        return {k: v.f1 for k, v in comparison.results.items()}

    runs = {"bert-score": lambda: {k: scorers["bert-score"].score(s, refs)[2].numpy() for k, s in systems.items()}}
    for p in ("fp32", "bf16"):
        runs[p] = fresh(lambda p=p: ours(p))
    timed = rounds_of(runs, rounds)
    med = speed_table(f"(2) four systems x {n:,} segments, same references, as Compare scores them:", 4 * n, timed)
    f = {k: v[2] for k, v in timed.items()}
    d_ref = max(float(np.max(np.abs(f["fp32"][k] - f["bert-score"][k]))) for k in systems)
    d_bf = max(float(np.max(np.abs(f["bf16"][k] - f["fp32"][k]))) for k in systems)
    rank = {p: sorted(systems, key=lambda k: -float(np.mean(f[p][k]))) for p in f}
    print(f"  max|dF1| fp32 vs bert-score {d_ref:.1e}, bf16 vs fp32 {d_bf:.1e}; system ranking "
          f"{'identical' if rank['bf16'] == rank['fp32'] == rank['bert-score'] else 'DIFFERENT: ' + str(rank)}")
    return med


def compute_limit(scorer: Scorer, cands: list[str], refs: list[str], fp32_time: tuple[float, float]) -> None:
    enc = scorer.encoder
    lengths = list({t.ids.tobytes(): len(t.ids) for t in enc.encode(list(dict.fromkeys(cands + refs)))}.values())
    blocks = max(scorer.layer, 1)
    flops = hardware.forward_flops(lengths, blocks, enc)
    result = hardware.probe("cpu", enc)
    rate = result.rates["fp32"].gflops * 1e9
    limit = flops / rate
    print(f"\n(3) compute limit of the fp32 forward: {len(lengths):,} distinct texts, {sum(lengths):,} tokens, "
          f"{blocks} blocks -> {flops / 1e9:,.1f} GFLOP of matrix products; fp32 rate measured on the model's "
          f"shapes {rate / 1e9:,.1f} GFLOP/s ({result.threads} thread(s); bf16 "
          f"{result.rates['bf16'].gflops:,.1f}) -> limit {limit:.2f} s")
    print(f"  our fp32 one call: {fp32_time[0]:.2f} s wall, {fp32_time[1]:.2f} s CPU -> share of the limit "
          f"{limit / fp32_time[0]:.1%} (wall), {limit / fp32_time[1]:.1%} (CPU)")


def pearson(x: np.ndarray, y: np.ndarray) -> float:
    x, y = x - x.mean(), y - y.mean()
    return float(np.dot(x, y) / np.sqrt(np.dot(x, x) * np.dot(y, y)))


def accuracy(scorers: dict, folder: Path, lps: list[str], n: int | None) -> None:
    print(f"\n(4) agreement with human scores, {folder}:")
    print(f"  {'lp':<7}{'pairs':>6}{'Pearson fp32':>14}{'Pearson bf16':>14}{'diff':>10}{'max|dF1|':>10}")
    rows, worst, total = [], 0.0, 0
    for lp in lps:
        c, r = read(folder, "mt-system", lp)[:n], read(folder, "reference", lp)[:n]
        human = np.asarray([float(x) for x in read(folder, "human", lp)[:n]])
        f = {p: scorers[p].score(c, r).f1 for p in ("fp32", "bf16")}
        pf, pb = pearson(f["fp32"], human), pearson(f["bf16"], human)
        d = float(np.max(np.abs(f["bf16"] - f["fp32"])))
        worst, total = max(worst, d), total + len(c)
        rows.append((pf, pb))
        print(f"  {lp:<7}{len(c):>6}{pf:>14.5f}{pb:>14.5f}{pb - pf:>+10.5f}{d:>10.1e}")
    mf, mb = (float(np.mean([x[i] for x in rows])) for i in (0, 1))
    print(f"  {'mean':<7}{total:>6}{mf:>14.5f}{mb:>14.5f}{mb - mf:>+10.5f}{worst:>10.1e}")
    verdict = "within" if abs(mb - mf) <= TARGET_PEARSON_DIFF else "NOT within"
    print(f"  bf16's mean Pearson is {verdict} {TARGET_PEARSON_DIFF} of fp32's; largest |dF1| {worst:.4f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="120 pairs, one round, two language pairs")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--pairs", type=int, default=560, help="pairs of the one call and segments per system")
    ap.add_argument("--lp", default="cs-en", help="language pair of the timed pairs (default cs-en)")
    ap.add_argument("--layer", type=int, default=4)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--threads", type=int, default=1, help="torch threads (default 1, as issue 35's figures)")
    ap.add_argument("--data", type=Path, default=WMT16, help="folder of DAseg-newstest2016.* files (default: "
                                                             "data/wmt16-da-to-english)")
    ap.add_argument("--skip-accuracy", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    n = 120 if args.quick else args.pairs
    rounds = 1 if args.quick else args.rounds
    status = hardware.bf16_status("cpu")
    print(f"bf16 against fp32 against bert-score {importlib.metadata.version('bert-score')}: all-MiniLM-L6-v2, layer "
          f"{args.layer}, batch size {args.batch_size}, {torch.get_num_threads()} torch thread(s) "
          f"(torch.set_num_threads), torch {torch.__version__}, transformers {transformers.__version__}")
    print(f"this CPU: {hardware.cpu_bf16_flags() or 'no native bf16 flag'}; {status.reason}")
    scorers = {"bert-score": bert_score.BERTScorer(model_type=str(bundled_model_path()), num_layers=args.layer,
                                                   batch_size=args.batch_size),
               "fp32": Scorer(layer=args.layer, batch_size=args.batch_size, device="cpu"),
               "bf16": Scorer(layer=args.layer, batch_size=args.batch_size, device="cpu", precision="bf16")}
    cands, refs = read(args.data, "mt-system", args.lp)[:n], read(args.data, "reference", args.lp)[:n]
    for sc in scorers.values():  # model load, first-call allocations
        sc.score(cands[:64], refs[:64])
    one = one_call(scorers, cands, refs, rounds)
    four = four_systems(scorers, cands, refs, rounds)
    compute_limit(scorers["fp32"], cands, refs, one["fp32"])
    if not args.skip_accuracy:
        accuracy(scorers, args.data, LPS[:2] if args.quick else LPS, n if args.quick else None)
    lengths = [len(t.ids) for t in scorers["fp32"].encode(list(dict.fromkeys(cands + refs)))]
    print("\n(5) hardware.estimate_texts for the one call, against the measured CPU time:")
    for p in ("fp32", "bf16"):
        est = hardware.estimate_texts(lengths, args.layer, p, scorers[p].encoder)
        print(f"  {p}: estimated {est:.2f} s, measured {one[p][1]:.2f} s")
    print("\nsummary (one call; targets of issue 35 in brackets):")
    for label, a, b, target in (("bf16 vs our fp32", "bf16", "fp32", TARGET_BF16_VS_FP32),
                                ("bf16 vs bert-score", "bf16", "bert-score", TARGET_BF16_VS_BERT_SCORE),
                                ("fp32 vs bert-score", "fp32", "bert-score", None)):
        goal = f" (>= {target}x)" if target else ""
        print(f"  {label}: {one[b][0] / one[a][0]:.2f}x wall, {one[b][1] / one[a][1]:.2f}x CPU{goal}; four "
              f"systems {four[b][0] / four[a][0]:.2f}x wall, {four[b][1] / four[a][1]:.2f}x CPU")


if __name__ == "__main__":
    main()
