"""Document context (issue 45, docs/CONTEXT.md): the cost of context k = 1, 2, 3 against sentence-level scoring
(k = 0), in the same run.

Data. The bundled WMT16 DA set has no documents: its 560 segments per language pair are a sparse sample of
newstest2016 (for cs-en, the only pair whose bookkeeping file says which segments: 526 distinct segments out of
2,982, median distance 4 between sampled segment ids, and no document ids), so the previous segments of a document
are not there. For timing only, the newstest2017 English references (real news text, in document order) are cut
into consecutive blocks of ``--block`` sentences taken as pseudo-documents; the candidate of each sentence is the
same sentence with its last word dropped. No human scores exist for these pseudo-documents: this measures time
and what the context does to the scores, not their quality.

Each round scores the same pairs at k = 0, 1, 2, 3 (context from the references, the paper's), the in-memory
cache emptied before every call and the persistent store off. Printed: median seconds, the ratio to k = 0, the
mean tokens per sequence the model ran (context included) and the mean F1.

Run:  python bench/bench_context.py            (full: 3 rounds, 600 sentences)
      python bench/bench_context.py --quick    (1 round, 120 sentences: checks that it runs)
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import warnings

from common import NEWSTEST  # noqa: E402 (sets the import path and offline mode first)

os.environ.setdefault("BERTSCORE_VIZ_STORE", "off")  # every call computes its vectors: no persistent store


def data(n: int, block: int) -> tuple[list[str], list[str], list[str]]:
    lines = (NEWSTEST / "newstest2017-deen-ref.en").read_text(encoding="utf-8").splitlines()[:n]
    cands = [" ".join(x.split()[:-1]) or x for x in lines]
    docs = [f"block{i // block}" for i in range(len(lines))]
    return cands, lines, docs


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--block", type=int, default=10, help="sentences per pseudo-document (default 10)")
    p.add_argument("--device", default="cpu")
    args = p.parse_args()
    rounds, n = (1, 120) if args.quick else (3, 600)

    from bertscore_viz import Scorer
    from bertscore_viz.engine.cache import CACHE
    from bertscore_viz.engine.context import document_windows

    cands, refs, docs = data(n, args.block)
    scorers = {k: Scorer(device=args.device, context=k) for k in (0, 1, 2, 3)}
    times: dict[int, list[float]] = {k: [] for k in scorers}
    f1: dict[int, float] = {}
    tokens: dict[int, float] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scorers[0].score(cands[:4], refs[:4])  # warm-up: the model loaded
        for _ in range(rounds):
            for k, s in scorers.items():
                CACHE.clear()
                start = time.perf_counter()
                res = s.score(cands, refs, doc_ids=docs)
                times[k].append(time.perf_counter() - start)
                f1[k] = float(res.raw_f1.mean())
        enc = scorers[0].encoder
        c_ids, r_ids = [t.ids for t in enc.encode(cands)], [t.ids for t in enc.encode(refs)]
        prefix, suffix = enc.text_tokenizer.special_layout
        for k in scorers:  # what the model ran: each distinct sequence, context included
            cw, rw, _ = document_windows(c_ids, r_ids, [(i, i + 1) for i in range(n)], docs, k, "ref",
                                         (len(prefix), len(suffix)), enc.tokenizer.sep_token_id, enc.max_length)
            seqs = {w.key: len(w.ids) for w in cw + rw}
            tokens[k] = sum(seqs.values()) / len(seqs)
    CACHE.clear()
    base = statistics.median(times[0])
    print(f"{n} pairs, pseudo-documents of {args.block} consecutive newstest2017 de-en references, bundled model, "
          f"{args.device}, median of {rounds} round(s)")
    print(f"{'context':>8} {'seconds':>9} {'x k=0':>7} {'tokens/seq':>11} {'mean F1':>9}")
    for k in scorers:
        med = statistics.median(times[k])
        print(f"{k:>8} {med:>9.2f} {med / base:>7.2f} {tokens[k]:>11.1f} {f1[k]:>9.4f}")


if __name__ == "__main__":
    main()
