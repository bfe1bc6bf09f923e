"""The input of a run: a BEIR folder (or a co*cktail folder, through its human corpus), every split."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from airbench_mteb.data.errors import DatasetError
from airbench_mteb.data.qrels import read_qrels_tsv
from airbench_mteb.data.retrieval_data import Document, Qrels, read_corpus_jsonl, read_queries_jsonl
from airbench_mteb.generation.cocktail.config import HUMAN


@dataclass
class InputCorpus:
    folder: Path
    corpus: dict[str, Document]
    queries: dict[str, str]
    qrels: dict[str, Qrels]  # split -> qrels, judgments on unknown documents already set aside
    files: list[Path]
    unknown_judgments: int = 0


def corpus_path(folder: Path) -> Path:
    """``corpus.jsonl`` (BEIR) or, for a co*cktail folder, its ``corpus/human.jsonl``."""
    for path in (folder / "corpus.jsonl", folder / "corpus" / f"{HUMAN}.jsonl"):
        if path.is_file():
            return path
    raise DatasetError("no corpus.jsonl (BEIR layout) or corpus/human.jsonl (co*cktail layout)", path=folder)


def read_input(folder: str | Path) -> InputCorpus:
    """A BEIR folder; qrels naming documents absent from the corpus are counted, not kept (BEIR corpora
    that were cleaned after judging have some)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise DatasetError("corpus folder not found", path=folder)
    path = corpus_path(folder)
    corpus = read_corpus_jsonl(path, id_key="_id")
    queries = read_queries_jsonl(folder / "queries.jsonl", id_key="_id")
    qrels_files = sorted((folder / "qrels").glob("*.tsv"))
    if not qrels_files:
        raise DatasetError("no qrels/<split>.tsv", path=folder / "qrels")
    qrels: dict[str, Qrels] = {}
    unknown = 0
    for qrels_path in qrels_files:
        split: Qrels = {}
        for qid, docs in read_qrels_tsv(qrels_path).items():
            if qid not in queries:
                raise DatasetError(f"qrels name query {qid!r}, which is not in queries.jsonl", path=qrels_path,
                                   item_id=qid)
            kept = {doc_id: grade for doc_id, grade in docs.items() if doc_id in corpus}
            unknown += len(docs) - len(kept)
            if kept:
                split[qid] = kept
        if not split:
            raise DatasetError("no judgment names a document of the corpus, so this split has no judged query",
                               path=qrels_path)
        qrels[qrels_path.stem] = split
    return InputCorpus(folder, corpus, queries, qrels, [path, folder / "queries.jsonl", *qrels_files], unknown)
