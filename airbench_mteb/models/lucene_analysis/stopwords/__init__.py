"""Lucene's default stopword sets, one ``<iso639-1>.txt`` per language (one word a line, ``#`` comments).

They were read out of the Lucene jar that Pyserini 0.22.1 ships (each file's header names the version).
"""

from __future__ import annotations

from functools import cache
from importlib import resources


@cache
def load_stopwords(language: str) -> frozenset[str]:
    """The stopword set of ``language`` (an ISO 639-1 code with a file in this package)."""
    text = resources.files(__name__).joinpath(f"{language}.txt").read_text(encoding="utf-8")
    return frozenset(line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#"))
