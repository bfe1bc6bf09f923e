"""BM25's corpus analysis and its search, spread over worker processes, in order, with a bounded amount in flight.

:func:`in_order` runs ``function(shared, item)`` for each item in forked worker processes where the platform
can fork: ``shared`` (the analyzer, the index) reaches them with the fork, never pickled, and at most
``_IN_FLIGHT`` items per worker are queued, so memory does not grow with the work. Workers ignore Ctrl-C:
the parent's KeyboardInterrupt cancels the queued items and waits only for those under way.

Analysis: each worker turns one Arrow batch of documents into an
:class:`~airbench_mteb.models.bm25_index.AnalysedBatch` (the batch's distinct terms and its (document,
term, count) pairs), so what comes back is a few bytes per pair and the batch's distinct terms as one Arrow
array, not a Python object per token or per term; the indexing process merges the vocabularies once, at
the end, in Arrow. Search: each worker
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
from typing import Any, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from airbench_mteb.data.errors import DatasetError
from airbench_mteb.models.bm25_build import AnalysedBatch
from airbench_mteb.models.bm25_index import BM25Index, QueryBlock
from airbench_mteb.models.c_allocator import keep_freed_memory

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


def analyse_batch(terms: Terms, batch: pa.RecordBatch) -> AnalysedBatch:
    """One batch's terms; a document whose text cannot be analysed is a DatasetError naming its id."""
    docs = []
    for position, text in enumerate(_document_texts(batch)):
        try:
            docs.append(terms(text))
        except Exception as error:  # any failure is told as this document's, in one line
            doc_id = pc.cast(batch.column("id"), pa.string())[position].as_py()
            what = "has no text" if text is None else f"cannot be analysed ({type(error).__name__}: {error})"
            raise DatasetError(f"BM25: the document {what}", item_id=doc_id) from None
    return AnalysedBatch.of(docs)


def analysed_batches(terms: Terms, batches: Iterable[pa.RecordBatch], workers: int) -> Iterator[AnalysedBatch]:
    """Each batch analysed by :func:`analyse_batch`, in order; by ``workers`` processes when more than one."""
    return in_order(analyse_batch, terms, batches, workers)


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
