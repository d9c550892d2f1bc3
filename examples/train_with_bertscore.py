"""Worked example: BERTScore as a training loss.

Learnable logits, one distribution over the scorer's vocabulary per output position, start random (gibberish) and
are optimised with Adam against a few reference sentences through :class:`bertscore_viz.loss.BERTScoreLoss`. The
decoded output (argmax at each position) is scored before and after with the exact metric,
``bertscore_viz.score``, the number you would report; it rises within a few steps.

Three ways to feed the logits to the loss (``--mode``):
  straight-through  one-hot argmax forward (the loss scores exactly the decoded output), softmax gradient (default)
  soft              the softmax itself: the expected embedding of each position (BERTTune's "soft predictions")
  gumbel            a hard Gumbel-softmax sample (straight-through), the usual choice for sampled generators

Everything runs on the loss's device (CUDA when available, else the CPU; ``--device`` to choose): the logits are
created there, and so is the Gumbel noise's generator.

Run:  python examples/train_with_bertscore.py                (30 steps, about a minute on 2 busy CPU cores)
      python examples/train_with_bertscore.py --steps 100 --mode soft
      python examples/train_with_bertscore.py --device cpu
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import torch  # noqa: E402

from bertscore_viz import score  # noqa: E402
from bertscore_viz.loss import BERTScoreLoss, gumbel_softmax, straight_through_one_hot  # noqa: E402

REFERENCES = [
    "There is a cat sitting on the mat.",
    "The quick brown fox leaped over a lazy dog.",
    "She walked to the shop to purchase bread.",
    "BERTScore is used to evaluate text generation models.",
]
MODES = ("straight-through", "soft", "gumbel")


def decode(loss_fn: BERTScoreLoss, logits: torch.Tensor, mask: torch.Tensor) -> list[str]:
    """The argmax text of each row (its real positions only)."""
    best = logits.argmax(dim=-1)
    tok = loss_fn.encoder.tokenizer
    return [tok.decode(best[i][mask[i].bool()].tolist()) for i in range(best.shape[0])]


def make_logits(loss_fn: BERTScoreLoss, references: list[str], seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Random learnable logits ``(batch, tokens, V)`` on the loss's device, one output position per content token
    of each reference (the loss adds [CLS]/[SEP] itself), and their ``(batch, tokens)`` mask.

    Drawn on the CPU with ``seed`` and then moved, so that every device starts from the same logits."""
    _, mask = loss_fn.encode_texts(references)  # on the loss's device
    gen = torch.Generator().manual_seed(seed)
    logits = 0.01 * torch.randn(tuple(mask.shape) + (loss_fn.vocab_size,), generator=gen)
    return logits.to(loss_fn.device).requires_grad_(True), mask


def training_step(loss_fn: BERTScoreLoss, logits: torch.Tensor, mask: torch.Tensor, references: list[str],
                  optimizer: torch.optim.Optimizer, mode: str = "straight-through",
                  generator: torch.Generator | None = None) -> float:
    """One optimisation step: the logits as probabilities (``mode``), the loss (1 - F1, mean over the batch),
    backward, the optimiser's step. ``generator``: the Gumbel noise's, on the logits' device. Returns the loss."""
    if mode == "soft":
        probs = torch.softmax(logits, dim=-1)
    elif mode == "gumbel":
        probs = gumbel_softmax(logits, tau=0.5, hard=True, generator=generator)
    else:
        probs = straight_through_one_hot(logits)
    loss = loss_fn(probs, references, attention_mask=mask)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


def run(steps: int = 30, lr: float = 1.0, mode: str = "straight-through", seed: int = 0,
        references: list[str] | None = None, log=print, device: str | None = None) -> dict:
    """Optimise random logits towards ``references``; returns the texts and exact F1 before and after.

    Args:
        device: where the loss and the logits live (default CUDA when available, else the CPU).

    Returns:
        dict with ``before``/``after`` (texts), ``f1_before``/``f1_after`` (mean exact F1 of the decoded texts,
        from ``bertscore_viz.score``), ``seconds`` (the optimisation loop), ``steps`` and ``device``.
    """
    if mode not in MODES:
        raise ValueError(f"Unknown mode {mode!r}; expected one of {', '.join(MODES)}.")
    refs = list(references or REFERENCES)
    loss_fn = BERTScoreLoss(device=device)  # bundled all-MiniLM-L6-v2, layer 4, F1, exact maximum, frozen scorer
    logits, mask = make_logits(loss_fn, refs, seed)
    noise = torch.Generator(device=loss_fn.device).manual_seed(seed)  # Gumbel noise is drawn where the logits are
    optimizer = torch.optim.Adam([logits], lr=lr)

    before = decode(loss_fn, logits.detach(), mask)
    f1_before = float(score(before, refs, device=loss_fn.encoder.device).f1.mean())
    log(f"before: mean F1 {f1_before:.4f}")
    start = time.perf_counter()
    for step in range(1, steps + 1):
        loss = training_step(loss_fn, logits, mask, refs, optimizer, mode, noise)
        if step == 1 or step % 10 == 0 or step == steps:
            log(f"step {step:4d}  loss {loss:.4f}  ({time.perf_counter() - start:.1f} s)")
    seconds = time.perf_counter() - start
    after = decode(loss_fn, logits.detach(), mask)
    f1_after = float(score(after, refs, device=loss_fn.encoder.device).f1.mean())
    return {"before": before, "after": after, "f1_before": f1_before, "f1_after": f1_after,
            "seconds": seconds, "steps": steps, "mode": mode, "device": str(loss_fn.device)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--lr", type=float, default=1.0)
    ap.add_argument("--mode", choices=MODES, default="straight-through")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default=None, help="cpu, cuda, cuda:1 (default: cuda when available)")
    args = ap.parse_args(argv)
    torch.manual_seed(args.seed)
    out = run(args.steps, args.lr, args.mode, args.seed, device=args.device)
    print()
    for ref, b, a in zip(REFERENCES, out["before"], out["after"]):
        print(f"reference: {ref}\n  before: {b}\n  after:  {a}")
    print(f"\nexact mean F1 (bertscore_viz.score): before {out['f1_before']:.4f} -> after {out['f1_after']:.4f} "
          f"({out['steps']} steps, {out['mode']}, {out['seconds']:.1f} s of optimisation on {out['device']}, "
          f"{torch.get_num_threads()} torch threads)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
