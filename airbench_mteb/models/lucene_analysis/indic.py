"""Hindi and Bengali as Pyserini analyses them (Lucene 9's HindiAnalyzer and BengaliAnalyzer).

Both chains: StandardTokenizer, lower-casing, decimal digits of any script to ASCII, Indic normalisation
(decomposed spellings composed), the language's normalisation, Lucene's stopwords (matched after
normalisation), a light suffix stemmer:

- hi: the normalisation of L. Larkey et al., "Hindi CLIR in Thirty Days" (2003): nukta, chandrabindu,
  virama, ZWJ/ZWNJ dropped, long vowels shortened; the stemmer of A. Ramanathan and D. Rao, "A Lightweight
  Stemmer for Hindi" (2003).
- bn: the normalisation of N. UzZaman and M. Khan's Bangla double metaphone (phonetically equal spellings
  merged); the stemmer after P. Sengupta and B. B. Chaudhuri's verb-phrase analysis of Bengali.

Indic normalisation covers the Devanagari and Bengali scripts; Lucene's also composes Gurmukhi, Gujarati,
Oriya, Tamil, Telugu, Kannada and Malayalam, which these analyzers leave as written.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache

from airbench_mteb.models.lucene_analysis.arabic import folded_terms
from airbench_mteb.models.lucene_analysis.filters import remove_stopwords
from airbench_mteb.models.lucene_analysis.stopwords import load_stopwords

_ZWJ = "\u200d"
# A decomposed spelling -> the one code point Unicode also has for it (independent vowels written as a
# vowel plus signs, nukta consonants, khanda ta). Longer spellings win.
_INDIC_COMPOSITIONS = {
    # Devanagari
    "\u0905\u093e\u0945": "\u0911", "\u0905\u093e\u0946": "\u0912", "\u0905\u093e\u0947": "\u0913",
    "\u0905\u093e\u0948": "\u0914", "\u0905\u093e": "\u0906", "\u0905\u0945": "\u0972", "\u0905\u0946": "\u0904",
    "\u0905\u0949": "\u0911", "\u0905\u094a": "\u0912", "\u0905\u094b": "\u0913", "\u0905\u094c": "\u0914",
    "\u0906\u0945": "\u0911", "\u0906\u0946": "\u0912", "\u0906\u0947": "\u0913", "\u0906\u0948": "\u0914",
    "\u0909\u0941": "\u090a", "\u090f\u0945": "\u090d", "\u090f\u0946": "\u090e", "\u090f\u0947": "\u0910",
    "\u0915\u093c": "\u0958", "\u0916\u093c": "\u0959", "\u0917\u093c": "\u095a", "\u091c\u093c": "\u095b",
    "\u0921\u093c": "\u095c", "\u0922\u093c": "\u095d", "\u0928\u093c": "\u0929", "\u092b\u093c": "\u095e",
    "\u092f\u093c": "\u095f", "\u0930\u093c": "\u0931", "\u0933\u093c": "\u0934",
    "\u093e\u0945": "\u0949", "\u093e\u0946": "\u094a", "\u093e\u0947": "\u094b", "\u093e\u0948": "\u094c",
    # Bengali
    "\u0985\u09be": "\u0986", "\u09a1\u09bc": "\u09dc", "\u09a2\u09bc": "\u09dd", "\u09af\u09bc": "\u09df",
    "\u09a4\u09cd" + _ZWJ: "\u09ce", "\u09c7\u09be": "\u09cb", "\u09c7\u09d7": "\u09cc",
}
_INDIC_DECOMPOSED = re.compile("|".join(sorted(_INDIC_COMPOSITIONS, key=len, reverse=True)))


def indic_normalize(term: str) -> str:
    """Compose decomposed Devanagari and Bengali spellings, scanning left to right."""
    return _INDIC_DECOMPOSED.sub(lambda match: _INDIC_COMPOSITIONS[match.group()], term)


def strip_suffix(term: str, suffixes_by_length: Sequence[tuple[str, ...]]) -> str:
    """Remove the first suffix that fits, longest suffixes first, when at least two letters stay."""
    for suffixes in suffixes_by_length:
        for suffix in suffixes:
            if len(term) > len(suffix) + 1 and term.endswith(suffix):
                return term[:-len(suffix)]
    return term


def _indic_terms(text: str, normalize: Callable[[str], str], language: str,
                 stem: Callable[[str], str]) -> list[str]:
    """``normalize`` and ``stem`` are cached word functions: a corpus repeats its words."""
    terms = [normalize(term) for term in folded_terms(text)]
    return [stem(term) for term in remove_stopwords(terms, load_stopwords(language))]


_CACHED_WORDS = 1 << 16


# --- Hindi ---------------------------------------------------------------------------------------------

_HINDI_FOLDS = str.maketrans({
    **dict.fromkeys("\u093c\u094d\u200c\u200d"),  # nukta, virama, ZWNJ, ZWJ dropped
    "\u0901": "\u0902",  # chandrabindu -> anusvara
    "\u0929": "\u0928", "\u0931": "\u0930", "\u0934": "\u0933", "\u0958": "\u0915", "\u0959": "\u0916",
    "\u095a": "\u0917", "\u095b": "\u091c", "\u095c": "\u0921", "\u095d": "\u0922", "\u095e": "\u092b",
    "\u095f": "\u092f",  # nukta letters -> plain letters
    "\u0945": "\u0947", "\u0946": "\u0947", "\u0949": "\u094b", "\u094a": "\u094b",  # candra/short e, o
    "\u090d": "\u090f", "\u090e": "\u090f", "\u0911": "\u0913", "\u0912": "\u0913", "\u0972": "\u0905",
    "\u0906": "\u0905", "\u0908": "\u0907", "\u090a": "\u0909", "\u0960": "\u090b", "\u0961": "\u090c",
    "\u0910": "\u090f", "\u0914": "\u0913",  # long independent vowels -> short
    "\u0940": "\u093f", "\u0942": "\u0941", "\u0944": "\u0943", "\u0963": "\u0962", "\u0948": "\u0947",
    "\u094c": "\u094b",  # long vowel signs -> short
})


def hindi_normalize(term: str) -> str:
    """Spelling variants merged; a dead "n" (न + virama) is first written as anusvara."""
    return term.replace("\u0928\u094d", "\u0902").translate(_HINDI_FOLDS)


_HINDI_SUFFIXES = tuple(tuple(group.split()) for group in (
    "ाएंगी ाएंगे ाऊंगी ाऊंगा ाइयाँ ाइयों ाइयां",
    "ाएगी ाएगा ाओगी ाओगे एंगी ेंगी एंगे ेंगे ूंगी ूंगा ातीं नाओं नाएं ताओं ताएं ियाँ ियों ियां",
    "ाकर ाइए ाईं ाया ेगी ेगा ोगी ोगे ाने ाना ाते ाती ाता तीं ाओं ाएं ुओं ुएं ुआं",
    "कर ाओ िए ाई ाए ने नी ना ते ीं ती ता ाँ ां ों ें",
    "ो े ू ु ी ि ा",
))


@lru_cache(maxsize=_CACHED_WORDS)
def _hindi_form(term: str) -> str:
    return hindi_normalize(indic_normalize(term))


@lru_cache(maxsize=_CACHED_WORDS)
def hindi_stem(term: str) -> str:
    return strip_suffix(term, _HINDI_SUFFIXES)


def hindi_terms(text: str) -> list[str]:
    return _indic_terms(text, _hindi_form, "hi", hindi_stem)


# --- Bengali -------------------------------------------------------------------------------------------

_VIRAMA_BN = "\u09cd"
_BENGALI_FOLDS = {"\u09c0": "\u09bf", "\u09c2": "\u09c1",  # long i, u signs -> short
                  "\u0999": "\u0982",  # nga -> anusvara
                  "\u09b6": "\u09b8", "\u09b7": "\u09b8",  # the three sibilants -> sa
                  "\u09a3": "\u09a8",  # nna -> na
                  "\u09dc": "\u09b0", "\u09dd": "\u09b0",  # rra, rha -> ra
                  "\u09ce": "\u09a4"}  # khanda ta -> ta


def bengali_normalize(term: str) -> str:
    """Bengali spellings that sound alike merged, scanning left to right (each rule sees the word as the
    rules before it left it)."""
    chars = list(term)
    i = 0
    while i < len(chars):
        i = _bengali_rule(chars, i)
    return "".join(chars)


def _bengali_rule(chars: list[str], i: int) -> int:
    """Apply the rule of the letter at ``i``; return the next position to look at."""
    char = chars[i]
    if char == "\u0981":  # chandrabindu dropped
        del chars[i]
        return i
    if char in _BENGALI_FOLDS:
        chars[i] = _BENGALI_FOLDS[char]
    elif char == "\u0995":
        _bengali_ka(chars, i)
    elif char == "\u09af" and i >= 1 and chars[i - 1] == _VIRAMA_BN:
        return _bengali_ya_phala(chars, i)
    elif char == "\u09ac" and i >= 2 and chars[i - 1] == _VIRAMA_BN:
        return _bengali_ba_phala(chars, i)
    elif char == "\u0983":
        _bengali_visarga(chars, i)
    return i + 1


def _bengali_ka(chars: list[str], i: int) -> None:
    # Lucene's rule for "ka + virama + ..." looks for the vowel sign i (U+09BF) after the virama, not ssa.
    if chars[i + 1:i + 3] == [_VIRAMA_BN, "\u09bf"]:
        if i == 0:
            chars[0:3] = ["\u0996"]
        else:
            chars[i + 1:i + 3] = ["\u0996"]


def _bengali_ya_phala(chars: list[str], i: int) -> int:
    """Ya-phala (virama + ya): after a first consonant it is the vowel e (with a following aa dropped),
    elsewhere it goes."""
    if i == 2:
        chars[1] = "\u09c7"
        end = i + 2 if chars[i + 1:i + 2] == ["\u09be"] else i + 1
        del chars[i:end]
        return i
    del chars[i - 1:i + 1]
    return i - 1


def _bengali_ba_phala(chars: list[str], i: int) -> int:
    """Ba-phala (virama + ba): dropped after the first letter or after a cluster, otherwise it doubles the
    consonant before it."""
    if i == 2 or (i >= 5 and chars[i - 3] == _VIRAMA_BN):
        del chars[i - 1:i + 1]
        return i - 1
    chars[i - 1] = chars[i - 2]
    del chars[i]
    return i


def _bengali_visarga(chars: list[str], i: int) -> None:
    """Visarga: doubles the next letter inside a word; at the end it is ha in words of up to 3 letters and
    dropped in longer ones."""
    if i < len(chars) - 1:
        chars[i] = chars[i + 1]
    elif len(chars) <= 3:
        chars[i] = "\u09b9"
    else:
        del chars[i]


# Spelled with the one-code-point yya (U+09DF): Indic normalisation has composed ya + nukta before stemming.
_BENGALI_SUFFIXES = tuple(tuple(group.split()) for group in (
    "িয়াছিলাম িতেছিলাম িতেছিলেন ইতেছিলেন িয়াছিলেন ইয়াছিলেন",
    "িতেছিলি িতেছিলে িয়াছিলা িয়াছিলে িতেছিলা িয়াছিলি য়েদেরকে",
    "িতেছিস িতেছেন িয়াছিস িয়াছেন েছিলাম েছিলেন েদেরকে",
    "িতেছি িতেছা িতেছে ছিলাম ছিলেন িয়াছি িয়াছা িয়াছে েছিলে েছিলা য়েদের দেরকে",
    "িলাম িলেন িতাম িতেন িবেন ছিলি ছিলে ছিলা তেছে িতেছ খানা খানি গুলো গুলি য়েরা েদের",
    "লাম িলি ইলি িলে ইলে লেন িলা ইলা তাম িতি ইতি িতে ইতে তেন িতা িবা ইবা িবি ইবি বেন িবে ইবে ছেন য়োন য়ের"
    " েরা দের",
    "িস েন লি লে লা তি তে তা বি বে বা ছি ছা ছে ুন ুক টা টি নি ের রা কে",
    "ি ী া ো ে ব ত",
))


@lru_cache(maxsize=_CACHED_WORDS)
def _bengali_form(term: str) -> str:
    return bengali_normalize(indic_normalize(term))


@lru_cache(maxsize=_CACHED_WORDS)
def bengali_stem(term: str) -> str:
    return strip_suffix(term, _BENGALI_SUFFIXES)


def bengali_terms(text: str) -> list[str]:
    return _indic_terms(text, _bengali_form, "bn", bengali_stem)


ANALYZERS = {"hi": hindi_terms, "bn": bengali_terms}
