"""bertscore-viz: BERTScore that matches bert-score 0.3.13, explains itself token by token, and runs fast.

>>> from bertscore_viz import score, Scorer
"""

__version__ = "0.1.0"

from bertscore_viz.engine.results import MultiReferenceExplanation, PairExplanation, ScoreResult, Signature  # noqa: E402
from bertscore_viz.engine.scorer import BertScoreWarning, MatchStats, Scorer, score  # noqa: E402
from bertscore_viz.errors import BaselineError, BertScoreVizError, InputError, ModelError  # noqa: E402

__all__ = [
    "score", "Scorer", "ScoreResult", "PairExplanation", "MultiReferenceExplanation", "MatchStats", "Signature",
    "BertScoreVizError", "InputError", "ModelError", "BaselineError", "BertScoreWarning", "__version__",
]
