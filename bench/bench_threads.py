"""Exact fp32 speed against bert-score 0.3.13 at 250, 560 and 3,360 WMT16 pairs, at one torch thread and at the
default number of threads, alternating in one run (bundled MiniLM, its default layer, batch size 64 for both).

For each (threads, pairs) cell, every round runs bert-score's ``BERTScorer.score`` and our ``Scorer.score`` on the
same fresh pairs (our embedding cache emptied first), in alternating order; the ratio is of median times. Next to
each ratio it prints what explains how it moves with size and threads:

* ``real cells``: the share of padded token cells in the forward batches that are real tokens, ours
  (length-sorted, padding-aware batches) and bert-score's (sorted by *word* count, 64 per batch, padded to the
  longest in the batch), computed from the tokenizer;
* ``fwd share``: the share of our call spent in the model's forward pass (the rest is tokenization, batching,
  matching, Python), from hooks on the model.

Run:  python bench/bench_threads.py                 (3 rounds per cell, 1 at 3,360 pairs; several minutes)
      python bench/bench_threads.py --quick         (250 pairs, one round per thread setting)
"""

from __future__ import annotations

import argparse
import importlib.metadata
import statistics
import time

import numpy as np
from bench_engine import alternate, wmt16_pairs  # noqa: E402 (sets the import path and offline mode first)


def bert_score_cells(tokenizer, sentences: list[str], batch_size: int = 64) -> tuple[int, int]:
    """(real, padded) token cells of bert-score 0.3.13's forward batches: distinct sentences sorted by the number
    of space-separated words, longest first, ``batch_size`` per batch, each padded to its longest."""
    uniq = sorted(set(sentences), key=lambda x: len(x.split(" ")), reverse=True)
    lengths = [len(tokenizer(s.strip(), add_special_tokens=True)["input_ids"]) for s in uniq]
    real = padded = 0
    for a in range(0, len(lengths), batch_size):
        chunk = lengths[a:a + batch_size]
        real += sum(chunk)
        padded += max(chunk) * len(chunk)
    return real, padded


def our_cells(enc, sentences: list[str], batch_size: int, token_budget: int) -> tuple[int, int]:
    from bertscore_viz.engine.encoder import plan_batches

    lengths = sorted({t.ids.tobytes(): len(t.ids) for t in enc.encode(sentences)}.values(), reverse=True)
    batches = plan_batches(lengths, batch_size, token_budget)
    return sum(lengths), sum(lengths[a] * (b - a) for a, b in batches)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--large-rounds", type=int, default=1, help="rounds at 3,360 pairs (each takes minutes)")
    ap.add_argument("--sizes", default="250,560,3360")
    ap.add_argument("--batch-size", type=int, default=64)
    args = ap.parse_args()

    import bert_score
    import torch
    import transformers

    from bertscore_viz import Scorer
    from bertscore_viz.engine.cache import CACHE
    from bertscore_viz.models.spec import BUNDLED_DEFAULT_LAYER, bundled_model_path

    default_threads = torch.get_num_threads()
    sizes = [250] if args.quick else [int(x) for x in args.sizes.split(",")]
    rounds = 1 if args.quick else args.rounds
    layer = BUNDLED_DEFAULT_LAYER
    cands, refs = wmt16_pairs()
    theirs = bert_score.BERTScorer(model_type=str(bundled_model_path()), num_layers=layer,
                                   batch_size=args.batch_size)
    ours = Scorer(layer=layer, batch_size=args.batch_size)
    theirs.score(cands[:64], refs[:64])
    ours.score(cands[:64], refs[:64])
    enc = ours.encoder
    forward = {"s": 0.0}
    start = {"t": 0.0}
    hooks = [enc.model.register_forward_pre_hook(lambda *a: start.__setitem__("t", time.perf_counter())),
             enc.model.register_forward_hook(
                 lambda *a: forward.__setitem__("s", forward["s"] + time.perf_counter() - start["t"]))]
    print(f"exact fp32 against bert-score {importlib.metadata.version('bert-score')}: all-MiniLM-L6-v2, layer "
          f"{layer}, batch size {args.batch_size}, torch {torch.__version__}, transformers {transformers.__version__}, "
          f"{rounds} alternating round(s) per cell; other processes may share this machine")
    print(f"{'pairs':>6} {'threads':>7} {'bert-score pairs/s':>18} {'ours pairs/s':>12} {'ratio':>6} "
          f"{'max|dF1|':>9} {'real cells ours':>15} {'bert-score':>10} {'fwd share':>9}")
    for n in sizes:
        for threads in sorted({1, default_threads}):
            torch.set_num_threads(threads)
            c, rf = cands[:n], refs[:n]
            t_theirs, t_ours, max_df, fwd = [], [], 0.0, []

            def run_theirs(c=c, rf=rf):
                return theirs.score(c, rf)[2].numpy()

            def run_ours(c=c, rf=rf, fwd=fwd):
                CACHE.clear()
                forward["s"] = 0.0
                f = ours.score(c, rf).f1
                fwd.append(forward["s"])
                return f

            for r in range(rounds if n < 1000 else min(rounds, args.large_rounds)):
                f_theirs, f_ours = alternate(r, run_theirs, run_ours, t_theirs, t_ours)
                max_df = max(max_df, float(np.max(np.abs(f_theirs - f_ours))))
            mt, mo = statistics.median(t_theirs), statistics.median(t_ours)
            real, padded = our_cells(enc, c + rf, args.batch_size, ours.token_budget)
            b_real, b_padded = bert_score_cells(enc.tokenizer, c + rf, args.batch_size)
            share = statistics.median(fwd) / mo
            print(f"{n:>6} {threads:>7} {n / mt:>18,.0f} {n / mo:>12,.0f} {mt / mo:>5.2f}x {max_df:>9.1e} "
                  f"{real / padded:>15.1%} {b_real / b_padded:>10.1%} {share:>9.0%}", flush=True)
    for h in hooks:
        h.remove()


if __name__ == "__main__":
    main()
