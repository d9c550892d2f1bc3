"""Consensus among samples (issue 34): our ``consensus`` against bert-score and ``mbrs`` on the same N x N pairs.

Inputs: WMT16 DA segments (six language pairs, spread through the files). Each input's N samples are its system
output and N - 1 "paraphrase-like neighbours" of it: the output with one to four random word edits (a word dropped,
two swapped, one repeated, or one replaced by a word of the reference), seeded. ``--sentences K`` makes each sample K
consecutive segments (long samples). The reference is the WMT reference (for the oracle).

Timed, each from a cold start of its own embeddings (our cache emptied; bert-score and mbrs keep none between calls):
- ours: ``consensus(groups)``: every distinct text embedded once, all N^2 pairs of each input matched in blocks;
  also "ours, match only" (the embeddings cached: the matching alone).
- bert-score, one call: ``BERTScorer.score`` over all N^2 pairs of all inputs flattened. bert-score 0.3.13
  deduplicates the sentences of one call, so it too embeds each text once; the difference is matching.
- bert-score, per candidate: the usual MBR loop, one ``score([h_i] * N, samples)`` call per sample: each call
  embeds its N + 1 texts, so N (N + 1) model passes per input. On the first ``--loop-inputs`` inputs, scaled
  linearly to all (said so in the output).
- mbrs 0.1.8 ``DecoderMBR`` with its ``MetricBERTScore`` (the bundled model directory, layer 4, CPU): it embeds
  each input's samples once and matches them in N calls of N pairs. mbrs 0.1.8 does not import under transformers
  5; :func:`load_mbrs` runs it with three compatibility shims (below) that change none of its computations.

Checked: our N x N F1 against bert-score's (largest difference), and that the MBR choices agree (bert-score's from
its F1 matrix with the same rule; mbrs's own choice). Printed: seconds and the ratios to ours.

Memory at N = 256 (one input): each method in a fresh subprocess; the resident memory sampled every 5 ms during
the computation, minus the resident memory before it (model loaded, texts read).

Run:  python bench/bench_mbr.py              (full: N = 16 and 64 samples x 50 inputs; memory at N = 256)
      python bench/bench_mbr.py --quick      (N = 4 and 8 x 3 inputs; memory at N = 32: checks that it runs)
      python bench/bench_mbr.py --sentences 4   (long samples: four segments each)
"""

from __future__ import annotations

import argparse
import enum
import importlib
import importlib.util
import json
import random
import subprocess
import sys
import threading
import time
import types
import warnings
from pathlib import Path

import numpy as np
from common import WMT16  # noqa: E402 (sets the import path and offline mode first)

LPS = ["cs-en", "de-en", "fi-en", "ro-en", "ru-en", "tr-en"]
LAYER = 4


def read(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def edited(rng: random.Random, text: str, donor: str) -> str:
    """One to four random word edits: drop, swap, repeat, or borrow a word of ``donor``."""
    words, extra = text.split(), donor.split()
    for _ in range(rng.randint(1, 4)):
        if len(words) < 3:
            break
        k = rng.randrange(len(words) - 1)
        op = rng.choice(["drop", "swap", "repeat", "borrow"])
        if op == "drop":
            del words[k]
        elif op == "swap":
            words[k], words[k + 1] = words[k + 1], words[k]
        elif op == "repeat":
            words.insert(k, words[k])
        else:
            words[k] = rng.choice(extra)
    return " ".join(words)


def make_inputs(n_inputs: int, n_samples: int, sentences: int = 1, seed: int = 0) -> tuple[list, list]:
    """``(groups, references)``: per input, its system output and ``n_samples - 1`` edited neighbours."""
    rng = random.Random(seed)
    files = {lp: (read(WMT16 / f"DAseg-newstest2016.mt-system.{lp}"),
                  read(WMT16 / f"DAseg-newstest2016.reference.{lp}")) for lp in LPS}
    groups, refs = [], []
    for k in range(n_inputs):
        mt, ref = files[LPS[k % len(LPS)]]
        i = (17 + 53 * k) % (len(mt) - sentences)
        out, gold = mt[i:i + sentences], ref[i:i + sentences]
        samples = [" ".join(out)]
        while len(samples) < n_samples:
            samples.append(" ".join(edited(rng, s, r) for s, r in zip(out, gold)))
        rng.shuffle(samples)
        groups.append(samples)
        refs.append(" ".join(gold))
    return groups, refs


def load_mbrs():
    """mbrs 0.1.8's ``MetricBERTScore`` and ``DecoderMBR`` under transformers 5, with three shims:

    1. ``mbrs.metrics/__init__`` imports every metric (COMET, BLEURT, MetricX: packages not installed here, whose
       pinned dependencies would downgrade transformers and numpy): the ``mbrs.metrics`` package is built from its
       ``base``, ``bertscore`` and ``bleu`` modules only (bleu: the selectors name it as a default).
    2. ``from transformers.tokenization_utils import BatchEncoding, EncodedInput, PreTrainedTokenizerBase`` fails
       under transformers 5: the three names are given there from ``tokenization_utils_base``, where they live.
    3. mbrs collates ids with ``tokenizer.prepare_for_model``, which transformers 5 tokenizers lack: the tokenizer
       instance gets one that returns the ids unchanged (mbrs calls it with ``add_special_tokens=False`` and no
       padding or truncation, so that is what it returned before).

    Returns:
        ``make(model_dir, layer) -> decoder`` whose ``decode(hyps, hyps, nbest=1).idx[0]`` is mbrs's MBR choice.

    Raises:
        ImportError: mbrs (or simple-parsing, its configuration library) is not installed.
    """
    import transformers.tokenization_utils as tu
    import transformers.tokenization_utils_base as tub

    for name in ("BatchEncoding", "EncodedInput", "PreTrainedTokenizerBase"):
        if not hasattr(tu, name):
            setattr(tu, name, getattr(tub, name))
    spec = importlib.util.find_spec("mbrs")
    if spec is None:
        raise ImportError("mbrs is not installed (pip install --no-deps mbrs==0.1.8 simple-parsing)")
    if "mbrs.metrics" not in sys.modules or not hasattr(sys.modules["mbrs.metrics"], "MetricBERTScore"):
        pkg = types.ModuleType("mbrs.metrics")
        pkg.__path__ = [str(Path(spec.origin).parent / "metrics")]
        sys.modules["mbrs.metrics"] = pkg
        base = importlib.import_module("mbrs.metrics.base")
        for name in ("Metric", "MetricBase", "MetricCacheable", "MetricReferenceless", "MetricAggregatable",
                     "MetricAggregatableCache", "register", "get_metric"):
            setattr(pkg, name, getattr(base, name))
        pkg.MetricBERTScore = importlib.import_module("mbrs.metrics.bertscore").MetricBERTScore
        importlib.import_module("mbrs.metrics.bleu")
        from mbrs import registry

        names = registry.get_registry(base.Metric | base.MetricReferenceless)
        pkg.Metrics = enum.Enum("Metrics", {k: k for k in names}, type=str)
    from mbrs.decoders.mbr import DecoderMBR

    metric_cls = sys.modules["mbrs.metrics"].MetricBERTScore

    def make(model_dir: str, layer: int):
        metric = metric_cls(metric_cls.Config(model_type=model_dir, num_layers=layer, cpu=True))
        metric.tokenizer.prepare_for_model = lambda ids, **_: tub.BatchEncoding({"input_ids": list(ids)})
        return DecoderMBR(DecoderMBR.Config(), metric)

    return make


def timed(fn) -> tuple[float, object]:
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def mbr_from_matrix(f1: np.ndarray) -> int:
    n = len(f1)
    eu = (f1.sum(axis=1) - np.diag(f1)) / max(n - 1, 1)
    return int(np.flatnonzero(eu == eu.max())[0])


def run_ours(scorer, groups):
    from bertscore_viz.consensus import consensus
    from bertscore_viz.engine.cache import CACHE

    consensus([groups[0][:2]], scorer=scorer)  # warm-up: the first forward pass of a process is slower
    CACHE.clear()
    cold, res = timed(lambda: consensus(groups, scorer=scorer, token_support=False))
    warm, _ = timed(lambda: consensus(groups, scorer=scorer, token_support=False))
    return cold, warm, res


def run_bert_score_one_call(theirs, groups, batch_size: int):
    cands = [a for g in groups for a in g for _ in g]
    refs = [b for g in groups for _ in g for b in g]
    seconds, (_, _, f) = timed(lambda: theirs.score(cands, refs, batch_size=batch_size))
    f = f.numpy().astype(np.float64)
    out, k = [], 0
    for g in groups:
        out.append(f[k:k + len(g) ** 2].reshape(len(g), len(g)))
        k += len(g) ** 2
    return seconds, out


def run_bert_score_loop(theirs, groups, batch_size: int) -> float:
    def loop():
        for g in groups:
            for h in g:
                theirs.score([h] * len(g), list(g), batch_size=batch_size)

    return timed(loop)[0]


def run_mbrs(decoder, groups):
    return timed(lambda: [int(decoder.decode(g, g, nbest=1).idx[0]) for g in groups])


def disagreements(ours, their_choices) -> str:
    """Where another method chooses another sample: how far apart the two choices are in our expected utility, and
    whether they are the same text (a tie that float rounding breaks either way). Empty when all agree."""
    parts = []
    for g, c in zip(ours, their_choices):
        if c != g.chosen:
            gap = float(g.expected_utility[g.chosen] - g.expected_utility[c])
            same = " (the same text)" if g.samples[c] == g.samples[g.chosen] else ""
            parts.append(f"input {g.id}: sample {c} instead of {g.chosen}, {gap:.1e} below in our expected "
                         f"utility{same}")
    return ("; where they differ: " + "; ".join(parts)) if parts else ""


def speed(args, n_samples: int) -> None:
    from bert_score import BERTScorer

    from bertscore_viz import Scorer
    from bertscore_viz.models.spec import bundled_model_path

    model_dir = str(bundled_model_path())
    groups, _ = make_inputs(args.inputs, n_samples, args.sentences)
    scorer = Scorer(layer=LAYER)
    theirs = BERTScorer(model_type=model_dir, num_layers=LAYER, nthreads=0, lang="en")
    tokens = [len(t.ids) for t in scorer.encode(sorted({t for g in groups for t in g}))]
    pairs = sum(len(g) ** 2 for g in groups)
    print(f"\nN = {n_samples} samples x {len(groups)} inputs ({pairs:,} ordered pairs; samples of {args.sentences} "
          f"segment(s), {np.mean(tokens):.0f} tokens on average, {max(tokens)} at most)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs.score(groups[0][:1], groups[0][:1])  # warm-up
        cold, warm, ours = run_ours(scorer, groups)
        t_one, theirs_f1 = run_bert_score_one_call(theirs, groups, args.batch_size)
        k = min(args.loop_inputs or len(groups), len(groups))
        t_loop = run_bert_score_loop(theirs, groups[:k], args.batch_size) * len(groups) / k
    diff = max(float(np.abs(g.matrices.f1 - f).max()) for g, f in zip(ours, theirs_f1))
    theirs_chosen = [mbr_from_matrix(f) for f in theirs_f1]
    same = sum(g.chosen == c for g, c in zip(ours, theirs_chosen))
    rows = [("ours: consensus (embed + match)", cold), ("ours: match only (embeddings cached)", warm),
            ("bert-score: one call over all pairs", t_one),
            (f"bert-score: one call per candidate{'' if k == len(groups) else f' ({k} inputs, scaled)'}", t_loop)]
    try:
        make = load_mbrs()
    except ImportError as exc:
        print(f"mbrs: not run ({exc})")
    else:
        decoder = make(model_dir, LAYER)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            decoder.decode(groups[0][:2], groups[0][:2], nbest=1)  # warm-up
            t_mbrs, chosen = run_mbrs(decoder, groups)
        rows.append(("mbrs 0.1.8: DecoderMBR + MetricBERTScore", t_mbrs))
        print(f"mbrs chooses the same sample as ours in {sum(a == g.chosen for a, g in zip(chosen, ours))}/"
              f"{len(groups)} inputs{disagreements(ours, chosen)}")
    print(f"bert-score chooses the same sample as ours in {same}/{len(groups)} inputs; largest |F1 ours - "
          f"bert-score| over the matrices: {diff:.1e}{disagreements(ours, theirs_chosen)}")
    print(f"{'method':58} {'seconds':>9} {'/ ours':>8}")
    for name, t in rows:
        print(f"{name:58} {t:>9.2f} {t / cold:>8.2f}")


def _rss() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * 4096


def memory_child(method: str, n: int, sentences: int) -> None:
    """In a fresh process: the peak resident memory one method adds while computing one input of ``n`` samples."""
    from bert_score import BERTScorer

    from bertscore_viz import Scorer
    from bertscore_viz.consensus import consensus
    from bertscore_viz.models.spec import bundled_model_path

    groups, _ = make_inputs(1, n, sentences, seed=1)
    model_dir = str(bundled_model_path())
    if method == "ours":
        scorer = Scorer(layer=LAYER)
        _ = scorer.encoder
        work = lambda: consensus(groups, scorer=scorer)  # noqa: E731 (token support included)
    elif method == "bert-score":
        theirs = BERTScorer(model_type=model_dir, num_layers=LAYER, nthreads=0, lang="en")
        cands = [a for a in groups[0] for _ in groups[0]]
        work = lambda: theirs.score(cands, [b for _ in groups[0] for b in groups[0]])  # noqa: E731
    else:
        decoder = load_mbrs()(model_dir, LAYER)
        work = lambda: decoder.decode(groups[0], groups[0], nbest=1)  # noqa: E731
    before = _rss()
    peak = [before]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], _rss())
            time.sleep(0.005)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seconds, _ = timed(work)
    done.set()
    thread.join()
    print(json.dumps({"method": method, "before_mb": before / 2**20, "peak_mb": peak[0] / 2**20,
                      "added_mb": (peak[0] - before) / 2**20, "seconds": seconds}))


def memory(args, n: int) -> None:
    print(f"\nmemory, one input of N = {n} samples ({n * n:,} pairs), each method in a fresh process:")
    print(f"{'method':14} {'before MB':>10} {'peak MB':>9} {'added MB':>9} {'seconds':>8}")
    methods = ["ours", "bert-score"] + (["mbrs"] if importlib.util.find_spec("mbrs") else [])
    for method in methods:
        proc = subprocess.run([sys.executable, __file__, "--memory-child", method, str(n), "--sentences",
                               str(args.sentences)], capture_output=True, text=True)
        if proc.returncode:
            print(f"{method:14} failed: {proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else '?'}")
            continue
        d = json.loads(proc.stdout.strip().splitlines()[-1])
        print(f"{method:14} {d['before_mb']:>10.0f} {d['peak_mb']:>9.0f} {d['added_mb']:>9.0f} {d['seconds']:>8.2f}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="small sizes: checks that the benchmark runs")
    p.add_argument("--inputs", type=int, default=None, help="inputs per size (default 50; quick 3)")
    p.add_argument("--sizes", type=int, nargs="+", default=None, help="samples per input (default 16 64; quick 4 8)")
    p.add_argument("--memory-n", type=int, default=None, help="samples of the memory run (default 256; quick 32)")
    p.add_argument("--sentences", type=int, default=1, help="segments per sample (long samples: 4)")
    p.add_argument("--loop-inputs", type=int, default=10,
                   help="inputs timed for bert-score's per-candidate loop, scaled to all (0: all; default 10)")
    p.add_argument("-b", "--batch_size", type=int, default=64)
    p.add_argument("--memory-child", nargs=2, metavar=("METHOD", "N"), help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.memory_child:
        memory_child(args.memory_child[0], int(args.memory_child[1]), args.sentences)
        return
    args.inputs = args.inputs or (3 if args.quick else 50)
    sizes = args.sizes or ([4, 8] if args.quick else [16, 64])
    print(f"bertscore-viz consensus vs bert-score 0.3.13 and mbrs, bundled all-MiniLM-L6-v2 layer {LAYER}, CPU, "
          f"{sys.version.split()[0]}")
    for n in sizes:
        speed(args, n)
    memory(args, args.memory_n or (32 if args.quick else 256))


if __name__ == "__main__":
    main()
