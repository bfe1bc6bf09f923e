"""The term dictionary of a BM25 index: each term's postings count and postings bytes, and its string.

``terms`` holds, for each block of :data:`~airbench_mteb.models.bm25.codec.BLOCK` consecutive term ids, the
counts minus one (every term has a posting) then the byte lengths, each packed by the postings codec's patched
frame of reference (:func:`~airbench_mteb.models.bm25.codec._pack`); ``terms.blocks`` says where each block starts
in ``terms`` and the postings and ``postings`` bytes before it, so looking a term up decodes its block alone
(:func:`locate`), checking every width, length and sum against the table.

``vocabulary`` holds the terms' strings in zstd frames of about :data:`FRAME_BYTES` uncompressed each (the
frame's term lengths as varints, then their UTF-8 bytes), ``vocabulary.frames`` where each frame starts and the
terms, string bytes and uncompressed bytes before it; the build compresses a frame at a time, and opening an index
decodes them into one Arrow large-string array (:func:`read_vocabulary`). Each file is checked whole against its
CRC-32 before the index is opened (:func:`~airbench_mteb.models.bm25.format.problem`); decoding checks every size
besides, so damage gives :class:`~airbench_mteb.models.bm25.format.IndexDamage` naming the file, never a read out
of bounds.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from numba import njit

from airbench_mteb.models.bm25.codec import _MAX_WIDTH, BAD_BLOCK, BAD_LENGTH, BLOCK, _pack, _unpack, get_varint, put_varint
from airbench_mteb.models.bm25.format import TERM_BLOCKS, TERMS, VOCABULARY, VOCABULARY_FRAMES, IndexDamage

FRAME_BYTES = 1 << 22  # uncompressed bytes of a vocabulary frame, about (a term at least)
_ZSTD = pa.Codec("zstd", compression_level=9)  # level 19 saves 2-3 % more at 10x the build time; decoding as fast
_MAX_TERM_VALUE = 2**32 - 1  # the codec packs values below 2**32


@njit(cache=True)
def _pack_terms(counts: np.ndarray, sizes: np.ndarray, out: np.ndarray, starts: np.ndarray) -> int:
    """Each block's counts minus one then sizes, packed into ``out``; ``starts[b]``: where block ``b`` starts."""
    values = np.empty(BLOCK, dtype=np.int64)
    lengths = np.zeros(_MAX_WIDTH + 2, dtype=np.int64)
    pos = 0
    for block in range(len(starts)):
        starts[block] = pos
        first = block * BLOCK
        n = min(BLOCK, len(counts) - first)
        for i in range(n):
            values[i] = counts[first + i] - 1
        pos = _pack(values, n, out, pos, lengths)
        pos = _pack(sizes[first:first + n], n, out, pos, lengths)
    return pos


def pack_terms(counts: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The bytes of ``terms`` and the table of ``terms.blocks`` (int64, blocks + 1 rows of (byte in ``terms``,
    postings before, bytes of ``postings`` before)) for terms with these postings counts and byte lengths."""
    counts, sizes = counts.astype(np.int64), sizes.astype(np.int64)
    if len(counts) and (counts.min() < 1 or counts.max() > _MAX_TERM_VALUE or sizes.max() > _MAX_TERM_VALUE):
        raise ValueError("BM25: a term has no postings, or more postings or bytes than the term table holds")
    blocks = -(-len(counts) // BLOCK)
    out = np.empty(2 * (2 * blocks + 4 * len(counts)), dtype=np.uint8)  # at worst 2 header bytes, 32 bits a value
    table = np.zeros((blocks + 1, 3), dtype=np.int64)
    table[-1, 0] = _pack_terms(counts, sizes, out, table[:-1, 0])
    table[1:, 1] = _block_ends(counts, blocks)
    table[1:, 2] = _block_ends(sizes, blocks)
    return out[:table[-1, 0]], table


def _block_ends(values: np.ndarray, blocks: int) -> np.ndarray:
    """The running sum of ``values`` at the end of each block of ``BLOCK``."""
    ends = np.minimum(np.arange(1, blocks + 1) * BLOCK, len(values))
    return np.concatenate([[0], np.cumsum(values)])[ends]


@njit(cache=True)
def _locate(data: np.ndarray, table: np.ndarray, terms: int, ids: np.ndarray, out: np.ndarray) -> int:
    """``out[i]``: (postings count, first byte, end byte) of term ``ids[i]`` (0 <= id < terms), decoding only
    their blocks (each once where ``ids`` ascend); 0, or an error code for damage."""
    counts = np.empty(BLOCK, dtype=np.int64)
    sizes = np.empty(BLOCK, dtype=np.int64)
    current, n = -1, 0
    for i in range(len(ids)):
        block = ids[i] // BLOCK
        if block != current:
            start, end = table[block, 0], table[block + 1, 0]
            if not 0 <= start <= end <= len(data):
                return BAD_BLOCK
            n = min(BLOCK, terms - block * BLOCK)
            pos = _unpack(data, start, end, n, counts)
            if pos >= 0:
                pos = _unpack(data, pos, end, n, sizes)
            if pos < 0:
                return pos
            if pos != end:
                return BAD_LENGTH
            postings, byte = table[block, 1], table[block, 2]
            for j in range(n):  # counts and sizes become running sums, checked against the next block's row
                counts[j] += 1
                postings += counts[j]
                sizes[j], byte = byte, byte + sizes[j]
            if postings != table[block + 1, 1] or byte != table[block + 1, 2]:
                return BAD_LENGTH
            current = block
        j = ids[i] - block * BLOCK
        out[i, 0] = counts[j]
        out[i, 1] = sizes[j]
        out[i, 2] = sizes[j + 1] if j + 1 < n else table[block + 1, 2]
    return 0


def check_table(table: np.ndarray, data: np.ndarray, postings: int, postings_bytes: int, folder: Path) -> None:
    """``terms.blocks`` starts at 0, ascends and ends at the sizes of ``terms``, the postings and ``postings``
    (so every block :func:`locate` decodes lies within them), or :class:`IndexDamage` naming it."""
    if (len(table) == 0 or table[0].any() or (np.diff(table, axis=0) < 0).any()
            or table[-1].tolist() != [len(data), postings, postings_bytes]):
        raise IndexDamage(f"{folder / TERM_BLOCKS} does not describe {folder / TERMS} and the postings")


def locate(data: np.ndarray, table: np.ndarray, terms: int, ids: np.ndarray, folder: Path) -> np.ndarray:
    """(postings count, first byte in ``postings``, end byte) of each term id (int64, rows in ``ids``' order),
    from ``terms`` (``data``) and its checked ``terms.blocks`` (``table``)."""
    ids = np.asarray(ids, dtype=np.int64)
    if len(ids) and not 0 <= ids.min() <= ids.max() < terms:
        raise IndexError(f"BM25: a term id outside the vocabulary of {terms:,} terms")
    out = np.empty((len(ids), 3), dtype=np.int64)
    status = _locate(data, table, terms, ids, out)
    if status:
        raise IndexDamage(f"{folder / TERMS}: the block of a term does not decode (error {status})")
    return out


@njit(cache=True)
def _varints(values: np.ndarray, out: np.ndarray) -> int:
    """``values`` (non-negative) as varints (7 bits a byte, least significant first) in ``out``; the bytes used."""
    pos = 0
    for value in values:
        pos = put_varint(value, out, pos)
    return pos


@njit(cache=True)
def _from_varints(data: np.ndarray, offsets: np.ndarray) -> int:
    """``len(offsets) - 1`` varint lengths read from ``data``'s start, written as running sums into ``offsets[1:]``
    (``offsets[0]`` the start); where they end, or -1 where they overrun ``data`` or the bytes after them."""
    pos = 0
    for i in range(1, len(offsets)):
        value, pos = get_varint(data, pos, len(data))
        if pos < 0:
            return -1
        offsets[i] = offsets[i - 1] + value
    return pos if offsets[-1] - offsets[0] == len(data) - pos else -1


def write_vocabulary(folder: Path, terms: pa.Array) -> None:
    """``vocabulary`` and ``vocabulary.frames`` for the terms in id order, compressing a frame at a time."""
    column = pc.cast(terms, pa.large_string())
    if column.null_count:
        raise ValueError("BM25: a term is null")
    offsets = np.frombuffer(column.buffers()[1], dtype=np.int64, count=len(column) + 1, offset=8 * column.offset)
    strings = np.frombuffer(column.buffers()[2] or b"", dtype=np.uint8)
    frames = [np.zeros(4, np.int64)]  # (byte in ``vocabulary``, terms, string bytes, uncompressed bytes) before
    with open(folder / VOCABULARY, "wb") as handle:
        for first, stop in _frames(offsets):
            lengths = np.diff(offsets[first:stop + 1])
            varints = np.empty(10 * len(lengths), dtype=np.uint8)
            raw = np.concatenate([varints[:_varints(lengths, varints)], strings[offsets[first]:offsets[stop]]])
            handle.write(_ZSTD.compress(raw, asbytes=True))
            frames.append(frames[-1] + [handle.tell() - frames[-1][0], stop - first, lengths.sum(), len(raw)])
    with open(folder / VOCABULARY_FRAMES, "wb") as handle:
        handle.write(np.stack(frames).tobytes())


def _frames(offsets: np.ndarray) -> list[tuple[int, int]]:
    """Consecutive term ranges of about ``FRAME_BYTES`` uncompressed (a varint byte and the string a term)."""
    cost = offsets - offsets[0] + np.arange(len(offsets))
    ranges, first = [], 0
    while first < len(offsets) - 1:
        stop = int(np.searchsorted(cost, cost[first] + FRAME_BYTES, side="right")) - 1
        stop = min(max(stop, first + 1), len(offsets) - 1)
        ranges.append((first, stop))
        first = stop
    return ranges


def read_vocabulary(folder: Path, terms: int) -> pa.LargeStringArray:
    """The vocabulary's ``terms`` strings in id order, decoded into memory (Arrow over numpy buffers, no copy)."""
    path = folder / VOCABULARY
    data = np.fromfile(path, dtype=np.uint8)
    frames = np.fromfile(folder / VOCABULARY_FRAMES, dtype=np.int64)
    if len(frames) % 4 or not len(frames):
        raise IndexDamage(f"{folder / VOCABULARY_FRAMES} does not hold rows of 4 int64")
    frames = frames.reshape(-1, 4)
    if frames[0].any() or (np.diff(frames, axis=0) < 0).any() or frames[-1, :2].tolist() != [len(data), terms]:
        raise IndexDamage(f"{folder / VOCABULARY_FRAMES} does not describe {path} and its {terms:,} terms")
    offsets = np.zeros(terms + 1, dtype=np.int64)
    strings = np.empty(int(frames[-1, 2]), dtype=np.uint8)
    for (at, first, before, _), (end, stop, after, _), size in zip(frames[:-1], frames[1:], np.diff(frames[:, 3]),
                                                                    strict=True):
        try:
            raw = np.frombuffer(_ZSTD.decompress(data[at:end], decompressed_size=int(size)), dtype=np.uint8)
        except (OSError, pa.ArrowException) as error:
            raise IndexDamage(f"{path}: a frame does not decompress ({error})") from error
        pos = _from_varints(raw, offsets[first:stop + 1])
        if pos < 0 or offsets[stop] != after:
            raise IndexDamage(f"{path}: a frame's term lengths do not match its size")
        strings[before:after] = raw[pos:]
    vocabulary = pa.LargeStringArray.from_buffers(terms, pa.py_buffer(offsets), pa.py_buffer(strings))
    try:
        vocabulary.validate(full=True)  # UTF-8
    except pa.ArrowInvalid as error:
        raise IndexDamage(f"{path}: a term is not UTF-8 ({error})") from error
    return vocabulary
