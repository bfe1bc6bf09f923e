"""Giving back the disk blocks of a stretch of a file that will not be read again, the file's size unchanged.

The index build merges its runs term by term into the index; once a term range is in the index, the runs' bytes
of those terms are dead weight. Punching them out (``fallocate(FALLOC_FL_PUNCH_HOLE)``) lets the runs shrink as
the index grows, so the disk the build needs stays near the index's own size instead of the runs' plus the
index's. Only where the C library has ``fallocate`` and the file system supports holes (Linux: ext4, xfs, btrfs,
tmpfs); elsewhere it does nothing and the runs are removed at the end as before.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from functools import cache

_FALLOC_FL_KEEP_SIZE, _FALLOC_FL_PUNCH_HOLE = 0x01, 0x02


@cache
def _fallocate() -> Callable[[int, int, int, int], int] | None:
    try:
        function = ctypes.CDLL(None, use_errno=True).fallocate
    except (AttributeError, OSError, TypeError):  # not Linux's C library, or none to load by name
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
    function.restype = ctypes.c_int
    return function


def punch_hole(fd: int, offset: int, length: int) -> bool:
    """Give back the blocks of the ``fd``'s bytes ``offset:offset + length`` (they then read as zeros); whether
    the system did (a file system without holes refuses, and the bytes stay)."""
    fallocate = _fallocate()
    if fallocate is None or length <= 0:
        return False
    return fallocate(fd, _FALLOC_FL_PUNCH_HOLE | _FALLOC_FL_KEEP_SIZE, offset, length) == 0
