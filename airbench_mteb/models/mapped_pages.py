"""Handing a memory-mapped corpus's pages back once they are read, so streaming a corpus does not keep it resident.

An Arrow corpus is read from its memory map: every page a pass touches (the content key, the ids, the text sent to
the analysers) stays in this process's resident memory until the kernel needs it, so a streamed 10 GB corpus
would look like 10 GB of the process. :func:`page_out` asks Linux to reclaim a batch's pages
(``madvise(MADV_PAGEOUT)``, Linux 5.4): it never changes what memory holds (a page read again is read from the
file again; anonymous memory without swap stays as it is), so it is safe on any buffer. Elsewhere it does nothing.
"""

from __future__ import annotations

import ctypes
import mmap
from collections.abc import Callable
from functools import cache

import numpy as np
import pyarrow as pa

_MADV_PAGEOUT = 21
_PAGE = mmap.PAGESIZE


@cache
def _madvise() -> Callable[[int, int, int], int] | None:
    try:
        function = ctypes.CDLL(None, use_errno=True).madvise
    except (AttributeError, OSError, TypeError):  # no C library to load by name (Windows), or no madvise
        return None
    function.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    function.restype = ctypes.c_int
    return function


def page_out(batch: pa.RecordBatch) -> None:
    """Reclaim the whole pages holding the batch's string values and offsets (other columns are small)."""
    madvise = _madvise()
    if madvise is None:
        return
    for column in batch.columns:
        for start, end in _string_ranges(column):
            first, last = -(-start // _PAGE) * _PAGE, end // _PAGE * _PAGE  # whole pages inside the range only
            if last > first:
                madvise(first, last - first, _MADV_PAGEOUT)  # an older kernel says EINVAL: nothing to do


def _string_ranges(column: pa.Array) -> list[tuple[int, int]]:
    """The address ranges of a string column's offsets and bytes for its own rows (not the whole buffers)."""
    if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)) or not len(column):
        return []
    width = 8 if pa.types.is_large_string(column.type) else 4
    offsets_buffer, data = column.buffers()[1], column.buffers()[2]
    offsets = np.frombuffer(offsets_buffer, dtype=np.int64 if width == 8 else np.int32, count=len(column) + 1,
                            offset=width * column.offset)
    ranges = [(offsets_buffer.address + width * column.offset,
               offsets_buffer.address + width * (column.offset + len(column) + 1))]
    if data is not None:
        ranges.append((data.address + int(offsets[0]), data.address + int(offsets[-1])))
    return ranges
