"""The Compare page's work, timed: many systems on summary-length text, and a large test set.

  (a) ``--systems`` systems x ``--segments`` segments of about ``--words`` words (default 16 x 100 x 60), from a
      cold start (a fresh process: imports, model load, one model pass for every system at the default layer,
      results, bootstrap significance, tables), against ``Scorer.score`` on the same pairs in another fresh process
      (``model_pass_over_engine``: the issue's target is at most 1.25). Then one more pass for another layer, and
      the toggle re-render: ``Scorer.result`` for every system after a change of idf, a computed layer or
      rescaling, plus the bootstrap and tables the page redraws (target: under 1 s).
  (b) ``--large-segments`` x ``--large-systems`` (default 10,000 x 4): time and peak resident memory of the
      same path, run in a fresh child process so that (a) does not inflate its memory.

Texts: references are consecutive sentences of ``data/newstest2017-english`` joined to about the
requested length; each system is a seeded perturbation of them of its own strength (word drops, swaps,
replacements from other segments, truncation), so the systems differ.

Run:  python bench/bench_compare.py                                  (full sizes; the issue's figures)
      python bench/bench_compare.py --systems 3 --segments 10 --large-segments 200 --large-systems 2   (quick)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

T_START = time.perf_counter()
from common import NEWSTEST  # noqa: E402 (sets the import path and offline mode first)


def sentences() -> list[str]:
    out: list[str] = []
    for f in sorted(NEWSTEST.glob("newstest2017-*-ref.en")):
        out.extend(line.strip() for line in f.read_text(encoding="utf-8").splitlines() if line.strip())
    return out


def references(n: int, words: int) -> list[str]:
    """``n`` texts of about ``words`` words (consecutive sentences joined), or single sentences if words <= 0."""
    sents = sentences()
    if words <= 0:
        if n > len(sents):
            sents = (sents * (n // len(sents) + 1))
        return sents[:n]
    out, cur, i = [], [], 0
    while len(out) < n:
        s = sents[i % len(sents)]
        i += 1
        cur.append(s)
        if sum(len(x.split()) for x in cur) >= words:
            out.append(" ".join(cur))
            cur = []
    return out


def perturb(refs: list[str], strength: float, seed: int) -> list[str]:
    import numpy as np

    rng = np.random.default_rng(seed)
    vocab = " ".join(refs[: min(len(refs), 500)]).split()
    out = []
    for r in refs:
        w = r.split()
        w = [x for x in w if rng.random() > strength * 0.5] or w[:1]  # drops
        for _ in range(int(len(w) * strength * 0.3)):  # swaps
            k = int(rng.integers(0, max(1, len(w) - 1)))
            if k + 1 < len(w):
                w[k], w[k + 1] = w[k + 1], w[k]
        w = [vocab[int(rng.integers(len(vocab)))] if rng.random() < strength * 0.3 else x for x in w]  # errors
        if rng.random() < strength:
            w = w[: max(1, int(len(w) * (1 - strength * 0.5)))]  # truncation
        out.append(" ".join(w))
    return out


def make_dataset(n_systems: int, n_segments: int, words: int):
    from bertscore_viz.files.dataset import Dataset

    refs = references(n_segments, words)
    systems = {f"sys{k:02d}": perturb(refs, 0.05 + 0.5 * k / max(1, n_systems - 1), seed=k) for k in range(n_systems)}
    return Dataset(systems, [[r] for r in refs], None, [str(i + 1) for i in range(n_segments)],
                   list(range(2, n_segments + 2)))


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_engine(n_systems: int, n_segments: int, words: int) -> dict:
    """``Scorer.score`` on the same pairs (every system's outputs in one call), after the model is loaded: the
    engine's own time for what the page scores."""
    from bertscore_viz import Scorer

    ds = make_dataset(n_systems, n_segments, words)
    scorer = Scorer()
    _ = scorer.encoder
    cands = [c for name in ds.systems for c in ds.systems[name]]
    refs = [group for _ in ds.systems for group in ds.references]
    t0 = time.perf_counter()
    scorer.score(cands, refs)
    return {"engine_score_s": time.perf_counter() - t0, "peak_rss_mb": peak_rss_mb()}


def run(n_systems: int, n_segments: int, words: int, toggles: bool) -> dict:
    """The page's path in this process; times in seconds."""
    t0 = time.perf_counter()
    from bertscore_viz import Scorer
    from bertscore_viz.evaluation import compare
    from bertscore_viz.figures import tables

    t_import = time.perf_counter() - t0
    ds = make_dataset(n_systems, n_segments, words)
    t0 = time.perf_counter()
    scorer = Scorer()
    _ = scorer.encoder
    t_load = time.perf_counter() - t0
    t0 = time.perf_counter()
    last = [0, 0]
    cstats = compare.score_dataset(scorer, ds, progress=lambda d, t: last.__setitem__(slice(None), [d, t]))
    t_match = time.perf_counter() - t0
    t0 = time.perf_counter()
    comparison = compare.results_for(scorer, cstats, scorer.layer, False)
    t_results = time.perf_counter() - t0
    t0 = time.perf_counter()
    sig = compare.significance(comparison)
    table = tables.system_table(comparison, sig)
    tables.segment_table(ds, comparison)
    tables.length_buckets(ds, comparison)
    t_tables = time.perf_counter() - t0
    out = {"systems": n_systems, "segments": n_segments, "words_per_reference": words,
           "distinct_sentences_embedded": last[1], "import_s": t_import, "model_load_s": t_load,
           "model_pass_s": t_match, "results_s": t_results, "significance_and_tables_s": t_tables,
           "full_results_from_process_start_s": time.perf_counter() - T_START,
           "best": str(table.loc[0, "System"])}
    if toggles:
        t0 = time.perf_counter()
        more = compare.add_layers(scorer, ds, cstats, [max(0, scorer.layer - 1)])
        out["another_layer_pass_s"] = time.perf_counter() - t0
        for name, kw in (("toggle_idf", dict(layer=scorer.layer, idf=True)),
                         ("toggle_layer_computed", dict(layer=max(0, scorer.layer - 1), idf=False)),
                         ("toggle_rescale", dict(layer=scorer.layer, idf=False, rescale=True))):
            t0 = time.perf_counter()
            c = compare.results_for(scorer, more, **kw)
            t_res = time.perf_counter() - t0
            s = compare.significance(c)
            tables.system_table(c, s)
            out[f"{name}_results_s"] = t_res
            out[f"{name}_rerender_s"] = time.perf_counter() - t0
    out["peak_rss_mb"] = peak_rss_mb()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--systems", type=int, default=16)
    ap.add_argument("--segments", type=int, default=100)
    ap.add_argument("--words", type=int, default=60, help="words per reference in (a)")
    ap.add_argument("--large-systems", type=int, default=4)
    ap.add_argument("--large-segments", type=int, default=10_000)
    ap.add_argument("--large-words", type=int, default=0, help="words per reference in (b); 0 = one sentence")
    ap.add_argument("--skip-a", action="store_true")
    ap.add_argument("--skip-b", action="store_true")
    ap.add_argument("--_child", dest="child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--_engine", dest="engine", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        n_sys, n_seg, words = (int(x) for x in args.child.split(","))
        print(json.dumps(run_engine(n_sys, n_seg, words) if args.engine else run(n_sys, n_seg, words, toggles=True)))
        return
    results = {}
    for part, (n_sys, n_seg, words), skip in (("a", (args.systems, args.segments, args.words), args.skip_a),
                                              ("b", (args.large_systems, args.large_segments, args.large_words),
                                               args.skip_b)):
        if skip:
            continue
        print(f"({part}) {n_sys} systems x {n_seg:,} segments ({words or 'sentence'} words), fresh process...",
              flush=True)
        env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
        res = {}
        for extra in (["--_engine"], []):  # the engine alone first, then the page's path, each in a fresh process
            proc = subprocess.run([sys.executable, __file__, f"--_child={n_sys},{n_seg},{words}"] + extra, env=env,
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                print(proc.stderr[-3000:])
                raise SystemExit(proc.returncode)
            got = json.loads(proc.stdout.strip().splitlines()[-1])
            if extra:
                res["engine_score_s"] = got["engine_score_s"]
                res["engine_peak_rss_mb"] = got["peak_rss_mb"]
            else:
                res.update(got)
        res["model_pass_over_engine"] = res["model_pass_s"] / res["engine_score_s"]
        results[part] = res
        for k, v in res.items():
            print(f"  {k:38s} {v:.3f}" if isinstance(v, float) else f"  {k:38s} {v}")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
