"""The BM25 corpus analysis spread over worker processes, in corpus order, with a bounded amount in flight.

Each worker turns one Arrow batch of documents into an
:class:`~airbench_mteb.models.bm25_index.AnalysedBatch` (the batch's distinct terms and its (document,
term, count) pairs), so what comes back is a few bytes per pair and one string per distinct term of the
batch, not an object per token, and the indexing process only merges vocabularies. At most
``_IN_FLIGHT`` batches per worker are queued, so memory does not grow with the corpus. Workers are
forked where the platform can fork (they inherit the analyzer, no re-import) and ignore Ctrl-C: the
parent's KeyboardInterrupt cancels the queued batches and waits only for those being analysed.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor

import pyarrow as pa
import pyarrow.compute as pc

from airbench_mteb.data.errors import DatasetError
from airbench_mteb.models.bm25_index import AnalysedBatch

Terms = Callable[[str], list[str]]

_IN_FLIGHT = 2  # batches queued per worker: one being analysed, one waiting


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
    if workers <= 1:
        yield from (analyse_batch(terms, batch) for batch in batches)
        return
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    executor = ProcessPoolExecutor(workers, mp_context=context, initializer=_worker_start, initargs=(terms,))
    try:
        pending: deque[Future[AnalysedBatch]] = deque()
        for batch in batches:
            pending.append(executor.submit(_analyse_in_worker, batch))
            if len(pending) >= _IN_FLIGHT * workers:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:  # also on an error, Ctrl-C or a consumer that stops early: drop what is queued
        executor.shutdown(wait=True, cancel_futures=True)


_worker_terms: Terms | None = None  # the analyzer, set once in each worker


def _worker_start(terms: Terms) -> None:
    global _worker_terms
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent alone handles Ctrl-C
    _worker_terms = terms


def _analyse_in_worker(batch: pa.RecordBatch) -> AnalysedBatch:
    if _worker_terms is None:
        raise RuntimeError("BM25: a worker process started without its analyzer")
    return analyse_batch(_worker_terms, batch)
