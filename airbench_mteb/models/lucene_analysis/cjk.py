"""Chinese and Korean as Pyserini analyses them: Lucene's CJKAnalyzer.

StandardTokenizer, CJK width folding, lower-casing, then overlapping bigrams over each run of adjacent
Han, hiragana, katakana and Hangul tokens (a CJK character with no CJK neighbour stays a unigram), then
CJKAnalyzer's stopwords (Lucene's English stopwords plus ``s``, ``t`` and ``www``). Other tokens (Latin
words, numbers) pass through unchanged between the runs.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from airbench_mteb.models.lucene_analysis.filters import cjk_width, lowercase, remove_stopwords
from airbench_mteb.models.lucene_analysis.tokenizer import HANGUL, HIRAGANA, IDEOGRAPHIC, KATAKANA, Token, standard_tokens

CJK_STOPWORDS = frozenset(
    "a and are as at be but by for if in into is it no not of on or s such t that the their then there these"
    " they this to was will with www".split())
_BIGRAM_KINDS = frozenset({IDEOGRAPHIC, HIRAGANA, KATAKANA, HANGUL})


def cjk_bigrams(tokens: Sequence[Token]) -> list[str]:
    """Lucene's CJKBigramFilter (all four scripts, no unigrams): texts of the tokens with CJK runs bigrammed."""
    out: list[str] = []
    run: list[str] = []  # the characters of the current run of adjacent CJK tokens
    end = -1
    for token in tokens:
        if token.kind in _BIGRAM_KINDS and (not run or token.start == end):
            run += token.text
        else:
            out += _grams(run)
            run = list(token.text) if token.kind in _BIGRAM_KINDS else []
            if not run:
                out.append(token.text)
        end = token.end
    return out + list(_grams(run))


def _grams(chars: list[str]) -> Iterator[str]:
    if len(chars) == 1:
        yield chars[0]
    for i in range(len(chars) - 1):
        yield chars[i] + chars[i + 1]


def cjk_words(text: str) -> list[str]:
    """CJKAnalyzer's terms before its stop filter: width-folded, lower-cased, CJK runs in bigrams."""
    tokens = standard_tokens(text)
    folded = lowercase(cjk_width(token.text) for token in tokens)
    tokens = [Token(term, token.kind, token.start, token.end) for term, token in zip(folded, tokens, strict=True)]
    return cjk_bigrams(tokens)


def cjk_terms(text: str) -> list[str]:
    return remove_stopwords(cjk_words(text), CJK_STOPWORDS)


ANALYZERS = {"zh": cjk_terms, "ko": cjk_terms}
