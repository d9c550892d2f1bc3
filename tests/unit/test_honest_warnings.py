"""Warnings that say what is really wrong: which reference is empty, text outside the model's languages."""

import numpy as np
import pytest

from bertscore_viz import Scorer, explain_table
from bertscore_viz.results import TokenSide
from bertscore_viz.scorer import unknown_message


@pytest.fixture(scope="module")
def scorer():
    return Scorer()


def _side(tokens, display, special, unknown=None):
    n = len(tokens)
    return TokenSide(tuple(tokens), tuple(display), np.arange(n), np.array(special), np.zeros(n, dtype=np.int64),
                     np.ones(n), False, None if unknown is None else np.array(unknown))


def test_unknown_message_counts_by_hand():
    side = _side(["[CLS]", "[UNK]", "か", "##マ", "[SEP]"], ["[CLS]", "猫→[UNK]", "が", "マ", "[SEP]"],
                 [True, False, False, False, True], [False, True, False, False, False])
    msg = unknown_message("candidate", side, "m")
    assert msg.startswith("The candidate is outside the languages of m (CJK, Hiragana, Katakana): ")
    assert "1 of 3 token(s) unknown to the model ([UNK]: 猫)" in msg
    assert "1 token(s) changed by the tokenizer (が read as か)" in msg
    assert "one character at a time" not in msg  # kana and Han are read per character by every vocabulary
    assert msg.endswith("use a multilingual model, e.g. multilingual-e5-small.")
    latin = _side(["[CLS]", "cafe", "[SEP]"], ["[CLS]", "Café", "[SEP]"], [True, False, True])
    assert unknown_message("reference", latin, "m") is None  # accent stripping of Latin text: the model's own


def test_cyrillic_read_letter_by_letter_is_flagged_by_hand():
    side = _side(["к", "##о", "##т", "cat"], ["к", "о", "т", "cat"], [False] * 4)
    assert "3 of 3 non-Latin token(s) read one character at a time" in unknown_message("reference", side, "m")


def test_first_of_two_references_empty_is_named(scorer):
    ex = scorer.explain("The cat sat on the mat.", ["", "A cat sat on the mat."])
    assert ex.f1 > 0.5
    assert any(w.startswith("Reference 1 is empty") and "other references" in w for w in ex.warnings)
    assert not any(w.startswith("The reference is empty") for w in ex.warnings)
    one = scorer.explain("The cat sat.", "")
    assert "The reference is empty: P, R and F1 are 0." in one.warnings


def test_japanese_pair_with_the_english_model_is_flagged_everywhere(scorer):
    ex = scorer.explain("猫がマットの上に座った。", "マットの上に猫が座っている。")
    warn = " ".join(ex.warnings)
    assert "[UNK]: 猫, 座" in warn and "が read as か" in warn and "multilingual-e5-small" in warn
    assert ex.cand.unknown.sum() == 2
    labels = list(explain_table.token_table(ex, "candidate")["display"])
    assert "猫→[UNK]" in labels  # the table, and the heatmap and alignment, which label with the same display


def test_english_text_gets_no_language_warning(scorer):
    ex = scorer.explain("Café au lait, a naïve résumé.", "A coffee with milk.")
    assert not any("outside the languages" in w for w in ex.warnings)


def test_corpus_scores_count_unknown_tokens(scorer):
    res = scorer.result(scorer.match(["I love pizza 🍕", "Fine."], ["I like pizza.", "Good."]))
    assert any(w.startswith("1 candidate(s) (index 0) contain tokens unknown to the model ([UNK])")
               for w in res.warnings)
