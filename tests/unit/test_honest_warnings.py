"""Warnings that say what is really wrong: which reference is empty, text outside the model's languages (its
tokens: [UNK], letters read as others; its text: the script, or the language of Latin-script text, against the
catalog's languages of the model), on real sentences: the WMT16 DA sources in data/ must warn with the bundled
English model and not with multilingual-e5-small, and English text never."""

from pathlib import Path

import numpy as np
import pytest

from bertscore_viz import Scorer
from bertscore_viz.engine import explain_table, languages
from bertscore_viz.engine.languages import dataset_languages, language_of, mismatch, multilingual_hint, pair_message
from bertscore_viz.engine.results import TokenSide
from bertscore_viz.engine.token_notes import unknown_message
from bertscore_viz.figures import plots
from bertscore_viz.models.catalog import get_entry

DATA = Path(__file__).resolve().parents[2] / "data"
WMT = DATA / "wmt16-da-to-english"
PAIRS = ("cs", "de", "fi", "ro", "ru", "tr")
BUNDLED = "all-MiniLM-L6-v2"
E5 = "multilingual-e5-small"


def _lines(name: str) -> list[str]:
    return (WMT / name).read_text(encoding="utf-8").splitlines()


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
    assert msg.endswith("To score this text, " + multilingual_hint("m"))
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


def test_japanese_letters_read_as_others_are_marked_where_the_tokens_are_shown(scorer):
    ex = scorer.explain("猫がマットの上に座った。", "マットの上に猫が座っている。")
    assert "が→か" in ex.cand.display and "猫→[UNK]" in ex.cand.display  # が is read as か (accents stripped)
    assert "が→か" in list(explain_table.token_table(ex, "candidate")["display"])
    assert "が→か" in plots.heatmap_figure(ex).layout.yaxis.ticktext
    labels = [t for tr in plots.alignment_figure(ex).data if tr.text is not None for t in tr.text]
    assert "が→か" in labels
    assert "1 token(s) changed by the tokenizer (が read as か)" in " ".join(ex.warnings)  # the typed letter
    latin = scorer.explain("Café au lait.", "A coffee.")
    assert "Café" in latin.cand.display  # Latin accents: the English model's own design, not marked


# --- several references, one empty: corpus scoring (Compare, CLI) says it as Inspect does -------------------------
def test_corpus_scoring_names_the_empty_reference_counting_from_one(scorer):
    res = scorer.result(scorer.match(["The cat sat on the mat.", "It rained.", "Sun."],
                                     [["", "A cat sat on the mat."], ["It rained all day.", "Rain."], ["", ""]]))
    assert res.f1[0] > 0.5 and res.f1[2] == 0
    among = next(w for w in res.warnings if "among several" in w)
    assert among == ("1 empty reference(s) among several: P, R and F1 against them are 0; the scores shown are the "
                     "maxima over the other references: candidate index 0 (reference 1).")
    only = next(w for w in res.warnings if w.startswith("2 empty reference(s), scored 0"))
    assert "candidate index 2 (reference 1), 2 (reference 2)" in only
    single = scorer.result(scorer.match(["The cat sat."], [""]))
    assert "1 empty reference(s), scored 0: candidate index 0." in single.warnings


# --- the text's own language and script --------------------------------------------------------------------------
def test_language_of_latin_script_text_by_hand():
    assert language_of("Der Hund bellt die ganze Nacht, weil er nicht schlafen kann.") == "de"
    assert language_of("Le chat est assis sur le tapis près de la porte.") == "fr"
    assert language_of("El gato está sentado en la alfombra de la casa.") == "es"
    assert language_of("The dog barked all night because it could not sleep.") == "en"
    assert language_of("President Erdoğan received Ömer Koç and Ali Koç") is None  # names are not evidence
    assert language_of("Guten Tag.") is None  # too few words to decide
    assert mismatch("Кошка сидит на коврике у двери.", ("en",)) == "Cyrillic script"
    assert mismatch("猫がマットの上に座った。", ("en",)) == "Hiragana, Han and Katakana script"  # most letters first
    assert mismatch("Der Hund bellt die ganze Nacht, weil er nicht schlafen kann.", ("de",)) is None
    assert mismatch("Кошка сидит на коврике у двери.", ("ru",)) is None
    assert languages.model_languages(BUNDLED) == ("en",)
    assert languages.model_languages(E5) is None and languages.model_languages("/some/local/model") is None


@pytest.mark.parametrize("lp", PAIRS)
def test_wmt16_sources_warn_with_the_english_model_and_not_with_the_multilingual_one(lp):
    sources = _lines(f"DAseg-newstest2016.source.{lp}-en")
    refs = _lines(f"DAseg-newstest2016.reference.{lp}-en")
    report = dataset_languages([[r] for r in refs], {"source_as_output": sources}, BUNDLED)
    flagged = sum(report.systems["source_as_output"].values())
    assert flagged >= 0.5 * len(sources), report.systems  # most sentences are recognised (fi: 56%)
    assert report.references == {}  # the English references: never
    note = report.message()
    assert note.startswith(f"Text outside the languages of {BUNDLED} (English only): outputs of every system: ")
    assert E5 in note
    assert dataset_languages([[s] for s in sources], {"s": sources}, E5).message() is None
    kinds = report.systems["source_as_output"]
    expected = "Cyrillic script" if lp == "ru" else f"{languages.NAMES[lp]} ({lp})"
    assert max(kinds, key=kinds.get) == expected


@pytest.mark.slow
def test_no_english_text_in_data_is_taken_for_another_language():
    files = [*WMT.glob("DAseg-newstest2016.reference.*"), *WMT.glob("DAseg-newstest2016.mt-system.*"),
             *(DATA / "newstest2017-english").glob("*")]
    texts = [t for f in files for t in f.read_text(encoding="utf-8").splitlines()]
    assert len(texts) > 25_000
    assert [t for t in texts if mismatch(t, ("en",))] == []


def test_a_german_pair_warns_on_inspect_with_the_install_command(scorer, tmp_path):
    de = _lines("DAseg-newstest2016.source.de-en")
    cand, ref = de[2], de[0]
    ex = scorer.explain(cand, ref)
    warn = [w for w in ex.warnings if "outside the languages" in w]
    assert warn == [pair_message([("the candidate", cand), ("the reference", ref)], BUNDLED)]
    assert warn[0].startswith(f"The candidate and the reference look like German (de), outside the languages of "
                              f"{BUNDLED} (English only)")
    english = scorer.explain(*_lines("DAseg-newstest2016.reference.de-en")[:2])
    assert not [w for w in english.warnings if "outside the languages" in w]
    assert pair_message([("the candidate", cand)], E5) is None
    # the suggestion: the install command when the model is not installed, else "choose it"
    missing = multilingual_hint(BUNDLED, home=tmp_path)
    assert missing.endswith("install it offline with: python -m bertscore_viz models install multilingual-e5-small")
    entry = get_entry(E5)
    home = tmp_path / "home"
    (home / E5).mkdir(parents=True)
    (home / E5 / "config.json").write_text("{}")
    import json

    from bertscore_viz.models.catalog import INSTALLED_MARKER

    (home / E5 / INSTALLED_MARKER).write_text(json.dumps({"recipe_version": getattr(entry, "recipe_version", 1)}))
    assert multilingual_hint(BUNDLED, home=home) == ("use a multilingual model: multilingual-e5-small is installed "
                                                     "here (choose it as the model).")


def test_cyrillic_and_mixed_references_name_the_reference(scorer):
    ex = scorer.explain("The cat sat on the mat.", ["A cat sat on the mat.", "Der Hund bellt die ganze Nacht, "
                                                    "weil er nicht schlafen kann."])
    assert "Reference 2 looks like German (de)" in " ".join(ex.warnings)


def test_a_large_dataset_is_checked_on_an_even_sample_and_says_so():
    """Above max_segments the report looks at an even sample (first and last segment included), counts within it
    and says what was checked; the verdict on each text is the one the whole check gives."""
    english = "The committee said on Tuesday that it would publish the report next week."
    russian = "Комитет заявил во вторник, что опубликует доклад на следующей неделе."
    outputs = [russian if i % 2 else english for i in range(10)]
    refs = [[english]] * 10
    whole = dataset_languages(refs, {"s": outputs}, BUNDLED)
    sampled = dataset_languages(refs, {"s": outputs}, BUNDLED, max_segments=4)
    assert whole.checked == 10 and whole.systems["s"] == {"Cyrillic script": 5}
    assert sampled.checked == 4 and sampled.n_segments == 10
    assert sampled.systems["s"] == {"Cyrillic script": 2}  # segments 0, 3, 6, 9: 3 and 9 are Russian
    assert "of 4 segments" in sampled.message() and "an even sample of the 10" in sampled.message()
    assert "sample" not in whole.message()


def test_warnings_name_candidates_by_the_labels_given():
    """Issue 23, item 8: a client that knows where each candidate came from (the Compare page: the file's rows)
    gets warnings in its own numbering instead of indices from 0."""
    from bertscore_viz import Scorer

    scorer = Scorer()
    stats = scorer.match(["A cat.", "", "Rain."], ["The cat.", "Hi.", ""])
    by_index = scorer.result(stats).warnings
    assert "1 empty candidate(s), scored 0: index 1." in by_index
    labelled = scorer.result(stats, labels=["row 2", "row 4", "row 7"]).warnings
    assert "1 empty candidate(s), scored 0: row 4." in labelled
    assert "1 empty reference(s), scored 0: row 7." in labelled
    assert not any("index" in w for w in labelled)
