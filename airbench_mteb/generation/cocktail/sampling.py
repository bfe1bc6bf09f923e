"""Which input documents are rewritten (the co*cktail paper, arXiv 2405.16546, A.2)."""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field

from airbench_mteb.data.retrieval_data import Document
from airbench_mteb.ir_types import Qrels


def word_count(text: str) -> int:
    return len(text.split())


@dataclass
class Sample:
    ids: list[str]  # kept documents, in corpus order
    stats: dict[str, int] = field(default_factory=dict)


def sample_corpus(corpus: Mapping[str, Document], qrels: Mapping[str, Qrels], *, max_docs: int | None, seed: int,
                  min_words: int = 10, max_words: int = 2000) -> Sample:
    """Seed ``001`` A.2: keep documents of ``min_words``-``max_words`` words; when more than ``max_docs``
    remain, keep every judged one (any split, any grade) and top up with a seeded random choice of the
    others to ``max_docs``. ``max_docs=None`` keeps the whole filtered corpus."""
    lengths = {doc_id: word_count(doc.text) for doc_id, doc in corpus.items()}
    filtered = [doc_id for doc_id in corpus if min_words <= lengths[doc_id] <= max_words]
    stats = {"input": len(corpus), "too_short": sum(n < min_words for n in lengths.values()),
             "too_long": sum(n > max_words for n in lengths.values())}
    if max_docs is None or len(filtered) <= max_docs:
        return Sample(filtered, {**stats, "judged": 0, "random": 0, "kept": len(filtered)})
    judged = {doc_id for split in qrels.values() for docs in split.values() for doc_id in docs}
    keep = {doc_id for doc_id in filtered if doc_id in judged}
    others = [doc_id for doc_id in filtered if doc_id not in judged]
    extra = random.Random(f"cocktail-sample:{seed}").sample(others, max(0, max_docs - len(keep)))
    keep.update(extra)
    ids = [doc_id for doc_id in filtered if doc_id in keep]
    return Sample(ids, {**stats, "judged": len(ids) - len(extra), "random": len(extra), "kept": len(ids)})
