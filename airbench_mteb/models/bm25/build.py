"""Writing a BM25 index into a folder in bounded memory: runs of postings spilled to disk, then merged term by term.

Analysed batches (:class:`AnalysedBatch`, in corpus order) are gathered until they hold ``RUN_PAIRS`` (document,
term) pairs; that run's vocabulary is then merged into the corpus vocabulary (term ids in order of first occurrence
in the corpus, as one dictionary encoding of the whole corpus would give them), its pairs are put term-major
(documents ascending within a term, no sort: a counting scatter) and written to a run file encoded by the index's
codec (:class:`_Run`), and the run is freed. Once every batch is in, the document frequencies, ``N`` and the lengths
are known, and the runs are merged on ``workers`` cores at once (:func:`~.worker_pool.in_order`), each taking
stretches of the vocabulary (:meth:`_Merge.stretches`) and merging them a range of terms at a time (about
``MERGE_ENTRIES / workers`` postings): each run's part of those terms is read with ``pread`` (nothing memory-mapped,
so nothing stays resident) and the range's postings are encoded by the codec into the stretch's file. The stretch
files are appended to ``postings`` in order (each removed once appended), their checksums computed on the way.

Memory while building: one run (about 20 bytes per pair: the batches' pairs and their term-major copy), merge
ranges of about 40 bytes per posting (``MERGE_ENTRIES`` postings in all processes together), 4 bytes per document
(its length), 12 per term of the vocabulary (its document frequency and first-occurrence bookkeeping) and the
vocabulary's own bytes (and one compressed frame of it, about 4 MiB, while it is written). Disk: the runs
(compressed as the index is, plus 12 bytes per term and run) beside the growing index and the merged stretches not
yet appended; each run's pairs of the terms already in the index are given back as the merge goes
(:meth:`_Merge.release_merged`), and the runs are removed at the end. The files written are those of
:mod:`~airbench_mteb.models.bm25.format`.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from itertools import chain, pairwise
from pathlib import Path
from typing import BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from numba import njit

from airbench_mteb.models.bm25.file_holes import punch_hole
from airbench_mteb.models.bm25.format import (
    CODEC,
    CODECS,
    POSTINGS,
    POSTINGS_CHECKS,
    STRETCH,
    TERM_BLOCKS,
    TERMS,
    IndexHeader,
    inverse_norm_table,
    norm_bytes,
)
from airbench_mteb.models.bm25.terms import pack_terms, write_vocabulary
from airbench_mteb.models.bm25.worker_pool import in_order

RUN_PAIRS = 1 << 22  # pairs gathered before a run is spilled (about 20 bytes each while the run is made)
MERGE_ENTRIES = 1 << 22  # postings merged and encoded at once (about 40 bytes each)
_TERM_BLOCK = 1 << 16  # entries of a run's term list read at a time
_COPY_BYTES = 1 << 22  # bytes of a merged stretch copied into ``postings`` at a time
_MAX_COUNT = np.iinfo(np.uint32).max  # a term's count in a document, as the runs keep it
_RUN_OFFSET_MAX = np.iinfo(np.uint32).max  # pairs and bytes of one run, as its term lists keep them


@dataclass
class _BatchPairs:
    """The distinct (document, term) pairs of one batch, term-major: 8 bytes per pair, plus 4 per document."""

    terms: np.ndarray  # int32 term id of each pair; a term's pairs are together, documents ascending among them
    documents: np.ndarray  # position of each pair's document within the batch: uint16, or uint32 in a larger batch
    counts: np.ndarray  # occurrences of the term in the document: uint16, or uint32 where one exceeds 65,535
    lengths: np.ndarray  # int32 number of terms of each document (its length for BM25)

    @classmethod
    def of(cls, flat: np.ndarray, lengths: np.ndarray) -> _BatchPairs:
        """The pairs of documents given as their term ids end to end (``flat``) and their term counts."""
        pairs, counts = np.unique(flat << 32 | np.repeat(np.arange(len(lengths), dtype=np.int64), lengths),
                                  return_counts=True)
        # Exact counts (Lucene keeps term frequencies as ints), in 2 bytes unless a batch needs more.
        count_type = np.uint16 if not len(counts) or counts.max() <= np.iinfo(np.uint16).max else np.uint32
        document_type = np.uint16 if len(lengths) <= np.iinfo(np.uint16).max + 1 else np.uint32
        return cls((pairs >> 32).astype(np.int32), (pairs & 0xFFFFFFFF).astype(document_type),
                   counts.astype(count_type), lengths.astype(np.int32))


@dataclass
class AnalysedBatch:
    """One batch of documents as the index needs it: the batch's distinct terms in order of first occurrence
    (an Arrow string array: a worker process sends it back as a few buffers, not a Python object per term),
    and its pairs with term ids local to the batch."""

    vocabulary: pa.StringArray
    pairs: _BatchPairs

    @classmethod
    def of(cls, docs: Sequence[Sequence[str]]) -> AnalysedBatch:
        lengths = np.fromiter(map(len, docs), dtype=np.int64, count=len(docs))
        tokens = list(chain.from_iterable(docs))
        local = {term: i for i, term in enumerate(dict.fromkeys(tokens))}  # C-speed dict ops, no setdefault per token
        flat = np.fromiter(map(local.__getitem__, tokens), dtype=np.int64, count=len(tokens))
        return cls(pa.array(list(local), pa.string()), _BatchPairs.of(flat, lengths))

    @classmethod
    def of_ids(cls, ids: np.ndarray, words: np.ndarray, terms: Sequence[str]) -> AnalysedBatch:
        """The batch whose documents' words, end to end, have the term ids ``ids`` (int64 positions in ``terms``,
        any numbering; -1: the word makes no term), ``words[i]`` of them in document ``i``.

        The batch's terms are numbered by first occurrence, as :meth:`of` numbers them, so the index is the same.
        """
        kept = ids >= 0
        kept_before = np.concatenate([[0], np.cumsum(kept, dtype=np.int64)])
        lengths = np.diff(kept_before[np.concatenate([[0], np.cumsum(words, dtype=np.int64)])])
        ids = ids[kept]
        first = np.full(len(terms), len(ids), dtype=np.int64)  # each term's first position (a sort costs 50x more)
        np.minimum.at(first, ids, np.arange(len(ids)))
        present = np.flatnonzero(first < len(ids))
        order = present[np.argsort(first[present])]  # the batch's terms in order of first occurrence
        local = np.empty(len(terms), dtype=np.int64)
        local[order] = np.arange(len(order))
        vocabulary = pa.array([terms[i] for i in order.tolist()], pa.string())
        return cls(vocabulary, _BatchPairs.of(local[ids], lengths))


def _run_vocabulary(vocabularies: list[pa.StringArray], pending: list[_BatchPairs]) -> pa.Array:
    """The run's vocabulary, ids in order of first occurrence (batch after batch); each batch's local term ids
    in ``pending`` are overwritten with these ids.

    One Arrow dictionary encoding of every batch's terms end to end assigns ids in order of first
    appearance: the ids a sequential merge gives, without a Python operation per (batch, term).
    """
    bounds = np.concatenate([[0], np.cumsum([len(v) for v in vocabularies], dtype=np.int64)])
    encoded = pc.dictionary_encode(pa.chunked_array(vocabularies, pa.string()))  # chunks share one dictionary
    chunks = [chunk for chunk in encoded.chunks if len(chunk)]
    terms = chunks[-1].dictionary if chunks else pa.array([], pa.string())
    if chunks and not chunks[0].dictionary.equals(terms):
        raise RuntimeError("BM25: Arrow's dictionary encoding gave the batches different dictionaries")
    ids = np.concatenate([np.zeros(0, np.int32), *(c.indices.to_numpy(zero_copy_only=False) for c in chunks)])
    for i, pairs in enumerate(pending):  # a batch's run ids: its stretch of the encoded terms
        pairs.terms[:] = ids[bounds[i]:bounds[i + 1]][pairs.terms]  # in place: no second copy of every batch
    return terms


def _grown(array: np.ndarray, size: int) -> np.ndarray:
    """``array`` zero-extended to ``size`` entries (amortised doubling, so growing term by term stays linear)."""
    if size <= len(array):
        return array
    grown = np.zeros(max(size, 2 * len(array)), dtype=array.dtype)
    grown[:len(array)] = array
    return grown


@dataclass
class _Run:
    """A run file: its term ids (int32, ascending), where each term's pairs start and where its bytes start (uint32,
    one more than the terms each: a run holds far fewer than 2**32 pairs and bytes), then each term's pairs encoded
    by the index's codec, documents counted from the run's first."""

    path: Path
    terms: int  # distinct terms in the run
    first_document: int  # corpus position of the run's first document

    @property
    def bytes_at(self) -> int:
        """Where the encoded pairs start in the file."""
        return 4 * self.terms + 8 * (self.terms + 1)


class _Vocabulary:
    """The corpus vocabulary so far, as Arrow strings in id order (new terms appended run by run), and each term's
    64-bit hash, sorted, beside its id: a run's terms are found by their hashes (a binary search), and their strings
    checked, instead of Arrow hashing the whole vocabulary again at every run (a fifth of the main process's time
    on 300,000 long documents)."""

    def __init__(self) -> None:
        self.terms: pa.Array = pa.array([], pa.string())
        self._hashes = np.zeros(0, np.uint64)  # ascending
        self._ids = np.zeros(0, np.int64)  # the id of the term of each hash

    @property
    def size(self) -> int:
        return len(self.terms)

    def global_ids(self, run_terms: pa.Array) -> np.ndarray:
        """The corpus ids of a run's distinct terms (int32, in the run's id order); terms first seen here get new
        ids."""
        hashes = string_hashes(run_terms)
        ids = self._known_by_hash(run_terms, hashes)
        if ids is None:  # two terms share a hash (about once in 10^7 vocabularies of this size): Arrow's lookup
            ids = pc.index_in(run_terms, value_set=self.terms).fill_null(-1).to_numpy().astype(np.int64)
        new = np.flatnonzero(ids < 0)
        ids[new] = self.size + np.arange(len(new))
        if len(new):
            self.terms = pa.concat_arrays([self.terms, run_terms.take(pa.array(new))])
            new = new[np.argsort(hashes[new])]
            at = np.searchsorted(self._hashes, hashes[new])
            self._hashes = np.insert(self._hashes, at, hashes[new])
            self._ids = np.insert(self._ids, at, ids[new])
        return ids.astype(np.int32)

    def _known_by_hash(self, run_terms: pa.Array, hashes: np.ndarray) -> np.ndarray | None:
        """The ids of the terms already known (-1 for the others), or None where a hash led to another term."""
        if not len(self._hashes):
            return np.full(len(hashes), -1, dtype=np.int64)
        order = np.argsort(hashes)  # searched in ascending order: each search starts where the last ended (5x)
        at = np.empty(len(hashes), dtype=np.int64)
        at[order] = np.minimum(np.searchsorted(self._hashes, hashes[order]), len(self._hashes) - 1)
        found = self._hashes[at] == hashes
        ids = np.where(found, self._ids[at], -1)
        matched = np.flatnonzero(found)
        if len(matched) and not pc.all(pc.equal(run_terms.take(pa.array(matched)),
                                              self.terms.take(pa.array(ids[matched])))).as_py():
            return None
        return ids


def string_hashes(strings: pa.Array) -> np.ndarray:
    """Each string's 64-bit FNV-1a hash of its UTF-8 bytes (uint64); the array may be a slice."""
    strings = strings.cast(pa.string())
    _, offsets, data = strings.buffers()
    starts = np.frombuffer(offsets, dtype=np.int32)[strings.offset:strings.offset + len(strings) + 1]
    return _fnv1a(starts, np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, np.uint8))


@njit(cache=True)
def _fnv1a(offsets: np.ndarray, data: np.ndarray) -> np.ndarray:
    hashes = np.empty(len(offsets) - 1, dtype=np.uint64)
    for i in range(len(hashes)):
        h = np.uint64(0xCBF29CE484222325)
        for j in range(offsets[i], offsets[i + 1]):
            h = (h ^ np.uint64(data[j])) * np.uint64(0x100000001B3)
        hashes[i] = h
    return hashes


class IndexWriter:
    """Takes analysed batches in corpus order and writes the finished index into ``folder`` (see the module)."""

    def __init__(self, folder: Path, *, k1: float, b: float, workers: int = 1) -> None:
        self.folder = folder
        self.k1, self.b = k1, b
        self.workers = workers  # processes for the merge
        self._vocabulary = _Vocabulary()
        self._df = np.zeros(0, dtype=np.int64)
        self._lengths: list[np.ndarray] = []
        self._pending: list[AnalysedBatch] = []
        self._pending_pairs = 0
        self._run_first = 0  # corpus position of the pending run's first document
        self._runs: list[_Run] = []
        self._max_tf = 1

    def add(self, batch: AnalysedBatch) -> None:
        self._pending.append(batch)
        self._lengths.append(batch.pairs.lengths)
        self._pending_pairs += len(batch.pairs.terms)
        if self._pending_pairs >= RUN_PAIRS:
            self._spill()

    def finish(self) -> IndexHeader:
        """Merge the runs into the index files (after the last batch); the runs are removed."""
        self._spill()
        lengths = np.concatenate([np.zeros(0, np.int32), *self._lengths])
        self._lengths = []
        df = self._df[:self._vocabulary.size]
        write_vocabulary(self.folder, self._vocabulary.terms)
        self._vocabulary = _Vocabulary()
        indptr = np.concatenate([[0], np.cumsum(df)]).astype(np.int64)
        norms = norm_bytes(lengths)
        _write_array(self.folder / "norms", norms)
        header = IndexHeader(documents=len(lengths), terms=len(df), postings=int(indptr[-1]), postings_bytes=0,
                             scored_documents=int(np.count_nonzero(lengths)),
                             total_length=int(lengths.sum(dtype=np.int64)), max_tf=self._max_tf, k1=self.k1, b=self.b)
        merge = _Merge(self.folder, self._runs, indptr, self.workers, inverse_norm_table(header)[norms])
        sizes, written = [np.zeros(0, np.int64)], 0
        stretches = merge.stretches()
        with _ChecksummedFile(self.folder / POSTINGS) as postings:
            for (_, end), (path, stretch_sizes, stretch_postings) in zip(
                    stretches, in_order(_merge_stretch, merge, stretches, self.workers), strict=True):
                postings.append_file(path)  # and removed: the disk holds the runs and a few stretches beside the index
                merge.release_merged(end)
                sizes.append(stretch_sizes)
                written += stretch_postings
        if written != indptr[-1]:
            raise RuntimeError(f"BM25: the merge wrote {written:,} postings of {int(indptr[-1]):,}")
        terms, blocks = pack_terms(df, np.concatenate(sizes))
        _write_array(self.folder / TERMS, terms)
        _write_array(self.folder / TERM_BLOCKS, blocks)
        _write_array(self.folder / POSTINGS_CHECKS, np.asarray(postings.checks, dtype=np.uint32))
        for run in self._runs:
            run.path.unlink()
        return replace(header, postings_bytes=int(blocks[-1, 2]))

    def _spill(self) -> None:
        """Write the pending batches as one run (:class:`_Run`): term-major by corpus term id, documents ascending."""
        if not self._pending:
            return
        pairs = [batch.pairs for batch in self._pending]
        run_terms = _run_vocabulary([batch.vocabulary for batch in self._pending], pairs)
        self._pending = []
        to_global = self._vocabulary.global_ids(run_terms)
        df, documents, counts = _term_major(pairs, to_global, self._vocabulary.size, self._run_first)
        first_document = self._run_first
        self._run_first += sum(len(p.lengths) for p in pairs)
        self._pending_pairs = 0
        present = np.flatnonzero(df)
        dfs = df[present]
        self._df = _grown(self._df, self._vocabulary.size)
        self._df[present] += dfs
        if len(counts):
            self._max_tf = max(self._max_tf, int(counts.max()))
        starts = np.concatenate([[0], np.cumsum(dfs)]).astype(np.int64)
        data, sizes = CODECS[CODEC].encode(documents - first_document, counts, dfs)
        bytes_at = np.concatenate([[0], np.cumsum(sizes)])
        if len(documents) > _RUN_OFFSET_MAX or bytes_at[-1] > _RUN_OFFSET_MAX:
            raise ValueError(f"BM25: a run of {len(documents):,} pairs does not fit a run file; lower RUN_PAIRS")
        path = self.folder / f"run-{len(self._runs):05d}"
        with open(path, "wb") as handle:
            for part in (present.astype(np.int32), starts.astype(np.uint32), bytes_at.astype(np.uint32), data):
                handle.write(part.tobytes())
        self._runs.append(_Run(path, len(present), first_document))


def _term_major(batches: list[_BatchPairs], to_global: np.ndarray, n_terms: int,
                first_document: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The batches' pairs (run term ids) term-major by corpus term id: each term's pair count (over ``n_terms``),
    then the pairs' corpus document positions and counts.

    Each batch is term-major already, so each term's pairs of a batch go, in order, to the term's next free
    entries: a counting scatter, documents ascending within a term because batches come in corpus order.
    """
    terms = [to_global[pairs.terms] for pairs in batches]
    # one vocabulary-sized count per run, not per batch (the vocabulary reaches millions of terms)
    df = np.bincount(np.concatenate([np.zeros(0, np.int32), *terms]), minlength=n_terms)
    cursor = np.concatenate([[0], np.cumsum(df)[:-1]]).astype(np.int64)
    total = int(df.sum())
    documents = np.empty(total, dtype=np.int32)
    counts = np.empty(total, dtype=np.uint32)
    batch_first = first_document
    for pairs, batch_terms in zip(batches, terms, strict=True):
        if len(batch_terms):
            starts = np.flatnonzero(np.r_[True, batch_terms[1:] != batch_terms[:-1]])
            sizes = np.diff(np.r_[starts, len(batch_terms)])
            position = cursor[batch_terms] + (np.arange(len(batch_terms)) - np.repeat(starts, sizes))
            documents[position] = pairs.documents.astype(np.int32) + batch_first
            counts[position] = pairs.counts
            cursor[batch_terms[starts]] += sizes
        batch_first += len(pairs.lengths)
    return df, documents, counts


class _RunReader:
    """A run file (:class:`_Run`) read forward a range of terms at a time, with ``pread``, from its first term at or
    above ``term`` on."""

    def __init__(self, run: _Run, fd: int, term: int) -> None:
        self.run = run
        self._term_at = _first_at_least(fd, run.terms, term)  # next term to take, as its place in the run
        self._ids = np.zeros(0, np.int32)  # the run's term ids from there on, a block at a time

    def take(self, fd: int, end_term: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The run's terms below ``end_term`` not taken yet: their ids, frequencies, documents and counts."""
        ids = self._ids_below(fd, end_term)
        terms = self.run.terms
        starts = _pread(fd, np.uint32, 4 * terms + 4 * self._term_at, len(ids) + 1).astype(np.int64)
        bytes_at = _pread(fd, np.uint32, 4 * terms + 4 * (terms + 1) + 4 * self._term_at, len(ids) + 1)
        self._term_at += len(ids)
        n = int(starts[-1] - starts[0])
        data = _pread(fd, np.uint8, self.run.bytes_at + int(bytes_at[0]), int(bytes_at[-1] - bytes_at[0]))
        dfs = np.diff(starts)
        documents, counts, status = CODECS[CODEC].decode_terms(data, dfs, np.iinfo(np.int32).max, _MAX_COUNT)
        if status or n != len(documents):
            raise OSError(f"BM25: the run file {self.run.path} of the index build does not hold what was written")
        return ids, dfs, documents + np.int32(self.run.first_document), counts

    def _ids_below(self, fd: int, end_term: int) -> np.ndarray:
        taken = []
        while True:
            if not len(self._ids):
                at = self._term_at + sum(map(len, taken))
                if at == self.run.terms:
                    break
                self._ids = _pread(fd, np.int32, 4 * at, min(_TERM_BLOCK, self.run.terms - at))
            stop = int(np.searchsorted(self._ids, end_term))
            taken.append(self._ids[:stop])
            self._ids = self._ids[stop:]
            if len(self._ids):
                break
        return np.concatenate([np.zeros(0, np.int32), *taken])


def _first_at_least(fd: int, count: int, term: int) -> int:
    """The place of the run's first term id at or above ``term`` (of ``count`` ascending ids at the file's start),
    by binary search: a few reads, where reading the ids up to there could be megabytes per run."""
    low, high = 0, count
    while low < high:
        middle = (low + high) // 2
        if int(_pread(fd, np.int32, 4 * middle, 1)[0]) < term:
            low = middle + 1
        else:
            high = middle
    return low


def _pread(fd: int, dtype: type, offset: int, count: int) -> np.ndarray:
    size = np.dtype(dtype).itemsize * count
    data = os.pread(fd, size, offset) if size else b""
    if len(data) != size:
        raise OSError(f"BM25: a run file of the index build is shorter than written ({len(data)} of {size} bytes)")
    return np.frombuffer(data, dtype=dtype)


_STRETCHES_PER_WORKER = 4  # stretches of the vocabulary per merge process, so that none waits long for another


@dataclass
class _Merge:
    """What every merge stretch needs (shared with the merge processes by the fork): the runs and where each term's
    postings go."""

    folder: Path
    runs: list[_Run]
    indptr: np.ndarray
    workers: int
    inverse_norms: np.ndarray  # float32 per document: what the skip data's weight bounds need

    def stretches(self) -> list[tuple[int, int]]:
        """Consecutive term ranges holding about as many postings each, ``_STRETCHES_PER_WORKER`` per process."""
        count = self.workers * _STRETCHES_PER_WORKER
        terms = len(self.indptr) - 1
        cuts = np.searchsorted(self.indptr, self.indptr[-1] * np.arange(1, count) // count, side="right") - 1
        bounds = np.unique(np.concatenate([[0], np.clip(cuts, 0, terms), [terms]])).tolist()
        return list(pairwise(bounds))

    def release_merged(self, end: int) -> None:
        """Give back the disk blocks of the runs' pairs of the terms below ``end``, merged into the index by now
        (stretches are appended in term order and later ones read only later terms): the runs shrink as the index
        grows (:func:`~.file_holes.punch_hole`; where it cannot, they are removed at the end)."""
        for run in self.runs:
            fd = os.open(run.path, os.O_RDWR)
            try:
                place = _first_at_least(fd, run.terms, end)
                merged = int(_pread(fd, np.uint32, 4 * run.terms + 4 * (run.terms + 1) + 4 * place, 1)[0])
                punch_hole(fd, run.bytes_at, merged)
            finally:
                os.close(fd)

    def ranges(self, start: int, end: int) -> Iterator[tuple[int, int]]:
        """The stretch's term ranges of about ``MERGE_ENTRIES / workers`` postings (a term at least): the merge
        holds the same memory in all however many processes share it."""
        entries = max(MERGE_ENTRIES // self.workers, 1)
        while start < end:
            stop = int(np.searchsorted(self.indptr, self.indptr[start] + entries, side="right")) - 1
            stop = min(max(stop, start + 1), end)
            yield start, stop
            start = stop


def _merge_stretch(merge: _Merge, stretch: tuple[int, int]) -> tuple[Path, np.ndarray, int]:
    """Merge the runs' postings of a stretch of terms into a file of their encoded bytes: the file, each term's
    number of bytes, and the postings written."""
    first, end = stretch
    fds = [os.open(run.path, os.O_RDONLY) for run in merge.runs]
    path = merge.folder / f"stretch-{first:010d}"
    sizes = [np.zeros(0, np.int64)]
    written = 0
    try:
        readers = [_RunReader(run, fd, first) for run, fd in zip(merge.runs, fds, strict=True)]
        with open(path, "wb") as out:
            for start, stop in merge.ranges(first, end):
                documents, counts = _merged_range(merge, list(zip(readers, fds, strict=True)), start, stop)
                data, term_sizes = CODECS[CODEC].encode(documents, counts, np.diff(merge.indptr[start:stop + 1]),
                                                        merge.inverse_norms[documents])
                out.write(data.tobytes())
                sizes.append(term_sizes)
                written += len(documents)
    finally:
        for fd in fds:
            os.close(fd)
    return path, np.concatenate(sizes), written


def _merged_range(merge: _Merge, readers: list[tuple[_RunReader, int]], start: int,
                  end: int) -> tuple[np.ndarray, np.ndarray]:
    """The documents and counts of terms ``start:end``, from the runs (in corpus order)."""
    indptr = merge.indptr
    size = int(indptr[end] - indptr[start])
    documents = np.empty(size, dtype=np.int32)
    counts = np.empty(size, dtype=np.uint32)
    cursor = indptr[start:end] - indptr[start]
    for reader, fd in readers:
        ids, dfs, run_documents, run_counts = reader.take(fd, end)
        if not len(ids):
            continue
        offsets = np.concatenate([[0], np.cumsum(dfs[:-1], dtype=np.int64)])
        position = np.repeat(cursor[ids - start] - offsets, dfs) + np.arange(len(run_documents))
        documents[position] = run_documents
        counts[position] = run_counts
        cursor[ids - start] += dfs
    return documents, counts


class _ChecksummedFile:
    """A file written from the start, the CRC-32 of each ``STRETCH`` bytes of it kept as it is written."""

    def __init__(self, path: Path) -> None:
        self._handle: BinaryIO = open(path, "wb")
        self.checks: list[int] = []
        self._crc, self._filled = 0, 0

    def append_file(self, path: Path) -> None:
        """Append the file's bytes, then remove it."""
        with open(path, "rb") as source:
            while chunk := source.read(_COPY_BYTES):
                self._handle.write(chunk)
                view = memoryview(chunk)
                while len(view):
                    take = min(len(view), STRETCH - self._filled)
                    self._crc = zlib.crc32(view[:take], self._crc)
                    self._filled += take
                    view = view[take:]
                    if self._filled == STRETCH:
                        self.checks.append(self._crc)
                        self._crc, self._filled = 0, 0
        path.unlink()

    def __enter__(self) -> _ChecksummedFile:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._filled:
            self.checks.append(self._crc)
        self._handle.close()


def _write_array(path: Path, array: np.ndarray) -> None:
    with open(path, "wb") as handle:
        handle.write(np.ascontiguousarray(array).tobytes())


class StringsWriter:
    """Arrow string arrays appended end to end as one large-string array's buffers: ``name.offsets`` (int64, one
    more than the strings) and ``name.bytes`` (UTF-8), written as they come."""

    def __init__(self, folder: Path, name: str) -> None:
        self._offsets: BinaryIO = open(folder / f"{name}.offsets", "wb")
        self._data: BinaryIO = open(folder / f"{name}.bytes", "wb")
        self._offsets.write(np.zeros(1, np.int64).tobytes())
        self._size = 0
        self.count = 0

    def append(self, array: pa.Array) -> None:
        column = pc.cast(array, pa.large_string())
        if column.null_count:
            raise ValueError("BM25: a string to index is null")
        own = np.frombuffer(column.buffers()[1], dtype=np.int64, count=len(column) + 1, offset=8 * column.offset)
        self._offsets.write((own[1:] - own[0] + self._size).tobytes())
        if column.buffers()[2] is not None:
            self._data.write(memoryview(column.buffers()[2])[own[0]:own[-1]])
        self._size += int(own[-1] - own[0])
        self.count += len(column)

    def close(self) -> None:
        self._offsets.close()
        self._data.close()

    def __enter__(self) -> StringsWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
