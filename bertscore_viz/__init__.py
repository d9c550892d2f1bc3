"""bertscore-viz: BERTScore that matches bert-score 0.3.13, explains itself token by token, and runs fast.

>>> from bertscore_viz import score, Scorer

The names below load on first use (PEP 562): importing torch and transformers takes 1.2-1.9 s, and
``import bertscore_viz`` stays at about 0.1 s for the command line's help, ``models`` and the app's start-up
(tests/unit/test_device_path.py checks that it loads no torch).
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING

from bertscore_viz.errors import BaselineError, BertScoreVizError, InputError, ModelError
from bertscore_viz.versions import __version__

if TYPE_CHECKING:  # the same names, for readers and tools
    from bertscore_viz.engine.options import ScoringOptions
    from bertscore_viz.engine.results import MultiReferenceExplanation, PairExplanation, ScoreResult, Signature
    from bertscore_viz.engine.scorer import BertScoreWarning, MatchStats, Scorer, score
    from bertscore_viz.evaluation.meta_evaluation import MetaEvaluation, meta_evaluate

#: Name -> the module that defines it, imported when the name is first used.
_LAZY = {
    "score": "bertscore_viz.engine.scorer", "Scorer": "bertscore_viz.engine.scorer",
    "MatchStats": "bertscore_viz.engine.scorer", "BertScoreWarning": "bertscore_viz.engine.scorer",
    "ScoreResult": "bertscore_viz.engine.results", "PairExplanation": "bertscore_viz.engine.results",
    "MultiReferenceExplanation": "bertscore_viz.engine.results", "Signature": "bertscore_viz.engine.results",
    "ScoringOptions": "bertscore_viz.engine.options",
    "meta_evaluate": "bertscore_viz.evaluation.meta_evaluation",
    "MetaEvaluation": "bertscore_viz.evaluation.meta_evaluation",
}

__all__ = [
    "score", "Scorer", "ScoringOptions", "ScoreResult", "PairExplanation", "MultiReferenceExplanation", "MatchStats",
    "Signature", "meta_evaluate", "MetaEvaluation",
    "BertScoreVizError", "InputError", "ModelError", "BaselineError", "BertScoreWarning", "__version__",
]


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'bertscore_viz' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


def _register_notebook_display() -> None:
    """In a running IPython kernel, results show as HTML views (:mod:`bertscore_viz.integrations.notebook`:
    registered by type name, so nothing heavy is imported; a terminal IPython computes only plain text)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if getattr(shell, "display_formatter", None) is not None:
        from bertscore_viz.integrations.notebook import register

        register(shell)


_register_notebook_display()
