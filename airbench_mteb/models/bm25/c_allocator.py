"""How the C allocator holds the memory that numpy arrays free: BM25's index build and search allocate and free
gigabytes in arrays of tens of MB, where glibc's defaults either return it to the system too eagerly (so it is
faulted in again) or keep it long after the build. Each function does nothing where the C library is not glibc.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from functools import cache

import pyarrow as pa

# glibc's mallopt parameters
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_KEPT_BYTES = 1 << 30  # the mmap and trim thresholds of a process that keeps what it frees


@cache
def _glibc(name: str) -> Callable[..., int] | None:
    try:
        function = getattr(ctypes.CDLL(None), name)
    except (AttributeError, OSError, TypeError):  # not glibc, or no C library to load by name (Windows)
        return None
    function.restype = ctypes.c_int
    return function


def keep_freed_memory() -> None:
    """Make this process keep the memory it frees, to reuse it (for worker processes that allocate and free
    the same large arrays item after item).

    By default glibc maps an allocation of over 128 KB (a threshold that grows with what the process freed
    before, up to 32 MB) afresh and returns it when freed, so the next item faults in every page again: BM25
    search workers at 8,872,840 passages took 25 M page faults and a third of their CPU in the kernel per
    1,500 queries. Not for the caller's own process: it changes the allocator's policy for good.
    """
    mallopt = _glibc("mallopt")
    if mallopt is not None:
        mallopt(ctypes.c_int(_M_MMAP_THRESHOLD), ctypes.c_int(_KEPT_BYTES))
        mallopt(ctypes.c_int(_M_TRIM_THRESHOLD), ctypes.c_int(_KEPT_BYTES))


def release_freed_memory() -> None:
    """Return to the system the memory this process has freed but its allocators still hold (glibc's heap,
    Arrow's pool); it changes no policy. After the BM25 index build, the batches freed in its last pass stayed
    resident: about 0.4 GB per million passages."""
    pa.default_memory_pool().release_unused()
    trim = _glibc("malloc_trim")
    if trim is not None:
        trim(ctypes.c_size_t(0))
