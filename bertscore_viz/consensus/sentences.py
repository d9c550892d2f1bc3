"""A rule-based sentence splitter for per-sentence support, and the token count SelfCheckGPT filters sentences by.

SelfCheckGPT (Manakul et al. 2023, ``selfcheckgpt/modeling_selfcheck.py``, ``SelfCheckBERTScore``) splits the sampled
passages with spaCy's ``en_core_web_sm`` parser and keeps a sampled sentence as evidence only when it has more than
3 spaCy tokens (``len(sent) > 3``). spaCy's models cannot be downloaded here, and the core may depend on nothing but
torch, transformers and numpy, so this module splits by rule:

- A sentence ends after a run of terminal marks (``.``, ``!``, ``?``, ``…``, and the full-width ``。！？``), with any
  closing quotes or brackets that follow it, when whitespace and then a character that can start a sentence (not a
  lowercase letter) come next, or the text ends. Full-width marks end a sentence without whitespace after them.
- A period does not end a sentence after a known abbreviation (``Mr.``, ``Dr.``, ``e.g.``, ``etc.``, month names, ...),
  after a single letter (an initial: ``J. Smith``), after a dotted acronym (``U.S.``) or inside a number (``3.14``).
- A line break always ends a sentence (lists and paragraphs of generated text); blank lines are skipped.
- Every sentence is stripped of surrounding whitespace; its character span in the original text is kept.

Where this differs from spaCy: the parser also splits sentences without punctuation and can keep a line break
inside one; it may split after an abbreviation that ends a sentence ("... in the U.S. The next ..." is one sentence
here). The token count (:func:`count_tokens`) approximates spaCy's English tokenizer: words (with inner
apostrophes, periods or commas: ``don't``, ``3,000``) and each other non-space character count one token each;
spaCy counts ``don't`` as two (``do``, ``n't``) and ``U.S.`` as one (here ``U.S`` and ``.``). The count only
decides whether a sentence of about 3 or 4 tokens counts as evidence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Sentence", "split_sentences", "count_tokens", "EVIDENCE_MIN_TOKENS", "ABBREVIATIONS"]

#: A sampled sentence counts as evidence when it has more than this many tokens (SelfCheckGPT: ``len(sent) > 3``).
EVIDENCE_MIN_TOKENS = 3

#: Words after which a period does not end a sentence (compared in lower case, without the period).
ABBREVIATIONS = frozenset("""
mr mrs ms dr prof sr jr st mt ft rev hon gen col lt sgt capt cmdr adm gov sen rep pres supt
vs etc al eg ie cf viz approx dept est inc ltd co corp bros assn univ no nos vol vols fig figs eq eqs ch sec p pp
jan feb mar apr jun jul aug sep sept oct nov dec mon tue tues wed thu thur thurs fri sat sun
""".split())

_TERMINAL = ".!?\u2026"
_FULL_WIDTH = "\u3002\uff01\uff1f"
_CLOSERS = "\"'\u201d\u2019)]}\u00bb"
# A run of terminal marks with its closers, then whitespace (captured) or the end of the text.
_BOUNDARY = re.compile(rf"[{_TERMINAL}]+[{re.escape(_CLOSERS)}]*(?=(\s+)|$)|[{_FULL_WIDTH}]+[{re.escape(_CLOSERS)}]*")
_WORD_BEFORE = re.compile(r"([\w.]+)\.$")
_TOKEN = re.compile(r"\w+(?:[.,'\u2019]\w+)*|[^\w\s]")


@dataclass(frozen=True)
class Sentence:
    """One sentence of a text.

    Attributes:
        text: the sentence, stripped.
        start, end: its span in the original text (``original[start:end] == text``).
        n_tokens: its length by :func:`count_tokens`.
    """

    text: str
    start: int
    end: int
    n_tokens: int

    @property
    def evidence(self) -> bool:
        """Long enough to count as evidence from another sample (more than :data:`EVIDENCE_MIN_TOKENS` tokens)."""
        return self.n_tokens > EVIDENCE_MIN_TOKENS


def count_tokens(text: str) -> int:
    """Tokens of ``text`` as an approximation of spaCy's English tokenizer (see the module's docstring).

    >>> count_tokens("The U.S. economy grew 3.5% in 2023, didn't it?")  # spaCy: 13 too, split differently
    13
    """
    return len(_TOKEN.findall(text))


def _no_break_after(text: str, dot: int) -> bool:
    """The period at ``text[dot]`` belongs to an abbreviation, an initial or a dotted acronym."""
    m = _WORD_BEFORE.search(text, 0, dot + 1)
    if m is None:
        return False
    word = m.group(1)
    last = word.rsplit(".", 1)[-1] if "." in word else word
    if "." in word and all(len(part) == 1 and part.isalpha() for part in word.split(".")):
        return True  # U.S., e.g., i.e.
    if len(last) == 1 and last.isalpha() and last.isupper():
        return True  # an initial
    return last.lower() in ABBREVIATIONS


def _ends_sentence(text: str, m: re.Match) -> bool:
    """Whether the terminal run matched by ``m`` ends a sentence."""
    run = m.group(0)
    if run[0] in _FULL_WIDTH:
        return True
    after = m.end() + (len(m.group(1)) if m.group(1) else 0)
    if after >= len(text):
        return True
    if text[after].islower():
        return False
    marks = run.rstrip(_CLOSERS)
    return not (marks == "." and _no_break_after(text, m.start()))


def split_sentences(text: str) -> list[Sentence]:
    """Sentences of ``text`` by the rules in the module's docstring.

    Args:
        text: any string (an empty or blank one has no sentences).

    Returns:
        The sentences in order, each stripped, with its span in ``text``.

    >>> [s.text for s in split_sentences("Dr. Smith arrived at 5 p.m. on Monday. He left!  Why?\\nA list item")]
    ['Dr. Smith arrived at 5 p.m. on Monday.', 'He left!', 'Why?', 'A list item']
    """
    out: list[Sentence] = []
    for line in re.finditer(r"[^\r\n]+", text):
        start = line.start()
        chunk = line.group(0)
        cuts = [m.end() for m in _BOUNDARY.finditer(chunk) if _ends_sentence(chunk, m)]
        prev = 0
        for cut in cuts + [len(chunk)]:
            piece = chunk[prev:cut]
            stripped = piece.strip()
            if stripped:
                lead = len(piece) - len(piece.lstrip())
                a = start + prev + lead
                out.append(Sentence(stripped, a, a + len(stripped), count_tokens(stripped)))
            prev = cut
    return out
