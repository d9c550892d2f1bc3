"""Warm latency of the Inspect page's work for one pair: explain + heatmap + alignment view + token tables.

"Warm" = the model is loaded and the pair's embeddings are in the engine's cache, as when a user changes the
layer, idf or rescaling of a pair already on the page (no model pass). Also reported: the same with a cold
embedding cache for that pair (one model pass), and the serialisation of the figures Streamlit sends.
Pairs: real MT output against its reference from ``data/wmt16-da-to-english`` concatenated to about
``--tokens`` tokens a side (default 40). Target: warm median under 150 ms on the 2-core CPU.

Run:  python bench/bench_inspect.py              (N = 30 runs)
      python bench/bench_inspect.py --runs 5     (quick check that it runs)
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from common import WMT16  # noqa: E402 (sets the import path and offline mode first)


def _pair(tokens: int, tokenizer) -> tuple[str, str]:
    """The first WMT16 de-en (MT output, reference) pair with about ``tokens`` word pieces a side (+-10%);
    shorter neighbouring segments are joined when no single one fits."""
    mt = (WMT16 / "DAseg-newstest2016.mt-system.de-en").read_text(encoding="utf-8").splitlines()
    ref = (WMT16 / "DAseg-newstest2016.reference.de-en").read_text(encoding="utf-8").splitlines()
    lo, hi = int(tokens * 0.9), int(tokens * 1.1) + 1
    for c, r in zip(mt, ref):
        if lo <= len(tokenizer.tokenize(c)) <= hi and lo <= len(tokenizer.tokenize(r)) <= hi:
            return c, r
    c, r = mt[0], ref[0]
    for k in range(1, len(mt)):
        if len(tokenizer.tokenize(c)) >= tokens:
            break
        c, r = c + " " + mt[k], r + " " + ref[k]
    return c, r


def _ms(fn, runs: int) -> tuple[float, float]:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times), min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=30, help="timed runs per measurement (median reported)")
    ap.add_argument("--tokens", type=int, default=40, help="word pieces per side (about)")
    ap.add_argument("--layer", type=int, default=None)
    args = ap.parse_args()

    from bertscore_viz import Scorer
    from bertscore_viz.engine import explain_table
    from bertscore_viz.figures import plots

    scorer = Scorer(layer=args.layer)
    enc = scorer.encoder
    cand, ref = _pair(args.tokens, enc.tokenizer)
    print(f"pair: {len(enc.tokenizer.tokenize(cand))} x {len(enc.tokenizer.tokenize(ref))} word pieces, "
          f"model {scorer.spec.name}, layer {scorer.layer}, {os.cpu_count()} CPUs")
    scorer.explain(cand, ref)  # load and warm up

    def page_work(sc=scorer):
        pair = sc.explain(cand, ref)
        plots.heatmap_figure(pair, max_width=1000)
        plots.alignment_figure(pair, max_width=1000)
        explain_table.token_table(pair, "candidate")
        explain_table.token_table(pair, "reference")
        return pair

    pair = page_work()
    rows = []
    rows.append(("explain (warm cache)", *_ms(lambda: scorer.explain(cand, ref), args.runs)))
    rows.append(("heatmap figure", *_ms(lambda: plots.heatmap_figure(pair, max_width=1000),
                                        args.runs)))
    rows.append(("alignment figure", *_ms(lambda: plots.alignment_figure(pair, max_width=1000), args.runs)))
    rows.append(("token tables", *_ms(lambda: (explain_table.token_table(pair, "candidate"),
                                               explain_table.token_table(pair, "reference")), args.runs)))
    total = _ms(page_work, args.runs)
    rows.append(("TOTAL warm (explain + figures + tables)", *total))
    # another setting of the same pair: a new scorer (layer 6, idf), still no model pass
    other = Scorer(layer=6, idf=True)
    rows.append(("TOTAL warm, layer 6 + idf (no model pass)", *_ms(lambda: page_work(other), args.runs)))
    figs = (plots.heatmap_figure(pair, max_width=1000), plots.alignment_figure(pair, max_width=1000))
    rows.append(("figures to JSON (what Streamlit sends)", *_ms(lambda: [f.to_json() for f in figs], args.runs)))

    def cold():
        enc.cache.clear()
        return page_work()

    rows.append(("TOTAL cold (one model pass for the pair)", *_ms(cold, max(3, args.runs // 5))))
    width = max(len(r[0]) for r in rows)
    print(f"{'step':<{width}}  median ms  min ms")
    for name, med, best in rows:
        print(f"{name:<{width}}  {med:9.1f}  {best:6.1f}")
    verdict = "meets" if total[0] < 150 else "misses"
    print(f"warm median {total[0]:.1f} ms: {verdict} the 150 ms target")


if __name__ == "__main__":
    main()
