"""The input of a run: a BEIR folder (or a co*cktail folder, through its human corpus), every split.

Read with the BEIR folder reader's parts, but judgments on documents absent from the corpus are set
aside and counted rather than refused: BEIR corpora cleaned after judging have some.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from airbench_mteb.data.beir_folder import CORPUS_FILE, QRELS_DIR, QUERIES_FILE, read_beir_corpus
from airbench_mteb.data.errors import DatasetError
from airbench_mteb.data.qrels import read_qrels_tsv
from airbench_mteb.data.retrieval_data import Document, read_queries_jsonl
from airbench_mteb.generation.cocktail.config import HUMAN
from airbench_mteb.ir_types import Qrels


@dataclass
class InputCorpus:
    folder: Path
    corpus: dict[str, Document]
    queries: dict[str, str]
    qrels: dict[str, Qrels]  # split -> qrels, judgments on unknown documents already set aside
    files: list[Path]
    unknown_judgments: int = 0


def corpus_file(folder: Path) -> str:
    """``corpus.jsonl`` (BEIR) or, for a co*cktail folder, its ``corpus/human.jsonl``."""
    for name in (CORPUS_FILE, f"corpus/{HUMAN}.jsonl"):
        if (folder / name).is_file():
            return name
    raise DatasetError("no corpus.jsonl (BEIR layout) or corpus/human.jsonl (co*cktail layout)", path=folder)


def read_input(folder: str | Path) -> InputCorpus:
    """Every split of a BEIR folder; qrels naming documents absent from the corpus are counted, not kept."""
    folder = Path(folder)
    if not folder.is_dir():
        raise DatasetError("corpus folder not found", path=folder)
    corpus_name = corpus_file(folder)
    corpus = read_beir_corpus(folder, corpus_name)
    queries = read_queries_jsonl(folder / QUERIES_FILE, id_key="_id")
    # sorted by path, as the run journal's input digest has always taken them
    qrels_files = sorted((folder / QRELS_DIR).glob("*.tsv"))
    if not qrels_files:
        raise DatasetError("no qrels/<split>.tsv", path=folder / QRELS_DIR)
    qrels: dict[str, Qrels] = {}
    unknown = 0
    for qrels_path in qrels_files:
        split: dict[str, dict[str, int]] = {}
        for qid, docs in read_qrels_tsv(qrels_path).items():
            if qid not in queries:
                raise DatasetError(f"qrels name query {qid!r}, which is not in {QUERIES_FILE}", path=qrels_path,
                                   item_id=qid)
            kept = {doc_id: grade for doc_id, grade in docs.items() if doc_id in corpus}
            unknown += len(docs) - len(kept)
            if kept:
                split[qid] = kept
        if not split:
            raise DatasetError("no judgment names a document of the corpus, so this split has no judged query",
                               path=qrels_path)
        qrels[qrels_path.stem] = split
    return InputCorpus(folder, corpus, queries, qrels, [folder / corpus_name, folder / QUERIES_FILE, *qrels_files],
                       unknown)
