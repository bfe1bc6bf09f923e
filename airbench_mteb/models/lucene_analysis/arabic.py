"""Arabic and Persian as Pyserini analyses them (Lucene 9's ArabicAnalyzer and PersianAnalyzer).

- ar: StandardTokenizer, lower-casing, decimal digits of any script to ASCII, Lucene's Arabic stopwords
  (matched before normalisation, as Lucene does), Arabic orthographic normalisation, the light prefix and
  suffix stemmer of Larkey, Ballesteros and Connell ("Light Stemming for Arabic Information Retrieval", 2007).
- fa: a zero-width non-joiner splits words (Lucene's PersianCharFilter makes it a space), then
  StandardTokenizer, lower-casing, decimal digits, Arabic and Persian normalisation, Lucene's Persian
  stopwords (matched after normalisation); Lucene 9's PersianAnalyzer does not stem.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from functools import lru_cache

from airbench_mteb.models.lucene_analysis.filters import lowercase, remove_stopwords
from airbench_mteb.models.lucene_analysis.stopwords import load_stopwords
from airbench_mteb.models.lucene_analysis.tokenizer import standard_words


def decimal_digits(term: str) -> str:
    """Lucene's DecimalDigitFilter: every decimal digit (Unicode category Nd) becomes its ASCII digit."""
    if term.isascii():
        return term
    return "".join(str(unicodedata.decimal(char)) if unicodedata.category(char) == "Nd" else char
                   for char in term)


def folded_terms(text: str) -> list[str]:
    """Standard tokens, lower-cased, digits folded: how the Arabic-script and Indic analyzers all start."""
    return [decimal_digits(term) for term in lowercase(standard_words(text))]


_TATWEEL_AND_DIACRITICS = "\u0640\u064b\u064c\u064d\u064e\u064f\u0650\u0651\u0652"
_ARABIC_NORMAL_FORMS = str.maketrans(
    {"\u0622": "\u0627", "\u0623": "\u0627", "\u0625": "\u0627",  # alef with madda / hamza -> bare alef
     "\u0649": "\u064a",  # alef maksura -> yeh
     "\u0629": "\u0647",  # teh marbuta -> heh
     **dict.fromkeys(_TATWEEL_AND_DIACRITICS)})


def arabic_normalize(term: str) -> str:
    """Orthographic normalisation: tatweel and short-vowel marks removed, alef forms, alef maksura and teh
    marbuta unified."""
    return term.translate(_ARABIC_NORMAL_FORMS)


# One prefix at most, the first that fits; "و" alone needs a word of 4+ letters, the others 2 letters left.
_ARABIC_PREFIXES = ("\u0627\u0644", "\u0648\u0627\u0644", "\u0628\u0627\u0644", "\u0643\u0627\u0644",
                    "\u0641\u0627\u0644", "\u0644\u0644", "\u0648")
# Every suffix that fits is removed, in this order, each leaving 2+ letters.
_ARABIC_SUFFIXES = ("\u0647\u0627", "\u0627\u0646", "\u0627\u062a", "\u0648\u0646", "\u064a\u0646",
                    "\u064a\u0647", "\u064a\u0629", "\u0647", "\u0629", "\u064a")


def arabic_light_stem(term: str) -> str:
    """Light stemming: the article and conjunction prefixes, then plural, dual and pronoun suffixes."""
    for prefix in _ARABIC_PREFIXES:
        shortest = 4 if len(prefix) == 1 else len(prefix) + 2
        if len(term) >= shortest and term.startswith(prefix):
            term = term[len(prefix):]
            break
    for suffix in _ARABIC_SUFFIXES:
        if len(term) >= len(suffix) + 2 and term.endswith(suffix):
            term = term[:-len(suffix)]
    return term


def arabic_terms(text: str) -> list[str]:
    terms = remove_stopwords(folded_terms(text), load_stopwords("ar"))
    return _non_empty(_arabic_stem(term) for term in terms)


@lru_cache(maxsize=1 << 16)  # a corpus repeats its words
def _arabic_stem(term: str) -> str:
    return arabic_light_stem(arabic_normalize(term))


def _non_empty(terms: Iterable[str]) -> list[str]:
    """A token of tatweel and vowel marks only normalises to nothing; Pyserini's analysis drops it."""
    return [term for term in terms if term]


_PERSIAN_NORMAL_FORMS = str.maketrans(
    {"\u06cc": "\u064a", "\u06d2": "\u064a",  # Farsi yeh, yeh barree -> Arabic yeh
     "\u06a9": "\u0643",  # keheh -> kaf
     "\u06c0": "\u0647", "\u06c1": "\u0647",  # heh with yeh above, heh goal -> heh
     "\u0654": None})  # hamza above removed


def persian_normalize(term: str) -> str:
    """Persian letter variants folded onto the Arabic letters the stopword list is written with."""
    return term.translate(_PERSIAN_NORMAL_FORMS)


def persian_terms(text: str) -> list[str]:
    terms = _non_empty(_persian_form(term) for term in folded_terms(text.replace("\u200c", " ")))
    return remove_stopwords(terms, load_stopwords("fa"))


@lru_cache(maxsize=1 << 16)
def _persian_form(term: str) -> str:
    return persian_normalize(arabic_normalize(term))


ANALYZERS = {"ar": arabic_terms, "fa": persian_terms}
