"""What a side's tokens say about its text: the display of a token the tokenizer changed (が→か, [UNK]) and the
warning for text outside the model's languages."""

from __future__ import annotations

import unicodedata

import numpy as np

from bertscore_viz.engine.languages import multilingual_hint
from bertscore_viz.engine.results import TokenSide

#: Between the typed text and the piece the model read, in the display of a token the tokenizer changed (が→か).
READ_AS = "→"


def unk_id(enc) -> int | None:
    uid = getattr(enc.tokenizer, "unk_token_id", None)
    return None if uid is None else int(uid)


def _script(ch: str) -> str:
    """A readable name for the script (or kind of symbol) of a character: ``CJK``, ``HIRAGANA``, ``emoji``."""

    if unicodedata.category(ch) in ("So", "Sk", "Cs", "Co"):
        return "emoji or symbols"
    name = unicodedata.name(ch, "")
    word = name.split(" ")[0]
    return (word if len(word) <= 3 else word.capitalize()) if name else "unnamed characters"


_CHARACTER_SCRIPTS = {"CJK", "Hiragana", "Katakana"}


def _is_latin_or_common(ch: str) -> bool:

    if not ch.isalpha():
        return True
    return unicodedata.name(ch, "").startswith("LATIN")


def word_piece(token: str) -> str:
    return token.removeprefix("##").removeprefix("Ġ").removeprefix("▁")


def changed_by_tokenizer(src: str, piece: str) -> bool:
    """Non-Latin letters the tokenizer read as other letters: accent stripping turns が into か (the model then
    reads a different character). Latin accents (``café`` read as ``cafe``) are the English models' own design."""

    if not any(not _is_latin_or_common(c) for c in src):
        return False
    if piece == src or piece.casefold() == src.casefold():
        return False
    stripped = "".join(c for c in unicodedata.normalize("NFD", src) if not unicodedata.combining(c))
    return stripped.casefold() == piece.casefold()


def _typed(side: TokenSide, i: int) -> str:
    """The input characters of token ``i`` without the display's flags (``→[UNK]``, ``→か``)."""
    src = side.source_text(i)
    mark = READ_AS + word_piece(side.tokens[i])
    return src[:-len(mark)] if src.endswith(mark) and len(src) > len(mark) else src


def unknown_message(what: str, side: TokenSide, model: str) -> str | None:
    """A warning when the text of ``side`` is outside the model's languages, or None.

    Three signs, counted on the tokens the model saw: tokens unknown to the vocabulary ([UNK], e.g. kanji or
    emoji in an English vocabulary); non-Latin letters the tokenizer changed (accent stripping turns が into か);
    non-Latin words read one character at a time (a vocabulary with that script's letters but no words of it:
    the warning then needs at least half of those letters read singly, and three of them).

    Args:
        what: ``"candidate"``, ``"reference"`` or ``"reference 2"``; side: its tokens; model: the model's name.
    """

    unknown = side.unknown
    parts: list[str] = []
    scripts: set[str] = set()
    unk_texts = list(dict.fromkeys(_typed(side, i) for i in np.flatnonzero(unknown).tolist()))
    for t in unk_texts:
        scripts.update(_script(c) for c in t if not c.isspace())
    if unk_texts:
        shown = ", ".join(unk_texts[:8]) + (" …" if len(unk_texts) > 8 else "")
        parts.append(f"{int(unknown.sum())} of {side.n_words()} token(s) unknown to the model ([UNK]: {shown})")
    changed: list[str] = []
    foreign = single = 0
    for i, (tok, special) in enumerate(zip(side.tokens, side.special)):
        if special or unknown[i]:
            continue
        src = _typed(side, i)
        piece = word_piece(tok)
        letters = [c for c in src if not _is_latin_or_common(c)]
        if not letters:
            continue
        scripts.update(_script(c) for c in letters)
        if not any(_script(c) in _CHARACTER_SCRIPTS for c in letters):  # Han and kana are read per character
            foreign += 1                                                  # by multilingual vocabularies too
            single += len(piece) == 1
        if changed_by_tokenizer(src, piece):
            changed.append(f"{src} read as {piece}")
    if changed:
        shown = ", ".join(list(dict.fromkeys(changed))[:5])
        parts.append(f"{len(changed)} token(s) changed by the tokenizer ({shown})")
    if foreign >= 3 and single * 2 >= foreign:
        parts.append(f"{single} of {foreign} non-Latin token(s) read one character at a time")
    if not parts:
        return None
    return (f"The {what} is outside the languages of {model} ({', '.join(sorted(scripts)) or 'unknown'}): "
            f"{'; '.join(parts)}. Such tokens match each other closely whatever they mean, so the score "
            "is not meaningful. To score this text, " + multilingual_hint(model))
