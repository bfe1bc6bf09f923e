"""Lucene's StandardTokenizer in Python: Unicode word boundaries (UAX #29) and Lucene's token kinds.

The text is cut at the default word boundaries of Unicode Standard Annex #29 (the ``regex`` module's
``WORD`` flag). A segment becomes a token when it holds a letter, digit, CJK character, kana, Hangul
syllable or emoji; whitespace and punctuation segments are dropped. As in Lucene, each Han ideograph
and each hiragana is a token of its own, katakana and Hangul runs stay whole, a run of Southeast Asian
(complex-context) characters is one token, and a token longer than 255 characters is cut into
255-character pieces.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import regex

ALPHANUM: Final = "<ALPHANUM>"
NUM: Final = "<NUM>"
SOUTHEAST_ASIAN: Final = "<SOUTHEAST_ASIAN>"
IDEOGRAPHIC: Final = "<IDEOGRAPHIC>"
HIRAGANA: Final = "<HIRAGANA>"
KATAKANA: Final = "<KATAKANA>"
HANGUL: Final = "<HANGUL>"
EMOJI: Final = "<EMOJI>"

MAX_TOKEN_LENGTH: Final = 255

_BOUNDARY = regex.compile(r"\b", flags=regex.WORD | regex.V1)
# Marks that attach to the character before them (UAX #29 rule WB4) and say nothing about the kind.
_ATTACHED = r"[\p{Word_Break=Extend}\p{Word_Break=Format}\p{Word_Break=ZWJ}]"
_KINDS: Final = (  # for word-like segments; first match wins; each pattern must cover the whole segment
    (IDEOGRAPHIC, regex.compile(rf"(?:\p{{Script=Han}}{_ATTACHED}*)+")),
    (HIRAGANA, regex.compile(rf"(?:\p{{Script=Hiragana}}{_ATTACHED}*)+")),
    (KATAKANA, regex.compile(rf"(?:\p{{Word_Break=Katakana}}{_ATTACHED}*)+")),
    (HANGUL, regex.compile(rf"(?:\p{{Script=Hangul}}{_ATTACHED}*)+")),
    (SOUTHEAST_ASIAN, regex.compile(rf"(?:\p{{Line_Break=Complex_Context}}{_ATTACHED}*)+")),
    (NUM, regex.compile(rf"[\p{{Word_Break=Numeric}}\p{{Word_Break=MidNum}}\p{{Word_Break=MidNumLet}}"
                        rf"\p{{Word_Break=ExtendNumLet}}{_ATTACHED[1:-1]}]+")),
)
# A segment is a token only if it holds one of these (a lone "_" or "." is not).
_WORDLIKE = regex.compile(r"[\p{Word_Break=ALetter}\p{Word_Break=Hebrew_Letter}\p{Word_Break=Numeric}"
                          r"\p{Word_Break=Katakana}\p{Script=Han}\p{Script=Hiragana}\p{Script=Hangul}"
                          r"\p{Line_Break=Complex_Context}]")
_EMOJI = regex.compile(r"\p{Extended_Pictographic}|\p{Regional_Indicator}")


@dataclass(frozen=True, slots=True)
class Token:
    """One token: its text, Lucene's type name (``<ALPHANUM>``...) and its character offsets."""

    text: str
    kind: str
    start: int
    end: int


def standard_tokens(text: str) -> list[Token]:
    """The tokens Lucene's StandardTokenizer (maximum token length 255) makes of ``text``."""
    tokens: list[Token] = []
    start = 0
    for cut in _boundaries(text):
        kind = _kind(text[start:cut])
        if kind is not None:
            _append(tokens, Token(text[start:cut], kind, start, cut))
        start = cut
    return [piece for token in tokens for piece in _split_long(token)]


def _boundaries(text: str) -> list[int]:
    """Positions after the start where UAX #29 allows a word break (always including the end)."""
    cuts = [m.start() for m in _BOUNDARY.finditer(text) if m.start() > 0]
    if text and (not cuts or cuts[-1] != len(text)):
        cuts.append(len(text))
    return cuts


def _kind(segment: str) -> str | None:
    """Lucene's type of a word segment, or None for whitespace and punctuation (not a token)."""
    if not _WORDLIKE.search(segment):
        return EMOJI if _EMOJI.search(segment) else None
    for kind, pattern in _KINDS:
        if pattern.fullmatch(segment):
            return kind
    return ALPHANUM


def _append(tokens: list[Token], token: Token) -> None:
    """Add a token, joining adjacent Southeast Asian segments: Lucene keeps such a run as one token."""
    last = tokens[-1] if tokens else None
    if token.kind == SOUTHEAST_ASIAN and last is not None and last.kind == SOUTHEAST_ASIAN and last.end == token.start:
        tokens[-1] = Token(last.text + token.text, SOUTHEAST_ASIAN, last.start, token.end)
    else:
        tokens.append(token)


def _split_long(token: Token) -> list[Token]:
    if len(token.text) <= MAX_TOKEN_LENGTH:
        return [token]
    return [Token(token.text[i:i + MAX_TOKEN_LENGTH], token.kind, token.start + i,
                  token.start + min(i + MAX_TOKEN_LENGTH, len(token.text)))
            for i in range(0, len(token.text), MAX_TOKEN_LENGTH)]
