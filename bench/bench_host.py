"""Host-side work and cached bytes per sentence, before (the old all-layers path) and after, for large shapes.

"Host-side work" is everything ``Scorer.match`` does besides the model's forward pass (stacking, normalising,
copying, caching, matching), measured as the CPU time of the calling thread at one torch thread, minus the CPU
time spent inside the model's forward (timed with hooks on the model). At one thread all of torch's work runs in
the calling thread, so the figure does not depend on other processes sharing the machine. Cached bytes are what
the embedding cache holds afterwards, per distinct sentence.

The shapes are those of issue 10's table: the bundled MiniLM (real weights, layer 4) and randomly initialised BERT
models of the shape of all-mpnet-base-v2 (12 x 768, layer 7), roberta-large (24 x 1024, layer 17) and
deberta-xlarge-mnli (48 x 1024, layer 40), saved with the bundled tokenizer. Host-side work depends on the layers
kept, the hidden size and the tokens, not on the weights or the feed-forward width, so the random models use a
narrow feed-forward layer (``--intermediate``, default 256) to keep their forward pass short; it is not counted.

"Before" is the code of main before issue 10 (``bench/legacy_path.py``), run through the same encoder and model in
the same process, alternating with "after" in every round.

Run:  python bench/bench_host.py                 (all four shapes, 32 WMT16 pairs = 64 sentences, 3 rounds)
      python bench/bench_host.py --quick         (MiniLM and roberta-large shapes, 8 pairs, 1 round)
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from common import ROOT, WMT16  # noqa: F401 (sets the import path and offline mode first)
from legacy_path import LegacyCache, legacy_match

#: name -> (layers, hidden, heads, layer scored): the shapes of issue 10's table.
SHAPES = {
    "minilm": (6, 384, 12, 4),
    "mpnet-base": (12, 768, 12, 7),
    "roberta-large": (24, 1024, 16, 17),
    "deberta-xlarge": (48, 1024, 16, 40),
}
LABELS = {
    "minilm": "bundled MiniLM, layer 4",
    "mpnet-base": "all-mpnet-base-v2 shape (12 x 768), layer 7",
    "roberta-large": "roberta-large shape (24 x 1024), layer 17",
    "deberta-xlarge": "deberta-xlarge-mnli shape (48 x 1024), layer 40",
}


def models_dir() -> Path:
    return Path(os.environ.get("BERTSCORE_VIZ_BENCH_MODELS", Path.home() / ".cache" / "bertscore-viz" / "random"))


def random_model(shape: str, intermediate: int = 256, root: Path | None = None, seed: int = 0) -> str:
    """A randomly initialised BertModel of ``shape`` saved with the bundled tokenizer; its directory (made once).

    The directory is named after the shape (``roberta-large``), so the model registry gives it that model's
    default layer.
    """
    import torch
    import transformers

    from bertscore_viz.models.spec import bundled_model_path

    n_layers, hidden, heads, _ = SHAPES[shape]
    path = (root or models_dir()) / f"i{intermediate}" / shape
    if (path / "config.json").is_file() and (path / "model.safetensors").is_file():
        return str(path)
    path.mkdir(parents=True, exist_ok=True)
    transformers.utils.logging.set_verbosity_error()
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(bundled_model_path()), local_files_only=True)
    config = transformers.BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=hidden,
                                     num_hidden_layers=n_layers, num_attention_heads=heads,
                                     intermediate_size=intermediate, max_position_embeddings=512)
    torch.manual_seed(seed)
    model = transformers.BertModel(config, add_pooling_layer=False).eval()
    model.save_pretrained(str(path))
    tokenizer.save_pretrained(str(path))
    return str(path)


class ForwardClock:
    """CPU time of the calling thread spent inside the model's forward passes (hooks on the top-level module)."""

    def __init__(self, module):
        self.seconds = 0.0
        self._start = 0.0
        self._handles = [module.register_forward_pre_hook(self._pre), module.register_forward_hook(self._post)]

    def _pre(self, *_):
        self._start = time.thread_time()

    def _post(self, *_):
        self.seconds += time.thread_time() - self._start

    def close(self):
        for h in self._handles:
            h.remove()


def measure(scorer, candidates: list[str], references: list[str], layer: int, which: str) -> dict:
    """One fresh run of ``which`` ("before" or "after") on the pairs; host-side ms and cached bytes per sentence.

    Both start from an empty cache of their own; the tokenizer cache is warmed first (both paths share it).
    """
    from bertscore_viz.engine.cache import EmbeddingCache

    enc = scorer.encoder
    sentences = len(set(enc.encode(candidates + references)[i].ids.tobytes()
                        for i in range(len(candidates) + len(references))))
    clock = ForwardClock(enc._view(max(layer, 1)))
    try:
        if which == "before":
            cache = LegacyCache()
            t0 = time.thread_time()
            legacy_match(enc, candidates, references, layer, cache, batch_size=scorer.batch_size)
            total = time.thread_time() - t0
        else:
            cache = EmbeddingCache()
            saved, enc.cache = enc.cache, cache
            try:
                t0 = time.thread_time()
                scorer.match(candidates, references, layers=[layer])
                total = time.thread_time() - t0
            finally:
                enc.cache = saved
    finally:
        clock.close()
    return {"host_ms": 1000 * (total - clock.seconds) / sentences, "forward_ms": 1000 * clock.seconds / sentences,
            "cached_bytes": cache.nbytes / sentences, "sentences": sentences}


def compare(scorer, candidates, references, layer: int, rounds: int, stat=statistics.median) -> dict:
    """Before and after, alternating (before first in even rounds); medians over rounds (``stat=min``: the best
    round of each, which other processes on the machine disturb least)."""
    runs = {"before": [], "after": []}
    for r in range(rounds):
        for which in (("before", "after") if r % 2 == 0 else ("after", "before")):
            runs[which].append(measure(scorer, candidates, references, layer, which))
    out = {}
    for which, recs in runs.items():
        out[which] = {k: stat(x[k] for x in recs) for k in recs[0]}
    return out


def resident_child(path: str, warm_up: bool) -> None:
    """In a fresh process: load the encoder (optionally then run the old warm-up pass through every layer), print
    the resident memory in MB."""
    import resource

    import torch

    from bertscore_viz.engine.encoder import Encoder
    from bertscore_viz.models.spec import resolve_model

    enc = Encoder(resolve_model(path), device="cpu")
    if warm_up:  # what the encoder did at load before issue 10
        with torch.inference_mode():
            enc.model(input_ids=torch.tensor([enc.tokenizer("a")["input_ids"]]), output_hidden_states=True)
    with open("/proc/self/status", encoding="ascii") as f:
        rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:")) / 1024
    print(f"{rss:.0f} {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f}")


def wmt_pairs(n: int) -> tuple[list[str], list[str]]:
    mt = (WMT16 / "DAseg-newstest2016.mt-system.de-en").read_text(encoding="utf-8").splitlines()
    ref = (WMT16 / "DAseg-newstest2016.reference.de-en").read_text(encoding="utf-8").splitlines()
    return mt[:n], ref[:n]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="two shapes, 8 pairs, one round")
    ap.add_argument("--pairs", type=int, default=32, help="WMT16 de-en pairs (two sentences each)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--shapes", default=",".join(SHAPES), help="comma-separated: " + ", ".join(SHAPES))
    ap.add_argument("--intermediate", type=int, default=256, help="feed-forward width of the random models")
    ap.add_argument("--resident", default=None, metavar="SHAPE",
                    help="instead: resident memory after loading a random model of SHAPE (real feed-forward width "
                         "4,096), with and without the old warm-up pass through every layer")
    ap.add_argument("--_resident-child", dest="resident_child", nargs=2, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.resident_child:
        resident_child(args.resident_child[0], args.resident_child[1] == "1")
        return
    if args.resident:
        import subprocess
        import sys

        path = random_model(args.resident, intermediate=4096)
        size = sum(f.stat().st_size for f in Path(path).glob("*.safetensors")) / 2**20
        print(f"resident memory after loading a random {args.resident}-shaped model ({size:,.0f} MB of weights):")
        for warm, label in ((True, "before: load + warm-up pass through every layer"),
                            (False, "after: load, hooks installed without a pass")):
            out = subprocess.run([sys.executable, __file__, "--_resident-child", path, "1" if warm else "0"],
                                 capture_output=True, text=True, check=True).stdout.split()
            print(f"  {label:<50} {float(out[-2]):>7,.0f} MB resident")
        return

    import torch

    from bertscore_viz import Scorer

    torch.set_num_threads(1)
    shapes = ["minilm", "roberta-large"] if args.quick else args.shapes.split(",")
    n = 8 if args.quick else args.pairs
    rounds = 1 if args.quick else args.rounds
    cands, refs = wmt_pairs(n)
    print(f"host-side work per sentence, one torch thread, {n} WMT16 de-en pairs, median of {rounds} round(s); "
          f"torch {torch.__version__}; other processes may share the machine (CPU time of this thread is measured)")
    print(f"{'configuration':<50} {'host ms/sent before':>19} {'after':>7} {'ratio':>6}   "
          f"{'cached MB/sent before':>21} {'after':>7}  {'forward ms/sent':>15}")
    for shape in shapes:
        layer = SHAPES[shape][3]
        model = None if shape == "minilm" else random_model(shape, args.intermediate)
        scorer = Scorer(model=model, layer=layer)
        scorer.match(cands[:2], refs[:2])  # load, build the truncated view, warm up
        res = compare(scorer, cands, refs, layer, rounds)
        b, a = res["before"], res["after"]
        print(f"{LABELS[shape]:<50} {b['host_ms']:>19.3f} {a['host_ms']:>7.3f} {b['host_ms'] / a['host_ms']:>5.1f}x"
              f"   {b['cached_bytes'] / 2**20:>21.3f} {a['cached_bytes'] / 2**20:>7.3f}  {a['forward_ms']:>15.1f}")
        del scorer
        from bertscore_viz.engine import encoder as _enc

        _enc._ENCODERS.clear()  # free the model before loading the next shape
        import gc

        gc.collect()


if __name__ == "__main__":
    main()
