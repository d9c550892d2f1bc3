"""Baseline computation throughput: ours (every layer from one pass) against bert-score 0.3.13 scoring every layer.

Pairs: random pairs of sentences from ``data/newstest2017-english`` (the corpus of our shipped baseline),
drawn exactly as ``python -m bertscore_viz baseline`` draws them (seed 0).

* ours: :func:`bertscore_viz.rescaling.baseline_compute.compute_baseline` (``Scorer.match(..., layers="all")`` per
  block, then P/R/F of every layer), with the embedding cache emptied first.
* bert-score: ``bert_score.score(..., all_layers=True)``, its fastest way to get every layer (one forward pass,
  every hidden state; the alternative, one call per layer with ``num_layers=L``, repeats the model pass per layer
  and is also timed with ``--per-layer``). The per-layer means are compared with ours (max |d mean|).

Both are warmed up (model loaded) before timing and run alternately, in one process.

Run:  python bench/bench_baseline.py               (5,000 pairs, 2 rounds)
      python bench/bench_baseline.py --pairs 500 --rounds 1    (quick check that it runs)
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from common import NEWSTEST  # noqa: E402 (sets the import path and offline mode first)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", type=int, default=5000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--per-layer", action="store_true", help="also time bert-score with one call per layer")
    args = ap.parse_args()

    import bert_score
    import torch

    from bertscore_viz import Scorer
    from bertscore_viz.engine.cache import CACHE
    from bertscore_viz.models.spec import bundled_model_path
    from bertscore_viz.rescaling import baseline_compute as bc

    corpus = bc.read_corpus(NEWSTEST)
    blocks = bc.plan_pairs(len(corpus.sentences), args.pairs, seed=0)
    pairs = np.concatenate(blocks)
    cands = [corpus.sentences[i] for i in pairs[:, 0]]
    refs = [corpus.sentences[j] for j in pairs[:, 1]]
    model_path = str(bundled_model_path())
    scorer = Scorer(layer=6, batch_size=args.batch_size)
    n_layers = scorer.encoder.num_layers + 1
    print(f"{args.pairs} random pairs of newstest2017 (seed 0), {n_layers} layers, torch threads "
          f"{torch.get_num_threads()}, batch size {args.batch_size}")

    # warm-up: both models loaded, one small call each
    bert_score.score(cands[:8], refs[:8], model_type=model_path, num_layers=6, all_layers=True,
                     batch_size=args.batch_size)
    bc.compute_baseline(bc.corpus_from_lines(corpus.sentences[:20]), n_pairs=8, scorer=scorer)

    ours_t, theirs_t, per_layer_t = [], [], []
    ours_means = theirs_means = None
    for rnd in range(args.rounds):
        order = ["ours", "theirs"] if rnd % 2 == 0 else ["theirs", "ours"]
        for who in order:
            if who == "ours":
                CACHE.clear()
                t = time.perf_counter()
                res = bc.compute_baseline(corpus, n_pairs=args.pairs, seed=0, scorer=scorer)
                ours_t.append(time.perf_counter() - t)
                ours_means = res.means
            else:
                t = time.perf_counter()
                P, R, F = bert_score.score(cands, refs, model_type=model_path, num_layers=6, all_layers=True,
                                           batch_size=args.batch_size)
                theirs_t.append(time.perf_counter() - t)
                theirs_means = np.stack([P.mean(1).numpy(), R.mean(1).numpy(), F.mean(1).numpy()], axis=1)
        print(f"round {rnd + 1}: ours {ours_t[-1]:.1f} s, bert-score all_layers {theirs_t[-1]:.1f} s")
    if args.per_layer:
        t = time.perf_counter()
        for layer in range(n_layers):
            bert_score.score(cands, refs, model_type=model_path, num_layers=layer, batch_size=args.batch_size)
        per_layer_t.append(time.perf_counter() - t)

    ours = args.pairs / statistics.median(ours_t)
    theirs = args.pairs / statistics.median(theirs_t)
    print(f"ours:       {ours:8.1f} pairs/s (all {n_layers} layers, one pass)")
    print(f"bert-score: {theirs:8.1f} pairs/s (score(..., all_layers=True))")
    if per_layer_t:
        print(f"bert-score: {args.pairs / per_layer_t[0]:8.1f} pairs/s (one call per layer, num_layers=L)")
    print(f"ratio ours / bert-score: {ours / theirs:.2f}x")
    diff = np.abs(ours_means - theirs_means).max()
    print(f"max |d mean| over layers and P/R/F: {diff:.2e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
