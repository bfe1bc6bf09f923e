"""Postings codecs: a term's (document, term frequency) pairs as bytes and back, in numba kernels.

:class:`ForCodec` (``"pfor128"``) cuts a term's postings into blocks of :data:`BLOCK`; in each block the document
gaps minus one and the frequencies minus one (both 0 in the common case: consecutive documents, a word met once)
are each stored as patched frame of reference (PFOR, as Lucene's and PISA's postings): every value's low ``w``
bits packed end to end, least significant first, then the few values that need more bits as exceptions (their
place in the block and their high bits as a varint). ``w`` is chosen per block to make the block smallest, so a
block of ones costs two bytes and one outlier does not widen the other 127 values. Decoding checks every width,
count and place against the block, every document against the corpus size and every frequency against the
largest the build saw: damaged bytes give an error code, never a wrong posting or an out-of-bounds read.

The build's runs on disk use the same codec (:mod:`~airbench_mteb.models.bm25.build`).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from numba import njit

BLOCK = 128
_MAX_WIDTH = 32  # values are below 2**32 (documents are int32, frequencies uint32)
# Error codes of decode (negative): the index's reader turns them into IndexDamage naming the file.
BAD_BLOCK, BAD_DOCUMENT, BAD_FREQUENCY, BAD_LENGTH = -1, -2, -3, -4


def _bounds() -> np.ndarray:
    """``BOUNDS[c]``: ``c / (255 - c)`` rounded up to float32, ``inf`` for 255: the ``tf / norm`` a block's bound byte
    ``c`` allows, spaced evenly in the weight's share of the IDF, ``x / (1 + x)`` (steps of IDF / 255)."""
    codes = np.arange(255, dtype=np.float64)
    exact = codes / (255 - codes)
    rounded = exact.astype(np.float32)
    rounded = np.where(rounded < exact, np.nextafter(rounded, np.float32(np.inf)), rounded)
    return np.append(rounded, np.float32(np.inf)).astype(np.float32)


# A block's bound byte is the least ``c`` with ``BOUNDS[c]`` above each posting's ``float32(tf) * inverse_norm``
# (strictly: a weight computed with a fused multiply-add stays below it too); the weight ``idf - idf / (1 + x)``
# rises with x in float32 step by step, so ``idf - idf / (1 + BOUNDS[c])`` bounds every weight of the block exactly.
BOUNDS = _bounds()


@njit(cache=True)
def _bit_length(value: int) -> int:
    bits = 0
    while value:
        value >>= 1
        bits += 1
    return bits


@njit(cache=True)
def put_varint(value: int, out: np.ndarray, pos: int) -> int:
    """``value`` (non-negative) as a varint (7 bits a byte, least significant first) at ``out[pos]``; the position
    after it."""
    while value >= 0x80:
        out[pos] = (value & 0x7F) | 0x80
        pos += 1
        value >>= 7
    out[pos] = value
    return pos + 1


@njit(cache=True)
def get_varint(data: np.ndarray, pos: int, end: int) -> tuple[int, int]:
    """The varint at ``data[pos]`` (at most 5 bytes, none at or past ``end``) and the position after it; the
    position is -1 where it overruns ``end`` or runs longer."""
    value, shift = 0, 0
    while True:
        if pos >= end or shift > 28:
            return 0, -1
        byte = int(data[pos])
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, pos


@njit(cache=True)
def _pack(values: np.ndarray, n: int, out: np.ndarray, pos: int, lengths: np.ndarray) -> int:
    """One block of ``n`` values (int64, 0 <= v < 2**32) written at ``out[pos]``; the position after it."""
    lengths[:] = 0  # how many values have each bit length
    top = 0
    for i in range(n):
        bits = _bit_length(values[i])
        lengths[bits] += 1
        top = max(top, bits)
    best_width, best_cost = top, (n * top + 7) // 8
    for width in range(top):  # a narrower frame, the values above it patched (1 byte place + varint high bits)
        cost = (n * width + 7) // 8
        for bits in range(width + 1, top + 1):
            cost += lengths[bits] * (1 + (bits - width + 6) // 7)
        if cost < best_cost:
            best_width, best_cost = width, cost
    width = best_width
    exceptions = 0
    for bits in range(width + 1, top + 1):
        exceptions += lengths[bits]
    out[pos] = width
    out[pos + 1] = exceptions
    pos += 2
    mask = (1 << width) - 1
    buffer, filled = 0, 0
    for i in range(n):
        buffer |= (values[i] & mask) << filled
        filled += width
        while filled >= 8:
            out[pos] = buffer & 0xFF
            pos += 1
            buffer >>= 8
            filled -= 8
    if filled:
        out[pos] = buffer
        pos += 1
    for i in range(n):
        high = values[i] >> width
        if high:
            out[pos] = i
            pos = put_varint(high, out, pos + 1)
    return pos


@njit(cache=True)
def _unpack(data: np.ndarray, pos: int, end: int, n: int, out: np.ndarray) -> int:
    """One block of ``n`` values read from ``data[pos:end]`` into ``out``; the position after it, or ``BAD_BLOCK``."""
    if pos + 2 > end:
        return BAD_BLOCK
    width, exceptions = int(data[pos]), int(data[pos + 1])
    pos += 2
    if width > _MAX_WIDTH or exceptions > n or pos + (n * width + 7) // 8 > end:
        return BAD_BLOCK
    mask = (1 << width) - 1
    buffer, filled = 0, 0
    for i in range(n):
        while filled < width:
            buffer |= int(data[pos]) << filled
            pos += 1
            filled += 8
        out[i] = buffer & mask
        buffer >>= width
        filled -= width
    for _ in range(exceptions):
        if pos >= end:
            return BAD_BLOCK
        place = int(data[pos])
        pos += 1
        if place >= n:
            return BAD_BLOCK
        high, pos = get_varint(data, pos, end)
        if pos < 0:
            return BAD_BLOCK
        value = out[place] | (high << width)
        if value >> _MAX_WIDTH:
            return BAD_BLOCK
        out[place] = value
    return pos


@njit(cache=True)
def skip_packed(data: np.ndarray, pos: int, end: int, n: int) -> int:
    """The position after the block of ``n`` values at ``data[pos]`` found from its widths and exceptions alone (no
    value unpacked), or ``BAD_BLOCK``."""
    if pos + 2 > end:
        return BAD_BLOCK
    width, exceptions = int(data[pos]), int(data[pos + 1])
    pos += 2 + (n * width + 7) // 8
    if width > _MAX_WIDTH or exceptions > n or pos > end:
        return BAD_BLOCK
    for _ in range(exceptions):
        if pos >= end or data[pos] >= n:
            return BAD_BLOCK
        _, pos = get_varint(data, pos + 1, end)
        if pos < 0:
            return BAD_BLOCK
    return pos


@njit(cache=True)
def _write_skips(documents: np.ndarray, frequencies: np.ndarray, inverse_norms: np.ndarray, bounds: np.ndarray,
                 count: int, out: np.ndarray, pos: int, values: np.ndarray, lengths: np.ndarray) -> int:
    """A term's skip data (see :func:`read_skips`) at ``out[pos]``; the position after it."""
    blocks = -(-count // BLOCK)
    previous = -1
    for chunk in range(0, blocks - 1, BLOCK):
        n = min(BLOCK, blocks - 1 - chunk)
        for i in range(n):
            last = int(documents[(chunk + i + 1) * BLOCK - 1])
            values[i] = last - previous - BLOCK  # a full block's documents are BLOCK distinct ones
            previous = last
        pos = _pack(values, n, out, pos, lengths)
    for block in range(blocks):
        top = np.float32(0)
        for i in range(block * BLOCK, min(count, (block + 1) * BLOCK)):
            top = max(top, np.float32(frequencies[i]) * inverse_norms[i])
        out[pos] = min(np.searchsorted(bounds, top, side="right"), len(bounds) - 1)
        pos += 1
    return pos


@njit(cache=True)
def read_skips(data: np.ndarray, start: int, end: int, count: int, n_documents: int, lasts: np.ndarray) -> int:
    """The skip data at the start of the bytes of a term of ``count`` > ``BLOCK`` postings: ``lasts`` (int64, blocks
    - 1 values) becomes the last document of each block but the last (packed as gaps less ``BLOCK``, ``BLOCK`` at a
    time); then come the blocks' bound bytes (``format.BOUNDS``), then the blocks. Returns where the bound bytes start,
    or an error code where a value or size is out of bounds."""
    blocks = len(lasts) + 1
    pos, previous = start, -1
    for chunk in range(0, blocks - 1, BLOCK):
        n = min(BLOCK, blocks - 1 - chunk)
        pos = _unpack(data, pos, end, n, lasts[chunk:chunk + n])
        if pos < 0:
            return pos
        for i in range(chunk, chunk + n):
            previous += lasts[i] + BLOCK
            lasts[i] = previous
    if previous + count - (blocks - 1) * BLOCK >= n_documents:  # the last block's documents follow
        return BAD_DOCUMENT
    return pos if pos + blocks <= end else BAD_BLOCK


@njit(cache=True)
def decode_block(data: np.ndarray, pos: int, end: int, n: int, previous: int, n_documents: int, max_frequency: int,
                 documents: np.ndarray, frequencies: np.ndarray) -> int:
    """One block of ``n`` postings after document ``previous``: ``documents`` and ``frequencies`` (int64) get them;
    the position after the block, or an error code."""
    pos = _unpack(data, pos, end, n, documents)
    if pos < 0:
        return pos
    pos = _unpack(data, pos, end, n, frequencies)
    if pos < 0:
        return pos
    for i in range(n):
        previous += documents[i] + 1
        if previous >= n_documents:
            return BAD_DOCUMENT
        if frequencies[i] >= max_frequency:
            return BAD_FREQUENCY
        documents[i] = previous
        frequencies[i] += 1
    return pos


@njit(cache=True)
def _encode_terms(documents: np.ndarray, frequencies: np.ndarray, counts: np.ndarray, inverse_norms: np.ndarray,
                  bounds: np.ndarray, out: np.ndarray, sizes: np.ndarray) -> int:
    values = np.empty(BLOCK, dtype=np.int64)
    lengths = np.zeros(_MAX_WIDTH + 2, dtype=np.int64)
    pos, at = 0, 0
    for t in range(len(counts)):
        begin, previous, count, done = pos, -1, counts[t], 0
        if len(inverse_norms) and count > BLOCK:
            pos = _write_skips(documents[at:at + count], frequencies[at:at + count], inverse_norms[at:at + count],
                               bounds, count, out, pos, values, lengths)
        while done < count:
            n = min(BLOCK, count - done)
            for i in range(n):
                document = int(documents[at + done + i])
                values[i] = document - previous - 1
                previous = document
            pos = _pack(values, n, out, pos, lengths)
            for i in range(n):
                values[i] = int(frequencies[at + done + i]) - 1
            pos = _pack(values, n, out, pos, lengths)
            done += n
        at += count
        sizes[t] = pos - begin
    return pos


@njit(cache=True)
def _decode_term(data: np.ndarray, start: int, end: int, count: int, n_documents: int, max_frequency: int,
                 skips: bool, documents: np.ndarray, frequencies: np.ndarray) -> int:
    gaps = np.empty(BLOCK, dtype=np.int64)
    counts = np.empty(BLOCK, dtype=np.int64)
    lasts = np.empty(max(-(-count // BLOCK) - 1, 0) if skips and count > BLOCK else 0, dtype=np.int64)
    pos, previous, done = start, -1, 0
    if len(lasts):
        pos = read_skips(data, start, end, count, n_documents, lasts)
        if pos < 0:
            return pos
        pos += len(lasts) + 1  # the bound bytes: what search reads, not decoding
    while done < count:
        n = min(BLOCK, count - done)
        pos = decode_block(data, pos, end, n, previous, n_documents, max_frequency, gaps, counts)
        if pos < 0:
            return pos
        previous = gaps[n - 1]
        if done // BLOCK < len(lasts) and previous != lasts[done // BLOCK]:
            return BAD_BLOCK
        documents[done:done + n] = gaps[:n]
        frequencies[done:done + n] = counts[:n]
        done += n
    return pos  # where the term's bytes end


@njit(cache=True)
def _decode_terms(data: np.ndarray, counts: np.ndarray, n_documents: int, max_frequency: int,
                  documents: np.ndarray, frequencies: np.ndarray) -> int:
    pos, at = 0, 0
    for t in range(len(counts)):
        pos = _decode_term(data, pos, len(data), counts[t], n_documents, max_frequency, False,
                           documents[at:at + counts[t]], frequencies[at:at + counts[t]])
        if pos < 0:
            return pos
        at += counts[t]
    return 0 if pos == len(data) else BAD_LENGTH


class PostingsCodec:
    """How a term's postings become bytes; a new codec is a subclass and a line in ``format.CODECS``."""

    name: ClassVar[str]

    @staticmethod
    def encode(documents: np.ndarray, frequencies: np.ndarray, counts: np.ndarray,
               inverse_norms: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The bytes of consecutive terms' postings (``counts[t]`` pairs each, documents ascending within a term),
        and each term's number of bytes; with ``inverse_norms`` (float32, each posting's document's), a term of
        several blocks starts with skip data bounding each block's weights (an index's postings, not a run's)."""
        raise NotImplementedError

    @staticmethod
    def decode(data: np.ndarray, start: int, end: int, count: int, n_documents: int,
               max_frequency: int, skips: bool = False) -> tuple[np.ndarray, np.ndarray, int]:
        """One term's documents (int32) and frequencies (uint32) from ``data[start:end]``, and 0 or an error code;
        ``skips``: encoded with ``inverse_norms`` (skip data checked against the documents, then passed over)."""
        raise NotImplementedError

    @staticmethod
    def decode_terms(data: np.ndarray, counts: np.ndarray, n_documents: int,
                     max_frequency: int) -> tuple[np.ndarray, np.ndarray, int]:
        """The postings of consecutive terms (``counts[t]`` each) that fill ``data``, and 0 or an error code."""
        raise NotImplementedError


class ForCodec(PostingsCodec):
    """Blocks of 128 gaps and frequencies, each patched frame of reference (see the module)."""

    name = "pfor128"

    @staticmethod
    def encode(documents: np.ndarray, frequencies: np.ndarray, counts: np.ndarray,
               inverse_norms: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        blocks = int(np.sum(-(-counts // BLOCK)))
        # at worst 32 bits a value and 2 header bytes; skip data: a last document and a bound byte per block
        out = np.empty(8 * len(documents) + 4 * blocks + (8 * blocks if inverse_norms is not None else 0),
                       dtype=np.uint8)
        sizes = np.empty(len(counts), dtype=np.int64)
        scale = np.zeros(0, np.float32) if inverse_norms is None else inverse_norms.astype(np.float32, copy=False)
        used = _encode_terms(documents, frequencies, counts.astype(np.int64), scale, BOUNDS, out, sizes)
        return out[:used], sizes

    @staticmethod
    def decode(data: np.ndarray, start: int, end: int, count: int, n_documents: int,
               max_frequency: int, skips: bool = False) -> tuple[np.ndarray, np.ndarray, int]:
        documents = np.empty(count, dtype=np.int32)
        frequencies = np.empty(count, dtype=np.uint32)
        after = _decode_term(data, start, end, count, n_documents, max_frequency, skips, documents, frequencies)
        return documents, frequencies, after if after < 0 else 0 if after == end else BAD_LENGTH

    @staticmethod
    def decode_terms(data: np.ndarray, counts: np.ndarray, n_documents: int,
                     max_frequency: int) -> tuple[np.ndarray, np.ndarray, int]:
        total = int(counts.sum())
        documents = np.empty(total, dtype=np.int32)
        frequencies = np.empty(total, dtype=np.uint32)
        status = _decode_terms(data, counts.astype(np.int64), n_documents, max_frequency, documents, frequencies)
        return documents, frequencies, status
