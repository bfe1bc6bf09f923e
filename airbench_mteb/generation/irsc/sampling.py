"""Seeded choices of an IRSC build: which paragraphs become query targets, which queries are translated,
which other paragraphs fill the corpus. Every choice draws from its own named random stream, so one
choice never shifts another."""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field

from airbench_mteb.catalog.irsc import LANGUAGES
from airbench_mteb.generation.irsc.records import QueryPair, SourceRecord, doc_id

# the queries (None: none could be made) of a batch of paragraphs, by doc id
QueryMaker = Callable[[list[str]], Awaitable[list[str | None]]]


def seeded_rng(seed: int, *parts: str) -> random.Random:
    """The random stream of one choice, e.g. ``seeded_rng(seed, "en", "part")``."""
    return random.Random("/".join(["irsc", str(seed), *parts]))


@dataclass
class SourcePool:
    """The records read once: every paragraph per language (the unified corpora) and, per language and
    task, the paragraphs that may serve it with their given query (None: the build derives one)."""

    corpus: dict[str, dict[str, str]] = field(default_factory=lambda: {lang: {} for lang in LANGUAGES})
    candidates: dict[tuple[str, str], dict[str, str | None]] = field(default_factory=dict)
    sources: dict[str, int] = field(default_factory=dict)  # source name -> records read

    @classmethod
    def from_records(cls, records: Iterable[SourceRecord]) -> SourcePool:
        pool = cls()
        for record in records:
            text = record.paragraph.strip()
            did = doc_id(record.lang, text)
            pool.corpus[record.lang][did] = text
            pool.sources[record.source] = pool.sources.get(record.source, 0) + 1
            if record.task is not None:
                given = record.query.strip() if record.query else None
                # the first record of a paragraph for a task wins
                pool.candidates.setdefault((record.lang, record.task), {}).setdefault(did, given)
        return pool


async def sample_pairs(candidates: Iterable[str], per_task: int, rng: random.Random, make_queries: QueryMaker,
                       on_pair: Callable[[], None] = lambda: None) -> list[tuple[str, str]]:
    """Up to ``per_task`` (doc id, query) pairs with distinct queries, in a seeded order of the candidates.

    Queries are made a batch at a time, as many as pairs are still missing; a paragraph that gives
    no query or a query already taken is passed over for the next one in the order.
    """
    order = sorted(candidates)
    rng.shuffle(order)
    chosen: list[tuple[str, str]] = []
    seen_queries: set[str] = set()
    position = 0
    while len(chosen) < per_task and position < len(order):
        batch = order[position:position + per_task - len(chosen)]
        position += len(batch)
        for did, query in zip(batch, await make_queries(batch), strict=True):
            if query and query not in seen_queries:
                seen_queries.add(query)
                chosen.append((did, query))
                on_pair()
    return chosen


def pairs_to_translate(pairs: Sequence[QueryPair], count: int, rng: random.Random) -> list[QueryPair]:
    """A seeded sample of ``count`` pairs (all if fewer), in their original order."""
    return [pairs[i] for i in sorted(rng.sample(range(len(pairs)), min(count, len(pairs))))]


def trim_corpus(corpus: dict[str, str], targets: set[str], limit: int, rng: random.Random) -> dict[str, str]:
    """Every paragraph some query points at, filled up to ``limit`` with a seeded sample of the others."""
    others = sorted(d for d in corpus if d not in targets)
    room = max(0, limit - sum(1 for d in corpus if d in targets))
    kept = set(rng.sample(others, min(room, len(others))))
    return {d: t for d, t in corpus.items() if d in targets or d in kept}
