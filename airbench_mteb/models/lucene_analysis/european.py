"""Spanish, French, German, Russian and Indonesian as Pyserini analyses them (Lucene 9's analyzers).

Every chain starts with Lucene's StandardTokenizer and lower-cases; the stopwords are Lucene's defaults
(``stopwords/<lang>.txt``):

- es, SpanishAnalyzer: stopwords, Savoy's light Spanish stemmer;
- fr, FrenchAnalyzer: elision (``l'``, ``qu'``... removed) before lower-casing, stopwords, Savoy's light
  French stemmer;
- de, GermanAnalyzer: stopwords, German normalisation (umlauts, ``ß``, ``ae``/``oe``/``ue``), Savoy's
  light German stemmer;
- ru, RussianAnalyzer: stopwords, Snowball's Russian stemmer (PyStemmer ``russian``);
- id, IndonesianAnalyzer: stopwords, the Asian-Tala Indonesian stemmer with derivational prefixes and
  suffixes.

The light stemmers follow J. Savoy, "Report on CLEF-2001 experiments" and "Light stemming approaches for
the French, Portuguese, German and Hungarian languages" (SAC 2006); the Indonesian one F. Tala, "A Study
of Stemming Effects on Information Retrieval in Bahasa Indonesia" (2003). Lengths are counted in UTF-16
code units in Lucene; the texts these languages are written in stay in the Basic Multilingual Plane, where
that equals Python's ``len``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import lru_cache

from airbench_mteb.models.lucene_analysis.filters import lowercase, remove_stopwords, snowball_stemmer
from airbench_mteb.models.lucene_analysis.stopwords import load_stopwords
from airbench_mteb.models.lucene_analysis.tokenizer import standard_words

# Stemmed words are cached: a corpus repeats its words, the stemmers are pure Python.
_CACHED_WORDS = 1 << 16


def _words(text: str) -> list[str]:
    return standard_words(text)


def _stemmed(terms: Iterable[str], stem: Callable[[str], str]) -> list[str]:
    return [stem(term) for term in terms]


# --- Spanish -------------------------------------------------------------------------------------------

_SPANISH_ACCENTS = str.maketrans("àáâäòóôöèéêëùúûüìíîï", "aaaaooooeeeeuuuuiiii")


@lru_cache(maxsize=_CACHED_WORDS)
def spanish_light_stem(word: str) -> str:
    """Savoy's light Spanish stemmer: plural and gender endings; accents folded in words of 5+ letters."""
    if len(word) < 5:
        return word
    word = word.translate(_SPANISH_ACCENTS)
    if word[-1] in "oae":
        return word[:-1]
    if word.endswith("eses"):
        return word[:-2]
    if word.endswith("ces"):
        return word[:-3] + "z"
    if word.endswith(("os", "as", "es")):
        return word[:-2]
    return word


def spanish_terms(text: str) -> list[str]:
    terms = remove_stopwords(lowercase(_words(text)), load_stopwords("es"))
    return _stemmed(terms, spanish_light_stem)


# --- French --------------------------------------------------------------------------------------------

# FrenchAnalyzer's default elided articles; compared case-insensitively.
_FRENCH_ELISIONS = frozenset({"l", "m", "t", "qu", "n", "s", "j", "d", "c", "jusqu", "quoiqu", "lorsqu",
                              "puisqu"})
_APOSTROPHES = ("'", "\u2019")


def strip_elision(term: str) -> str:
    """Drop an elided article and its apostrophe (``l'avion`` -> ``avion``); only the first apostrophe counts."""
    cut = min((term.find(mark) for mark in _APOSTROPHES if mark in term), default=-1)
    if cut >= 0 and lowercase([term[:cut]])[0] in _FRENCH_ELISIONS:
        return term[cut + 1:]
    return term


# Savoy's French suffix rules, tried in order on the word as the earlier rules left it:
# (suffix, the word must be longer than, replacement, stop after this rule).
_FRENCH_RULES: tuple[tuple[str, int, str, bool], ...] = (
    ("issement", 9, "ir", True),
    ("issant", 8, "ir", True),
    ("ivement", 7, "if", True),
    ("ement", 6, "e", True),
    ("ficatrice", 11, "fier", True),
    ("ficateur", 10, "fier", True),
    ("catrice", 9, "quer", True),
    ("cateur", 8, "quer", True),
    ("atrice", 8, "er", True),
    ("ateur", 7, "er", True),
    ("trice", 6, "teur", False),
    ("ième", 5, "", True),
    ("teuse", 7, "ter", True),
    ("teur", 6, "ter", True),
    ("euse", 5, "eu", True),
    ("ère", 8, "er", True),
    ("ive", 7, "if", True),
    ("folle", 4, "fou", True),
    ("molle", 4, "mou", True),
    ("nnelle", 9, "n", True),
    ("nnel", 9, "n", True),
    ("ète", 4, "et", False),
    ("ique", 8, "", False),
    ("esse", 8, "e", True),
    ("inage", 7, "in", True),
    ("ualisation", 12, "uel", True),
    ("isation", 9, "", True),
    ("isateur", 9, "", True),
    ("ation", 8, "", True),
    ("ition", 8, "", True),
)
_FRENCH_ACCENTS = str.maketrans("àáâôèéêùûîç", "aaaoeeeuuic")


@lru_cache(maxsize=_CACHED_WORDS)
def french_light_stem(word: str) -> str:
    """Savoy's light French stemmer: plural, feminine and common derivational endings, then normalisation."""
    word = _french_plural(word)
    for suffix, longer_than, replacement, stop in _FRENCH_RULES:
        if len(word) > longer_than and word.endswith(suffix):
            word = word[:len(word) - len(suffix)] + replacement
            if stop:
                break
    return _french_norm(word)


def _french_plural(word: str) -> str:
    if len(word) > 5 and word.endswith("x"):  # chevaux -> cheval, but beaux -> beau
        word = word[:-2] + "l" if word[-3:-1] == "au" and word[-4] != "e" else word[:-1]
    if len(word) > 3 and word[-1] == "x":
        word = word[:-1]
    if len(word) > 3 and word[-1] == "s":
        word = word[:-1]
    return word


def _french_norm(word: str) -> str:
    """Accents folded and doubled letters merged (words of 5+ letters), then final -ie, -r, -e, -e, a double."""
    if len(word) > 4:
        word = _merge_repeated_letters(word.translate(_FRENCH_ACCENTS))
    if len(word) > 4 and word.endswith("ie"):
        word = word[:-2]
    if len(word) > 4:
        for ending in "ree":
            if word.endswith(ending):
                word = word[:-1]
        if word[-1] == word[-2] and word[-1].isalpha():
            word = word[:-1]
    return word


def _merge_repeated_letters(word: str) -> str:
    out = [word[0]]
    for char in word[1:]:
        if not (char == out[-1] and char.isalpha()):
            out.append(char)
    return "".join(out)


def french_terms(text: str) -> list[str]:
    terms = lowercase(strip_elision(word) for word in _words(text))
    return _stemmed(remove_stopwords(terms, load_stopwords("fr")), french_light_stem)


# --- German --------------------------------------------------------------------------------------------

_UMLAUTS = {"ä": "a", "ö": "o", "ü": "u"}


def german_normalize(word: str) -> str:
    """German2-style normalisation: umlauts unfolded, ``ß`` -> ``ss``, and the ``e`` of ``ae``/``oe``/``ue``
    dropped, except after a ``u`` that follows a vowel (``neue``, ``quelle`` keep theirs)."""
    out: list[str] = []
    state = _PLAIN
    for char in word:
        if char == "e" and state is _UMLAUT_E:
            state = _AFTER_VOWEL
            continue
        out.append("ss" if char == "ß" else _UMLAUTS.get(char, char))
        state = _german_state(char, state)
    return "".join(out)


# What the letter before says about a following "e": an umlaut spelled out, after a vowel, or neither.
_PLAIN, _AFTER_VOWEL, _UMLAUT_E = "plain", "after vowel", "umlaut e"


def _german_state(char: str, state: str) -> str:
    if char in "ao":
        return _UMLAUT_E
    if char == "u":
        return _UMLAUT_E if state is _PLAIN else _AFTER_VOWEL
    if char in "eiqyäöü":
        return _AFTER_VOWEL
    return _PLAIN


_GERMAN_ACCENTS = str.maketrans("äàáâöòóôïìíîüùúû", "aaaaooooiiiiuuuu")
_ST_ENDING_BEFORE = frozenset("bdfghklmnt")  # consonants after which a final -s/-st is an ending


def german_light_stem(word: str) -> str:
    """Savoy's light German stemmer: accents folded, then one inflectional ending of each of two steps."""
    word = word.translate(_GERMAN_ACCENTS)
    return _german_step2(_german_step1(word))


def _german_step1(word: str) -> str:
    if len(word) > 5 and word.endswith("ern"):
        return word[:-3]
    if len(word) > 4 and word[-2:] in ("em", "en", "er", "es"):
        return word[:-2]
    if len(word) > 3 and word.endswith("e"):
        return word[:-1]
    if len(word) > 3 and word.endswith("s") and word[-2] in _ST_ENDING_BEFORE:
        return word[:-1]
    return word


def _german_step2(word: str) -> str:
    if len(word) > 5 and word.endswith("est"):
        return word[:-3]
    if len(word) > 4 and word[-2:] in ("er", "en"):
        return word[:-2]
    if len(word) > 4 and word.endswith("st") and word[-3] in _ST_ENDING_BEFORE:
        return word[:-2]
    return word


def german_terms(text: str) -> list[str]:
    terms = remove_stopwords(lowercase(_words(text)), load_stopwords("de"))
    return _stemmed(terms, _german_stem)


@lru_cache(maxsize=_CACHED_WORDS)
def _german_stem(term: str) -> str:
    return german_light_stem(german_normalize(term))


# --- Russian -------------------------------------------------------------------------------------------

def russian_terms(text: str) -> list[str]:
    terms = remove_stopwords(lowercase(_words(text)), load_stopwords("ru"))
    return snowball_stemmer("russian").stemWords(terms)


# --- Indonesian ----------------------------------------------------------------------------------------

_VOWELS = frozenset("aeiou")
# Which prefix went: a removed prefix rules out some suffixes.
_MENG, _PENG, _DI, _TER, _KE, _BER, _PE = "meng", "peng", "di", "ter", "ke", "ber", "pe"
# First-order prefixes, first match wins: (prefix, only before a vowel, the letter left in its place, flag).
# "meny"+vowel and "pen"+vowel keep a consonant: menyapu -> sapu, penulis -> tulis.
_FIRST_ORDER = (
    ("meng", False, "", _MENG), ("meny", True, "s", _MENG), ("men", False, "", _MENG),
    ("mem", False, "", _MENG), ("me", False, "", _MENG),
    ("peng", False, "", _PENG), ("peny", True, "s", _PENG), ("peny", False, "", _PENG),
    ("pen", True, "t", _PENG), ("pen", False, "", _PENG), ("pem", False, "", _PENG),
    ("di", False, "", _DI), ("ter", False, "", _TER), ("ke", False, "", _KE),
)
# Suffixes and the prefixes each cannot follow.
_SUFFIXES = (("kan", {_KE, _PENG, _PE}), ("an", {_DI, _MENG, _TER}), ("i", {_BER, _KE, _PENG}))


class _IndonesianWord:
    """A word being stemmed, its syllable (vowel) count and the prefixes removed so far."""

    def __init__(self, word: str) -> None:
        self.text = word
        self.syllables = sum(char in _VOWELS for char in word)
        self.removed: set[str] = set()

    def long_enough(self) -> bool:
        return self.syllables > 2

    def cut_end(self, count: int) -> bool:
        self.text = self.text[:-count]
        self.syllables -= 1
        return True

    def replace_start(self, count: int, keep: str, flag: str | None) -> bool:
        self.text = keep + self.text[count:]
        self.syllables -= 1
        if flag:
            self.removed.add(flag)
        return True

    def particle(self) -> bool:
        return self.text.endswith(("kah", "lah", "pun")) and self.cut_end(3)

    def possessive(self) -> bool:
        if self.text.endswith(("ku", "mu")):
            return self.cut_end(2)
        return self.text.endswith("nya") and self.cut_end(3)

    def first_order_prefix(self) -> bool:
        for prefix, before_vowel, keep, flag in _FIRST_ORDER:
            if self.text.startswith(prefix) and (
                    not before_vowel or (len(self.text) > len(prefix) and self.text[len(prefix)] in _VOWELS)):
                return self.replace_start(len(prefix), keep, flag)
        return False

    def second_order_prefix(self) -> bool:
        text = self.text
        if text.startswith("ber") or text == "belajar":
            return self.replace_start(3, "", _BER)
        if text.startswith("be") and len(text) > 4 and text[2] not in _VOWELS and text[3:5] == "er":
            return self.replace_start(2, "", _BER)
        if text.startswith("per") or text == "pelajar":
            return self.replace_start(3, "", None)
        return text.startswith("pe") and self.replace_start(2, "", _PE)

    def suffix(self) -> bool:
        for suffix, not_after in _SUFFIXES:
            if self.text.endswith(suffix) and not (self.removed & not_after):
                if suffix == "i" and self.text.endswith("si"):
                    return False
                return self.cut_end(len(suffix))
        return False


@lru_cache(maxsize=_CACHED_WORDS)
def indonesian_stem(word: str) -> str:
    """Tala's Indonesian stemmer with derivational affixes (what IndonesianAnalyzer does by default).
    Each step runs only while the word keeps more than two vowels."""
    stem = _IndonesianWord(word)
    for step in (stem.particle, stem.possessive):
        if stem.long_enough():
            step()
    if stem.long_enough() and stem.first_order_prefix():
        if stem.long_enough() and stem.suffix() and stem.long_enough():
            stem.second_order_prefix()
    else:
        for step in (stem.second_order_prefix, stem.suffix):
            if stem.long_enough():
                step()
    return stem.text


def indonesian_terms(text: str) -> list[str]:
    terms = remove_stopwords(lowercase(_words(text)), load_stopwords("id"))
    return _stemmed(terms, indonesian_stem)


ANALYZERS = {"es": spanish_terms, "fr": french_terms, "de": german_terms, "ru": russian_terms,
             "id": indonesian_terms}
