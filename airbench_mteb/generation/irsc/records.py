"""What an IRSC build reads (source records) and what it makes (query-paragraph pairs)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from airbench_mteb.catalog.irsc import LANGUAGES, TASKS
from airbench_mteb.generation.errors import GenerationError


@dataclass(frozen=True)
class SourceRecord:
    """One paragraph of a source and, optionally, the IRSC query type it serves.

    ``task`` None: the paragraph only joins the unified corpus. ``query`` None with a task: the
    builder derives the query (``part`` and ``keyword`` always, ``query`` and ``summary`` with an
    LLM; a ``title`` must be given).
    """

    lang: str
    paragraph: str
    source: str
    task: str | None = None
    query: str | None = None

    def __post_init__(self) -> None:
        if self.lang not in LANGUAGES:
            raise GenerationError(f"{self.source}: language {self.lang!r} is not one of {LANGUAGES}")
        if self.task is not None and self.task not in TASKS:
            raise GenerationError(f"{self.source}: task {self.task!r} is not one of {TASKS}")
        if self.task == "title" and not self.query:
            raise GenerationError(f"{self.source}: a title record needs its title as query")
        if not self.paragraph.strip():
            raise GenerationError(f"{self.source}: empty paragraph")


@dataclass(frozen=True)
class QueryPair:
    """One query and the one paragraph relevant to it; ``source_id`` is the query a translation came from."""

    qid: str
    query: str
    doc_id: str
    source_id: str | None = None


def doc_id(lang: str, text: str) -> str:
    """Content-derived id: the same paragraph gets the same id in every build."""
    return f"{lang}-{hashlib.sha1(text.encode('utf-8')).hexdigest()[:16]}"
