"""Is this text in a language the model knows? Script detection and a cheap language check (pure, no model).

The token-level signs of text outside a model's vocabulary ([UNK], letters changed by accent stripping, words read
one letter at a time: :func:`bertscore_viz.engine.scorer.unknown_message`) miss two cases: Latin-script text in another
language (German with an English model tokenizes cleanly into English word pieces and scores confidently), and a
whole dataset, where nobody reads per-sentence warnings. This module looks at the text itself:

* **script**: the Unicode script of each letter (``Latin``, ``Cyrillic``, ``Han``, ``Hiragana`` ...); a text whose
  letters are mostly in a script the model's languages do not use is outside them (Cyrillic for an English model);
* **language** of Latin-script text, from function words (stop-word lists of 16 languages besides English: de,
  cs, fi, ro, tr, fr, es, it, pt, nl, pl, sv, da, et, hu, lv) and from letters English does not use (``ğ``,
  ``ř``, ``ä``); see :func:`language_of`. A text is given a language only when it has at least :data:`MIN_WORDS`
  words. Words that are English function words count for English only, and capitalised words (names) are not
  letter evidence, so English text is not given another language: none of the 25,741 English texts in ``data/``
  (WMT16 DA references and system outputs, newstest2017 references) is, while most of the WMT16 DA sources
  are (cs 88%, de 86%, ro 89%, ru 100%, tr 79%; fi 56%: short sentences with few function words).

The model's languages come from the catalog (:mod:`bertscore_viz.models.catalog`). A model outside the catalog, or a
multilingual one, gets no language warning: only the token-level signs apply to it.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from bertscore_viz.models.catalog import availability, get_entry

__all__ = ["MIN_WORDS", "MIN_HITS", "MIN_SHARE", "MIN_LETTER_SHARE", "MIN_SCRIPT_SHARE", "MULTILINGUAL_MODEL",
           "INSTALL_COMMAND", "NAMES", "LETTERS", "ENGLISH", "STOPWORDS", "LANGUAGE_SCRIPTS", "script_of", "scripts",
           "words", "language_of", "TextLanguage", "detect", "model_languages", "languages_text", "mismatch",
           "multilingual_hint", "pair_message", "DatasetLanguages", "MAX_CHECKED_SEGMENTS", "dataset_languages",
           "BASELINE_MISMATCH_SHARE", "MAX_CHECKED_REFERENCES", "baseline_language_message"]

#: Fewest words a text needs before its language is decided (shorter texts: script only).
MIN_WORDS = 5
#: Fewest function words of the language, and their smallest share of the text's words.
MIN_HITS = 3
MIN_SHARE = 0.15
#: Share of a text's words holding letters outside ASCII from which it is not English (with few English words).
MIN_LETTER_SHARE = 0.25
#: Share of a text's letters in scripts outside the model's languages from which the text is outside them.
MIN_SCRIPT_SHARE = 0.3
#: The multilingual model suggested, and the command that installs it offline.
MULTILINGUAL_MODEL = "multilingual-e5-small"
INSTALL_COMMAND = f"python -m bertscore_viz models install {MULTILINGUAL_MODEL}"

NAMES = {"en": "English", "de": "German", "fr": "French", "es": "Spanish", "it": "Italian", "pt": "Portuguese",
         "nl": "Dutch", "cs": "Czech", "pl": "Polish", "sv": "Swedish", "da": "Danish", "fi": "Finnish",
         "et": "Estonian", "hu": "Hungarian", "lv": "Latvian", "ro": "Romanian", "tr": "Turkish", "ru": "Russian",
         "zh": "Chinese", "ja": "Japanese", "ko": "Korean", "en-sci": "English (scientific)"}

_ENGLISH = """
the of and to a in is was that for it with as on be at by this had not are but from or have an they which one you
were her all she there would their we him been has when who will more no if out so said what up its about into than
them can only other new some could time these two may then do first any my now such like our over man me even most
made after also did many before must through back years where much your way well down should because each just
those people how too little state good very make world still own see men work long get here between both life being
under never day same another know while last might us great old year off come since against go came right used take
three he his i am why does how did don't i'm it's isn't doesn't didn't won't can't yes
"""

_STOPWORDS = {
    "de": """der die und den das dem des ist nicht sich mit auf für ein eine einen einem einer eines zu von auch es
             sie er wir ihr ich du werden wird wurde wurden sind hat haben hatte hatten war waren aus bei nach um wie
             oder aber dass daß noch nur schon über vor durch zum zur im vom beim kann können mehr sein seine seiner
             seinen ihre ihren ihrer diese dieser dieses diesem diesen wenn weil dann als gegen sehr hier jetzt immer
             keine kein keinen doch bis seit zwischen unter sowie damit wo wer mich mir uns euch ihm ihn sei soll
             sollen muss müssen worden habe""",
    "cs": """se na je v ve z ze do že s o k ke jako by byl byla bylo byli jsou jsem jsme není ale tak jen už
             pro od po při za jeho její jejich který která které kteří což aby když však nebo také jak tento tato
             toto tyto tím tom mezi než podle bude budou má mají měl může ještě již před své svůj zda pouze více
             velmi""",
    "fi": """ja on ei että se oli ovat olla ole olisi ollut hän te minä sinä mutta kun myös tai joka jotka jonka
             joiden jos kuin niin mitä mikä tämä tämän tätä sen sitä siitä siinä vain jo nyt voi ne hänen kanssa
             mukaan jälkeen sekä yli vielä paljon kaikki nämä noin vaan eli koska jotta sitten olivat olevan
             kuitenkin eikä entä heti pois tuli yksi koko jota joita kuka kuten vuoden vuotta aikana olemme olen
             olet tässä tästä siellä täällä aina enää jopa lisäksi hyvin vaikka ennen asti ilman pian""",
    "ro": """și si în de la cu pe nu o un să sa ce care din pentru fi este sunt au fost mai sau dar iar ca că
             cel cea cei cele lui ei lor al ale acest această aceste acum după până între despre foarte fiind fără
             prin spre își deja doar unde când cum ai va vor poate""",
    "tr": """ve bir bu da de için ile çok daha ne gibi olarak en ama o ki mi var yok sonra kadar her şey olan
             değil ise göre ben sen biz siz onlar onun bunu buna bunun şu veya hem diye ancak ya eğer olduğu
             olduğunu oldu edildi etti eden tarafından arasında sadece bile ayrıca yeni büyük ilk iki yıl içinde
             üzerinde karşı""",
    "fr": """le la les de des du un une et est en que qui dans pour pas sur au aux avec ce cette ces il elle ils
             elles nous vous je ne se sa son ses leur leurs mais ou où plus par été être sont ont avait était fait
             comme tout tous toute aussi entre après avant sans très déjà encore lui y sera selon depuis contre
             l d qu c n j""",
    "es": """el la los las de del y en que es un una unos unas por con para se su sus al lo como más pero sin
             sobre entre este esta estos estas ese esa fue ha han era son está están ser muy también ya porque
             cuando donde hay todo todos le les nos mi yo él ella ellos desde hasta según tras durante""",
    "it": """il lo la gli le di del della dei delle degli dello e è un una uno che per con non si da dal dalla
             nel nella nei alla al ai sono come ma anche più questo questa quello quella ha hanno era essere stato
             stata tra fra se suo sua loro ci ne dopo molto già ancora quando dove perché l dell nell all dall
             sull""",
    "pt": """o os de da dos das e é em na nos nas um uma que para por com não se ao aos à mais mas como foi são
             ser está ele ela eles seu sua seus suas também pelo pela já muito ou quando onde este esta isso isto
             entre sobre depois ainda até há""",
    "nl": """de het een en van op te dat die niet met zijn voor er aan om ook als bij maar door naar dan nog wel
             geen tot uit heeft hebben werd worden wordt kan zal zou hij zij ze wij ik je jij u hem haar deze dit
             wat wie waar omdat want na meer veel al nu toen onder tussen sinds tegen zonder ons hun""",
    "pl": """w z na się nie do że jest od po jak ale co tak za przez dla jego jej ich który która które oraz już
             był była było są może tylko także przy jeszcze bardzo gdy czy pod nad tego tej tym ten ta""",
    "sv": """och att det som en på är av för med till den har de inte om ett han hon men var vi så kan ska från
             när sig också eller efter vid under mycket sina sin hade blev detta dessa""",
    "da": """og at det som en på er af for med til den har de ikke om et han hun men var vi så kan skal fra når
             sig også eller efter ved under meget sine sin havde blev dette disse""",
    "et": """ja on ei et see ka oli mis kui aga ta nad nii siis veel või kes seda selle mida ning olid oma pärast
             vaid kuid juba üle välja peab saab kõik""",
    "hu": """az és hogy nem is egy ez azt meg de csak volt van már mint még ki el fel le úgy pedig vagy mert
             akkor amely amelyek aki után között szerint lesz lett ezt sem sok majd""",
    "lv": """un ir ar par no uz kas ka bet arī lai tā tas viņš viņa viņi bija būs nav jau vēl pēc līdz kā tikai
             ļoti savu sava starp kad tad""",
}

#: Letters of each language that English does not use.
LETTERS: dict[str, frozenset[str]] = {lang: frozenset(chars) for lang, chars in {
    "de": "äöüß", "fr": "àâçéèêëîïôûùœ", "es": "áéíóúñ", "it": "àèéìòù", "pt": "áâãàçéêíóôõú",
    "nl": "ëïé", "cs": "áčďéěíňóřšťúůýž", "pl": "ąćęłńóśźż", "sv": "åäö", "da": "æøå", "fi": "äöå",
    "et": "õäöüšž", "hu": "áéíóöőúüű", "lv": "āčēģīķļņšūž", "ro": "ăâîșşțţ", "tr": "çğıöşü"}.items()}
ENGLISH = frozenset(_ENGLISH.split())
#: Function words of each language other than English; English function words left out (they count as English).
STOPWORDS = {lang: frozenset(words.split()) - ENGLISH for lang, words in _STOPWORDS.items()}
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
#: Elided articles and prepositions before an apostrophe (French, Italian): ``l'homme`` is ``l`` + ``homme``.
_ELISIONS = frozenset("l d qu c n j s m t dell nell all dall sull un".split())

#: The script(s) each language is written in (Latin when not listed).
LANGUAGE_SCRIPTS = {"ru": ("Cyrillic",), "uk": ("Cyrillic",), "bg": ("Cyrillic",), "el": ("Greek",),
                    "zh": ("Han",), "ja": ("Han", "Hiragana", "Katakana"), "ko": ("Hangul", "Han"),
                    "ar": ("Arabic",), "he": ("Hebrew",), "hi": ("Devanagari",), "th": ("Thai",)}
_SCRIPT_NAMES = {"CJK": "Han", "HANGUL": "Hangul", "FULLWIDTH": "Latin"}


_ASCII_LETTERS = re.compile(r"[A-Za-z]")


@functools.lru_cache(maxsize=1 << 16)
def script_of(ch: str) -> str | None:
    """The script of a letter (``Latin``, ``Cyrillic``, ``Han``, ``Hiragana`` ...), None for anything else.

    >>> [script_of(c) for c in "aЖ猫がカ7 "]
    ['Latin', 'Cyrillic', 'Han', 'Hiragana', 'Katakana', None, None]
    """
    if not ch.isalpha():
        return None
    word = unicodedata.name(ch, "").split(" ")[0]
    if not word:
        return "unnamed"
    return _SCRIPT_NAMES.get(word, word.capitalize())


def scripts(text: str) -> Counter:
    """Letters of ``text`` per script."""
    if text.isascii():  # most text of most test sets: Latin letters only, counted in C
        n = len(_ASCII_LETTERS.findall(text))
        return Counter({"Latin": n}) if n else Counter()
    return Counter(s for s in map(script_of, text) if s is not None)


def words(text: str) -> list[str]:
    """The words of ``text``, lower-cased (letters only); an elision is split (``l'homme``: ``l``, ``homme``), an
    English contraction is not (``don't``)."""
    out: list[str] = []
    for w in _WORD.findall(text.lower().replace("\u2019", "'")):
        head, _, tail = w.partition("'")
        out.extend((head, tail) if tail and head in _ELISIONS else (w,))
    return out


def _non_english_letters(word: str) -> bool:
    return any(c > "\x7f" for c in word)


def _lowercase_words(text: str) -> list[str]:
    """Words that do not start with a capital (names are capitalised: ``Erdoğan`` says nothing of the text)."""
    return [w for w in _WORD.findall(text.replace("\u2019", "'")) if not w[0].isupper()]


@functools.lru_cache(maxsize=1)
def _stop_index() -> dict[str, tuple[str, ...]]:
    """Each function word and the languages it is a function word of (one lookup per word of a text)."""
    index: dict[str, list[str]] = {}
    for lang, stop in STOPWORDS.items():
        for w in stop:
            index.setdefault(w, []).append(lang)
    return {w: tuple(langs) for w, langs in index.items()}


def language_of(text: str) -> str | None:
    """The language of Latin-script ``text`` (``"de"``), ``"en"``, or None (undecided: too few words, or no
    language clear enough). See the module's rule.

    Two kinds of evidence: function words, and letters English does not use. A text is given language L when its
    function words of L are at least :data:`MIN_HITS`, at least :data:`MIN_SHARE` of its words and more than its
    English function words; or, failing that, when at least :data:`MIN_LETTER_SHARE` of its words hold letters
    outside ASCII (capitalised words, names mostly, not counted) and its English function words are under
    :data:`MIN_SHARE` of its words (English with a few foreign names has far more). L is then the language with
    the most function words plus words holding its own letters (``ğ``, ``ř``, ``ä`` ...); ``"xx"`` when none
    has any.
    """
    ws = words(text)
    if len(ws) < MIN_WORDS:
        return None
    english = sum(w in ENGLISH for w in ws)
    hits = dict.fromkeys(STOPWORDS, 0)
    for w in ws:
        for lang in _stop_index().get(w, ()):
            hits[lang] += 1
    order = list(STOPWORDS)
    best = max(hits, key=lambda lang: (hits[lang], -order.index(lang)))
    h = hits[best]
    if h >= MIN_HITS and h >= MIN_SHARE * len(ws) and h > english:
        return best
    accented = [w for w in _lowercase_words(text) if _non_english_letters(w)]
    if len(accented) >= MIN_LETTER_SHARE * len(ws) and english < MIN_SHARE * len(ws):
        evidence = {lang: hits[lang] + sum(bool(LETTERS[lang] & set(w)) for w in accented) for lang in order}
        top = max(evidence, key=lambda lang: (evidence[lang], -len(LETTERS[lang]), -order.index(lang)))
        return top if evidence[top] > 0 else "xx"
    if english >= MIN_HITS and english >= MIN_SHARE * len(ws):
        return "en"
    return None


@dataclass(frozen=True)
class TextLanguage:
    """What a text is written in.

    Attributes:
        script: the script of most of its letters (None: no letters); letters: its letters per script.
        language: for Latin-script text, the language decided by :func:`language_of` (None: undecided).
    """

    script: str | None
    letters: dict = field(default_factory=dict)
    language: str | None = None


def detect(text: str) -> TextLanguage:
    """Script and (for Latin-script text) language of ``text``."""
    counts = scripts(text)
    if not counts:
        return TextLanguage(None, {}, None)
    main = max(counts, key=lambda s: (counts[s], s == "Latin"))
    return TextLanguage(main, dict(counts), language_of(text) if main == "Latin" else None)


# --- the model's languages ------------------------------------------------------------------------------------------
def model_languages(model: str) -> tuple[str, ...] | None:
    """The languages of a catalog model (``("en",)``), or None when nothing is known or it is multilingual: such
    a model gets no language warning."""

    entry = get_entry(model)
    if entry is None or "multilingual" in entry.languages:
        return None
    return tuple("en" if lang == "en-sci" else lang for lang in entry.languages)


def _allowed_scripts(langs: tuple[str, ...]) -> set[str]:
    out: set[str] = set()
    for lang in langs:
        out.update(LANGUAGE_SCRIPTS.get(lang, ("Latin",)))
    return out


def languages_text(langs: tuple[str, ...]) -> str:
    """``English``, ``Chinese, English``."""
    return ", ".join(NAMES.get(lang, lang) for lang in langs)


def mismatch(text: str, langs: tuple[str, ...] | None) -> str | None:
    """How ``text`` falls outside the languages ``langs`` (``"German (de)"``, ``"Cyrillic script"``), or None
    when it does not, cannot be told, or ``langs`` is None. English text is never outside."""
    if not langs:
        return None
    found = detect(text)
    if found.script is None:
        return None
    allowed = _allowed_scripts(langs)
    total = sum(found.letters.values())
    outside = {s: n for s, n in found.letters.items() if s not in allowed}
    if outside and sum(outside.values()) >= MIN_SCRIPT_SHARE * total:
        names = sorted(outside, key=lambda s: (-outside[s], s))
        return (", ".join(names[:-1]) + " and " if len(names) > 1 else "") + names[-1] + " script"
    lang = found.language
    if found.script == "Latin" and lang not in (None, "en") and lang not in langs:
        return "a language other than English" if lang == "xx" else f"{NAMES[lang]} ({lang})"
    return None


def multilingual_hint(model: str | None = None, home: Path | None = None) -> str:
    """The suggestion for text outside a model's languages: the multilingual model, and how to install it when it
    is not installed here (offline, one command)."""

    entry = get_entry(MULTILINGUAL_MODEL)
    if model is not None and entry is not None and get_entry(model) is entry:
        return "this model is multilingual, but its vocabulary does not cover this text."
    if entry is not None and availability(entry, home) == "available":
        return f"use a multilingual model: {MULTILINGUAL_MODEL} is installed here (choose it as the model)."
    return (f"use a multilingual model, e.g. {MULTILINGUAL_MODEL}, which is not installed here; install it "
            f"offline with: {INSTALL_COMMAND}")


def _model_text(model: str, langs: tuple[str, ...]) -> str:
    return f"{model} ({languages_text(langs)}{' only' if len(langs) == 1 else ''})"


def pair_message(sides: list[tuple[str, str]], model: str, home: Path | None = None) -> str | None:
    """One warning for the texts of a pair that are outside the model's languages, or None.

    Args:
        sides: ``(what, text)``, e.g. ``[("the candidate", "..."), ("reference 2", "...")]``.
        model: the model's name (catalog name or alias; others get no language warning).
    """
    langs = model_languages(model)
    if langs is None:
        return None
    found = [(what, m) for what, text in sides if (m := mismatch(text, langs)) is not None]
    if not found:
        return None
    by_kind: dict[str, list[str]] = {}
    for what, m in found:
        by_kind.setdefault(m, []).append(what)
    parts = [f"{' and '.join(whats)} {'look' if len(whats) > 1 else 'looks'} "
             f"{'to be in ' if m.endswith('script') else 'like '}{m}" for m, whats in by_kind.items()]
    text = "; ".join(parts)
    return (f"{text[0].upper()}{text[1:]}, outside the languages of {_model_text(model, langs)}. Its scores for "
            f"such text are not meaningful: {multilingual_hint(model, home)}")


@dataclass(frozen=True)
class DatasetLanguages:
    """Segments outside the model's languages, per group of texts.

    Attributes:
        model, languages: the model and its languages (None: not checked).
        n_segments: segments of the dataset.
        references: ``{kind: segments}`` of the references (a segment counts when any of its references is);
        systems: ``{system: {kind: segments}}`` of each system's outputs. ``kind`` is what :func:`mismatch` says.
        checked: segments looked at (all of them, or an even sample of a large dataset).
    """

    model: str
    languages: tuple[str, ...] | None
    n_segments: int
    references: dict
    systems: dict
    checked: int | None = None

    @property
    def outside(self) -> bool:
        return bool(self.references) or any(self.systems.values())

    def message(self, home: Path | None = None) -> str | None:
        """One summary for the page (None when every text is within the model's languages)."""
        if not self.outside or self.languages is None:
            return None
        n = self.n_segments if self.checked is None else self.checked
        sample = "" if n == self.n_segments else f" (checked: an even sample of the {self.n_segments:,})"

        def counts(kinds: dict) -> str:
            return ", ".join(f"{k} in {v:,}" for k, v in sorted(kinds.items(), key=lambda kv: -kv[1]))

        parts = []
        if self.references:
            parts.append(f"references: {counts(self.references)} of {n:,} segments")
        affected = {s: k for s, k in self.systems.items() if k}
        if affected:
            summaries = {s: counts(k) for s, k in affected.items()}
            if len(affected) == len(self.systems) and len(set(summaries.values())) == 1:
                parts.append(f"outputs of every system: {next(iter(summaries.values()))} of {n:,} segments")
            else:
                shown = list(summaries.items())[:8]
                more = len(summaries) - len(shown)
                parts.append("outputs: " + "; ".join(f"{s}: {c}" for s, c in shown)
                             + (f"; and {more} more system(s)" if more > 0 else "")
                             + f" (of {n:,} segments each)")
        return (f"Text outside the languages of {_model_text(self.model, self.languages)}: " + "; ".join(parts)
                + sample + f". Its scores for such text are not meaningful: {multilingual_hint(self.model, home)}")


#: Most segments :func:`dataset_languages` looks at: a larger dataset is checked on an even sample of this many
#: (about 1 ms per segment of 9 texts; what a language mismatch is, a sample shows).
MAX_CHECKED_SEGMENTS = 4000


def dataset_languages(references: list[list[str]], systems: dict[str, list[str]], model: str,
                      max_segments: int = MAX_CHECKED_SEGMENTS) -> DatasetLanguages:
    """Count the segments whose references or outputs are outside the model's languages (sources are not
    looked at: they are in another language by design); a dataset of more than ``max_segments`` segments is checked
    on an even sample of that many, and the message says so."""
    n = len(references)
    checked = n
    if n > max_segments:
        picks = sorted({round(i * (n - 1) / (max_segments - 1)) for i in range(max_segments)})
        references = [references[i] for i in picks]
        systems = {name: [outputs[i] for i in picks] for name, outputs in systems.items()}
        checked = len(picks)
    langs = model_languages(model)
    refs: Counter = Counter()
    per_system: dict[str, Counter] = {name: Counter() for name in systems}
    if langs is not None:
        memo: dict[str, str | None] = {}

        def kind(text: str) -> str | None:
            if text not in memo:
                memo[text] = mismatch(text, langs)
            return memo[text]

        for group in references:
            kinds = {k for k in map(kind, group) if k is not None}
            refs.update(sorted(kinds)[:1])
        for name, outputs in systems.items():
            per_system[name].update(k for k in map(kind, outputs) if k is not None)
    return DatasetLanguages(model, langs, n, dict(refs), {name: dict(c) for name, c in per_system.items()},
                            checked)


# --- the baseline's language ----------------------------------------------------------------------------------------
#: Share of the checked references outside the baseline's language from which rescaling is called into question.
BASELINE_MISMATCH_SHARE = 0.5
#: Most references :func:`baseline_language_message` looks at: more are checked on an even sample of this many.
MAX_CHECKED_REFERENCES = 1000


def baseline_language_message(references: list[str], lang: str,
                              max_texts: int = MAX_CHECKED_REFERENCES) -> str | None:
    """A warning when most references are not in the language of the rescaling baseline (e.g. Japanese text
    rescaled with the English baseline, the default language): a baseline is the mean score of unrelated sentences
    *in one language*, so rescaling another language's scores with it gives numbers with no common scale. None when
    most references are in ``lang`` or their language cannot be told. Sources are not looked at. An even sample of
    at most ``max_texts`` references is checked."""
    texts = [t for t in references if t and t.strip()]
    if len(texts) > max_texts:
        texts = [texts[round(i * (len(texts) - 1) / (max_texts - 1))] for i in range(max_texts)]
    if not texts:
        return None
    kinds = Counter(k for k in (mismatch(t, (lang,)) for t in texts) if k is not None)
    outside = sum(kinds.values())
    if outside < BASELINE_MISMATCH_SHARE * len(texts):
        return None
    what = ", ".join(k for k, _ in kinds.most_common(3))
    share = "the reference is" if len(texts) == 1 else f"{outside:,} of {len(texts):,} references are"
    return (f"Rescaling uses the {NAMES.get(lang, lang)} ({lang}) baseline, but {share} in {what}. A baseline "
            "is the mean score of unrelated sentences in one language, so these rescaled numbers are on no common "
            "scale. Choose the text's language in the sidebar (where a baseline exists for it), compute one on the "
            "Baselines page from text in that language, or turn rescaling off (raw scores are unaffected).")
