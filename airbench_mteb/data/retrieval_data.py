"""The in-memory form every loader produces: corpus, queries and qrels of one split."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from airbench_mteb.data.arrow_corpus import missing_ids
from airbench_mteb.data.errors import DatasetError
from airbench_mteb.data.files import field as text_field
from airbench_mteb.data.files import read_jsonl
from airbench_mteb.ir_types import Qrels


@dataclass
class Document:
    text: str
    title: str = ""


@dataclass
class RetrievalData:
    """Corpus, queries and qrels of one (subset, split), already validated."""

    # small corpora (generation, BEIR round trips) as a dict; benchmark corpora as a memory-mapped
    # ``datasets.Dataset`` (see data/arrow_corpus.py)
    corpus: dict[str, Document] | Any
    queries: dict[str, str]
    qrels: Qrels
    origin: dict[str, str] = field(default_factory=dict)  # part name -> file or hub id, for messages

    def validate(self) -> RetrievalData:
        """Check that every qrel points at a known query and document."""
        qrels_origin = self.origin.get("qrels")
        for qid in self.qrels:
            if qid not in self.queries:
                raise DatasetError(f"qrels name query {qid!r}, which is not among the queries "
                                   f"({self.origin.get('queries', 'queries')})", path=qrels_origin, item_id=qid)
        judged = (doc_id for docs in self.qrels.values() for doc_id in docs)
        unknown = (missing_ids(self.corpus, judged) if not isinstance(self.corpus, dict)
                   else [doc_id for doc_id in judged if doc_id not in self.corpus])
        if unknown:
            qid = next(q for q, docs in self.qrels.items() if unknown[0] in docs)
            raise DatasetError(f"qrels of query {qid!r} name document {unknown[0]!r}, which is not in the "
                               f"corpus ({self.origin.get('corpus', 'corpus')})", path=qrels_origin,
                               item_id=unknown[0])
        return self

    def to_mteb(self) -> dict[str, Any]:
        """The ``RetrievalSplitData`` mapping MTEB's AbsTaskRetrieval evaluates (an Arrow corpus passes as it is)."""
        from datasets import Dataset

        corpus = self.corpus
        if isinstance(corpus, dict):
            corpus = Dataset.from_dict({
                "id": list(corpus),
                "title": [d.title for d in corpus.values()],
                "text": [d.text for d in corpus.values()],
            })
        queries = Dataset.from_dict({"id": list(self.queries), "text": list(self.queries.values())})
        return {"corpus": corpus, "queries": queries, "relevant_docs": self.qrels, "top_ranked": None}

    @classmethod
    def from_mteb(cls, split_data: Mapping[str, Any], where: str) -> RetrievalData:
        """The inverse of :meth:`to_mteb` for one loaded (subset, split) of an MTEB retrieval task.

        The corpus stays the task's Arrow table (ids as strings); ``where`` names the split in errors.
        """
        if split_data.get("top_ranked"):
            raise DatasetError(f"{where} re-ranks given candidates (top_ranked), which a BEIR folder cannot hold")
        from datasets import Value

        corpus = split_data["corpus"]
        if corpus.features["id"].dtype != "string":
            corpus = corpus.cast_column("id", Value("string"))
        queries = {}
        for qid, text in zip(split_data["queries"]["id"], split_data["queries"]["text"], strict=True):
            if not isinstance(text, str):
                raise DatasetError(f"{where}: query text is a {type(text).__name__}, not a string; BEIR queries "
                                   "are plain text", item_id=str(qid))
            queries[str(qid)] = text
        qrels = {str(qid): {str(doc): int(rel) for doc, rel in docs.items()}
                 for qid, docs in split_data["relevant_docs"].items()}
        return cls(corpus=corpus, queries=queries, qrels=qrels, origin={"corpus": where, "queries": where,
                                                                         "qrels": where})


def _unique(kind: str, item_id: str, seen: dict[str, int], path: Path, line: int) -> None:
    if item_id in seen:
        raise DatasetError(f"duplicate {kind} id (first seen on line {seen[item_id]})", path=path, line=line,
                           item_id=item_id)
    seen[item_id] = line


def read_corpus_jsonl(path: str | Path, id_key: str = "id", keep_titles: bool = True) -> dict[str, Document]:
    """Rows ``{id, text[, title]}``; duplicate ids and empty texts are errors."""
    path = Path(path)
    corpus: dict[str, Document] = {}
    seen: dict[str, int] = {}
    for line, row in read_jsonl(path):
        doc_id = text_field(row, id_key, path=path, line=line)
        _unique("document", doc_id, seen, path, line)
        title = text_field(row, "title", path=path, line=line, allow_empty=True) if keep_titles and "title" in row else ""
        text = text_field(row, "text", path=path, line=line, allow_empty=bool(title))
        corpus[doc_id] = Document(text=text, title=title)
    return corpus


def read_queries_jsonl(path: str | Path, id_key: str = "id") -> dict[str, str]:
    path = Path(path)
    queries: dict[str, str] = {}
    seen: dict[str, int] = {}
    for line, row in read_jsonl(path):
        qid = text_field(row, id_key, path=path, line=line)
        _unique("query", qid, seen, path, line)
        queries[qid] = text_field(row, "text", path=path, line=line)
    return queries

