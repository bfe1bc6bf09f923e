"""Lucene's analysis, as Pyserini's ``--language`` picks it, in Python: the index terms of AIR-Bench's BM25.

AIR-Bench (arXiv 2412.13102) reports BM25 from Pyserini, which analyses each of its 13 languages with a
Lucene analyzer. Each language module mirrors one analyzer and exposes ``ANALYZERS`` (ISO 639-1 code ->
``text -> terms``); this package merges them and picks one for a task's languages, given as MTEB codes
(``eng-Latn``, ``eng``) or as AIR-Bench's ISO 639-1 codes (``en``):

- a subset with Chinese, Japanese or Korean uses that language's analyzer even when English is declared
  too (IRSC's mixed subsets), which is what ``--language zh`` does for mixed text;
- otherwise the first declared language of the 13;
- a language outside the 13 gets Lucene's StandardAnalyzer behaviour: standard tokens, lower-cased, no
  stopwords, no stemming.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache

from airbench_mteb.models.lucene_analysis import arabic, cjk, english, european, indic, japanese
from airbench_mteb.models.lucene_analysis.filters import lowercase
from airbench_mteb.models.lucene_analysis.tokenizer import Token, standard_tokens, standard_words

Analyzer = Callable[[str], list[str]]

ANALYZERS: dict[str, Analyzer] = {**english.ANALYZERS, **cjk.ANALYZERS, **european.ANALYZERS, **arabic.ANALYZERS,
                                  **indic.ANALYZERS, **japanese.ANALYZERS}

# AIR-Bench's 13 languages, by ISO 639-1 code.
LUCENE_LANGUAGES = ("en", "zh", "es", "fr", "de", "ru", "ja", "ko", "ar", "fa", "id", "hi", "bn")
_CJK = ("zh", "ja", "ko")
# ISO 639-3 (MTEB's codes, individual and macrolanguage) -> ISO 639-1.
ISO_639_1 = {
    "eng": "en", "cmn": "zh", "zho": "zh", "yue": "zh", "spa": "es", "fra": "fr", "deu": "de", "rus": "ru",
    "jpn": "ja", "kor": "ko", "ara": "ar", "arb": "ar", "fas": "fa", "pes": "fa", "ind": "id", "hin": "hi",
    "ben": "bn",
}
STANDARD = "standard"  # the name of the fallback analysis


def standard_analyzer(text: str) -> list[str]:
    """Lucene's StandardAnalyzer without stopwords: standard tokens, lower-cased."""
    return lowercase(standard_words(text))


def _iso_639_1(code: str) -> str | None:
    """The ISO 639-1 code of an MTEB code (``eng-Latn``, ``eng``) or of an ISO 639-1 code (``en``, AIR-Bench's)."""
    base = code.split("-")[0].lower()
    return base if base in ANALYZERS else ISO_639_1.get(base)


def analysis_name(languages: str | Sequence[str]) -> str:
    """The ISO 639-1 code of the analyzer used for ``languages`` (MTEB codes, e.g. ``eng-Latn``, or ISO 639-1
    codes, e.g. ``en``), or ``standard``."""
    codes = (languages,) if isinstance(languages, str) else tuple(languages)
    known = [code for code in map(_iso_639_1, codes) if code in ANALYZERS]
    cjk_codes = [code for code in known if code in _CJK]
    return (cjk_codes or known or [STANDARD])[0]


@cache
def analyzer_for(languages: tuple[str, ...]) -> Analyzer:
    """The analyzer of a subset's languages (see the module's docstring for the choice)."""
    return ANALYZERS.get(analysis_name(languages), standard_analyzer)


def lucene_terms(text: str, languages: str | Sequence[str]) -> list[str]:
    """The index terms Pyserini's Lucene analysis makes of ``text`` for ``languages``."""
    codes = (languages,) if isinstance(languages, str) else tuple(languages)
    return analyzer_for(codes)(text)


__all__ = ["ANALYZERS", "ISO_639_1", "LUCENE_LANGUAGES", "STANDARD", "Analyzer", "Token", "analysis_name", "analyzer_for",
           "lucene_terms", "standard_analyzer", "standard_tokens", "standard_words"]
