"""Lucene's StandardTokenizer in Python: Unicode word boundaries (UAX #29) and Lucene's token kinds.

The text is cut at the default word boundaries of Unicode Standard Annex #29 (the ``regex`` module's
``WORD`` flag). A segment becomes a token when it holds a letter, digit, CJK character, kana, Hangul
syllable or emoji; whitespace and punctuation segments are dropped. As in Lucene, each Han ideograph
and each hiragana is a token of its own, katakana and Hangul runs stay whole, a run of Southeast Asian
(complex-context) characters is one token, and a token longer than 255 characters is cut into
255-character pieces.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Final

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
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

# Most text is ASCII, where the rules above reduce to character classes (derived from them here, so
# the two paths cannot drift apart): a segment is a token if it holds a letter or digit, and a <NUM>
# if every character is numeric or joins numbers.
_ASCII = [chr(code) for code in range(128)]
_ASCII_WORDLIKE = frozenset(char for char in _ASCII if _WORDLIKE.search(char))
_ASCII_NUM = frozenset(char for char in _ASCII if dict(_KINDS)[NUM].fullmatch(char))
# An ASCII text's tokens, as UAX #29 cuts them: letters, digits and "_" join (WB5, WB8-WB10, WB13a/b);
# ".", ":" or "'" between two letters (WB6/7) and ".", ",", ";" or "'" between two digits (WB11/12) join
# too. tests/test_lucene_analysis.py holds it to the general path on random ASCII text. The joining character
# is matched before the lookarounds, so the common end of a word (a space) fails at once: 12% less time.
_ASCII_SEGMENT = re.compile(r"[A-Za-z0-9_]+(?:[.:',;](?:(?<=[A-Za-z][.:'])(?=[A-Za-z])|(?<=[0-9][.,;'])(?=[0-9]))"
                            r"[A-Za-z0-9_]+)*")


@dataclass(frozen=True, slots=True)
class Token:
    """One token: its text, Lucene's type name (``<ALPHANUM>``...) and its character offsets."""

    text: str
    kind: str
    start: int
    end: int


def standard_tokens(text: str) -> list[Token]:
    """The tokens Lucene's StandardTokenizer (maximum token length 255) makes of ``text``."""
    return _ascii_tokens(text) if text.isascii() else _segmented_tokens(text)


def _segmented_tokens(text: str) -> list[Token]:
    """The general path: UAX #29 segments, each typed as Lucene types it."""
    tokens: list[Token] = []
    start = 0
    for cut in _boundaries(text):
        kind = _kind(text[start:cut])
        if kind is not None:
            _append(tokens, Token(text[start:cut], kind, start, cut))
        start = cut
    return [piece for token in tokens for piece in _split_long(token)]


# No token spans ASCII whitespace, so a text can be cut there and each piece tokenized alone -- unless the
# whitespace run ends in a mark that would attach to it (WB4): then no part of the run is cut, since spaces
# stay together (WB3d) and the whole run joins that mark's segment ("  \u200d😀" is one emoji token). The
# possessive run makes a cut take a whole run or nothing.
_PIECE_CUT = regex.compile(rf"[\t\n\v\f\r ]++(?!{_ATTACHED})")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_ASCII_SPACE = "\t\n\v\f\r "
# The whitespace-delimited words holding a non-ASCII character, with the whitespace runs between them that a
# non-ASCII character follows, and the word before one whose whitespace an attached mark follows (no cut there):
# a stretch that starts and ends at cuts (whitespace before an ASCII character always is one), so the text between
# two such stretches is ASCII and tokenized in one pass.
_NON_ASCII_REGION = regex.compile(
    rf"(?<![^\t\n\v\f\r ])(?:[^\t\n\v\f\r ]*[\t\n\v\f\r ]+(?={_ATTACHED}))?"
    r"[^\t\n\v\f\r ]*[^\x00-\x7f](?:[^\t\n\v\f\r ]|[\t\n\v\f\r ]++(?![\x00-\x7f]))*")


def standard_words(text: str) -> list[str]:
    """The texts of :func:`standard_tokens`, for analyzers that need neither kinds nor offsets: the same words,
    found faster (an ASCII text, or ASCII piece of a text, skips the general word-boundary search)."""
    if text.isascii():  # the common case: one regex pass over the whole text
        return _ascii_words(text)
    words: list[str] = []
    at = 0  # a cut: the text before it is tokenized
    while (found := _NON_ASCII.search(text, at)) is not None:  # a C-speed scan to the next non-ASCII character
        region = _NON_ASCII_REGION.search(text, _word_before(text, at, found.start()))
        if region is None:  # cannot happen: the word holding ``found`` matches
            raise AssertionError(f"no non-ASCII region around position {found.start()} of {text!r}")
        words += _ascii_words(text[at:region.start()])  # the ASCII stretch before it: one regex pass
        for piece in _PIECE_CUT.split(region.group()):
            words += _ascii_words(piece) if piece.isascii() else [token.text for token in standard_tokens(piece)]
        at = region.end()
    return words + _ascii_words(text[at:])


def whitespace_pieces(texts: pa.Array) -> tuple[pa.ListArray, np.ndarray]:
    """Each text's pieces between runs of ASCII whitespace, and whether :func:`standard_words` of the text is its
    pieces' words end to end: true unless the text holds a character that may attach to the one before it (then a
    whitespace run may join a token, see :data:`_PIECE_CUT`) or is null; such a text has one empty piece here.

    Arrow cuts the texts in C, so that an indexer can analyse each distinct piece once instead of each word."""
    attached = pc.fill_null(pc.match_substring_regex(texts, _attached_class()), True)
    cuttable = pc.invert(attached)
    pieces = pc.ascii_split_whitespace(pc.if_else(cuttable, texts, pa.scalar("", texts.type)))
    return pieces, cuttable.to_numpy(zero_copy_only=False)


@cache
def _attached_class() -> str:
    """:data:`_ATTACHED` as a class of code point ranges, for RE2 (Arrow's regular expressions know no Word_Break
    property), taken from the tables of the ``regex`` module that the general path uses (0.2 s, once a process)."""
    every_code_point = "".join(map(chr, range(0x110000)))  # a character's position is its code point
    runs = regex.finditer(f"{_ATTACHED}+", every_code_point)
    return "[" + "".join(rf"\x{{{run.start():X}}}-\x{{{run.end() - 1:X}}}" for run in runs) + "]"


def _word_before(text: str, at: int, position: int) -> int:
    """Where the word before the one holding ``position`` starts (``at`` at the earliest): the region holding
    ``position`` starts there or at its own word, so :data:`_NON_ASCII_REGION` is searched from there."""
    word = _word_start(text, at, position)
    gap = word
    while gap > at and text[gap - 1] in _ASCII_SPACE:
        gap -= 1
    return _word_start(text, at, gap)


def _word_start(text: str, at: int, position: int) -> int:
    """The start of the whitespace-delimited word holding ``position`` (``at`` at the earliest)."""
    return max(at, max(text.rfind(space, at, position) for space in _ASCII_SPACE) + 1)


# The characters a segment of _ASCII_SEGMENT can be made of alone that hold no letter or digit ("_").
_ASCII_NOT_WORDLIKE = "".join(c for c in _ASCII if _ASCII_SEGMENT.fullmatch(c) and c not in _ASCII_WORDLIKE)


def _ascii_words(text: str) -> list[str]:
    words = _ASCII_SEGMENT.findall(text)
    if any(char in text for char in _ASCII_NOT_WORDLIKE):  # segments such as "__" are not tokens
        words = [word for word in words if not _ASCII_WORDLIKE.isdisjoint(word)]
    if len(text) > MAX_TOKEN_LENGTH and max(map(len, words), default=0) > MAX_TOKEN_LENGTH:
        words = [word[i:i + MAX_TOKEN_LENGTH] for word in words for i in range(0, len(word), MAX_TOKEN_LENGTH)]
    return words


def _ascii_tokens(text: str) -> list[Token]:
    tokens = []
    for match in _ASCII_SEGMENT.finditer(text):
        segment = match.group()
        if not _ASCII_WORDLIKE.isdisjoint(segment):
            kind = NUM if _ASCII_NUM.issuperset(segment) else ALPHANUM
            tokens.extend(_split_long(Token(segment, kind, match.start(), match.end())))
    return tokens


def _boundaries(text: str) -> list[int]:
    """Positions after the start where UAX #29 allows a word break (always including the end)."""
    cuts = [m.start() for m in _BOUNDARY.finditer(text) if m.start() > 0]
    if text and (not cuts or cuts[-1] != len(text)):
        cuts.append(len(text))
    return cuts


def _kind(segment: str) -> str | None:
    """Lucene's type of a word segment, or None for whitespace and punctuation (not a token)."""
    if segment.isascii():
        if _ASCII_WORDLIKE.isdisjoint(segment):
            return None
        return NUM if _ASCII_NUM.issuperset(segment) else ALPHANUM
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
