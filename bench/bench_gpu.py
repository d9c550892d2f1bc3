"""Our speed against bert-score 0.3.13 with a large model on a GPU (roberta-large, layer 17, by default).

Ready for the first CUDA run: on a machine with a GPU and internet access it runs as is and downloads the model
(``python bench/bench_gpu.py``); any hub name or local directory via ``--model``. Both scorers load the same model
on the same device; every round scores the same WMT16 pairs with bert-score's ``BERTScorer.score`` and our
``Scorer.score`` (our embedding cache emptied first), alternating which goes first; it prints the ratio of median
times, the largest |dF1| between the two, and our peak device memory.

On this CPU-only machine it runs on a local randomly initialised model of roberta-large's shape (``--random-shape``
builds one, with the bundled tokenizer) and a small number of pairs, so that the script itself is exercised:

    python bench/bench_gpu.py                                              (GPU machine: roberta-large, 3,360 pairs)
    python bench/bench_gpu.py --model microsoft/deberta-xlarge-mnli --layer 40
    python bench/bench_gpu.py --precision fp16                             (ours in fp16; bert-score stays fp32)
    python bench/bench_gpu.py --random-shape roberta-large --pairs 16 --rounds 1   (CPU smoke run)
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

_OFFLINE_BEFORE = {k: os.environ.get(k) for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
import common  # noqa: E402,F401 (the import path and data locations; also sets offline mode, undone below)
from bench_engine import alternate, wmt16_pairs  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="roberta-large", help="hub name or local directory (default roberta-large)")
    ap.add_argument("--random-shape", default=None, help="use a random local model of this shape instead "
                    "(roberta-large, deberta-xlarge, mpnet-base): for a run without a GPU or internet")
    ap.add_argument("--intermediate", type=int, default=256, help="feed-forward width of the --random-shape model "
                    "(narrow by default: a quick CPU run; the real models are 3,072 or 4,096 wide)")
    ap.add_argument("--layer", type=int, default=None, help="default: the model's tuned layer (17 for roberta-large)")
    ap.add_argument("--pairs", type=int, default=None, help="WMT16 pairs per call (default all 3,360)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=64, help="both scorers (bert-score's default)")
    ap.add_argument("--device", default=None, help="default cuda when available, else cpu")
    ap.add_argument("--precision", default="fp32", choices=["fp32", "fp16", "bf16"], help="ours only")
    ap.add_argument("--offline", action="store_true", help="do not download (a local directory or the HF cache)")
    args = ap.parse_args()
    # Online unless asked otherwise: common.py turns the hub off for the other benchmarks.
    for key, value in _OFFLINE_BEFORE.items():
        if args.offline:
            os.environ[key] = "1"
        elif value is None:
            os.environ.pop(key, None)

    import bert_score
    import numpy as np
    import torch
    import transformers

    from bertscore_viz import Scorer
    from bertscore_viz.engine.cache import CACHE
    from bertscore_viz.models.spec import resolve_model

    model = args.model
    if args.random_shape:
        from bench_host import random_model

        model = random_model(args.random_shape, intermediate=args.intermediate)
    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    spec = resolve_model(model)
    layer = args.layer if args.layer is not None else spec.default_layer
    if layer is None:
        sys.exit(f"No default layer is known for {model!r}: pass --layer N.")
    cands, refs = wmt16_pairs()
    n = args.pairs or len(cands)
    cands, refs = cands[:n], refs[:n]
    gpu = torch.cuda.get_device_name(torch.device(device)) if device.startswith("cuda") else "no GPU"
    print(f"bert-score {bert_score.__version__} against ours: "
          f"model {spec.name}, layer {layer}, {n:,} WMT16 pairs, batch size {args.batch_size}, device {device} "
          f"({gpu}), ours in {args.precision}, torch {torch.__version__}, transformers {transformers.__version__}, "
          f"{torch.get_num_threads()} CPU threads")

    t = time.perf_counter()
    theirs = bert_score.BERTScorer(model_type=spec.source, num_layers=layer, batch_size=args.batch_size,
                                   device=device)
    ours = Scorer(model=spec, layer=layer, batch_size=args.batch_size, device=device, precision=args.precision)
    theirs.score(cands[:8], refs[:8])
    ours.score(cands[:8], refs[:8])
    print(f"loaded and warmed up both in {time.perf_counter() - t:.1f} s")

    def sync():
        if device.startswith("cuda"):
            torch.cuda.synchronize()

    def run_theirs():
        f = theirs.score(cands, refs)[2].cpu().numpy()
        sync()
        return f

    def run_ours():
        CACHE.clear()
        if device.startswith("cuda"):
            torch.cuda.reset_peak_memory_stats()
        f = ours.score(cands, refs).f1
        sync()
        return f

    t_theirs, t_ours, max_df = [], [], 0.0
    for r in range(args.rounds):
        f_theirs, f_ours = alternate(r, run_theirs, run_ours, t_theirs, t_ours)
        max_df = max(max_df, float(np.max(np.abs(f_theirs - f_ours))))
        print(f"  round {r + 1}: bert-score {t_theirs[-1]:.2f} s, ours {t_ours[-1]:.2f} s", flush=True)
    mt, mo = statistics.median(t_theirs), statistics.median(t_ours)
    peak = (f", our peak device memory {torch.cuda.max_memory_allocated() / 2**20:,.0f} MB"
            if device.startswith("cuda") else "")
    print(f"bert-score {n / mt:,.1f} pairs/s, ours {n / mo:,.1f} pairs/s -> ours {mt / mo:.2f}x  "
          f"max|dF1| = {max_df:.1e}{peak}")


if __name__ == "__main__":
    main()
