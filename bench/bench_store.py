"""The persistent embedding store (issue 43): what it saves, measured in fresh processes.

1. **Cold vs warm, the same test set**: ``score`` of the same pairs (default 2,000 WMT16 DA pairs) in a new process
   with an empty store, then again in another new process with the store the first one filled; bert-score 0.3.13's
   cold time in the same run as the anchor. Each process reports the ``score()`` call's time (model loaded before
   it) and its whole wall time (start-up, imports, model load); the numbers of the two runs are compared bit for bit.
2. **One more system**: a comparison of ten systems (seeded word drops and swaps of newstest2017 de-en references)
   fills the store; then the eleventh system is added to the comparison (eleven systems, one new) with the store
   warm, against scoring that one system's outputs alone with an empty store, and against the eleven-system
   comparison with an empty store.
3. **Two processes at once**: two processes score overlapping halves against one empty store together; their time
   against one process scoring the union alone, and a check that the store's file is sound.
4. **Size**: the store's bytes per 1,000 segments (candidate and reference) at the model's layer.

    python bench/bench_store.py [--pairs 2000] [--segments 500] [--model all-MiniLM-L6-v2]

The processes run one after another (except in 3); with other work on the machine the ratios hold better than the
seconds. Figures in docs/SPEED.md, section 11.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import common  # noqa: F401  (repository on the path, hub offline)

ROOT = Path(__file__).resolve().parents[1]

#: What one measured process runs: score the pairs of a JSON file (or compare its systems), save P/R/F1.
CHILD = r"""
import json, sys, time, warnings
t_start = time.perf_counter()
import numpy as np
spec = json.loads(open(sys.argv[1]).read())
warnings.simplefilter("ignore")
if spec["kind"] == "bert-score":
    import bert_score, torch
    from bertscore_viz.models.spec import bundled_model_path
    scorer = bert_score.BERTScorer(model_type=str(bundled_model_path()), num_layers=spec["layer"], lang="en")
    t0 = time.perf_counter()
    P, R, F = scorer.score(spec["candidates"], spec["references"], batch_size=64)
    call = time.perf_counter() - t0
    out = np.stack([P.numpy(), R.numpy(), F.numpy()]).astype(np.float64)
else:
    from bertscore_viz import Scorer
    from bertscore_viz.engine.store import default_store
    scorer = Scorer(model=spec["model"])
    _ = scorer.encoder  # the model loaded before the timed call
    t0 = time.perf_counter()
    if spec["kind"] == "score":
        res = scorer.score(spec["candidates"], spec["references"])
        out = np.stack([res.precision, res.recall, res.f1])
    else:
        from bertscore_viz.evaluation import compare
        from bertscore_viz.files.dataset import Dataset
        n = len(spec["references"])
        ds = Dataset(spec["systems"], [[r] for r in spec["references"]], None, [str(i + 1) for i in range(n)],
                     list(range(1, n + 1)), [], None)
        cstats = compare.score_dataset(scorer, ds)
        comparison = compare.results_for(scorer, cstats, scorer.layer, False, False)
        out = np.stack([comparison.results[s].f1 for s in spec["systems"]])
    call = time.perf_counter() - t0
    store = default_store()
    info = store.info() if store is not None else None
np.save(spec["out"], out)
print(json.dumps({"call": call, "wall": time.perf_counter() - t_start,
                  "hits": info.hits if spec["kind"] != "bert-score" and info else 0,
                  "written": info.written if spec["kind"] != "bert-score" and info else 0}))
"""


def _wmt16_pairs(n: int) -> tuple[list[str], list[str]]:
    with open(ROOT / "bertscore_viz" / "examples" / "wmt16_da_to_english.csv", encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))[:n]
    return [r["candidate"] for r in rows], [r["reference"] for r in rows]


def _systems(n_segments: int, k: int, seed: int = 20261128) -> tuple[list[str], dict[str, list[str]]]:
    refs = (common.NEWSTEST / "newstest2017-deen-ref.en").read_text(encoding="utf-8").splitlines()[:n_segments]
    rng = random.Random(seed)

    def vary(s: str, drops: int, swaps: int) -> str:
        words = s.split()
        for _ in range(min(drops, max(0, len(words) - 2))):
            words.pop(rng.randrange(len(words)))
        for _ in range(swaps if len(words) > 1 else 0):
            i = rng.randrange(len(words) - 1)
            words[i], words[i + 1] = words[i + 1], words[i]
        return " ".join(words)

    systems = {f"sys{j:02d}": [vary(r, j % 3, 1 + j % 4) for r in refs] for j in range(k)}
    return refs, systems


class Runner:
    def __init__(self, work: Path, model: str, layer: int):
        self.work, self.model, self.layer = work, model, layer
        self.script = work / "child.py"
        self.script.write_text(CHILD, encoding="utf-8")
        self.n = 0

    def start(self, kind: str, store: Path | str, **spec) -> tuple[subprocess.Popen, Path]:
        self.n += 1
        out = self.work / f"out{self.n}.npy"
        path = self.work / f"spec{self.n}.json"
        path.write_text(json.dumps({"kind": kind, "model": self.model, "layer": self.layer, "out": str(out),
                                    **spec}), encoding="utf-8")
        env = dict(os.environ, BERTSCORE_VIZ_STORE=str(store), PYTHONPATH=str(ROOT))
        proc = subprocess.Popen([sys.executable, str(self.script), str(path)], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        return proc, out

    @staticmethod
    def finish(proc: subprocess.Popen, out: Path) -> tuple[dict, object]:
        import numpy as np

        stdout, stderr = proc.communicate()
        if proc.returncode:
            raise SystemExit(f"a measured process failed:\n{stderr[-3000:]}")
        return json.loads(stdout.strip().splitlines()[-1]), np.load(out)

    def run(self, kind: str, store: Path | str, **spec) -> tuple[dict, object]:
        return self.finish(*self.start(kind, store, **spec))


def _store_bytes(store: Path) -> tuple[int, int]:
    con = sqlite3.connect(store / "embeddings-v1.sqlite3")
    entries, size = con.execute("SELECT COUNT(*), COALESCE(SUM(size), 0) FROM entries").fetchone()
    ok = con.execute("PRAGMA integrity_check").fetchone()[0]
    con.close()
    assert ok == "ok", ok
    return int(entries), int(size)


def cold_and_warm(r: Runner, pairs: int) -> None:
    cands, refs = _wmt16_pairs(pairs)
    store = r.work / "store-same"
    anchor, _ = r.run("bert-score", "off", candidates=cands, references=refs)
    cold, cold_out = r.run("score", store, candidates=cands, references=refs)
    warm, warm_out = r.run("score", store, candidates=cands, references=refs)
    same = cold_out.tobytes() == warm_out.tobytes()
    entries, size = _store_bytes(store)
    print(f"\n1. the same {pairs:,} pairs, cold then warm (fresh processes)")
    print(f"   bert-score 0.3.13 (cold):  call {anchor['call']:7.2f} s   process {anchor['wall']:7.2f} s")
    print(f"   ours, empty store:         call {cold['call']:7.2f} s   process {cold['wall']:7.2f} s   "
          f"({cold['written']:,} entries written)")
    print(f"   ours, warm store:          call {warm['call']:7.2f} s   process {warm['wall']:7.2f} s   "
          f"({warm['hits']:,} entries read)")
    print(f"   warm vs cold: {cold['call'] / warm['call']:.1f}x on the call, {cold['wall'] / warm['wall']:.1f}x on the "
          f"process; vs bert-score: {anchor['call'] / warm['call']:.1f}x on the call")
    print(f"   numbers bit-identical: {same}")
    print(f"4. size: {size / 2**20:,.1f} MB of vectors in {entries:,} entries for {pairs:,} segments: "
          f"{size / pairs * 1000 / 2**20:,.1f} MB per 1,000 segments (candidate and reference, one layer)")


def one_more_system(r: Runner, segments: int) -> None:
    refs, systems = _systems(segments, 11)
    ten = {k: v for k, v in systems.items() if k != "sys10"}
    store = r.work / "store-systems"
    fill, _ = r.run("compare", store, systems=ten, references=refs)
    alone, _ = r.run("score", r.work / "store-alone", candidates=systems["sys10"], references=refs)
    added, added_out = r.run("compare", store, systems=systems, references=refs)
    cold, cold_out = r.run("compare", r.work / "store-cold", systems=systems, references=refs)
    print(f"\n2. one more system: {segments:,} segments, ten systems in the store, the eleventh added")
    print(f"   ten systems, empty store (fills it):     call {fill['call']:7.2f} s")
    print(f"   the new system alone, empty store:       call {alone['call']:7.2f} s   process {alone['wall']:7.2f} s")
    print(f"   eleven systems, warm store (one new):    call {added['call']:7.2f} s   process {added['wall']:7.2f} s   "
          f"({added['hits']:,} read, {added['written']:,} written)")
    print(f"   eleven systems, empty store:             call {cold['call']:7.2f} s")
    print(f"   adding one system, warm / that system alone: {added['call'] / alone['call']:.2f}x on the call, "
          f"{added['wall'] / alone['wall']:.2f}x on the process; warm vs cold eleven: "
          f"{cold['call'] / added['call']:.1f}x")
    import numpy as np

    print(f"   eleven-system F1 warm vs cold: max |difference| {float(np.max(np.abs(added_out - cold_out))):.1e}")


def two_at_once(r: Runner, pairs: int) -> None:
    cands, refs = _wmt16_pairs(pairs)
    half = pairs // 2
    quarter = pairs // 4
    store = r.work / "store-two"
    t0 = time.perf_counter()
    a = r.start("score", store, candidates=cands[:half + quarter], references=refs[:half + quarter])
    b = r.start("score", store, candidates=cands[quarter:], references=refs[quarter:])
    (ra, _), (rb, _) = r.finish(*a), r.finish(*b)
    together = time.perf_counter() - t0
    t0 = time.perf_counter()
    one, _ = r.run("score", r.work / "store-one", candidates=cands, references=refs)
    alone = time.perf_counter() - t0
    entries, _ = _store_bytes(store)
    print(f"\n3. two processes at once on one store, {pairs:,} pairs in overlapping halves (a quarter shared)")
    print(f"   both, together: {together:7.2f} s wall ({ra['written']:,} + {rb['written']:,} entries written, "
          f"{entries:,} in the store, integrity ok)")
    print(f"   one process, all pairs, empty store: {alone:7.2f} s wall")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=2000)
    ap.add_argument("--segments", type=int, default=500)
    ap.add_argument("--model", default="all-MiniLM-L6-v2")
    ap.add_argument("--skip", nargs="*", default=[], choices=["same", "systems", "two"])
    args = ap.parse_args()
    from bertscore_viz.models.spec import resolve_model

    layer = resolve_model(args.model).default_layer
    work = Path(tempfile.mkdtemp(prefix="bench_store_"))
    try:
        r = Runner(work, args.model, layer)
        import torch

        print(f"bench_store: {args.model} layer {layer}, torch {torch.__version__}, {os.cpu_count()} cores, "
              f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}")
        if "same" not in args.skip:
            cold_and_warm(r, args.pairs)
        if "systems" not in args.skip:
            one_more_system(r, args.segments)
        if "two" not in args.skip:
            two_at_once(r, args.pairs)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
