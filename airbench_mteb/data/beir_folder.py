"""BEIR folders: ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/<split>.tsv``.

The layout ``beir``'s ``GenericDataLoader(folder).load(split=...)`` reads: one corpus and one
query file shared by every split, and one qrels file per split, with a header line
``query-id<TAB>corpus-id<TAB>score`` (written always; on reading, a file without it keeps its
first judgment, which ``GenericDataLoader`` would drop). A split's queries are the queries its qrels name, so
queries without judgments are not part of any split (``GenericDataLoader`` drops them too).

One reader serves every variant of the layout (``read_beir_folder``'s parameters): a multi-source
folder's ``corpus/<stem>.jsonl`` (co*cktail), ``id`` instead of ``_id`` keys, every query instead of
the judged ones, and a memory-mapped Arrow corpus instead of a dict.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import IO, Any

from airbench_mteb.data.arrow_corpus import BATCH_ROWS, corpus_from_jsonl
from airbench_mteb.data.errors import DatasetError
from airbench_mteb.data.files import atomic_write
from airbench_mteb.data.qrels import TSV_HEADER, KnownIds, read_qrels_tsv
from airbench_mteb.data.retrieval_data import Document, RetrievalData, read_corpus_jsonl, read_queries_jsonl
from airbench_mteb.ir_types import Qrels

CORPUS_FILE = "corpus.jsonl"
QUERIES_FILE = "queries.jsonl"
QRELS_DIR = "qrels"
# BEIR's qrels reader splits on tabs and lines and unquotes fields that start with a quote.
_UNSAFE_IN_TSV = ("\t", "\n", "\r")


def write_beir_folder(data: RetrievalData | Mapping[str, RetrievalData], folder: str | Path, *,
                      split: str = "test") -> Path:
    """Write one dataset (``split`` names it) or ``{split: data}`` sharing one corpus as a BEIR folder.

    The corpus (a dict, or an Arrow corpus streamed out batch by batch) is written once;
    ``queries.jsonl`` holds the queries of every split. Every file is
    written completely to a temporary file first, and the files are renamed into place only
    when all of them are written, so an error leaves the folder as it was.

    Raises:
        DatasetError: splits with different corpora, a query id with different texts in two
            splits, a qrel naming an unknown query or document, or an id or split name that
            cannot be written to a qrels TSV file.
    """
    splits = dict(data) if isinstance(data, Mapping) else {split: data}
    if not splits:
        raise ValueError("no split to write")
    for name, split_data in splits.items():
        _check_split_name(name)
        split_data.validate()
        _check_qrels_ids(name, split_data.qrels)
    corpus = _shared_corpus(splits)
    queries = _merged_queries(splits)

    folder = Path(folder)
    with ExitStack() as stack:
        _write_lines(stack.enter_context(atomic_write(folder / CORPUS_FILE)), _corpus_lines(corpus))
        _write_lines(stack.enter_context(atomic_write(folder / QUERIES_FILE)),
                     (json.dumps({"_id": qid, "text": text}, ensure_ascii=False) for qid, text in queries.items()))
        for name, split_data in splits.items():
            _write_lines(stack.enter_context(atomic_write(folder / QRELS_DIR / f"{name}.tsv")),
                         _qrels_lines(split_data.qrels))
    return folder


def read_beir_folder(folder: str | Path, split: str = "test", keep_titles: bool = True, *,
                     corpus_file: str = CORPUS_FILE, id_key: str = "_id", judged_queries_only: bool = True,
                     arrow: bool = False) -> RetrievalData:
    """Read and validate one split of a BEIR folder.

    The variants of the layout are parameters: the corpus file (``corpus.jsonl``, or
    ``corpus/<stem>.jsonl`` in a multi-source folder), the id key of corpus and queries (``_id``
    in BEIR, ``id`` in MTEB's own files), whether titles are kept, and whether the split's
    queries are only those its qrels name (in qrels order, as ``GenericDataLoader`` does) or every
    query of ``queries.jsonl``. With ``arrow``, the corpus is a memory-mapped Arrow table
    (``data/arrow_corpus``) instead of a dict of :class:`Document`.

    Raises:
        DatasetError: naming the file and line or id -- a missing folder or file, undecodable
            bytes, malformed JSON, a missing id or ``text``, duplicate ids, empty texts, a
            qrels file without judgments, a line without three fields, a relevance that is
            not an integer pytrec_eval can hold (see ``data/qrels.py``), a duplicate judgment,
            or a qrel naming an unknown query or document.
    """
    folder = Path(folder)
    _qrels_path(folder, split)  # a missing split fails before the corpus is read
    corpus = read_beir_corpus(folder, corpus_file, id_key=id_key, keep_titles=keep_titles, arrow=arrow)
    return read_beir_split(folder, split, corpus, corpus_file=corpus_file, id_key=id_key,
                           judged_queries_only=judged_queries_only)


def read_beir_corpus(folder: str | Path, corpus_file: str = CORPUS_FILE, *, id_key: str = "_id",
                     keep_titles: bool = True, arrow: bool = False) -> dict[str, Document] | Any:
    """The corpus of a BEIR folder, once for all its splits: a dict, or with ``arrow`` a memory-mapped table."""
    path = Path(folder) / corpus_file
    if arrow:
        return corpus_from_jsonl(path, id_key=id_key, keep_titles=keep_titles)
    return read_corpus_jsonl(path, id_key=id_key, keep_titles=keep_titles)


def read_beir_split(folder: str | Path, split: str, corpus: dict[str, Document] | Any, *,
                    corpus_file: str = CORPUS_FILE, id_key: str = "_id",
                    judged_queries_only: bool = True) -> RetrievalData:
    """One split of a BEIR folder over its already read ``corpus`` (read from ``corpus_file``).

    Judgments are checked as they are read against a dict corpus (an error names the qrels line),
    and in one Arrow lookup against an Arrow corpus (no Python copy of its ids).
    """
    folder = Path(folder)
    qrels_path = _qrels_path(folder, split)
    queries_path = folder / QUERIES_FILE
    queries = read_queries_jsonl(queries_path, id_key=id_key)
    known = KnownIds(queries, corpus, QUERIES_FILE, corpus_file) if isinstance(corpus, dict) else None
    data = RetrievalData(corpus=corpus, queries=queries, qrels=read_qrels_tsv(qrels_path, known=known),
                         origin={"corpus": str(folder / corpus_file), "queries": str(queries_path),
                                 "qrels": str(qrels_path)})
    if known is None:
        data.validate()
    if judged_queries_only:
        data.queries = {qid: queries[qid] for qid in data.qrels}
    return data


def _qrels_path(folder: Path, split: str) -> Path:
    if not folder.is_dir():
        raise DatasetError("BEIR folder not found", path=folder)
    path = folder / QRELS_DIR / f"{split}.tsv"
    if not path.is_file():
        known = ", ".join(beir_splits(folder)) or "none"
        raise DatasetError(f"no qrels for split {split!r} (splits in this folder: {known})", path=path)
    return path


def beir_splits(folder: str | Path) -> list[str]:
    """The splits a BEIR folder has qrels for, sorted."""
    return sorted(path.stem for path in (Path(folder) / QRELS_DIR).glob("*.tsv"))


def _shared_corpus(splits: Mapping[str, RetrievalData]) -> dict[str, Document] | Any:
    (first_split, first), *others = splits.items()
    for name, split_data in others:
        if not _same_corpus(first.corpus, split_data.corpus):
            raise DatasetError(f"splits {first_split!r} and {name!r} have different corpora, but a BEIR folder "
                               "holds one corpus: write them to separate folders")
    return first.corpus


def _same_corpus(first: dict[str, Document] | Any, other: dict[str, Document] | Any) -> bool:
    if first is other:
        return True
    if isinstance(first, dict) or isinstance(other, dict):
        return first == other
    # two Arrow corpora: compared batch by batch, never whole on the Python heap
    return (len(first) == len(other) and first.column_names == other.column_names
            and all(a == b for a, b in zip(first.iter(batch_size=BATCH_ROWS), other.iter(batch_size=BATCH_ROWS),
                                           strict=True)))


def _corpus_lines(corpus: dict[str, Document] | Any) -> Iterator[str]:
    """``corpus.jsonl`` lines of a dict corpus, or of an Arrow corpus streamed in batches."""
    if isinstance(corpus, dict):
        for doc_id, doc in corpus.items():
            yield _corpus_line(doc_id, doc.title, doc.text)
        return
    has_titles = "title" in corpus.column_names
    for batch in corpus.iter(batch_size=BATCH_ROWS):
        titles = batch["title"] if has_titles else [""] * len(batch["id"])
        for doc_id, title, text in zip(batch["id"], titles, batch["text"], strict=True):
            yield _corpus_line(str(doc_id), title or "", text or "")


def _corpus_line(doc_id: str, title: str, text: str) -> str:
    return json.dumps({"_id": doc_id, "title": title, "text": text}, ensure_ascii=False)


def _merged_queries(splits: Mapping[str, RetrievalData]) -> dict[str, str]:
    queries: dict[str, str] = {}
    owner: dict[str, str] = {}
    for name, split_data in splits.items():
        for qid, text in split_data.queries.items():
            if qid in queries and queries[qid] != text:
                raise DatasetError(f"query id used by splits {owner[qid]!r} and {name!r} with different texts; "
                                   f"{QUERIES_FILE} can hold only one", item_id=qid)
            queries.setdefault(qid, text)
            owner.setdefault(qid, name)
    return queries


def _check_split_name(name: str) -> None:
    if not name or name in (".", "..") or any(ch in name for ch in "/\\\0"):
        raise DatasetError(f"split name {name!r} cannot be a qrels file name")


def _check_qrels_ids(split: str, qrels: Qrels) -> None:
    for qid, docs in qrels.items():
        for item_id in (qid, *docs):
            if any(ch in item_id for ch in _UNSAFE_IN_TSV) or item_id.startswith('"'):
                raise DatasetError(f"id in the qrels of split {split!r} holds a tab, a line break or a leading "
                                   "quote, which BEIR's qrels TSV cannot carry", item_id=item_id)


def _qrels_lines(qrels: Qrels) -> Iterator[str]:
    yield "\t".join(TSV_HEADER)
    for qid, docs in qrels.items():
        for doc_id, relevance in docs.items():
            yield f"{qid}\t{doc_id}\t{relevance}"


def _write_lines(handle: IO[str], lines: Iterator[str]) -> None:
    for line in lines:
        handle.write(line + "\n")
