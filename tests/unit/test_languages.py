"""The rescaling baseline's language against the text's (engine/languages.py)."""

from __future__ import annotations


def test_the_baseline_language_warning_names_the_text_and_the_baseline():
    """Issue 23, item 4: Japanese text rescaled with the English baseline said nothing."""
    from bertscore_viz.engine.languages import baseline_language_message

    ja = ["マットの上に猫が座っている。", "今日はとても寒いです。", "彼は早く家に帰った。"]
    msg = baseline_language_message(ja, "en")
    assert msg.startswith("Rescaling uses the English (en) baseline, but 3 of 3 references are in ")
    assert "script" in msg and "turn rescaling off" in msg
    de = ["Die Katze sitzt heute auf der Matte, wie jeden Tag, und die Sonne scheint."] * 4
    assert "German (de)" in baseline_language_message(de, "en")
    assert baseline_language_message(de, "de") is None
    assert baseline_language_message(ja[:1] + ["The cat sat on the mat as it does every day."] * 3, "en") is None
    assert baseline_language_message(["", "  "], "en") is None
