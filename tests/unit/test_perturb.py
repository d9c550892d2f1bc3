"""The perturbations of the stress test (bertscore_viz/evaluation/perturb.py): exact outputs on hand-written
sentences, the cases where a perturbation does not apply, and determinism (same seed, same texts, in any process;
one item's text independent of the others')."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bertscore_viz.errors import InputError
from bertscore_viz.evaluation.perturb import (
    PERTURBATIONS,
    TYPO_MIN_LETTERS,
    TYPO_SHARE,
    Corpus,
    add_negation,
    change_number,
    derangement,
    entity_spans,
    find_perturbation,
    item_rng,
    omit_second_half,
    perturb_all,
    remove_negation,
    repeat_text,
    shuffle_words,
    swap_entity,
    typos,
    unrelated,
    words_of,
)

ROOT = Path(__file__).resolve().parents[2]

#: Hand-written segments; the seeded outputs below are pinned: the same seed must give them on any machine.
SEGMENTS = [
    "The minister said that 3,000 people attended the rally in Berlin on 12 May.",
    "Angela Merkel met Barack Obama in Paris.",
    "The score was 2:1 after ninety minutes.",
    "We want peace.",
    "我爱北京天安门",
    "Hello",
]
PINNED_SEED_0 = {
    "numbers": ["The minister said that 3,000 people attended the rally in Berlin on 40 May.", None,
                "The score was 4:7 after ninety minutes.", None, None, None],
    "entities": ["The minister said that 3,000 people attended the rally in Barack Obama on 12 May.",
                 "Berlin met Barack Obama in Paris.", None, None, None, None],
    "shuffle": ["rally in May. The 12 that attended on people said 3,000 Berlin minister the",
                "Merkel met Barack in Paris. Obama Angela", "minutes. ninety The was after 2:1 score", "want peace. We",
                "北安天我门爱京", None],
    "typos": ["Teh minister sid that 3,000 people attended the rally in Berlin on 12 May.",
              "Angela Merkel met Barack Obama in Pris.", "The scroe was 2:1 after ninety minutes.", "We want paece.",
              "我北京天安门", "eHllo"],
    "unrelated": ["We want peace.", "The minister said that 3,000 people attended the rally in Berlin on 12 May.",
                  "我爱北京天安门", "Hello", "Angela Merkel met Barack Obama in Paris.",
                  "The score was 2:1 after ninety minutes."],
}


@pytest.mark.parametrize("text, expected", [
    ("The cat is on the mat.", "The cat is not on the mat."),
    ("They have gone home.", "They have not gone home."),
    ("The results were published.", "The results were not published."),
    ("I can swim.", "I cannot swim."),
    ("The museum will open in May.", "The museum will not open in May."),
    ("It's raining.", "It's not raining."),
    ("I did see it.", "I did not see it."),
    ("He went to the store.", "He did not go to the store."),
    ("She likes apples.", "She does not like apples."),
    ("We want peace.", "We do not want peace."),
    ("He had a dog.", "He did not have a dog."),
    ("He has to go.", "He does not have to go."),
    ("He did his homework.", "He did not do his homework."),
    ("Prices rose sharply.", "Prices did not rise sharply."),
    ("The company reports growth.", "The company does not report growth."),
    # the first auxiliary anywhere wins over a main verb found earlier
    ("He said that it was late.", "He said that it was not late."),
])
def test_add_negation(text, expected):
    assert add_negation(text) == expected


@pytest.mark.parametrize("text", [
    "Is it raining?",  # a question
    "He is not here.", "He didn't go.", "She never eats meat.", "There is no milk.", "Nobody came.",  # negated
    "The quick brown fox.",  # no verb
    "New reports show growth.",  # a plural noun or a verb: too unsure to edit
    "So could it work.",  # inversion
    "",
])
def test_add_negation_does_not_apply(text):
    assert add_negation(text) is None


@pytest.mark.parametrize("text, expected", [
    ("The man will not come.", "The man will come."),
    ("He didn't go.", "He did go."),
    ("They don't know.", "They do know."),
    ("I can't swim.", "I can swim."),
    ("It won't work.", "It will work."),
    ("I cannot swim.", "I can swim."),
    ("She never eats meat.", "She eats meat."),
    ("There is no milk.", "There is milk."),
    ("Never again.", "Again."),
    ("Not now, he said.", "Now, he said."),
    ("ISN'T it?", "IS it?"),
    ("No one came, but the bridge is not safe.", "No one came, but the bridge is safe."),  # "no one" stays
])
def test_remove_negation(text, expected):
    assert remove_negation(text) == expected


@pytest.mark.parametrize("text", ["The cat is on the mat.", "No one came.", "He is no longer here.", "Nothing.", ""])
def test_remove_negation_does_not_apply(text):
    assert remove_negation(text) is None


def test_change_number_keeps_the_formatting_and_changes_one_number():
    for seed in range(50):
        text = "Revenue was 3,000.50 euros in 2016, up 7 percent."
        out = change_number(text, item_rng(seed, "numbers", 0))
        before, after = re.findall(r"\d+(?:[.,:]\d+)*", text), re.findall(r"\d+(?:[.,:]\d+)*", out)
        changed = [(a, b) for a, b in zip(before, after) if a != b]
        assert len(before) == len(after) and len(changed) == 1, (text, out)
        a, b = changed[0]
        assert re.sub(r"\d", "0", a) == re.sub(r"\d", "0", b)  # same digits count and separators
        assert len(a) == 1 or b[0] != "0"  # a leading digit is not made 0
        assert re.sub(r"\d", "#", out) == re.sub(r"\d", "#", text)  # nothing else moved


def test_change_number_in_another_script():
    out = change_number("Score ٣:١ today", random.Random(1))
    assert out == "Score ٢:٤ today"  # Arabic-Indic digits stay Arabic-Indic
    assert change_number("No digits here.", random.Random(0)) is None


def test_entity_spans():
    def spans(text):
        return [text[a:b] for a, b in entity_spans(text)]

    assert spans("Angela Merkel met Barack Obama in Paris.") == ["Angela Merkel", "Barack Obama", "Paris"]
    assert spans("He met Mr. Obama in the U.S. on Monday.") == ["Obama", "U.S."]  # title and day left out
    assert spans("Merkel's aides met Obama's staff.") == ["Obama"]  # sentence-initial alone: not taken
    assert spans('He said: "We will meet Jean-Paul Sartre." Then Paris.') == ["Jean-Paul Sartre", "Paris"]
    assert spans("The cat sat. Dogs barked.") == []


def test_swap_entity():
    corpus = Corpus(["Angela Merkel visited Paris.", "He met Barack Obama.", "Nothing here."])
    assert corpus.entity_pool == ("Angela Merkel", "Paris", "Barack Obama")
    assert swap_entity("He met Barack Obama.", random.Random(0), corpus) == "He met Paris."
    assert swap_entity("He met Barack Obama.", random.Random(1), corpus) == "He met Angela Merkel."
    # the text's own entities are never drawn: Barack Obama is the only other one
    outs = {swap_entity("Angela Merkel visited Paris.", random.Random(s), corpus) for s in range(20)}
    assert outs == {"Angela Merkel visited Barack Obama.", "Barack Obama visited Paris."}
    assert swap_entity("Nothing here.", random.Random(0), corpus) is None  # no entity
    assert swap_entity("He met Barack Obama.", random.Random(0), None) is None  # no other segment to draw from
    assert swap_entity("He met Paris.", random.Random(0), Corpus(["He met Paris."])) is None  # no other entity


def test_shuffle_words():
    for seed in range(30):
        out = shuffle_words("a b", item_rng(seed, "shuffle", 0))
        assert out == "b a"  # always different from the original
        text = "The cat sat on the mat."
        out = shuffle_words(text, item_rng(seed, "shuffle", 1))
        assert out != text and sorted(out.split()) == sorted(text.split())
    assert shuffle_words("a a a a b", random.Random(3)) != "a a a a b"
    for text in ("Hello", "same same same", "", "  "):
        assert shuffle_words(text, random.Random(0)) is None


def test_omission_and_addition():
    assert omit_second_half("The cat sat on the mat.") == "The cat sat"
    assert omit_second_half("one two three") == "one two"
    assert omit_second_half("one two") == "one"
    assert omit_second_half("我爱北京天安门") == "我爱北京"  # characters are the words of such scripts
    assert omit_second_half("Hello") is None
    assert repeat_text(" The cat. ") == "The cat. The cat."
    assert repeat_text("我爱北京") == "我爱北京我爱北京"
    assert repeat_text("   ") is None and repeat_text("") is None
    assert words_of("a  b\tc") == (["a", "b", "c"], " ")


def test_typos():
    text = "The quick brown fox jumps over the lazy dog and runs away quickly."
    eligible = [w for w in re.findall(r"[^\W\d_]+", text) if len(w) >= TYPO_MIN_LETTERS]
    k = max(1, int(TYPO_SHARE * len(eligible) + 0.5))
    for seed in range(30):
        out = typos(text, item_rng(seed, "typos", 0))
        before, after = text.split(), out.split()
        changed = [(a, b) for a, b in zip(before, after) if a != b]
        assert len(before) == len(after) and len(changed) == k, out
        for a, b in changed:  # one adjacent swap (same letters) or one deletion
            assert (sorted(a) == sorted(b) and len(a) == len(b)) or (len(b) == len(a) - 1)
    assert typos("I am an ox at it.", random.Random(0)) is None  # no word of three letters


def test_unrelated_is_a_derangement():
    for n in (2, 3, 10, 101):
        for seed in (0, 1, 7):
            d = derangement(n, seed)
            assert sorted(d) == list(range(n)) and all(d[i] != i for i in range(n))
    assert derangement(1, 0) == (0,) and derangement(0, 0) == ()
    corpus = Corpus(["a b", "c d", "a b"], 0)
    outs = [unrelated(t, None, corpus, i) for i, t in enumerate(corpus.segments)]
    assert all(o is None or o != t for o, t in zip(outs, corpus.segments))  # the same text is no unrelated one
    assert unrelated("a b", None, Corpus(["a b"]), 0) is None  # one segment
    assert unrelated("a b", None, None, None) is None
    assert unrelated("", None, Corpus(["", "c d"]), 0) is None


def test_seeded_outputs_are_pinned():
    for name, expected in PINNED_SEED_0.items():
        assert perturb_all(SEGMENTS, name, seed=0) == expected, name
    assert perturb_all(SEGMENTS, "numbers", seed=1)[0] == (
        "The minister said that 5,954 people attended the rally in Berlin on 12 May.")


def test_one_item_does_not_depend_on_the_others():
    """Item-local perturbations give each text the same result whatever else is in the data set."""
    for p in PERTURBATIONS:
        if p.name in ("entities", "unrelated"):  # these borrow from other segments by design
            continue
        full = perturb_all(SEGMENTS, p, seed=5)
        alone = [perturb_all([t], p, seed=5)[0] for t in SEGMENTS[:1]]
        assert full[:1] == alone, p.name
        # the index is part of the seed: the same text at another position may get another result
        assert perturb_all(SEGMENTS[:3], p, seed=5) == full[:3], p.name


def test_same_seed_same_texts_in_another_process():
    """Python's string hashing is randomised per process; the perturbations must not depend on it."""
    script = ("import json, sys; from bertscore_viz.evaluation.perturb import PERTURBATIONS, perturb_all; "
              f"s = {SEGMENTS!r}; print(json.dumps({{p.name: perturb_all(s, p, seed=3) for p in PERTURBATIONS}}))")
    outs = []
    for hash_seed in ("1", "2"):
        proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=60,
                              env={"PYTHONHASHSEED": hash_seed, "PATH": ""})
        assert proc.returncode == 0, proc.stderr
        outs.append(json.loads(proc.stdout))
    here = {p.name: perturb_all(SEGMENTS, p, seed=3) for p in PERTURBATIONS}
    assert outs[0] == outs[1] == here


def test_perturbed_texts_differ_from_the_originals():
    for seed in range(5):
        for p in PERTURBATIONS:
            for text, out in zip(SEGMENTS, perturb_all(SEGMENTS, p, seed=seed)):
                assert out is None or out != text, (p.name, text)


def test_registry():
    names = [p.name for p in PERTURBATIONS]
    assert names == ["negation_add", "negation_remove", "numbers", "entities", "shuffle", "omission", "addition",
                     "typos", "unrelated"]
    assert all(p.description for p in PERTURBATIONS)
    english = {p.name for p in PERTURBATIONS if p.languages == ("en",)}
    assert english == {"negation_add", "negation_remove", "entities"}
    assert find_perturbation("typos").applies_to("de")
    assert find_perturbation("entities").applies_to("en-sci") and not find_perturbation("entities").applies_to("de")
    with pytest.raises(InputError, match="Unknown perturbation 'negation'.*negation_add"):
        find_perturbation("negation")


def test_inputs_are_not_modified():
    texts = list(SEGMENTS)
    for p in PERTURBATIONS:
        perturb_all(texts, p, seed=0)
    assert texts == SEGMENTS
