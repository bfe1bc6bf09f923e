"""English as Pyserini analyses it: Anserini's default English analyzer (Lucene's EnglishAnalyzer chain).

StandardTokenizer, English possessive removal (a trailing ``'s``, also with a typographic or full-width
apostrophe), lower-casing, Lucene's English stopwords, Porter stemming. Lucene's Porter stemmer follows Martin Porter's
own implementation, which departs from the published algorithm (``-bli`` -> ``-ble``, ``-logi`` -> ``-log``,
words of one or two letters kept): NLTK's ``MARTIN_EXTENSIONS`` mode is that variant (PyStemmer's
``porter`` is the published one: "possibly" -> "possibli" where Lucene gives "possibl", "vs" -> "v").
"""

from __future__ import annotations

import re
from functools import cache, lru_cache
from typing import Any

from airbench_mteb.models.lucene_analysis.filters import lowercase_term, snowball_stemmer
from airbench_mteb.models.lucene_analysis.tokenizer import standard_words
from airbench_mteb.models.lucene_analysis.wordwise import WordwiseAnalyzer

# Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET (Lucene 9).
ENGLISH_STOPWORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then there these"
    " they this to was will with".split())
_APOSTROPHES = ("'", "\u2019", "\uff07")


def strip_possessive(term: str) -> str:
    """Lucene's EnglishPossessiveFilter: drop a trailing apostrophe + s."""
    if len(term) >= 2 and term[-2] in _APOSTROPHES and term[-1] in "sS":
        return term[:-2]
    return term


def _unstemmed(word: str) -> str | None:
    """One token through the filters before the stemmer; None when it is a stopword."""
    term = lowercase_term(strip_possessive(word))
    return None if term in ENGLISH_STOPWORDS else term


def _english_term(word: str) -> str | None:
    """One token through the filters after the tokenizer; None when it is a stopword."""
    term = _unstemmed(word)
    return None if term is None else porter_stem(term)


def _english_terms_of(words: list[str]) -> list[str | None]:
    """:func:`_english_term` of each word, the stems Snowball's C stemmer gives taken in one call (an indexer's
    new words)."""
    terms = list(map(_unstemmed, words))
    in_c = [i for i, term in enumerate(terms) if term is not None and _snowball_agrees(term)]
    c_stems = dict(zip(in_c, snowball_stemmer("porter").stemWords([terms[i] for i in in_c]), strict=True))
    return [c_stems[i] if i in c_stems else None if term is None else _martin_stem(term) for i, term in enumerate(terms)]


# Terms Snowball's C "porter" (the published algorithm) stems as Lucene does: three or more ASCII letters or digits or
# Latin letters of U+00C0-U+024F (both take them for consonants, as Lucene does), none of the spots where Martin
# Porter's version departs from it or where Snowball's own reading differs. Martin's
# step 2 turns "-bli" into "-ble" (the paper: "-abli" into "-able") and adds "-logi" -> "-log" (a step-1 "y" or "ies"
# becomes that "i"), and he keeps words of one or two letters; the paper's step 1b undoubles every final double
# consonant (digits included) but l, s and z, Snowball only bb, dd, ff, gg, mm, nn, pp, rr and tt; "_", "." and "'"
# are read differently too. On 1.67 M distinct words of wordfreq's en, de, fr, es, it, nl and pt lists and 2.1 M
# generated ones the two agreed on every term this lets through (on the benchmark's realistic corpus 94 % of the
# distinct words), and on all 1,014,696 non-ASCII words of that range in wordfreq's large lists of 12 languages
# written in Latin script; tests/test_lucene_analysis.py checks generated terms against NLTK.
_SNOWBALL_AGREES = re.compile(r"[a-z0-9\u00c0-\u024f]{3,}")
_MARTIN_DEPARTS = re.compile(r"bli|bly|logi|logy|cc|hh|jj|kk|qq|vv|ww|xx|yy|([0-9])\1")


@lru_cache(maxsize=1 << 16)  # a query set repeats its words; the indexer keeps each distinct word's term itself
def porter_stem(term: str) -> str:
    """Lucene's PorterStemFilter on one lower-cased term: Snowball's C stemmer where it agrees (about 30x
    faster), NLTK's pure-Python ``MARTIN_EXTENSIONS`` elsewhere."""
    return snowball_stemmer("porter").stemWord(term) if _snowball_agrees(term) else _martin_stem(term)


def _snowball_agrees(term: str) -> bool:
    return _SNOWBALL_AGREES.fullmatch(term) is not None and _MARTIN_DEPARTS.search(term) is None


def _martin_stem(term: str) -> str:
    return term if len(term) <= 2 else _porter().stem(term, to_lowercase=False)  # Martin keeps 1 or 2 letters


@cache
def _porter() -> Any:
    """Martin Porter's own stemmer, which Lucene's PorterStemmer follows."""
    from nltk.stem.porter import PorterStemmer  # imported on first use: nltk takes a while to import

    return PorterStemmer(PorterStemmer.MARTIN_EXTENSIONS)


# Each word alone: the indexer analyses each distinct word of a batch once (and caches it, see models.bm25.workers).
english_terms = WordwiseAnalyzer(standard_words, _english_term, _english_terms_of)

ANALYZERS = {"en": english_terms}
