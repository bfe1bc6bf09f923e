"""BM25's corpus analysis and its search, spread over worker processes, in order, with a bounded amount in flight.

:func:`in_order` runs ``function(shared, item)`` for each item in forked worker processes where the platform
can fork: ``shared`` (the analyzer, the index) reaches them with the fork, never pickled, and at most
``_IN_FLIGHT`` items per worker are queued, so memory does not grow with the work. Workers ignore Ctrl-C:
the parent's KeyboardInterrupt cancels the queued items and waits only for those under way.

Analysis: each worker turns one Arrow batch of documents into an
:class:`~airbench_mteb.models.bm25_build.AnalysedBatch` (the batch's distinct terms and its (document,
term, count) pairs), so what comes back is a few bytes per pair and the batch's distinct terms as one Arrow
array, not a Python object per token or per term. A worker analyses each distinct word once
(:class:`BatchAnalyser`) and maps a batch's words to term ids in one C-level pass. Search: each worker
scores blocks of queries (:meth:`~airbench_mteb.models.bm25_index.BM25Index.search_block`) on the index it
shares with the parent by the fork, and sends back each query's best positions and scores.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from itertools import chain
from typing import Any, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from airbench_mteb.data.errors import DatasetError
from airbench_mteb.models.bm25_build import AnalysedBatch
from airbench_mteb.models.bm25_index import BM25Index, QueryBlock
from airbench_mteb.models.c_allocator import keep_freed_memory
from airbench_mteb.models.lucene_analysis.wordwise import wordwise

Terms = Callable[[str], list[str]]
Shared = TypeVar("Shared")
Item = TypeVar("Item")
Result = TypeVar("Result")

_IN_FLIGHT = 2  # items queued per worker: one under way, one waiting


def available_cores() -> int:
    """The CPU cores this process may run on (its affinity mask where the platform has one)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _document_texts(batch: pa.RecordBatch) -> list[str]:
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
        # inherit it instead of each loading it again.
        self._analyzer("warming")

    def __call__(self, batch: pa.RecordBatch) -> AnalysedBatch:
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

    def _words(self, batch: pa.RecordBatch, position: int, text: str | None) -> list[str]:
        try:
            return self._analyzer.words(text)  # type: ignore[arg-type]  # None fails: told as the document's
        except Exception as error:
            raise _document_error(batch, position, text, error) from None

    def _terms(self, batch: pa.RecordBatch, position: int, text: str) -> list[str]:
        try:
            return self._analyzer(text)
        except Exception as error:
            raise _document_error(batch, position, text, error) from None


def _document_error(batch: pa.RecordBatch, position: int, text: str | None, error: Exception) -> DatasetError:
    """Any failure to analyse a document, told as its own, in one line."""
    doc_id = pc.cast(batch.column("id"), pa.string())[position].as_py()
    what = "has no text" if text is None else f"cannot be analysed ({type(error).__name__}: {error})"
    return DatasetError(f"BM25: the document {what}", item_id=doc_id)


def analysed_batches(terms: Terms, batches: Iterable[pa.RecordBatch], workers: int) -> Iterator[AnalysedBatch]:
    """Each batch analysed by a :class:`BatchAnalyser`, in order; by ``workers`` processes when more than one."""
    return in_order(_analyse, BatchAnalyser(terms), batches, workers)


def _analyse(analyser: BatchAnalyser, batch: pa.RecordBatch) -> AnalysedBatch:
    return analyser(batch)


def searched(index: BM25Index, queries: Sequence[Sequence[int]], k: int,
             workers: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """:meth:`BM25Index.search`, its query blocks scored by ``workers`` processes where the platform can fork
    (elsewhere in this process: the index would be copied to each worker)."""
    blocks = list(index.query_blocks(queries))
    workers = min(workers, len(blocks)) if can_fork() else 1
    for results in in_order(_search_block, (index, k), blocks, workers):
        yield from results


def _search_block(shared: tuple[BM25Index, int], block: QueryBlock) -> list[tuple[np.ndarray, np.ndarray]]:
    index, k = shared
    return index.search_block(block, k)


def can_fork() -> bool:
    """Whether worker processes can be forked here (they then share the parent's memory, nothing pickled)."""
    return "fork" in multiprocessing.get_all_start_methods()


def in_order(function: Callable[[Shared, Item], Result], shared: Shared, items: Iterable[Item],
             workers: int) -> Iterator[Result]:
    """``function(shared, item)`` for each item, in order; by ``workers`` processes when more than one."""
    if workers <= 1:
        yield from (function(shared, item) for item in items)
        return
    context = multiprocessing.get_context("fork" if can_fork() else None)
    executor = ProcessPoolExecutor(workers, mp_context=context, initializer=_worker_start,
                                   initargs=(function, shared))
    try:
        pending: deque[Future[Result]] = deque()
        for item in items:
            pending.append(executor.submit(_run_in_worker, item))
            if len(pending) >= _IN_FLIGHT * workers:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:  # also on an error, Ctrl-C or a consumer that stops early: drop what is queued
        executor.shutdown(wait=True, cancel_futures=True)


_worker_task: tuple[Callable[[Any, Any], Any], Any] | None = None  # the function and what it shares, set once


def _worker_start(function: Callable[[Any, Any], Any], shared: Any) -> None:
    global _worker_task
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent alone handles Ctrl-C
    keep_freed_memory()  # the next item reuses what this one frees, instead of faulting it in anew
    _worker_task = (function, shared)


def _run_in_worker(item: Any) -> Any:
    if _worker_task is None:
        raise RuntimeError("BM25: a worker process started without its task")
    function, shared = _worker_task
    return function(shared, item)
