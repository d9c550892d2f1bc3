"""Long texts: window mode against truncate mode (issue 21), and what truncation misses.

(a) Speed per token. Passages of consecutive newstest2017 reference sentences, cut to 1x, 2x and 4x the model's
    maximum length (512 tokens for the bundled model), candidates and references of the same length. Each round
    scores the same pairs with bert-score 0.3.13 (which truncates), our truncate mode and our window mode, in
    turn, our cache emptied before each of our calls. Printed: seconds, microseconds per token of the texts (all
    their tokens, also those truncate mode drops), windows embedded, and the ratios.
(b) A damaged tail. "Documents" of 40 consecutive segments of the WMT16 DA sample (real MT output against its
    reference translation, about 1,000 tokens each: past the 512-token limit) and the same documents with their
    last 8 MT sentences damaged three ways: dropped, replaced by unrelated sentences, or with their words
    shuffled. Also whole newstest2017 passages scored against themselves, with the last sentences replaced by
    unrelated ones. Printed: mean F1 of the clean and the damaged system in both modes.

Run:  python bench/bench_long_texts.py            (full: 3 rounds, 16 pairs per length)
      python bench/bench_long_texts.py --quick    (1 round, 4 pairs per length: checks that it runs)
      python bench/bench_long_texts.py --device cuda   (the same on a GPU, fp32)
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

import numpy as np
from common import NEWSTEST, WMT16  # noqa: E402 (sets the import path and offline mode first)

LPS = ["cs-en", "de-en", "fi-en", "ro-en", "ru-en", "tr-en"]


def read(path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def passages(tokenizer, n_tokens: int, count: int, start: int, lines: list[str]) -> list[str]:
    """``count`` passages of consecutive sentences, each cut to exactly ``n_tokens`` content tokens."""
    out, i = [], start
    while len(out) < count:
        ids: list[int] = []
        while len(ids) < n_tokens:
            ids += tokenizer(lines[i % len(lines)], add_special_tokens=False)["input_ids"]
            i += 1
        out.append(tokenizer.decode(ids[:n_tokens]))
    return out


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def speed(args) -> None:
    import warnings

    from bert_score import BERTScorer

    from bertscore_viz import Scorer
    from bertscore_viz.engine.cache import CACHE
    from bertscore_viz.models.spec import resolve_model

    spec = resolve_model(None)
    truncate = Scorer(device=args.device)
    window = Scorer(device=args.device, long_texts="window")
    enc = truncate.encoder
    theirs = BERTScorer(model_type=spec.source, num_layers=truncate.layer, device=enc.device,
                        batch_size=args.batch_size)
    lines = read(NEWSTEST / "newstest2017-deen-ref.en") + read(NEWSTEST / "newstest2017-ruen-ref.en")
    limit = enc.max_length - 2
    print(f"model {spec.name} (maximum {enc.max_length} tokens), device {enc.device}, {args.pairs} pairs per length, "
          f"{args.rounds} round(s), median seconds")
    print(f"{'length':>7} {'tokens/text':>12} {'windows/text':>13} {'bert-score s':>13} {'truncate s':>11} "
          f"{'window s':>9} {'us/token truncate':>18} {'us/token window':>16} {'per-token ratio':>16} "
          f"{'window/bert-score':>18}")
    for mult in (1, 2, 4):
        n = limit * mult
        cands = passages(enc.tokenizer, n, args.pairs, 1000 * mult, lines)
        refs = passages(enc.tokenizer, n, args.pairs, 7000 + 1000 * mult, lines)
        toks = enc.encode(cands + refs, "window")
        tokens = sum(len(t.ids) for t in toks)
        embedded = sum(min(len(t.ids), enc.max_length) for t in toks)  # what truncate mode embeds
        windows = sum(enc.window_plan(len(t.ids)).n_windows for t in toks)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs.score(cands[:1], refs[:1])
            window.score(cands[:1], refs[:1])  # warm-up
            times: dict[str, list[float]] = {"bert-score": [], "truncate": [], "window": []}
            for _ in range(args.rounds):
                times["bert-score"].append(timed(
                    lambda cands=cands, refs=refs: theirs.score(cands, refs, batch_size=args.batch_size)))
                CACHE.clear()
                times["truncate"].append(timed(lambda cands=cands, refs=refs: truncate.score(cands, refs)))
                CACHE.clear()
                times["window"].append(timed(lambda cands=cands, refs=refs: window.score(cands, refs)))
                CACHE.clear()
        med = {k: statistics.median(v) for k, v in times.items()}
        per_t, per_w = 1e6 * med["truncate"] / embedded, 1e6 * med["window"] / tokens
        print(f"{str(mult) + 'x':>7} {tokens / len(toks):>12.0f} {windows / len(toks):>13.1f} "
              f"{med['bert-score']:>13.2f} {med['truncate']:>11.2f} {med['window']:>9.2f} {per_t:>18.0f} "
              f"{per_w:>16.0f} {per_w / per_t:>16.2f} {med['window'] / med['bert-score']:>18.2f}")
    print("us/token: truncate per token it embeds (at most 512 of each text), window per token of the texts (all "
          "of them);\nper-token ratio: window / truncate. Windows of 510 content tokens every 255: a text of k "
          "times the limit\nis 2k - 1 windows, (2k - 1) / k times the tokens of one pass.")


def shuffled(sentence: str, rng: random.Random) -> str:
    words = sentence.split()
    rng.shuffle(words)
    return " ".join(words)


def damage(args) -> None:
    import warnings

    from bertscore_viz import Scorer

    truncate = Scorer(device=args.device)
    window = Scorer(device=args.device, long_texts="window")
    enc = truncate.encoder
    rng = random.Random(0)
    per_doc, tail = 40, 8
    clean, damaged, refs = [], {"dropped": [], "replaced": [], "shuffled": []}, []
    for lp in LPS:
        mt = read(WMT16 / f"DAseg-newstest2016.mt-system.{lp}")
        ref = read(WMT16 / f"DAseg-newstest2016.reference.{lp}")
        other = read(NEWSTEST / "newstest2017-zhen-ref.en")
        for d in range(0, len(mt) - per_doc + 1, per_doc)[: args.docs]:
            sys_doc, ref_doc = mt[d:d + per_doc], ref[d:d + per_doc]
            clean.append(" ".join(sys_doc))
            refs.append(" ".join(ref_doc))
            damaged["dropped"].append(" ".join(sys_doc[:-tail]))
            damaged["replaced"].append(" ".join(sys_doc[:-tail] + other[d:d + tail]))
            damaged["shuffled"].append(" ".join(sys_doc[:-tail] + [shuffled(s, rng) for s in sys_doc[-tail:]]))
    lengths = [len(t.ids) for t in enc.encode(refs + clean, "window")]
    head = [len(enc.encode_one(d, "window").ids) for d in damaged["dropped"]]
    print(f"\n(b) {len(refs)} documents of {per_doc} consecutive WMT16 DA segments (real MT output vs reference), "
          f"{min(lengths)}-{max(lengths)} tokens (median {int(np.median(lengths))}); the first {per_doc - tail} "
          f"MT sentences alone are {min(head)}-{max(head)} tokens, so the damaged last {tail} lie past the "
          f"{enc.max_length}-token limit")
    print(f"{'system':>22} {'F1 truncate':>12} {'F1 window':>10}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        base_t, base_w = truncate.score(clean, refs).f1, window.score(clean, refs).f1
        print(f"{'clean':>22} {base_t.mean():>12.4f} {base_w.mean():>10.4f}")
        for kind, docs in damaged.items():
            t, w = truncate.score(docs, refs).f1, window.score(docs, refs).f1
            print(f"{'last ' + str(tail) + ' ' + kind:>22} {t.mean():>12.4f} {w.mean():>10.4f}   "
                  f"change: truncate {np.mean(t - base_t):+.4f} (max |d| {np.abs(t - base_t).max():.1e}), "
                  f"window {np.mean(w - base_w):+.4f}")
        lines = read(NEWSTEST / "newstest2017-deen-ref.en")
        other = read(NEWSTEST / "newstest2017-zhen-ref.en")
        docs = [" ".join(lines[s:s + 48]) for s in range(0, 48 * args.docs, 48)]
        bad = [" ".join(lines[s:s + 36] + other[s:s + 12]) for s in range(0, 48 * args.docs, 48)]
        t, w = truncate.score(bad, docs).f1, window.score(bad, docs).f1
        print(f"\nnewstest2017 passages of 48 sentences scored against themselves, last 12 replaced by unrelated "
              f"ones ({len(docs)} passages): F1 truncate {t.mean():.4f} (min {t.min():.4f}), window "
              f"{w.mean():.4f} (min {w.min():.4f}); undamaged: 1.0000 in both modes")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--device", default="cpu")
    p.add_argument("--batch-size", type=int, default=64)
    args = p.parse_args()
    args.rounds, args.pairs, args.docs = (1, 4, 3) if args.quick else (3, 16, 14)
    speed(args)
    damage(args)


if __name__ == "__main__":
    main()
