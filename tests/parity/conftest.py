"""Shared pieces of the parity tests: the reference package on the bundled model, and real unseen sentences.

The reference is bert-score 0.3.13 (``import bert_score``), given the bundled model's directory as ``model_type``
and the layer as ``num_layers``. Each ``BERTScorer`` loads (and truncates) its own copy of the model, so they are
built once per session and setting (``reference_scorer``); ``bert_score.score`` would reload the model each call.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import bert_score
import numpy as np
import pytest

from bertscore_viz.models.spec import bundled_model_path

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("BERTSCORE_VIZ_DATA") or ROOT / "data") / "wmt16-da-to-english"
LANGUAGE_PAIRS = ("cs-en", "de-en", "fi-en", "ro-en", "ru-en", "tr-en")
MODEL = str(bundled_model_path())
ATOL = 1e-5

#: Hand-written edge cases (no empty strings: bert-score crashes on them under transformers 5; see
#: tests/unit/test_inputs.py for our documented behaviour).
EDGE_CASES = [
    ("...!?", "!!!"),  # punctuation only
    ("12 345 678.90 and 3.14159", "12345678.9 or 3.14"),  # numbers
    ("Caf\u00e9 na\u00efve r\u00e9sum\u00e9 \u2014 \u00fcn\u00efc\u00f6d\u00e9 \U0001F600\U0001F389",
     "Cafe naive resume, unicode"),  # accents, dash, emoji
    ("\u4e2d\u6587 \u5b57\u7b26 \u0438 \u0440\u0443\u0441\u0441\u043a\u0438\u0439 \u0442\u0435\u043a\u0441\u0442",
     "Chinese characters and Russian text"),  # other scripts
    ("the the the the the the the", "the"),  # repeated words
    ("Hello", "Hello"),  # one word, identical
    ("Yes.", "No."),  # one word each
    ("  padded   with   spaces  ", "padded with spaces"),  # strip, inner whitespace
    ("Don't stop-believing; it's 100% \"real\" (really)!", "Do not stop believing, it is real."),
]


def read_lines(kind: str, lp: str) -> list[str]:
    return (DATA / f"DAseg-newstest2016.{kind}.{lp}").read_text(encoding="utf-8").splitlines()


def wmt_pairs(per_lp: int, offset: int = 11, step: int = 67, longest: int = 1) -> tuple[list[str], list[str]]:
    """Candidates (system outputs) and references from every language pair: ``per_lp`` lines spread through each
    file, plus its ``longest`` longest references."""
    cands, refs = [], []
    for lp in LANGUAGE_PAIRS:
        mt, ref = read_lines("mt-system", lp), read_lines("reference", lp)
        idx = [(offset + step * k) % len(ref) for k in range(per_lp)]
        idx += [i for i in sorted(range(len(ref)), key=lambda i: -len(ref[i]))[:longest] if i not in idx]
        cands += [mt[i] for i in idx]
        refs += [ref[i] for i in idx]
    return cands, refs


def long_pair() -> tuple[str, str]:
    """A real document pair far beyond 512 tokens on both sides (truncated by both implementations)."""
    mt, ref = read_lines("mt-system", "ro-en"), read_lines("reference", "ro-en")
    return " ".join(mt[100:130]), " ".join(ref[100:130])


def parity_set() -> tuple[list[str], list[str]]:
    """Real unseen WMT16 pairs of six language pairs, and the edge cases."""
    cands, refs = wmt_pairs(per_lp=8)
    for c, r in EDGE_CASES:
        cands.append(c)
        refs.append(r)
    return cands, refs


def long_set() -> tuple[list[str], list[str]]:
    """Pairs beyond 512 tokens: long against long, long against one sentence, one sentence against long."""
    lc, lr = long_pair()
    mt, ref = read_lines("mt-system", "ro-en"), read_lines("reference", "ro-en")
    return [lc, lc, mt[100]], [lr, ref[100], lr]


def multi_reference_set() -> tuple[list[str], list[list[str]]]:
    """Candidates with one to three references each (the true one at varying positions, the others from nearby
    lines), from three language pairs."""
    cands, groups = [], []
    for lp in ("cs-en", "ro-en", "tr-en"):
        mt, ref = read_lines("mt-system", lp), read_lines("reference", lp)
        for k in range(12):
            i = 29 + 43 * k
            others = [ref[(i + 1) % len(ref)], mt[(i + 2) % len(mt)]]
            n = 1 + k % 3
            group = others[: n - 1]
            group.insert(k % n, ref[i])
            cands.append(mt[i])
            groups.append(group)
    return cands, groups


def flatten(refs) -> list[str]:
    return [r for g in refs for r in ([g] if isinstance(g, str) else g)]


def write_baseline(path: Path, layers: int = 7) -> Path:
    """A baseline file in bert-score's format with distinct P, R and F values per layer."""
    rows = ["LAYER,P,R,F"] + [f"{i},{0.61 + i / 97:.6f},{0.57 + i / 89:.6f},{0.59 + i / 93:.6f}" for i in range(layers)]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def baseline_path(tmp_path_factory) -> str:
    return str(write_baseline(tmp_path_factory.mktemp("baseline") / "all-MiniLM-L6-v2.tsv"))


@pytest.fixture(scope="session")
def reference_scorer():
    """``reference_scorer(layer, idf=False, baseline_path=None)``: one bert-score BERTScorer per setting."""
    built: dict[tuple, bert_score.BERTScorer] = {}

    def get(layer: int, idf: bool = False, baseline_path: str | None = None) -> bert_score.BERTScorer:
        key = (layer, idf, baseline_path)
        if key not in built:
            built[key] = bert_score.BERTScorer(
                model_type=MODEL, num_layers=layer, idf=idf, nthreads=0, lang="en",
                rescale_with_baseline=baseline_path is not None, baseline_path=baseline_path)
        return built[key]

    return get


@pytest.fixture(scope="session")
def reference_score(reference_scorer):
    """bert-score's P, R, F (numpy) for a call; idf, when on, from the call's (flattened) references as
    ``bert_score.score`` does."""

    def run(cands, refs, layer, idf=False, baseline_path=None, batch_size=64):
        scorer = reference_scorer(layer, idf, baseline_path)
        if idf:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "Overwriting the previous importance weights."
                scorer.compute_idf(flatten(refs))
        p, r, f = scorer.score(list(cands), [g if isinstance(g, str) else list(g) for g in refs],
                               batch_size=batch_size)
        return p.numpy().astype(np.float64), r.numpy().astype(np.float64), f.numpy().astype(np.float64)

    return run


def no_negative_best(stats, layer: int) -> list[int]:
    """Candidates none of whose pairs has a token whose best real similarity is negative at ``layer``: the only
    case where bert-score's padded zeros change a score (documented in test_parity_differences.py)."""
    k = stats.layers.index(layer)
    bad = {int(stats.pair_candidate[p]) for p in range(len(stats.pair_candidate))
           if min(stats.cand_best[p][k].min(), stats.ref_best[p][k].min()) < 0}
    return [i for i in range(len(stats.candidates)) if i not in bad]
