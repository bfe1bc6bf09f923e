"""Handing back the resident pages of memory-mapped files once read, so streaming a corpus or searching an index
does not make them part of the process.

A page of a memory-mapped file that a pass touched (the corpus's text for the content key and the analysers, an
index's postings for a block of queries) stays in the process's resident memory until the kernel needs it: a
streamed 10 GB corpus would look like 10 GB of the process. :func:`release_mapped` drops the process's pages of
the read-only mappings of given files (``madvise(MADV_DONTNEED)``); the pages stay in the kernel's page cache and
a later read faults them back from it. A read-only mapping was never written, so nothing is lost. Only where
``/proc/self/maps`` and ``madvise`` exist (Linux); elsewhere it does nothing.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path

_MADV_DONTNEED = 4
_MAPS = Path("/proc/self/maps")


@cache
def _madvise() -> Callable[[int, int, int], int] | None:
    if not _MAPS.exists():
        return None
    try:
        function = ctypes.CDLL(None, use_errno=True).madvise
    except (AttributeError, OSError, TypeError):  # no C library to load by name, or no madvise
        return None
    function.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    function.restype = ctypes.c_int
    return function


def release_mapped(paths: Iterable[str | Path]) -> None:
    """Drop this process's resident pages of its read-only mappings of ``paths`` (see the module)."""
    madvise = _madvise()
    wanted = {os.path.realpath(path) for path in paths}
    if madvise is None or not wanted:
        return
    for line in _MAPS.read_text().splitlines():
        fields = line.split(maxsplit=5)
        if len(fields) == 6 and "w" not in fields[1] and fields[5] in wanted:
            start, end = (int(address, 16) for address in fields[0].split("-"))
            madvise(start, end - start, _MADV_DONTNEED)
