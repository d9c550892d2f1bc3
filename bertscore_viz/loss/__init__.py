"""BERTScore as a differentiable training loss, on the engine's batched kernels (docs/LOSS.md):
``from bertscore_viz.loss import BERTScoreLoss, straight_through_one_hot``."""

from bertscore_viz.loss.bertscore_loss import BERTScoreLoss, BERTScoreOutput
from bertscore_viz.loss.relaxations import gumbel_softmax, straight_through_one_hot

__all__ = ["BERTScoreLoss", "BERTScoreOutput", "gumbel_softmax", "straight_through_one_hot"]
