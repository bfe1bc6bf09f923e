"""English as Pyserini analyses it: Anserini's default English analyzer (Lucene's EnglishAnalyzer chain).

StandardTokenizer, English possessive removal (a trailing ``'s``, also with a typographic or full-width
apostrophe), lower-casing, Lucene's English stopwords, Porter stemming (PyStemmer's ``porter``).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from airbench_mteb.models.lucene_analysis.filters import lowercase, remove_stopwords
from airbench_mteb.models.lucene_analysis.tokenizer import standard_tokens

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


def english_terms(text: str) -> list[str]:
    terms = lowercase(strip_possessive(token.text) for token in standard_tokens(text))
    return _porter().stemWords(remove_stopwords(terms, ENGLISH_STOPWORDS))


@cache
def _porter() -> Any:
    import Stemmer

    return Stemmer.Stemmer("porter")


ANALYZERS = {"en": english_terms}
