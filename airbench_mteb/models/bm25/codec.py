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
def _encode_terms(documents: np.ndarray, frequencies: np.ndarray, counts: np.ndarray, out: np.ndarray,
                  sizes: np.ndarray) -> int:
    values = np.empty(BLOCK, dtype=np.int64)
    lengths = np.zeros(_MAX_WIDTH + 2, dtype=np.int64)
    pos, at = 0, 0
    for t in range(len(counts)):
        begin, previous, count, done = pos, -1, counts[t], 0
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
                 documents: np.ndarray, frequencies: np.ndarray) -> int:
    gaps = np.empty(BLOCK, dtype=np.int64)
    counts = np.empty(BLOCK, dtype=np.int64)
    pos, previous, done = start, -1, 0
    while done < count:
        n = min(BLOCK, count - done)
        pos = _unpack(data, pos, end, n, gaps)
        if pos < 0:
            return pos
        pos = _unpack(data, pos, end, n, counts)
        if pos < 0:
            return pos
        for i in range(n):
            previous += gaps[i] + 1
            if previous >= n_documents:
                return BAD_DOCUMENT
            if counts[i] >= max_frequency:
                return BAD_FREQUENCY
            documents[done + i] = previous
            frequencies[done + i] = counts[i] + 1
        done += n
    return pos  # where the term's bytes end


@njit(cache=True)
def _decode_terms(data: np.ndarray, counts: np.ndarray, n_documents: int, max_frequency: int,
                  documents: np.ndarray, frequencies: np.ndarray) -> int:
    pos, at = 0, 0
    for t in range(len(counts)):
        pos = _decode_term(data, pos, len(data), counts[t], n_documents, max_frequency,
                           documents[at:at + counts[t]], frequencies[at:at + counts[t]])
        if pos < 0:
            return pos
        at += counts[t]
    return 0 if pos == len(data) else BAD_LENGTH


class PostingsCodec:
    """How a term's postings become bytes; a new codec is a subclass and a line in ``format.CODECS``."""

    name: ClassVar[str]

    @staticmethod
    def encode(documents: np.ndarray, frequencies: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The bytes of consecutive terms' postings (``counts[t]`` pairs each, documents ascending within a term),
        and each term's number of bytes."""
        raise NotImplementedError

    @staticmethod
    def decode(data: np.ndarray, start: int, end: int, count: int, n_documents: int,
               max_frequency: int) -> tuple[np.ndarray, np.ndarray, int]:
        """One term's documents (int32) and frequencies (uint32) from ``data[start:end]``, and 0 or an error code."""
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
    def encode(documents: np.ndarray, frequencies: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        blocks = int(np.sum(-(-counts // BLOCK)))
        out = np.empty(8 * len(documents) + 4 * blocks, dtype=np.uint8)  # at worst 32 bits a value, 2 header bytes
        sizes = np.empty(len(counts), dtype=np.int64)
        used = _encode_terms(documents, frequencies, counts.astype(np.int64), out, sizes)
        return out[:used], sizes

    @staticmethod
    def decode(data: np.ndarray, start: int, end: int, count: int, n_documents: int,
               max_frequency: int) -> tuple[np.ndarray, np.ndarray, int]:
        documents = np.empty(count, dtype=np.int32)
        frequencies = np.empty(count, dtype=np.uint32)
        after = _decode_term(data, start, end, count, n_documents, max_frequency, documents, frequencies)
        return documents, frequencies, after if after < 0 else 0 if after == end else BAD_LENGTH

    @staticmethod
    def decode_terms(data: np.ndarray, counts: np.ndarray, n_documents: int,
                     max_frequency: int) -> tuple[np.ndarray, np.ndarray, int]:
        total = int(counts.sum())
        documents = np.empty(total, dtype=np.int32)
        frequencies = np.empty(total, dtype=np.uint32)
        status = _decode_terms(data, counts.astype(np.int64), n_documents, max_frequency, documents, frequencies)
        return documents, frequencies, status
