"""BM25's corpus analysis and its search, spread over worker processes (:func:`~.worker_pool.in_order`).

Analysis: each worker turns one Arrow batch of documents into an
:class:`~airbench_mteb.models.bm25.build.AnalysedBatch` (the batch's distinct terms and its (document,
term, count) pairs), so what comes back is a few bytes per pair and the batch's distinct terms as one Arrow
array, not a Python object per token or per term. A worker analyses each distinct word once
(:class:`BatchAnalyser`) and maps a batch's words to term ids in one C-level pass. Search: each worker
scores blocks of queries (:meth:`~airbench_mteb.models.bm25.index.BM25Index.search_block`) on the index it
shares with the parent by the fork, and sends back each query's best positions and scores.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import chain

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from airbench_mteb.data.errors import DatasetError
from airbench_mteb.models.bm25.build import AnalysedBatch
from airbench_mteb.models.bm25.index import BM25Index, QueryBlock, TieOrder
from airbench_mteb.models.bm25.worker_pool import available_cores, can_fork, in_order
from airbench_mteb.models.lucene_analysis.wordwise import wordwise

# The pool moved to worker_pool; its names stay importable here for tests/test_bm25.py, kept untouched (issue 41).
__all__ = ["BatchAnalyser", "analysed_batches", "analysed_rows", "available_cores", "can_fork", "in_order", "searched"]

Terms = Callable[[str], list[str]]


def _document_texts(batch: pa.RecordBatch | pa.Table) -> list[str]:
    """The text BM25 indexes of each document: ``title text`` where there is a title, else the text."""
    texts = batch.column("text").to_pylist()
    if "title" not in batch.schema.names:
        return texts
    titles = batch.column("title").to_pylist()
    return [f"{title} {text}" if title and text is not None else text
            for title, text in zip(titles, texts, strict=True)]


class _TermIds(dict[str, int]):
    """Word -> id of its term in ``terms`` (-1: the word makes no term): each distinct word is analysed once, and
    a batch's words are looked up in one C-level pass. Emptied between batches once it holds ``_CACHED_WORDS``
    words, to bound memory (ids only need to agree within a batch)."""

    def __init__(self, term: Callable[[str], str | None]) -> None:
        super().__init__()
        self._term = term
        self._ids: dict[str, int] = {}
        self.terms: list[str] = []

    def __missing__(self, word: str) -> int:
        term = self._term(word)
        found = -1 if term is None else self._ids.setdefault(term, len(self.terms))
        if found == len(self.terms):
            self.terms.append(term)  # a term first met now
        self[word] = found
        return found

    def bound(self) -> None:
        if len(self) >= _CACHED_WORDS:
            self.clear()
            self._ids.clear()
            self.terms.clear()


_CACHED_WORDS = 1 << 19


class BatchAnalyser:
    """Turns Arrow batches of documents into :class:`AnalysedBatch` es with an analyzer, each distinct word
    analysed once per process (:class:`~airbench_mteb.models.lucene_analysis.wordwise.WordwiseAnalyzer`;
    any other analyzer's terms are taken as its words)."""

    def __init__(self, analyzer: Terms) -> None:
        self._analyzer = wordwise(analyzer)
        self._ids = _TermIds(self._analyzer.term)
        # What an analyzer loads on first use (nltk's stemmer: 1 s of CPU) is loaded here, once: forked workers
        # inherit it instead of each loading it again. English stems "warming" in C and "possibly" with nltk.
        self._analyzer("warming possibly")

    def __call__(self, batch: pa.RecordBatch | pa.Table) -> AnalysedBatch:
        """One batch's terms; a document whose text cannot be analysed is a DatasetError naming its id."""
        texts = _document_texts(batch)
        words = [self._words(batch, position, text) for position, text in enumerate(texts)]
        counts = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
        self._ids.bound()
        try:
            ids = np.fromiter(map(self._ids.__getitem__, chain.from_iterable(words)), dtype=np.int64,
                              count=int(counts.sum()))
        except Exception:  # a word's filters failed: name the document, analysed alone
            for position, text in enumerate(texts):
                self._terms(batch, position, text)
            raise
        return AnalysedBatch.of_ids(ids, counts, self._ids.terms)

    def _words(self, batch: pa.RecordBatch | pa.Table, position: int, text: str | None) -> list[str]:
        try:
            return self._analyzer.words(text)  # type: ignore[arg-type]  # None fails: told as the document's
        except Exception as error:
            raise _document_error(batch, position, text, error) from None

    def _terms(self, batch: pa.RecordBatch | pa.Table, position: int, text: str) -> list[str]:
        try:
            return self._analyzer(text)
        except Exception as error:
            raise _document_error(batch, position, text, error) from None


def _document_error(batch: pa.RecordBatch | pa.Table, position: int, text: str | None, error: Exception) -> DatasetError:
    """Any failure to analyse a document, told as its own, in one line."""
    doc_id = pc.cast(batch.column("id"), pa.string())[position].as_py()
    what = "has no text" if text is None else f"cannot be analysed ({type(error).__name__}: {error})"
    return DatasetError(f"BM25: the document {what}", item_id=doc_id)


def analysed_batches(terms: Terms, batches: Iterable[pa.RecordBatch], workers: int) -> Iterator[AnalysedBatch]:
    """Each batch analysed by a :class:`BatchAnalyser`, in order; on ``workers`` cores (:func:`in_order`)."""
    return in_order(_analyse, BatchAnalyser(terms), batches, workers)


def _analyse(analyser: BatchAnalyser, batch: pa.RecordBatch) -> AnalysedBatch:
    return analyser(batch)


Rows = tuple[int, int]  # a range of a corpus's rows, start and stop


def analysed_rows(terms: Terms, read: Callable[[Rows], pa.Table], ranges: Iterable[Rows],
                  workers: int) -> Iterator[AnalysedBatch]:
    """:func:`analysed_batches` of a corpus's row ranges, each read with ``read`` by the process that analyses it
    (``read`` reaches the workers with the fork: only the range goes through the pipe, not the text)."""
    return in_order(_analyse_rows, (BatchAnalyser(terms), read), ranges, workers)


def _analyse_rows(shared: tuple[BatchAnalyser, Callable[[Rows], pa.Table]], rows: Rows) -> AnalysedBatch:
    analyser, read = shared
    return analyser(read(rows))


def searched(index: BM25Index, queries: Sequence[Sequence[int]], k: int, workers: int,
             tie_order: TieOrder | None = None) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """:meth:`BM25Index.search`, its query blocks scored on ``workers`` cores where the platform can fork
    (elsewhere in this process: the index would be copied to each worker)."""
    blocks = list(index.query_blocks(queries))
    workers = min(workers, len(blocks)) if can_fork() else 1
    for results in in_order(_search_block, (index, k, tie_order), blocks, workers):
        yield from results


def _search_block(shared: tuple[BM25Index, int, TieOrder | None],
                  block: QueryBlock) -> list[tuple[np.ndarray, np.ndarray]]:
    index, k, tie_order = shared
    return index.search_block(block, k, tie_order)
