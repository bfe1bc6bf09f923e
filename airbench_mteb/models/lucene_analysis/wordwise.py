"""Analyzers that map each word alone: a tokenizer, then a function of one word (its filters and stemmer).

Written this way, an analyzer lets the BM25 indexer analyse each distinct word of a batch once and map the
batch's words to term ids in one C-level pass (:mod:`airbench_mteb.models.bm25.workers`), instead of running the
filters' Python code on every occurrence.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class WordwiseAnalyzer:
    """``text -> terms``: the ``words`` of the text, each mapped by ``term`` (None drops it: a stopword).

    ``term`` must depend on the word alone (no context, no state), so that a word's term can be cached;
    ``many_terms``, where given, is ``term`` of each of many words at once, faster.
    """

    words: Callable[[str], list[str]]
    term: Callable[[str], str | None]
    many_terms: Callable[[list[str]], list[str | None]] | None = None

    def terms_of(self, words: list[str]) -> list[str | None]:
        """``term`` of each word."""
        return self.many_terms(words) if self.many_terms is not None else list(map(self.term, words))

    def __call__(self, text: str) -> list[str]:
        return [term for term in map(self.term, self.words(text)) if term is not None]


def _itself(word: str) -> str:
    return word


def wordwise(analyzer: Callable[[str], list[str]]) -> WordwiseAnalyzer:
    """``analyzer`` as a :class:`WordwiseAnalyzer`: itself where it is one, else its terms taken as the words."""
    return analyzer if isinstance(analyzer, WordwiseAnalyzer) else WordwiseAnalyzer(analyzer, _itself)
