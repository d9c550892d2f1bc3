"""Throughput of BERTScoreLoss (forward + backward) against forward-only exact scoring, in one process.

Pairs: real MT output against its reference from ``data/wmt16-da-to-english`` (six language pairs), in data order,
so each training batch has the realistic spread of sentence lengths (padded to its longest). Model: the bundled
all-MiniLM-L6-v2 at its default layer 4, fp32, exact maximum, F1, no idf.

For each batch size, each round times, alternating the order from round to round:
  score     ``bertscore_viz.score(candidates, references, batch_size=B)`` on all the pairs, embedding cache emptied
            first (forward only, length-sorted batches, no gradient);
  loss      ``BERTScoreLoss`` forward + ``backward()`` on the same pairs, B pairs per step in data order, candidates
            as one-hot probabilities over the 30,522-token vocabulary (what a generator's softmax gives: expected
            embeddings ``probs @ E``), references as texts with the loss's reference cache emptied first (so they
            are embedded once, without gradient, as in a first epoch);
  loss-fwd  the same forward under ``torch.no_grad()`` (what the backward pass adds is loss minus loss-fwd);
  embeds    forward + backward from ``inputs_embeds`` ``(B, T, 384)`` instead of probabilities.
Building the candidates' input tensors is a generator's work and is not timed. The loss's F1 (forward, exact
maximum) is checked against the score's on every pair.

Run:  python bench/bench_loss.py               (256 pairs, batch 16 and 64, 3 rounds)
      python bench/bench_loss.py --quick       (128 pairs, 1 round: checks that it runs)
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from common import WMT16  # noqa: E402 (sets the import path and offline mode first)

LPS = ["cs-en", "de-en", "fi-en", "ro-en", "ru-en", "tr-en"]


def wmt16_pairs() -> tuple[list[str], list[str]]:
    cands, refs = [], []
    for lp in LPS:
        cands += (WMT16 / f"DAseg-newstest2016.mt-system.{lp}").read_text(encoding="utf-8").splitlines()
        refs += (WMT16 / f"DAseg-newstest2016.reference.{lp}").read_text(encoding="utf-8").splitlines()
    return cands, refs


def clear_engine_cache() -> None:
    from bertscore_viz.engine import encoder

    cache = getattr(encoder, "CACHE", None)
    if cache is not None:
        cache.clear()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="128 pairs, one round")
    ap.add_argument("--pairs", type=int, default=256)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--batch-sizes", type=int, nargs="+", default=[16, 64])
    args = ap.parse_args()

    import torch
    import transformers

    from bertscore_viz import score
    from bertscore_viz.loss import BERTScoreLoss

    n = 128 if args.quick else args.pairs
    rounds = 1 if args.quick else args.rounds
    all_c, all_r = wmt16_pairs()
    loss_fn = BERTScoreLoss(reduction="none")
    print(f"BERTScoreLoss benchmark: all-MiniLM-L6-v2 layer {loss_fn.layer}, fp32, F1, exact max, no idf; "
          f"{n} WMT16 pairs per round, {rounds} round(s); {torch.get_num_threads()} torch threads, torch "
          f"{torch.__version__}, transformers {transformers.__version__}, device {loss_fn.device}")
    score(all_c[:32], all_r[:32])  # warm-up (model load, first-call allocations)
    ids, mask = loss_fn.encode_texts(all_c[:16])
    loss_fn(torch.nn.functional.one_hot(ids, loss_fn.vocab_size).float().requires_grad_(True), all_r[:16],
            attention_mask=mask).sum().backward()

    matrix = loss_fn.embedding_matrix
    for bs in args.batch_sizes:
        times: dict[str, list[float]] = {"score": [], "loss": [], "loss-fwd": [], "embeds": []}
        max_df = 0.0
        real_cells = padded_cells = 0
        for r in range(rounds):
            start = (r * n) % len(all_c)
            c = (all_c[start:] + all_c[:start])[:n]
            rf = (all_r[start:] + all_r[:start])[:n]
            batches = [(loss_fn.encode_texts(c[i:i + bs]), rf[i:i + bs]) for i in range(0, n, bs)]
            f_score = None
            f_loss: list[np.ndarray] = []

            def run_score(c=c, rf=rf, bs=bs):
                nonlocal f_score
                clear_engine_cache()
                t = time.perf_counter()
                f_score = score(c, rf, batch_size=bs).f1
                return time.perf_counter() - t

            def run_loss(kind: str, batches=batches, r=r, f_loss=f_loss):
                loss_fn.clear_cache()
                total = 0.0
                for (ids, mask), refs in batches:
                    if kind == "embeds":
                        x = matrix[ids].detach().clone().requires_grad_(True)
                    else:
                        x = torch.nn.functional.one_hot(ids, loss_fn.vocab_size).float().requires_grad_(True)
                    t = time.perf_counter()
                    if kind == "loss-fwd":
                        with torch.no_grad():
                            out = loss_fn(x, refs, attention_mask=mask)
                    else:
                        out = loss_fn(x, refs, attention_mask=mask)
                        out.sum().backward()
                    total += time.perf_counter() - t
                    if kind == "loss-fwd" and r == 0:
                        f_loss.append(1 - out.detach().cpu().numpy())
                return total

            runs = [("score", run_score), ("loss", lambda: run_loss("loss")),
                    ("loss-fwd", lambda: run_loss("loss-fwd")), ("embeds", lambda: run_loss("embeds"))]
            if r % 2:
                runs.reverse()
            for name, fn in runs:
                times[name].append(fn())
            if r == 0:
                max_df = float(np.max(np.abs(np.concatenate(f_loss) - f_score)))
                for (_ids, mask), _ in batches:
                    real_cells += int(mask.sum()) + 2 * mask.shape[0]
                    padded_cells += (mask.shape[1] + 2) * mask.shape[0]
        rate = {k: n / statistics.median(v) for k, v in times.items()}
        print(f"batch {bs:3d}: score (forward only) {rate['score']:7.1f} pairs/s | loss forward+backward "
              f"{rate['loss']:7.1f} pairs/s ({rate['loss'] / rate['score']:.2f}x the score) | loss forward only "
              f"{rate['loss-fwd']:7.1f} pairs/s | inputs_embeds forward+backward {rate['embeds']:7.1f} pairs/s "
              f"({rate['embeds'] / rate['score']:.2f}x)")
        print(f"           loss batches in data order: {real_cells / padded_cells:.0%} of padded cells real; "
              f"max |F1(loss) - F1(score)| = {max_df:.1e}")


if __name__ == "__main__":
    main()
