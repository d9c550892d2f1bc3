"""Where exact fp32 scoring spends its time: tokenization, the model's forward (split into matrix products,
attention, element-wise work and copies), matching, and the host work around them; and how close the forward comes
to the compute limit of its matrix products.

One call of ``Scorer.score`` on 560 WMT16 pairs (cs-en: 1,070 distinct texts, 26,972 tokens), bundled model,
layer 4, one torch thread (as issue 35's figures), the embedding and token caches emptied before every round.

* Timers (rounds without a profiler; the median round is printed): tokenization (the tokenizer's ``encode``),
  the forward (hooks on the model: every truncated view shares them), matching (``score_batched``, the per-pair
  P/R/F on the device) and the rest (batch planning, padding, normalising and caching the vectors, Python). Wall
  and CPU time: at one thread the process's CPU time is the work done, whatever else the machine runs.
* The forward's operators (``torch.profiler``, one round), grouped.
* cProfile of one round: the Python functions with the most own time.
* The compute limit: the forward's matrix-product operations over real tokens
  (:func:`bertscore_viz.serving.hardware.forward_flops`) at the rate :func:`bertscore_viz.serving.hardware.probe`
  measures on the model's own matrix shapes; the padded cells the batches actually ran; our share of the limit.

Run:  python bench/profile_scoring.py                      (560 pairs, 3 rounds, one thread)
      python bench/profile_scoring.py --quick              (120 pairs, 1 round)
      python bench/profile_scoring.py --precision bf16     (the same for bf16)
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import time
from collections import defaultdict

from common import WMT16  # isort: skip  (first: the repository on the import path, the model hub offline)

import torch
from torch.profiler import ProfilerActivity, profile

import bertscore_viz.engine.scorer as scorer_module
from bertscore_viz import Scorer
from bertscore_viz.engine.cache import CACHE
from bertscore_viz.engine.tokenizer import TextTokenizer
from bertscore_viz.serving import hardware

#: torch operators by what they do in a BERT forward.
GROUPS = {
    "matrix products": ("aten::addmm", "aten::mm", "aten::bmm", "aten::matmul", "aten::baddbmm",
                        "mkldnn::_linear_pointwise", "aten::_mkldnn_linear"),
    "attention": ("aten::_scaled_dot_product_flash_attention_for_cpu", "aten::_scaled_dot_product_attention_math",
                  "aten::_softmax", "aten::softmax"),
    "element-wise": ("aten::gelu", "aten::native_layer_norm", "aten::add", "aten::add_", "aten::mul", "aten::div",
                     "aten::where", "aten::linalg_vector_norm", "aten::tanh", "aten::sub", "aten::rsub"),
    "copies and indexing": ("aten::copy_", "aten::index_select", "aten::index", "aten::cat", "aten::fill_",
                            "aten::clone", "aten::contiguous", "aten::_to_copy", "aten::embedding"),
}


def read(kind: str, lp: str) -> list[str]:
    return (WMT16 / f"DAseg-newstest2016.{kind}.{lp}").read_text(encoding="utf-8").splitlines()


class Timers:
    """Wall and CPU seconds of tokenization, the forward and matching, accumulated over one call; the forward
    batches' real tokens and padded cells."""

    def __init__(self, scorer: Scorer):
        self.enc = scorer.encoder
        self.reset()
        self._start: list[float] = []
        self.enc.model.register_forward_pre_hook(self._pre, with_kwargs=True)
        self.enc.model.register_forward_hook(self._post)
        self._score_batched = scorer_module.score_batched
        scorer_module.score_batched = self._timed("match", self._score_batched)

    def reset(self) -> None:
        self.wall: dict[str, float] = defaultdict(float)
        self.cpu: dict[str, float] = defaultdict(float)
        self.cells = 0
        self.real = 0
        # a fresh tokenizer cache, so that every round tokenizes
        tok = TextTokenizer(self.enc.spec, self.enc.tokenizer)
        tok.encode = self._timed("tokenize", tok.encode)
        self.enc.text_tokenizer = tok

    def _timed(self, name: str, fn):
        def wrapper(*args, **kwargs):
            w, c = time.perf_counter(), time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                self.wall[name] += time.perf_counter() - w
                self.cpu[name] += time.process_time() - c
        return wrapper

    def _pre(self, module, args, kwargs):
        mask = kwargs.get("attention_mask")
        if mask is not None:
            self.cells += int(mask.numel())
            self.real += int(mask.sum())
        self._start.append((time.perf_counter(), time.process_time()))

    def _post(self, module, args, output):
        w, c = self._start.pop()
        self.wall["forward"] += time.perf_counter() - w
        self.cpu["forward"] += time.process_time() - c


def timed_rounds(scorer: Scorer, timers: Timers, cands, refs, rounds: int) -> dict:
    rows = []
    for _ in range(rounds):
        CACHE.clear()
        timers.reset()
        w, c = time.perf_counter(), time.process_time()
        scorer.score(cands, refs)
        total_w, total_c = time.perf_counter() - w, time.process_time() - c
        rows.append({"wall": dict(timers.wall, total=total_w), "cpu": dict(timers.cpu, total=total_c),
                     "cells": timers.cells, "real": timers.real})
    rows.sort(key=lambda r: r["cpu"]["total"])
    return rows[len(rows) // 2]


def print_breakdown(row: dict) -> None:
    print(f"\n{'step':<26}{'wall s':>9}{'CPU s':>9}{'share of CPU':>14}")
    named = ("tokenize", "forward", "match")
    rest_w = row["wall"]["total"] - sum(row["wall"].get(k, 0.0) for k in named)
    rest_c = row["cpu"]["total"] - sum(row["cpu"].get(k, 0.0) for k in named)
    labels = {"tokenize": "tokenization", "forward": "model forward", "match": "matching (score_batched)"}
    for k in named:
        w, c = row["wall"].get(k, 0.0), row["cpu"].get(k, 0.0)
        print(f"{labels[k]:<26}{w:>9.3f}{c:>9.3f}{c / row['cpu']['total']:>14.1%}")
    print(f"{'host work (the rest)':<26}{rest_w:>9.3f}{rest_c:>9.3f}{rest_c / row['cpu']['total']:>14.1%}")
    print(f"{'total':<26}{row['wall']['total']:>9.3f}{row['cpu']['total']:>9.3f}")


def print_operators(scorer: Scorer, cands, refs, top: int) -> None:
    CACHE.clear()
    scorer.encoder.text_tokenizer = TextTokenizer(scorer.encoder.spec, scorer.encoder.tokenizer)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        scorer.score(cands, refs)
    events = prof.key_averages()
    total = sum(e.self_cpu_time_total for e in events) / 1e6
    groups: dict[str, float] = defaultdict(float)
    for e in events:
        name = next((g for g, ops in GROUPS.items() if e.key in ops), "other operators")
        groups[name] += e.self_cpu_time_total / 1e6
    print(f"\ntorch operators of one call (torch.profiler, self CPU time; {total:.3f} s in all):")
    for name, sec in sorted(groups.items(), key=lambda kv: -kv[1]):
        print(f"  {name:<24}{sec:>8.3f} s  {sec / total:>6.1%}")
    print(f"\n  top {top} operators:")
    for e in sorted(events, key=lambda e: -e.self_cpu_time_total)[:top]:
        print(f"  {e.key:<52}{e.self_cpu_time_total / 1e6:>8.3f} s {e.count:>7} calls")


def print_python(scorer: Scorer, cands, refs, top: int) -> None:
    CACHE.clear()
    scorer.encoder.text_tokenizer = TextTokenizer(scorer.encoder.spec, scorer.encoder.tokenizer)
    prof = cProfile.Profile()
    prof.enable()
    scorer.score(cands, refs)
    prof.disable()
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out)
    stats.sort_stats("tottime").print_stats(top)
    lines = [ln for ln in out.getvalue().splitlines() if ln.strip()]
    start = next(i for i, ln in enumerate(lines) if ln.lstrip().startswith("ncalls"))
    print(f"\ncProfile of one call, the {top} functions with the most own time (profiling slows Python code):")
    for ln in lines[start:start + top + 1]:
        print("  " + ln[:150])


def print_limit(scorer: Scorer, cands, refs, row: dict) -> None:
    enc = scorer.encoder
    toks = {t.ids.tobytes(): len(t.ids) for t in enc.encode(list(dict.fromkeys(cands + refs)))}
    lengths = list(toks.values())
    blocks = max(scorer.layer, 1)
    flops = hardware.forward_flops(lengths, blocks, enc)
    rates = hardware.probe("cpu", enc)
    rate = rates.rates[scorer.precision].gflops * 1e9
    limit = flops / rate
    fwd_c, total_c = row["cpu"]["forward"], row["cpu"]["total"]
    print(f"\ncompute limit: {len(lengths):,} distinct texts, {sum(lengths):,} tokens, {blocks} blocks -> "
          f"{flops / 1e9:,.1f} GFLOP of matrix products (real tokens); {scorer.precision} matrix products measured "
          f"at {rate / 1e9:,.1f} GFLOP/s on the model's shapes ({rates.threads} thread(s)) -> {limit:.2f} s")
    print(f"  the batches ran {row['cells']:,} cells for {row['real']:,} real tokens "
          f"({row['real'] / max(row['cells'], 1):.1%} real)")
    print(f"  our share of the limit: forward {limit / fwd_c:.1%}, whole call {limit / total_c:.1%} (CPU time)")
    est = hardware.estimate_texts(lengths, blocks, scorer.precision, enc)
    print(f"  hardware.estimate_texts for this call ({scorer.precision}): {est:.2f} s against {total_c:.2f} s "
          "measured (CPU)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="120 pairs, one round")
    ap.add_argument("--pairs", type=int, default=560)
    ap.add_argument("--lp", default="cs-en", help="WMT16 language pair (default cs-en)")
    ap.add_argument("--layer", type=int, default=4)
    ap.add_argument("--precision", default="fp32", choices=["fp32", "bf16"])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1, help="torch threads (default 1, as issue 35's figures)")
    ap.add_argument("--top", type=int, default=12, help="operators and Python functions listed")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    n = 120 if args.quick else args.pairs
    rounds = 1 if args.quick else args.rounds
    cands, refs = read("mt-system", args.lp)[:n], read("reference", args.lp)[:n]
    scorer = Scorer(layer=args.layer, precision=args.precision, device="cpu")
    scorer.score(cands[:32], refs[:32])  # model load, first-call allocations
    print(f"profile of Scorer.score: {n} {args.lp} pairs, all-MiniLM-L6-v2 layer {args.layer}, {args.precision}, "
          f"{torch.get_num_threads()} torch thread(s), torch {torch.__version__}; median of {rounds} round(s)")
    timers = Timers(scorer)
    row = timed_rounds(scorer, timers, cands, refs, rounds)
    print_breakdown(row)
    print_limit(scorer, cands, refs, row)
    print_operators(scorer, cands, refs, args.top)
    print_python(scorer, cands, refs, args.top)


if __name__ == "__main__":
    main()
