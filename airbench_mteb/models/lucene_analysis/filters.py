"""Token filters several Lucene analyzers share: lower-casing, stopwords, CJK width folding, Snowball stemmers."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from functools import cache
from typing import Any

# Lucene lower-cases one code point at a time (Java's Character.toLowerCase): no context-dependent final
# sigma and a one-character dotless result for U+0130, where Python's str.lower() differs.
_JAVA_LOWER = str.maketrans({"\u0130": "i", "\u03a3": "\u03c3"})


def lowercase(terms: Iterable[str]) -> list[str]:
    """Lucene's LowerCaseFilter."""
    return list(map(lowercase_term, terms))


def lowercase_term(term: str) -> str:
    """Lucene's LowerCaseFilter on one term."""
    return term.lower() if term.isascii() else term.translate(_JAVA_LOWER).lower()


@cache
def snowball_stemmer(algorithm: str) -> Any:
    """Snowball's C stemmer ``algorithm`` (PyStemmer), one per process."""
    import Stemmer

    return Stemmer.Stemmer(algorithm, 0)  # no cache of its own: its lookups cost more than stemming (7x)


def remove_stopwords(terms: Iterable[str], stopwords: frozenset[str]) -> list[str]:
    """Lucene's StopFilter (the terms are already lower-cased where the analyzer lower-cases)."""
    return [term for term in terms if term not in stopwords]


_HALFWIDTH_VOICED_MARKS = {"\uff9e": "\u3099", "\uff9f": "\u309a"}


def cjk_width(term: str) -> str:
    """Lucene's CJKWidthFilter: full-width ASCII to ASCII, half-width katakana to full width, a half-width
    voiced sound mark merged into the kana before it when a composed kana exists."""
    out: list[str] = []
    for char in term:
        code = ord(char)
        if 0xFF01 <= code <= 0xFF5E:
            out.append(chr(code - 0xFEE0))
        elif char in _HALFWIDTH_VOICED_MARKS:
            mark = _HALFWIDTH_VOICED_MARKS[char]
            composed = unicodedata.normalize("NFC", out[-1] + mark) if out else mark
            out[-1:] = [composed] if len(composed) == 1 else [*out[-1:], mark]
        elif 0xFF65 <= code <= 0xFF9F:
            out.append(unicodedata.normalize("NFKC", char))
        else:
            out.append(char)
    return "".join(out)
