"""Document context (issue 45) against document-level human judgments: does BERTScore with the previous k
segments agree better with expert MQM than sentence-level BERTScore, and what does it cost?

Data. Expert MQM annotations in Google's layout (``bertscore_viz.files.mqm``), whose raters saw each segment in its
document. The measurement in docs/CONTEXT.md used WMT21's TED talks, Chinese to English
(``ted/zhen/mqm-ted_zhen.tsv`` of github.com/google/wmt-mqm-human-evaluation, Freitag et al. 2021): whole talks,
every segment with its talk and position, 13 MT systems and two human translations. Not in this repository: give
the file's path. The reference is one of the human translations (``--reference``, default ``refB``, the better one
by MQM); the other human translation is left out (``--drop``). Only segments that every system and the reference
have are scored, so every system is judged on the same segments; the context of a segment is the previous scored
segments of its document.

For each context k = 0, 1, 2, 3 and each context source (``ref``: both sides after the previous references, the
paper's; ``own``: each side after its own previous segments), BERTScore F1 with the bundled model, then against
the human score (-MQM, higher is better):
- segment level: pairwise accuracy with tie calibration (acc_eq, grouped by segment, with a 95% interval),
  Kendall's tau-b and Pearson over all outputs, and Kendall's tau-b within each segment averaged over segments;
- document level: Pearson and Kendall over (system, document) means;
- system level: Pearson over system means, soft and system-level pairwise accuracy;
- the permutation tests of ``meta_evaluate`` between the best configuration and each other;
- seconds to score (cache emptied, persistent store off).

Run:  python bench/bench_context_mqm.py --mqm PATH/mqm-ted_zhen.tsv [--json OUT.json]
      python bench/bench_context_mqm.py --mqm PATH --quick     (k = 0 and 1, 3 documents: checks that it runs)
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings
from collections import defaultdict

import numpy as np
from common import ROOT  # noqa: F401, E402 (sets the import path and offline mode first)

os.environ.setdefault("BERTSCORE_VIZ_STORE", "off")


def _segments(data, reference: str, drop: set[str], max_docs: int | None):
    ref = data.by_system(reference)
    if not ref:
        raise SystemExit(f"no system named {reference!r} in the file; its systems: {data.systems}")
    systems = [s for s in data.systems if s != reference and s not in drop]
    by_sys = {s: data.by_system(s) for s in systems}
    complete = [seg for seg in ref if all(seg in by_sys[s] for s in systems)]
    docs = list(dict.fromkeys(ref[seg].doc for seg in complete))
    if max_docs:
        docs = docs[:max_docs]
    keep = sorted((seg for seg in complete if ref[seg].doc in docs),
                  key=lambda seg: (docs.index(ref[seg].doc), ref[seg].position))
    return systems, by_sys, ref, keep, len(ref) - len(complete)


def _kendall(a, b) -> float:
    from scipy.stats import kendalltau
    return float(kendalltau(a, b, variant="b").statistic)


def _pearson(a, b) -> float:
    return float(np.corrcoef(a, b)[0, 1])


def _paired_bootstrap(scores: dict, human, seg_arr, segs, n: int, seed: int = 12345) -> dict:
    """Each configuration's difference from k=0 in Kendall's tau-b and Pearson over all outputs, with the 2.5th and
    97.5th percentiles of the same difference over ``n`` resamples of the segments (every system's outputs of a
    drawn segment go together; the same draws for every configuration)."""
    rng = np.random.default_rng(seed)
    rows = [np.flatnonzero(seg_arr == g) for g in segs]
    draws = [np.concatenate([rows[j] for j in rng.integers(0, len(rows), len(rows))]) for _ in range(n)]
    base = scores["k=0"]
    out = {}
    for name, f in scores.items():
        if name == "k=0":
            continue
        d_tau = [_kendall(f[ix], human[ix]) - _kendall(base[ix], human[ix]) for ix in draws]
        d_r = [_pearson(f[ix], human[ix]) - _pearson(base[ix], human[ix]) for ix in draws]
        out[name] = {"tau": (_kendall(f, human) - _kendall(base, human), *np.percentile(d_tau, [2.5, 97.5])),
                     "r": (_pearson(f, human) - _pearson(base, human), *np.percentile(d_r, [2.5, 97.5]))}
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mqm", required=True, help="an MQM file in Google's layout (e.g. mqm-ted_zhen.tsv)")
    p.add_argument("--reference", default="refB")
    p.add_argument("--drop", nargs="*", default=["ref"], help="systems left out (default: ref, the other human)")
    p.add_argument("--contexts", type=int, nargs="*", default=[0, 1, 2, 3])
    p.add_argument("--sources", nargs="*", default=["ref", "own"])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--resamples", type=int, default=1000, help="paired bootstrap resamples of the segments")
    p.add_argument("--device", default="cpu")
    p.add_argument("--model", default=None, help="the model (default: the bundled one; e.g. all-mpnet-base-v2)")
    p.add_argument("--json", help="write every figure to this JSON file")
    args = p.parse_args()

    from bertscore_viz import Scorer, meta_evaluate
    from bertscore_viz.engine.cache import CACHE
    from bertscore_viz.files.mqm import read_mqm

    data = read_mqm(args.mqm)
    systems, by_sys, ref, segs, incomplete = _segments(data, args.reference, set(args.drop),
                                                       3 if args.quick else None)
    contexts = [0, 1] if args.quick else args.contexts
    cands, refs, docs, sys_of, seg_of, human = [], [], [], [], [], []
    for s in systems:
        for seg in segs:
            o = by_sys[s][seg]
            cands.append(o.target)
            refs.append(ref[seg].target)
            docs.append(f"{s}\x1f{o.doc}")  # each system's own document: own context never mixes systems
            sys_of.append(s)
            seg_of.append(seg)
            human.append(-o.mqm)
    human_a = np.asarray(human)
    n_docs = len({ref[seg].doc for seg in segs})
    print(f"{args.mqm}: {data.rows:,} rows, {len(data.problems)} problem(s); reference {args.reference}; "
          f"{len(systems)} systems; {len(segs)} segments in {n_docs} documents "
          f"({incomplete} segments left out: not every system has them); {len(cands):,} outputs")

    scores: dict[str, np.ndarray] = {}
    seconds: dict[str, float] = {}
    configs = [(0, "ref")] + [(k, src) for src in args.sources for k in contexts if k > 0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        Scorer(model=args.model, device=args.device).score(cands[:4], refs[:4])  # warm-up: the model loaded
        for k, src in configs:
            name = "k=0" if k == 0 else f"k={k} {src}"
            CACHE.clear()
            start = time.perf_counter()
            res = Scorer(model=args.model, device=args.device, context=k, context_source=src).score(
                cands, refs, doc_ids=docs)
            seconds[name] = time.perf_counter() - start
            scores[name] = np.asarray(res.raw_f1, dtype=float)
            print(f"  scored {name}: {seconds[name]:.1f} s", flush=True)
    CACHE.clear()

    figures: dict[str, dict] = {}
    seg_arr, sys_arr = np.asarray(seg_of), np.asarray(sys_of)
    doc_key = np.asarray([f"{s}\x1f{ref[g].doc}" for s, g in zip(sys_of, seg_of)])
    for name, f in scores.items():
        per_seg = [_kendall(f[seg_arr == g], human_a[seg_arr == g]) for g in segs]
        keys = list(dict.fromkeys(doc_key))
        doc_f = [f[doc_key == d].mean() for d in keys]
        doc_h = [human_a[doc_key == d].mean() for d in keys]
        sys_f = [f[sys_arr == s].mean() for s in systems]
        sys_h = [human_a[sys_arr == s].mean() for s in systems]
        figures[name] = {
            "seconds": seconds[name], "x_k0": seconds[name] / seconds["k=0"],
            "seg_kendall": _kendall(f, human_a), "seg_pearson": _pearson(f, human_a),
            "seg_kendall_by_item": float(np.nanmean(per_seg)),
            "doc_pearson": _pearson(doc_f, doc_h), "doc_kendall": _kendall(doc_f, doc_h),
            "sys_pearson": _pearson(sys_f, sys_h), "sys_kendall": _kendall(sys_f, sys_h),
        }
    deltas = _paired_bootstrap(scores, human_a, seg_arr, segs, args.resamples)
    start = time.perf_counter()
    meta = meta_evaluate(scores, human_a, systems=sys_of, items=seg_of)
    meta_seconds = time.perf_counter() - start
    for name, m in meta.metrics.items():
        figures[name].update(acc_eq=m.acc_eq, acc_eq_ci=m.acc_eq_ci, epsilon=m.epsilon, spa=m.spa,
                             sys_accuracy=m.system)

    print(f"\nBERTScore F1 ({args.model or 'bundled model'}) against -MQM; acc_eq grouped {meta.grouping}; "
          f"meta-evaluation {meta_seconds:.0f} s")
    head = (f"{'config':>10} {'seconds':>8} {'x k=0':>6} | {'acc_eq':>7} {'95% CI':>15} {'tau':>7} {'tau/seg':>7} "
            f"{'r':>7} | {'doc r':>7} {'doc tau':>7} | {'sys r':>7} {'sys tau':>7} {'SPA':>7} {'sysacc':>7}")
    print(head)
    for name, v in figures.items():
        ci = v["acc_eq_ci"]
        ci_s = f"[{ci[0]:.4f}, {ci[1]:.4f}]" if ci else "-"
        print(f"{name:>10} {v['seconds']:8.1f} {v['x_k0']:6.2f} | {v['acc_eq']:7.4f} {ci_s:>15} "
              f"{v['seg_kendall']:7.4f} {v['seg_kendall_by_item']:7.4f} {v['seg_pearson']:7.4f} | "
              f"{v['doc_pearson']:7.4f} {v['doc_kendall']:7.4f} | {v['sys_pearson']:7.4f} {v['sys_kendall']:7.4f} "
              f"{v['spa']:7.4f} {v['sys_accuracy']:7.4f}")
    print(f"\nsegment level, each configuration against k=0: the difference in Kendall's tau-b and Pearson over all "
          f"outputs, with a 95% interval from {args.resamples} paired bootstrap resamples of the segments")
    for name, d in deltas.items():
        print(f"  {name:>8}: tau {d['tau'][0]:+.4f} [{d['tau'][1]:+.4f}, {d['tau'][2]:+.4f}]   "
              f"r {d['r'][0]:+.4f} [{d['r'][1]:+.4f}, {d['r'][2]:+.4f}]")
    print("\ntests (meta_evaluate: the best configuration against each other; permutation p values):")
    by_level = defaultdict(list)
    for t in meta.tests:
        by_level[t.level].append(t)
    for level, tests in by_level.items():
        for t in tests:
            print(f"  {level:>7}: {t.best} vs {t.other}: delta {t.delta:+.4f}, p = {t.p_value:.3f}"
                  f"{' (significant)' if t.significant else ''}")
    if args.json:
        out = {"file": str(args.mqm), "model": args.model, "reference": args.reference, "systems": systems,
               "segments": len(segs), "documents": n_docs, "outputs": len(cands), "figures": figures,
               "tests": [t.__dict__ for t in meta.tests], "grouping": meta.grouping, "deltas_vs_k0": deltas}
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(out, fh, indent=1, default=float)
        print(f"written {args.json}")


if __name__ == "__main__":
    main()
