"""Python's ``str.strip()`` as an Arrow kernel, so columns of text are checked and joined without a Python loop."""

from __future__ import annotations

import functools
import sys

import pyarrow as pa
import pyarrow.compute as pc


@functools.cache
def python_whitespace() -> str:
    """Every character ``str.strip()`` removes (``str.isspace``), from this Python's Unicode tables."""
    return "".join(c for c in map(chr, range(sys.maxunicode + 1)) if c.isspace())


def python_strip(texts: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """Each text as ``str.strip()`` returns it."""
    return pc.utf8_trim(texts, python_whitespace())


def is_blank(texts: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """Whether each text is empty after ``str.strip()`` (null for a null text)."""
    return pc.equal(pc.utf8_length(python_strip(texts)), 0)
