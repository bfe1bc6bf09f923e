"""Queries derived from a paragraph without an LLM: a fragment of it (``part``) or its keywords (``keyword``)."""

from __future__ import annotations

import logging
import random
import re
from collections.abc import Sequence
from functools import cache
from typing import Any

from airbench_mteb.generation.errors import GenerationError

_EN_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[A-Z0-9])")
_ZH_SENTENCE = re.compile(r"[^。！？]+[。！？]*[”’」』）]*")
_EN_CLAUSE_END = re.compile(r"(?<=[,;:])\s+")
_ZH_CLAUSE = re.compile(r"[^，；：、。！？]+[，；：、。！？]*[”’」』）]*")


def split_sentences(text: str, lang: str) -> list[str]:
    if lang == "zh":
        return [s for s in (m.group().strip() for m in _ZH_SENTENCE.finditer(text)) if s]
    return [s for s in (p.strip() for p in _EN_SENTENCE_END.split(text)) if s]


def split_clauses(text: str, lang: str) -> list[str]:
    if lang == "zh":
        return [s for s in (m.group().strip() for m in _ZH_CLAUSE.finditer(text)) if s]
    return [s for s in (p.strip() for p in _EN_CLAUSE_END.split(text)) if s]


def paragraph_fragment(text: str, lang: str, rng: random.Random) -> str | None:
    """A contiguous part of the paragraph, about a quarter to a half of it, never all of it.

    Cut at sentence boundaries when the paragraph has three or more sentences, else at clause
    boundaries, else a window of words (English) or characters (Chinese). None when the
    paragraph is too short to have a proper part.
    """
    joiner = "" if lang == "zh" else " "
    for units in (split_sentences(text, lang), split_clauses(text, lang)):
        if len(units) >= 3:
            size = min(len(units) - 1, max(1, round(len(units) * rng.uniform(0.25, 0.5))))
            start = rng.randrange(len(units) - size + 1)
            return joiner.join(units[start:start + size])
    tokens: Sequence[str] = text if lang == "zh" else text.split()
    size = max(10 if lang == "zh" else 5, round(len(tokens) * rng.uniform(0.3, 0.5)))
    if size >= len(tokens):
        return None
    start = rng.randrange(len(tokens) - size + 1)
    return joiner.join(tokens[start:start + size]).strip() or None


@cache
def _yake_extractor() -> Any:
    try:
        import yake
    except ModuleNotFoundError:
        raise GenerationError("English keyword queries need `pip install yake`") from None
    return yake.KeywordExtractor(lan="en", n=2, top=5, dedupLim=0.7)


def paragraph_keywords(text: str, lang: str, top: int = 5) -> str | None:
    """The paragraph's top keywords joined by spaces (YAKE for English, jieba TF-IDF for Chinese).

    None when fewer than two keywords come out: one word is too weak to call a keyword query.
    """
    if lang == "zh":
        import jieba
        import jieba.analyse

        jieba.setLogLevel(logging.WARNING)
        words = jieba.analyse.extract_tags(text, topK=top)
    else:
        phrases = [phrase for phrase, _ in _yake_extractor().extract_keywords(text)][:top]
        # YAKE's two-word phrases overlap ("Red Army", "Army paratroops"): keep each word once
        words = list(dict.fromkeys(word for phrase in phrases for word in phrase.split()))
    return " ".join(words) if len(words) >= 2 else None
