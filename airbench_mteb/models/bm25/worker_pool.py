"""Work spread over this process and forked worker processes, in order, with a bounded amount in flight.

:func:`in_order` runs ``function(shared, item)`` for each item on ``workers`` cores: this process takes every
``workers``-th item itself, while the others' are under way in ``workers - 1`` processes forked where the platform
can fork. A forked process counts the pages it shares with its parent (the user's whole MTEB process) in its own
resident size, so one process fewer keeps the tree's summed RSS down, and this process no longer waits idle.
``shared`` (an analyzer, an index, a merge's arrays) reaches the workers with the fork, never pickled, and at
most ``_IN_FLIGHT`` items per worker are queued, so memory does not grow with the work. Workers ignore Ctrl-C:
the parent's KeyboardInterrupt cancels the queued items and waits only for those under way.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from airbench_mteb.models.bm25.c_allocator import keep_freed_memory

Shared = TypeVar("Shared")
Item = TypeVar("Item")
Result = TypeVar("Result")

_IN_FLIGHT = 2  # items queued per worker: one under way, one waiting


def available_cores() -> int:
    """The CPU cores this process may run on (its affinity mask where the platform has one)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def can_fork() -> bool:
    """Whether worker processes can be forked here (they then share the parent's memory, nothing pickled)."""
    return "fork" in multiprocessing.get_all_start_methods()


@dataclass(frozen=True)
class _Here(Generic[Item]):
    """An item this process works on itself, when its turn to be given back comes."""

    item: Item


def in_order(function: Callable[[Shared, Item], Result], shared: Shared, items: Iterable[Item],
             workers: int) -> Iterator[Result]:
    """``function(shared, item)`` for each item, in order; on ``workers`` cores when more than one: every
    ``workers``-th item by this process, the others by ``workers - 1`` worker processes."""
    if workers <= 1:
        yield from (function(shared, item) for item in items)
        return
    context = multiprocessing.get_context("fork" if can_fork() else None)
    executor = ProcessPoolExecutor(workers - 1, mp_context=context, initializer=_worker_start,
                                   initargs=(function, shared))
    try:
        pending: deque[Future[Result] | _Here[Item]] = deque()
        for position, item in enumerate(items):
            here = position % workers == workers - 1  # the first items go to the workers: they start at once
            pending.append(_Here(item) if here else executor.submit(_run_in_worker, item))
            if len(pending) >= _IN_FLIGHT * workers:
                yield _result(pending.popleft(), function, shared)
        while pending:
            yield _result(pending.popleft(), function, shared)
    finally:  # also on an error, Ctrl-C or a consumer that stops early: drop what is queued
        executor.shutdown(wait=True, cancel_futures=True)


def _result(waiting: Future[Result] | _Here[Item], function: Callable[[Shared, Item], Result],
            shared: Shared) -> Result:
    """A worker's result, or this process's own, worked out now while the workers go on with theirs."""
    return function(shared, waiting.item) if isinstance(waiting, _Here) else waiting.result()


_worker_task: tuple[Callable[[Any, Any], Any], Any] | None = None  # the function and what it shares, set once


def _worker_start(function: Callable[[Any, Any], Any], shared: Any) -> None:
    global _worker_task
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent alone handles Ctrl-C
    keep_freed_memory()  # the next item reuses what this one frees, instead of faulting it in anew
    _worker_task = (function, shared)


def _run_in_worker(item: Any) -> Any:
    if _worker_task is None:
        raise RuntimeError("a worker process started without its task")
    function, shared = _worker_task
    return function(shared, item)
