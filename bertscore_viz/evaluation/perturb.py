"""Perturbations of candidates for the stress test of the metric (:mod:`bertscore_viz.evaluation.audit`).

Each perturbation is a pure function ``f(text, rng, corpus=None, index=None) -> str | None``: the perturbed text, or
None when it does not apply (no number in the text, no verb to negate, no entity, nothing to shuffle...). A
perturbed text always differs from the original. ``rng`` is a :class:`random.Random` seeded for this one item
(:func:`item_rng`: from the seed, the perturbation's name and the item's index, through Python's string seeding,
which hashes with SHA-512), so the same seed gives the same texts on any machine and one item's result never depends
on the others'. ``corpus`` (:class:`Corpus`) holds the data set's candidates for the perturbations that borrow from
other segments (entities, unrelated); ``index`` is the item's position in it.

The registry :data:`PERTURBATIONS` names and documents each one (:class:`Perturbation`). Negation and entities use
English rules (``languages=("en",)``); the others work on any language: words are whitespace-separated, except in
text with characters of a script written without spaces (Chinese, Japanese, Thai, Lao, Khmer, Burmese), where each
character is a word. The rules are rules, not a parser: they are right on ordinary declarative sentences and may
produce clumsy text on unusual ones; every perturbed text is written out (``audit --dump``) so it can be checked.
"""

from __future__ import annotations

import math
import random
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

from bertscore_viz.errors import InputError

__all__ = ["Corpus", "PERTURBATIONS", "Perturbation", "PerturbFn", "TYPO_MIN_LETTERS", "TYPO_SHARE", "add_negation",
           "change_number", "derangement", "entity_spans", "find_perturbation", "item_rng", "omit_second_half",
           "perturb_all", "remove_negation", "repeat_text", "shuffle_words", "swap_entity", "typos", "unrelated",
           "words_of"]

#: Share of the eligible words (runs of at least :data:`TYPO_MIN_LETTERS` letters) that get a typo (at least one).
TYPO_SHARE = 0.2
TYPO_MIN_LETTERS = 3

#: A word: letters and digits, with inner apostrophes and hyphens (``isn't``, ``I'm``, ``Jean-Paul``, ``2-1``).
_WORD = re.compile(r"[^\W_]+(?:['’\-][^\W_]+)*")
_LETTERS = re.compile(r"[^\W\d_]+")
#: A number: digit runs joined by ``.``, ``,`` or ``:`` (``3,000.50``, ``2:1``); any script's decimal digits.
_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
#: Scripts written without spaces between words: CJK ideographs, kana, Thai, Lao, Burmese, Khmer.
_NO_SPACE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff]")

# --- English word lists for negation ---------------------------------------------------------------------------
_BE = {"am", "is", "are", "was", "were"}
_MODALS = {"can", "could", "will", "would", "shall", "should", "may", "might", "must"}
_PRONOUN_CONTRACTIONS = {
    f"{p}'{c}" for p, cs in (("i", "m ve ll d"), ("you", "re ve ll d"), ("we", "re ve ll d"), ("they", "re ve ll d"),
                             ("he", "s ll d"), ("she", "s ll d"), ("it", "s ll"), ("that", "s"), ("there", "s"),
                             ("here", "s"), ("what", "s"), ("who", "s")) for c in cs.split()}
_SUBJECT_PRONOUNS = {"i", "you", "we", "they"}
_SINGULAR_SUBJECTS = {"he", "she", "it", "who", "which", "that", "this"}
_DETERMINERS = {"a", "an", "the", "this", "that", "these", "those", "my", "your", "his", "her", "its", "our",
                "their", "some", "any", "every", "each", "no", "to"}
_NEGATIONS = {"not", "never", "no", "cannot", "nobody", "nothing", "none", "neither", "nor", "nowhere"}
#: ``no`` before these is not a removable negation (``no one``, ``no longer``...).
_NO_KEEP = {"one", "longer", "more", "matter", "doubt", "less", "way"}
_NT_SPECIAL = {"can't": "can", "won't": "will", "shan't": "shall", "ain't": ""}
#: Irregular verbs: base, past, past participle.
_IRREGULAR = """arise arose arisen|become became become|begin began begun|bite bit bitten|blow blew blown|
break broke broken|bring brought brought|build built built|buy bought bought|catch caught caught|choose chose chosen|
come came come|cost cost cost|cut cut cut|deal dealt dealt|dig dug dug|draw drew drawn|drink drank drunk|
drive drove driven|eat ate eaten|fall fell fallen|feed fed fed|feel felt felt|fight fought fought|find found found|
fly flew flown|forget forgot forgotten|forgive forgave forgiven|freeze froze frozen|get got gotten|give gave given|
go went gone|grow grew grown|hang hung hung|hear heard heard|hide hid hidden|hit hit hit|hold held held|
hurt hurt hurt|keep kept kept|know knew known|lay laid laid|lead led led|leave left left|lend lent lent|let let let|
lie lay lain|lose lost lost|make made made|mean meant meant|meet met met|pay paid paid|put put put|quit quit quit|
read read read|ride rode ridden|ring rang rung|rise rose risen|run ran run|say said said|see saw seen|
seek sought sought|sell sold sold|send sent sent|set set set|shake shook shaken|shoot shot shot|show showed shown|
shut shut shut|sing sang sung|sink sank sunk|sit sat sat|sleep slept slept|speak spoke spoken|spend spent spent|
stand stood stood|steal stole stolen|stick stuck stuck|strike struck struck|swim swam swum|take took taken|
teach taught taught|tear tore torn|tell told told|think thought thought|throw threw thrown|
understand understood understood|wake woke woken|wear wore worn|win won won|write wrote written|do did done|
have had had"""
#: Regular verbs (``base`` or ``base/past`` where the past doubles a consonant).
_REGULAR = """accept add admit/admitted agree allow announce answer appear approve arrest arrive ask attack believe
call cause change claim close commit/committed complete confirm consider contain continue create decide deliver
deny depend describe destroy die discover discuss drop/dropped enjoy enter expect explain fail finish follow happen
help hope improve include increase injure intend introduce invite join kill launch laugh learn like listen live
look love manage mention move need notice occur/occurred offer open order own plan/planned play prefer/preferred
prepare promise propose protect provide publish pull push raise reach receive recommend reduce refer/referred
reject remain remember replace report require return seem serve start stay stop/stopped suggest support talk thank
travel try turn use visit vote wait walk want warn wash watch wish work worry"""


def _third_person(base: str) -> str:
    if base == "have":
        return "has"
    if base.endswith(("s", "sh", "ch", "x", "z", "o")):
        return base + "es"
    if base.endswith("y") and base[-2:-1] not in "aeiou":
        return base[:-1] + "ies"
    return base + "s"


def _regular_past(base: str) -> str:
    if base.endswith("e"):
        return base + "d"
    if base.endswith("y") and base[-2:-1] not in "aeiou":
        return base[:-1] + "ied"
    return base + "ed"


def _verb_tables() -> tuple[set[str], dict[str, str], dict[str, str], set[str]]:
    """(base forms, past -> base, third person -> base, past participles) of the lexicon."""
    bases, past, third, participles = set(), {}, {}, {"been"}
    for entry in _IRREGULAR.replace("\n", "").split("|"):
        base, p, pp = entry.split()
        bases.add(base)
        past[p] = base
        participles.add(pp)
    for entry in _REGULAR.split():
        base, _, p = entry.partition("/")
        bases.add(base)
        past[p or _regular_past(base)] = base
        participles.add(p or _regular_past(base))
    for base in bases:
        third[_third_person(base)] = base
    # A past form that is also a base form (read, put, lay) says nothing about tense: not used as a past.
    past = {p: b for p, b in past.items() if p not in bases and b not in ("be", "have", "do")}
    return bases, past, third, participles


_BASES, _PAST, _THIRD, _PARTICIPLES = _verb_tables()


@dataclass(frozen=True)
class Perturbation:
    """A named, documented perturbation.

    Attributes:
        name: the identifier used in results, the CLI (``--perturbations``) and dumps.
        description: one sentence on what it does, for tables and the app.
        languages: language codes whose rules it uses (``("en",)``), or None for any language.
        function: ``function(text, rng, corpus, index) -> str | None``.
    """

    name: str
    description: str
    languages: tuple[str, ...] | None
    function: PerturbFn

    def applies_to(self, lang: str) -> bool:
        """Whether this perturbation's rules fit ``lang`` (``en``, ``en-sci`` and ``en_US`` are English)."""
        if self.languages is None:
            return True
        return re.split(r"[-_]", str(lang).lower())[0] in self.languages


class Corpus:
    """The data set a candidate belongs to: what perturbations borrowing from other segments look at.

    Args:
        segments: every candidate of the data set, in order.
        seed: the seed of the audit (the unrelated candidates' derangement depends on it).
    """

    def __init__(self, segments: Sequence[str], seed: int = 0):
        self.segments = tuple(segments)
        self.seed = int(seed)

    @cached_property
    def entity_pool(self) -> tuple[str, ...]:
        """Distinct entity strings of all segments, in order of first occurrence."""
        return tuple(dict.fromkeys(self.segments[i][a:b] for i in range(len(self.segments))
                                   for a, b in entity_spans(self.segments[i])))

    @cached_property
    def unrelated_index(self) -> tuple[int, ...]:
        """The segment whose candidate serves as each segment's unrelated candidate (:func:`derangement`)."""
        return derangement(len(self.segments), self.seed)


PerturbFn = Callable[[str, random.Random, "Corpus | None", "int | None"], "str | None"]


def item_rng(seed: int, name: str, index: int) -> random.Random:
    """The generator of one item: seeded from ``"{seed}/{name}/{index}"`` (SHA-512 of the string in Python's
    seeding), so it is the same on any machine and Python version, and independent of every other item."""
    return random.Random(f"{int(seed)}/{name}/{int(index)}")


def derangement(n: int, seed: int) -> tuple[int, ...]:
    """A permutation of ``range(n)`` with no fixed point (Sattolo's algorithm: one cycle through all), seeded.

    Returns:
        ``(n,)`` indices; ``()`` for n = 0 and ``(0,)`` for n = 1 (the one segment has no other).
    """
    order = list(range(n))
    rng = random.Random(f"{int(seed)}/unrelated")
    for i in range(n - 1, 0, -1):
        j = rng.randrange(i)
        order[i], order[j] = order[j], order[i]
    return tuple(order)


def words_of(text: str) -> tuple[list[str], str]:
    """The words of a text and the string that joins them: whitespace-separated words and ``" "``, or, for text
    holding characters of a script written without spaces, its non-space characters and ``""``."""
    if _NO_SPACE.search(text):
        return [c for c in text if not c.isspace()], ""
    return text.split(), " "


def _tokens(text: str) -> list[re.Match]:
    return list(_WORD.finditer(text))


def _plain(token: str) -> str:
    return token.lower().replace("’", "'")


def _is_negated(tokens: Sequence[re.Match]) -> bool:
    return any(_plain(t.group()) in _NEGATIONS or _plain(t.group()).endswith("n't") for t in tokens)


def _auxiliary_edit(tokens: Sequence[re.Match], k: int) -> tuple[int, int, str] | None:
    """``(start, end, replacement)`` negating token ``k`` when it is an auxiliary or modal, else None."""
    tok, word = tokens[k].group(), _plain(tokens[k].group())
    nxt = _plain(tokens[k + 1].group()) if k + 1 < len(tokens) else ""
    prev = _plain(tokens[k - 1].group()) if k > 0 else ""
    if tok[:1].isupper() and word not in _PRONOUN_CONTRACTIONS:  # sentence-initial (a question) or a name
        return None
    a, b = tokens[k].span()
    if nxt in _SUBJECT_PRONOUNS | {"he", "she", "it", "there"} and word not in _PRONOUN_CONTRACTIONS:
        return None  # inversion ("so could it", "nor is there"): "not" does not go right after the verb
    if word in _PRONOUN_CONTRACTIONS or word in _BE:
        return b, b, " not"
    if prev in _DETERMINERS:  # "the will", "a can": nouns
        return None
    if word == "can":
        return a, b, "cannot"
    if word in _MODALS:
        return b, b, " not"
    if word in ("do", "does", "did") and nxt in _BASES:  # "did not see"
        return b, b, " not"
    if word in ("have", "has", "had") and (nxt in _PARTICIPLES or nxt.endswith("ed")):  # "has not gone"
        return b, b, " not"
    return None


def _main_verb_edit(tokens: Sequence[re.Match], k: int) -> tuple[int, int, str] | None:
    """``(start, end, replacement)`` negating token ``k`` with do-support when it is a main verb of the lexicon
    (past, third person singular, or base form after I/you/we/they), else None."""
    tok, word = tokens[k].group(), _plain(tokens[k].group())
    prev = _plain(tokens[k - 1].group()) if k > 0 else ""
    if tok[:1].isupper() or prev in _DETERMINERS:  # a name, an imperative; "the plans", "to work"
        return None
    a, b = tokens[k].span()
    if word in ("have", "has", "had", "do", "does", "did"):  # "had a dog" -> "did not have a dog"
        aux = {"have": "do", "do": "do", "has": "does", "does": "does", "had": "did", "did": "did"}[word]
        if aux == "do" and prev not in _SUBJECT_PRONOUNS:
            return None
        return a, b, f"{aux} not {'have' if word.startswith('ha') else 'do'}"
    if word in _PAST:
        return a, b, f"did not {_PAST[word]}"
    if word in _THIRD:
        nxt = _plain(tokens[k + 1].group()) if k + 1 < len(tokens) else ""
        if (nxt in _BASES or nxt in _PAST or nxt in _THIRD) and prev not in _SINGULAR_SUBJECTS:
            return None  # "new reports show", "its shares rose": a plural noun before its verb, or not sure
            return None
        return a, b, f"does not {_THIRD[word]}"
    if word in _BASES and prev in _SUBJECT_PRONOUNS:
        return a, b, f"do not {word}"
    return None


def add_negation(text: str, rng: random.Random | None = None, corpus: Corpus | None = None,
                 index: int | None = None) -> str | None:
    """Negate an English sentence that holds no negation: ``not`` after its first auxiliary or modal (``is not``,
    ``will not``, ``cannot``, ``has not gone``, ``I'm not``); in a text without one, ``do/does/did not`` before its
    first main verb found in a lexicon of about 200 common verbs (``went`` -> ``did not go``, ``likes`` -> ``does
    not like``, ``we want`` -> ``we do not want``). A third-person form followed by another verb form (``new reports
    show``, ``its shares rose``) is left alone: a plural noun, or too unsure to edit.

    Args:
        text: the candidate. rng, corpus, index: unused (the rule is deterministic).

    Returns:
        The negated text; None for a question, a text already holding a negation (``not``, ``n't``, ``never``,
        ``no``, ``nobody``...) or one where no verb is found.
    """
    tokens = _tokens(text)
    if not tokens or text.rstrip().endswith("?") or _is_negated(tokens):
        return None
    # Auxiliaries first, anywhere in the text: a main verb found by the lexicon is the less certain reading
    for rule in (_auxiliary_edit, _main_verb_edit):
        for k in range(len(tokens)):
            edit = rule(tokens, k)
            if edit is not None:
                a, b, new = edit
                return text[:a] + new + text[b:]
    return None


def _match_case(word: str, like: str) -> str:
    if like.isupper() and len(like) > 1:
        return word.upper()
    return word[:1].upper() + word[1:] if like[:1].isupper() else word


def _drop(text: str, a: int, b: int) -> str:
    """The text without ``text[a:b]`` and one run of spaces beside it; when the word began the text, its capital
    moves to the next word."""
    before, after = text[:a], text[b:]
    if before.strip():  # inside the text: the word and the spaces before it go
        return before.rstrip() + after if before[-1:].isspace() else before + after.lstrip()
    after = after.lstrip()
    if text[a:a + 1].isupper():
        after = after[:1].upper() + after[1:]
    return before + after


def remove_negation(text: str, rng: random.Random | None = None, corpus: Corpus | None = None,
                    index: int | None = None) -> str | None:
    """Remove the first negation of an English sentence: drop ``not`` or ``never`` (``is not`` -> ``is``), undo a
    contraction (``didn't`` -> ``did``, ``won't`` -> ``will``, ``cannot``/``can't`` -> ``can``), or drop ``no``
    before a noun (``no milk`` -> ``milk``; not ``no one``, ``no longer``, ``no more``...).

    Returns:
        The text without that negation; None when it holds none of these.
    """
    tokens = _tokens(text)
    for k, t in enumerate(tokens):
        word, tok = _plain(t.group()), t.group()
        a, b = t.span()
        if word in ("not", "never"):
            return _drop(text, a, b)
        if word == "cannot":
            return text[:a] + _match_case("can", tok) + text[b:]
        if word.endswith("n't") and _NT_SPECIAL.get(word, word[:-3]):
            return text[:a] + _match_case(_NT_SPECIAL.get(word, word[:-3]), tok) + text[b:]
        if word == "no" and tok == "no" and k + 1 < len(tokens) and _plain(tokens[k + 1].group()) not in _NO_KEEP:
            return _drop(text, a, b)
    return None


def _changed_number(number: str, rng: random.Random) -> str:
    """The same digits' script and separators, other digits: a different number of the same length."""
    digits = [i for i, c in enumerate(number) if c.isdigit()]
    out = list(number)
    while "".join(out) == number:
        for pos, i in enumerate(digits):
            zero = ord(number[i]) - unicodedata.decimal(number[i])
            lead_kept = pos == 0 and unicodedata.decimal(number[i]) != 0 and len(digits) > 1
            out[i] = chr(zero + (rng.randrange(1, 10) if lead_kept else rng.randrange(10)))
    return "".join(out)


def change_number(text: str, rng: random.Random, corpus: Corpus | None = None, index: int | None = None) -> str | None:
    """Change one number (chosen at random) to a different one with the same formatting: as many digits, in the same
    script, separators kept (``3,000`` -> ``7,416``, ``2:1`` -> ``5:8``), a leading digit not made 0.

    Returns:
        The text with that number changed; None when it holds no number.
    """
    numbers = list(_NUMBER.finditer(text))
    if not numbers:
        return None
    m = numbers[rng.randrange(len(numbers))]
    return text[:m.start()] + _changed_number(m.group(), rng) + text[m.end():]


#: Capitalised words that are not names: the pronoun I, titles (a title before a name is left out of it), the
#: function words that start a quoted or bracketed sentence, and days and months (dates, not names to swap).
_ENTITY_STOP = _PRONOUN_CONTRACTIONS | set("""i mr mrs ms dr prof sir madam st ok the a an he she it we they you this
that these those there here in on at by of to for from with but and or nor so yet if when while where what who why
how as after before then yes no not my his her our their its your today tomorrow yesterday monday tuesday wednesday
thursday friday saturday sunday january february march april may june july august september october november
december""".split())
#: Abbreviations whose full stop does not end a sentence.
_ABBREVIATIONS = {"mr", "mrs", "ms", "dr", "prof", "st", "jr", "sr", "vs", "no", "gen", "col", "lt", "sgt", "gov"}
#: A word for entities: also dotted abbreviations (``U.S.``), whose full stops end no sentence.
_ENTITY_TOKEN = re.compile(r"(?:[^\W\d_]\.){2,}|[^\W_]+(?:['’\-][^\W_]+)*")


def entity_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of the named entities of an English text: runs of capitalised words (``Angela Merkel``,
    ``U.S.``, ``Jean-Paul``) separated by single spaces, not in a small stop list (the pronoun I, titles, function
    words that start quoted sentences, days and months). A capitalised word at the start of the text or of a sentence
    (after ``.``, ``!`` or ``?``, unless after an abbreviation such as ``Mr.``) is a name only as the first word of
    a run (``Angela Merkel said``), not alone. A possessive ``'s`` is left out of the span and ends it."""
    spans: list[tuple[int, int]] = []
    run: list[tuple[int, int]] = []
    prev_end, prev_word = 0, ""
    for k, t in enumerate(_ENTITY_TOKEN.finditer(text)):
        gap = text[prev_end:t.start()]
        sentence_start = k == 0 or (re.search(r"[.!?]", gap) is not None and prev_word not in _ABBREVIATIONS)
        tok = t.group()
        capital = tok[:1].isupper() and _plain(tok) not in _ENTITY_STOP
        if run and not (capital and gap == " " and not sentence_start):
            if len(run) > 1 or not run[0][2]:  # a sentence-initial word alone is not taken for a name
                spans.append((run[0][0], run[-1][1]))
            run = []
        if capital:
            possessive = _plain(tok).endswith("'s") and len(tok) > 2
            run.append((t.start(), t.end() - 2 if possessive else t.end(), sentence_start))
            if possessive:  # "Merkel's government": the name ends here
                if len(run) > 1 or not run[0][2]:
                    spans.append((run[0][0], run[-1][1]))
                run = []
        prev_end, prev_word = t.end(), _plain(tok)
    if run and (len(run) > 1 or not run[0][2]):
        spans.append((run[0][0], run[-1][1]))
    return spans


def swap_entity(text: str, rng: random.Random, corpus: Corpus | None = None, index: int | None = None) -> str | None:
    """Replace one named entity (:func:`entity_spans`, chosen at random) with an entity of another segment, chosen
    at random among the data set's entities that do not occur in this text (compared without case).

    Returns:
        The text with the entity replaced; None when it holds no entity, or no other segment offers one.
    """
    spans = entity_spans(text)
    if not spans or corpus is None:
        return None
    own = {text[a:b].casefold() for a, b in spans}
    pool = corpus.entity_pool
    choice = None
    for _ in range(32):  # most draws succeed at once; the list is filtered only when they keep failing
        if not pool:
            break
        pick = pool[rng.randrange(len(pool))]
        if pick.casefold() not in own:
            choice = pick
            break
    if choice is None:
        others = [e for e in pool if e.casefold() not in own]
        if not others:
            return None
        choice = others[rng.randrange(len(others))]
    a, b = spans[rng.randrange(len(spans))]
    return text[:a] + choice + text[b:]


def shuffle_words(text: str, rng: random.Random, corpus: Corpus | None = None, index: int | None = None) -> str | None:
    """Shuffle the order of the words (:func:`words_of`; punctuation stays with its word), always into an order
    different from the original.

    Returns:
        The shuffled text (words joined by single spaces); None for fewer than two different words.
    """
    words, joiner = words_of(text)
    if len(set(words)) < 2:
        return None
    order = list(words)
    for _ in range(20):
        rng.shuffle(order)
        if order != words:
            return joiner.join(order)
    # Only when nearly all words are equal can 20 shuffles all give the original: a rotation then differs.
    for k in range(1, len(words)):
        if words[k:] + words[:k] != words:
            return joiner.join(words[k:] + words[:k])
    return None  # unreachable with two different words


def omit_second_half(text: str, rng: random.Random | None = None, corpus: Corpus | None = None,
                     index: int | None = None) -> str | None:
    """Keep the first ceil(n / 2) of the n words (:func:`words_of`) and drop the rest.

    Returns:
        The first half; None for fewer than two words.
    """
    words, joiner = words_of(text)
    if len(words) < 2:
        return None
    return joiner.join(words[: (len(words) + 1) // 2])


def repeat_text(text: str, rng: random.Random | None = None, corpus: Corpus | None = None,
                index: int | None = None) -> str | None:
    """The text twice, joined by a space (by nothing in a script written without spaces).

    Returns:
        The repeated text; None for an empty text.
    """
    stripped = text.strip()
    if not stripped:
        return None
    return stripped + words_of(stripped)[1] + stripped


def typos(text: str, rng: random.Random, corpus: Corpus | None = None, index: int | None = None) -> str | None:
    """Typos in :data:`TYPO_SHARE` of the words of at least three letters (rounded half up, at least one), chosen at
    random: in each, two adjacent different letters swapped or one letter deleted (each with probability 1/2; a
    swap falls back to a deletion in a word with no two adjacent different letters). In a script written without
    spaces a "word" is a run of letters between punctuation.

    Returns:
        The text with typos; None when no word has three letters.
    """
    words = [m.span() for m in _LETTERS.finditer(text) if m.end() - m.start() >= TYPO_MIN_LETTERS]
    if not words:
        return None
    k = max(1, math.floor(TYPO_SHARE * len(words) + 0.5))
    out = text
    for w in sorted(rng.sample(range(len(words)), k), reverse=True):  # from the right: earlier spans stay valid
        a, b = words[w]
        word = out[a:b]
        swaps = [i for i in range(len(word) - 1) if word[i] != word[i + 1]]
        if rng.random() < 0.5 and swaps:
            i = swaps[rng.randrange(len(swaps))]
            word = word[:i] + word[i + 1] + word[i] + word[i + 2:]
        else:
            i = rng.randrange(len(word))
            word = word[:i] + word[i + 1:]
        out = out[:a] + word + out[b:]
    return out


def unrelated(text: str, rng: random.Random | None = None, corpus: Corpus | None = None,
              index: int | None = None) -> str | None:
    """Another segment's candidate (:attr:`Corpus.unrelated_index`, a derangement: no segment gets its own, and each
    candidate serves once): how an unrelated text scores against the reference, the audit's reference point.

    Returns:
        That candidate; None without a corpus or an index, for a data set of one segment, or when this text or the
        other is empty or the two are the same text.
    """
    if corpus is None or index is None or len(corpus.segments) < 2 or not text.strip():
        return None
    other = corpus.segments[corpus.unrelated_index[index]]
    if not other.strip() or other.strip() == text.strip():
        return None
    return other


PERTURBATIONS: tuple[Perturbation, ...] = (
    Perturbation("negation_add", "A negation added: 'not' after the first auxiliary or modal, or 'do/does/did not' "
                 "before the first main verb (English).", ("en",), add_negation),
    Perturbation("negation_remove", "The first negation removed: 'not', 'never' or 'no' dropped, 'didn't' made "
                 "'did' (English).", ("en",), remove_negation),
    Perturbation("numbers", "One number changed to another with the same digits count and formatting.", None,
                 change_number),
    Perturbation("entities", "One named entity (capitalised words inside a sentence) replaced by another segment's "
                 "(English).", ("en",), swap_entity),
    Perturbation("shuffle", "The words in a random different order.", None, shuffle_words),
    Perturbation("omission", "The second half of the words dropped.", None, omit_second_half),
    Perturbation("addition", "The text repeated once.", None, repeat_text),
    Perturbation("typos", f"Adjacent letters swapped or a letter deleted in {TYPO_SHARE:.0%} of the words.", None,
                 typos),
    Perturbation("unrelated", "Another segment's candidate (the reference point: as bad as an unrelated text).",
                 None, unrelated),
)


def find_perturbation(name: str) -> Perturbation:
    """The registered perturbation of this name.

    Raises:
        InputError: an unknown name, listing the known ones.
    """
    for p in PERTURBATIONS:
        if p.name == name:
            return p
    raise InputError(f"Unknown perturbation {name!r}. Expected one of: {', '.join(p.name for p in PERTURBATIONS)}.")


def perturb_all(texts: Sequence[str], perturbation: Perturbation | str, seed: int = 0,
                corpus: Corpus | None = None) -> list[str | None]:
    """One perturbation applied to every text, each with its own generator (:func:`item_rng`).

    Args:
        texts: the candidates.
        perturbation: a :class:`Perturbation` or its name.
        seed: the seed; the same seed gives the same texts.
        corpus: the data set (default: ``texts`` with ``seed``).

    Returns:
        ``(len(texts),)`` perturbed texts, None where the perturbation does not apply.
    """
    p = find_perturbation(perturbation) if isinstance(perturbation, str) else perturbation
    corpus = corpus if corpus is not None else Corpus(texts, seed)
    return [p.function(t, item_rng(seed, p.name, i), corpus, i) for i, t in enumerate(texts)]
