"""Token tables of a pair explanation: how much each token counted (pure pandas, no Streamlit).

Precision is over **candidate** tokens, recall over **reference** tokens. A token's contribution is its
normalised weight (idf or 1, divided by the side's total; 0 for CLS/SEP) times the similarity of its greedy best
match on the other side, so the contributions of the candidate side add up to the raw P and those of the reference
side to the raw R (up to float rounding, ~1e-16). With rescaling on, the rescaled score is
``(sum - b) / (1 - b)``: rescaling is affine and is not spread over tokens.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from bertscore_viz.engine.results import PairExplanation, TokenSide

__all__ = ["READING_COLUMNS", "SIDES", "TOKEN_COLUMNS", "WORD_COLUMNS", "explanation_dict", "match_label",
           "reading_table", "scores_table", "token_table", "word_table"]

SIDES = ("candidate", "reference")
#: Columns of :func:`token_table`.
TOKEN_COLUMNS = ["side", "position", "token", "display", "word", "special", "idf weight", "normalized weight",
                 "best match", "best match position", "best match is special", "similarity", "contribution"]
#: Columns of :func:`word_table`.
WORD_COLUMNS = ["side", "word", "pieces", "positions", "idf weight", "best match", "similarity", "contribution"]
#: Columns of :func:`reading_table` (the app's token table), by token and with word pieces merged.
READING_COLUMNS = {False: ["position", "display", "token", "idf weight", "normalized weight", "best match",
                           "similarity", "contribution"],
                   True: ["word", "pieces", "idf weight", "best match", "similarity", "contribution"]}


def _sides(pair: PairExplanation, side: str):
    """``(this side, other side, best index, best similarity, contributions)`` of one side."""
    if side == "candidate":
        return pair.cand, pair.ref, pair.cand_best_index, pair.cand_best, pair.cand_contribution
    if side == "reference":
        return pair.ref, pair.cand, pair.ref_best_index, pair.ref_best, pair.ref_contribution
    raise ValueError(f"side must be 'candidate' or 'reference', got {side!r}.")


def _label(other: TokenSide, j: int) -> str:
    """What a person should read for a token: the text it covers, or the special token's name."""
    return other.tokens[j] if other.special[j] else other.display[j]


def token_table(pair: PairExplanation, side: str = "candidate", show_special: bool = True) -> pd.DataFrame:
    """One row per token of one side (or of both sides with ``side="both"``).

    Args:
        pair: the explanation.
        side: ``"candidate"`` (contributions to P), ``"reference"`` (to R) or ``"both"``.
        show_special: keep the CLS/SEP rows (weight 0, contribution 0).

    Returns:
        Columns :data:`TOKEN_COLUMNS`; ``contribution`` sums to ``pair.precision`` (candidate) or ``pair.recall``
        (reference). NaN contributions mean the side's weights sum to 0 (empty side or degenerate idf).
    """
    if side == "both":
        return pd.concat([token_table(pair, s, show_special) for s in SIDES], ignore_index=True)
    this, other, best_idx, best, contrib = _sides(pair, side)
    norm = this.normalized_weights
    rows = {
        "side": [side] * len(this),
        "position": np.arange(len(this)),
        "token": list(this.tokens),
        "display": [_label(this, i) for i in range(len(this))],
        "word": this.word_index.astype(np.int64),
        "special": this.special.astype(bool),
        "idf weight": this.weights.astype(np.float64),
        "normalized weight": norm.astype(np.float64),
        "best match": [_label(other, int(j)) for j in best_idx],
        "best match position": np.asarray(best_idx, dtype=np.int64),
        "best match is special": np.asarray([bool(other.special[int(j)]) for j in best_idx], dtype=bool),
        "similarity": np.asarray(best, dtype=np.float64),
        "contribution": np.asarray(contrib, dtype=np.float64),
    }
    frame = pd.DataFrame(rows, columns=TOKEN_COLUMNS)
    if not show_special:
        frame = frame[~frame["special"]].reset_index(drop=True)
    return frame


def word_table(pair: PairExplanation, side: str = "candidate") -> pd.DataFrame:
    """Word pieces merged into words, for reading: one row per word of one side (or ``"both"``).

    ``idf weight`` and ``contribution`` are the sums over the word's pieces (so contributions still add up to
    P or R); ``similarity`` is the weight-averaged best similarity of its pieces (plain mean when the weights
    sum to 0); ``best match`` lists the distinct best matches of its pieces; ``pieces`` the tokenizer pieces.
    """
    if side == "both":
        return pd.concat([word_table(pair, s) for s in SIDES], ignore_index=True)
    this, other, best_idx, best, contrib = _sides(pair, side)
    norm = this.normalized_weights
    rows = []
    for text, positions in this.words():
        pos = np.asarray(positions)
        w = norm[pos]
        sims = np.asarray(best, dtype=np.float64)[pos]
        sim = float(np.sum(w * sims) / np.sum(w)) if np.all(np.isfinite(w)) and np.sum(w) > 0 else float(
            np.mean(sims))
        matches = list(dict.fromkeys(_label(other, int(best_idx[p])) for p in positions))
        rows.append({"side": side, "word": text, "pieces": " ".join(this.tokens[p] for p in positions),
                     "positions": ",".join(str(p) for p in positions),
                     "idf weight": float(this.weights[pos].sum()), "best match": " | ".join(matches),
                     "similarity": sim, "contribution": float(np.sum(np.asarray(contrib)[pos]))})
    return pd.DataFrame(rows, columns=WORD_COLUMNS)


def match_label(label: str, position: int) -> str:
    """``"cat (#3)"``: a best match as the app's table shows it, the token and its position on the other side (from
    0, CLS included: the CSV's ``best match position``)."""
    return f"{label} (#{int(position)})"


def reading_table(pair: PairExplanation, side: str = "candidate", show_special: bool = False,
                  merge_words: bool = False) -> pd.DataFrame:
    """The token table as the app shows it: :data:`READING_COLUMNS`, the best match as ``token (#position)``
    (:func:`match_label`; with ``merge_words`` each distinct match of the word's pieces, ``" | "``-separated).
    Contributions are those of :func:`token_table` / :func:`word_table`: they add up to the raw P or R."""
    if merge_words:
        frame = word_table(pair, side)
        _, other, best_idx, _, _ = _sides(pair, side)
        frame["best match"] = [
            " | ".join(dict.fromkeys(match_label(_label(other, int(best_idx[int(p)])), int(best_idx[int(p)]))
                                     for p in positions.split(",")))
            for positions in frame["positions"]]
    else:
        frame = token_table(pair, side, show_special=show_special)
        frame["best match"] = [match_label(m, q) for m, q in zip(frame["best match"], frame["best match position"])]
    return frame[READING_COLUMNS[bool(merge_words)]].reset_index(drop=True)


def scores_table(explanation) -> pd.DataFrame:
    """P, R, F1 raw and (when rescaled) rescaled, with the baseline used; one row per metric.

    Works for a :class:`PairExplanation` and a :class:`MultiReferenceExplanation` (then with the index of the
    reference that gave each maximum).
    """
    raw = [explanation.precision, explanation.recall, explanation.f1]
    data = {"metric": ["Precision", "Recall", "F1"], "raw": raw}
    if explanation.rescaled is not None:
        data["rescaled"] = [float(x) for x in explanation.rescaled]
        data["baseline"] = [float(x) for x in explanation.baseline]
    best = getattr(explanation, "best_reference", None)
    if best is not None:
        data["best reference"] = [int(b) + 1 for b in best]
    return pd.DataFrame(data)


def explanation_dict(explanation) -> dict:
    """JSON-ready dict of a pair or multi-reference explanation, with the signature."""
    if isinstance(explanation, PairExplanation):
        return explanation.as_dict()

    def num(x):
        return None if x is None or not np.isfinite(x) else float(x)

    return {"candidate": explanation.pairs[0].candidate if explanation.pairs else None,
            "references": [p.reference for p in explanation.pairs],
            "precision": num(explanation.precision), "recall": num(explanation.recall), "f1": num(explanation.f1),
            "rescaled": None if explanation.rescaled is None else [num(x) for x in explanation.rescaled],
            "baseline": None if explanation.baseline is None else [num(x) for x in explanation.baseline],
            "best_reference": {"precision": int(explanation.best_reference[0]),
                               "recall": int(explanation.best_reference[1]),
                               "f1": int(explanation.best_reference[2])},
            "pairs": [p.as_dict() for p in explanation.pairs], "warnings": list(explanation.warnings),
            "signature": str(explanation.signature), "settings": explanation.signature.as_dict()}
