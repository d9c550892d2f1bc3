"""What sacrebleu's chrF, BLEU and TER cost per output by text length, against the estimate the Compare page plans
with (``sacrebleu_metrics.COST_PER_OUTPUT``, which decides whether a metric is within the server's
``SENTENCE_METRICS_SECONDS``): texts of 1 to 8 consecutive sentences of the bundled WMT16 references, each output
the reference with a fifth of its words dropped and a few swapped (an MT- or summary-like edit).

Run:  python bench/bench_sentence_metrics.py            (30 outputs per length)
"""

from __future__ import annotations

import random
import time

from common import ROOT  # noqa: F401 (sets the import path and offline mode first)

from bertscore_viz.evaluation import sacrebleu_metrics as sm

DATA = ROOT / "data" / "wmt16-da-to-english"


def texts(n_sentences: int, count: int, rng: random.Random) -> tuple[list[str], list[str]]:
    sents = [line for f in sorted(DATA.glob("*reference*")) for line in f.read_text(encoding="utf-8").splitlines()]
    refs, hyps = [], []
    for _ in range(count):
        ref = " ".join(rng.sample(sents, n_sentences))
        words = [w for w in ref.split() if rng.random() > 0.2]
        for _ in range(len(words) // 5):
            a, b = rng.randrange(len(words)), rng.randrange(len(words))
            words[a], words[b] = words[b], words[a]
        refs.append(ref)
        hyps.append(" ".join(words))
    return hyps, refs


def main() -> None:
    rng = random.Random(0)
    print(f"{'metric':<6} {'words':>6} {'measured ms':>12} {'estimate ms':>12} {'ratio':>6}")
    for n in (1, 2, 4, 8):
        hyps, refs = texts(n, 30 if n < 8 else 10, rng)
        words = sum((len(h.split()) + len(r.split())) / 2 for h, r in zip(hyps, refs)) / len(hyps)
        for m in sm.METRICS:
            t0 = time.perf_counter()
            sm.chunk_statistics(m, hyps, [refs])
            measured = (time.perf_counter() - t0) / len(hyps)
            estimate = sm.estimated_seconds(m, {"s": hyps}, [[r] for r in refs]) / len(hyps)
            print(f"{m:<6} {words:>6.0f} {measured * 1000:>12.2f} {estimate * 1000:>12.2f} "
                  f"{measured / estimate:>6.2f}", flush=True)


if __name__ == "__main__":
    main()
