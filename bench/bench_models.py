"""Throughput of each catalog model installed here, on the same real WMT16 pairs, models alternating in rounds.

    python bench/bench_models.py [--pairs 300] [--rounds 2]

Each round scores the same pairs (every language pair of WMT16 DA, system output against reference) with every
available model at its default layer, from an empty embedding cache (so every round is a full model pass), and
prints pairs per second per model and the ratio to the bundled model. Rounds alternate between models so that a
shared, busy CPU slows them alike: quote the ratios; the absolute figures depend on the load.
"""

from __future__ import annotations

import argparse
import time

import common  # noqa: F401  (import path, offline mode)
from common import WMT16

from bertscore_viz import Scorer
from bertscore_viz.engine.cache import CACHE
from bertscore_viz.models.catalog import availability, catalog


def pairs(n: int) -> tuple[list[str], list[str]]:
    lps = ("cs-en", "de-en", "fi-en", "ro-en", "ru-en", "tr-en")
    cands, refs = [], []
    for lp in lps:
        mt = (WMT16 / f"DAseg-newstest2016.mt-system.{lp}").read_text(encoding="utf-8").splitlines()
        ref = (WMT16 / f"DAseg-newstest2016.reference.{lp}").read_text(encoding="utf-8").splitlines()
        k = n // len(lps)
        cands += mt[:k]
        refs += ref[:k]
    return cands, refs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    cands, refs = pairs(args.pairs)
    models = [e for e in catalog() if availability(e) == "available"]
    scorers = {e.name: Scorer(model=e.name, layer=e.default_layer) for e in models}
    for s in scorers.values():
        s.score(cands[:2], refs[:2])  # load the model outside the timing
    times: dict[str, list[float]] = {name: [] for name in scorers}
    for _ in range(args.rounds):
        for name, s in scorers.items():
            CACHE.clear()
            s.encoder._tok_cache.clear()
            t0 = time.perf_counter()
            s.score(cands, refs)
            times[name].append(time.perf_counter() - t0)
    base = min(times[models[0].name])
    print(f"{len(cands)} WMT16 pairs, fp32, CPU, best of {args.rounds} alternating rounds (other processes running)")
    print(f"{'model':28} {'layer':>5} {'pairs/s':>8} {'time vs bundled':>16}")
    for e in models:
        best = min(times[e.name])
        print(f"{e.name:28} {scorers[e.name].layer:>5} {len(cands) / best:>8.1f} {best / base:>15.2f}x")


if __name__ == "__main__":
    main()
