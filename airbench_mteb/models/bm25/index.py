"""An Okapi BM25 index, read from the files :mod:`~airbench_mteb.models.bm25.build` writes (layout:
:mod:`~airbench_mteb.models.bm25.format`), memory-mapped.

The index is term-major: for each term, the documents that contain it and their term frequencies, compressed by
the manifest's codec. A search decodes only its queries' terms' postings, checking each stretch of ``postings``
against its checksum the first time this process reads it, and recomputes Lucene's float32 weight
``idf - idf / (1 + tf / norm)`` of each posting from the term's idf (of its postings count), the frequency and the
document's norm byte (:func:`~airbench_mteb.models.bm25.format.weights`): the numbers format 1 stored. A term's
count and bytes are decoded from its block of the term table when a search needs them
(:func:`~airbench_mteb.models.bm25.terms.locate`). Every file but the vocabulary is a read-only memory map, so search
worker processes share the pages; the vocabulary is decoded once on opening into Arrow strings, looked up a whole
search's terms at once. A top-k search passes over the postings that cannot change its result
(:mod:`~airbench_mteb.models.bm25.prune`). A failed checksum or a decoded value out of bounds raises
:class:`~airbench_mteb.models.bm25.format.IndexDamage` naming the file; it never yields a score.
"""

from __future__ import annotations

import tempfile
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain, pairwise
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from airbench_mteb.models.bm25.build import AnalysedBatch, IndexWriter
from airbench_mteb.models.bm25.format import (
    CODECS,
    POSTINGS,
    POSTINGS_CHECKS,
    STRETCH,
    TERM_BLOCKS,
    TERMS,
    IndexDamage,
    IndexHeader,
    array_sizes,
    idf_of,
    inverse_norm_table,
    weights,
)
from airbench_mteb.models.bm25.mapped_pages import release_mapped
from airbench_mteb.models.bm25.prune import QueryTerm, Scoring, query_term, scored
from airbench_mteb.models.bm25.terms import check_table, locate, read_vocabulary

# Postings scored in one block of queries by BM25Index.search_block (pages handed back after each block: that reads
# /proc/self/maps, 6 ms in an MTEB process; at 2^22, a block per 11 queries, it was 15 % of a pruned search on 1 M
# passages, and 2^24 took that search from 7.0 s to 5.1 s in one process; the pages held stay a few tens of MB).
_BLOCK_ENTRIES = 1 << 24

# A query is pruned where its terms hold at least this many postings per result asked for (2,000 queries of six
# words, one process, 2 loaded cores): pruned/exhaustive time 0.61x, 0.78x, 0.92x at k = 10, 100, 1,000 on 1 M
# documents (59 M postings, 96,500 a query; 1.07x at k = 1,000 in another run: even within noise), 0.80x,
# 0.93-1.04x, 1.03-1.08x on 200,000 (24,000 a query): where theta stays low against the postings, the bookkeeping
# costs what the blocks passed over save.
_PRUNED_POSTINGS = 100

TieOrder = Callable[[np.ndarray], np.ndarray]  # positions tied at a cut-off -> the order in which they are kept


def mapped(path: Path, dtype: type, count: int) -> np.ndarray:
    """The file's ``count`` values, a read-only memory map seen as a plain array (numba takes no ``np.memmap``;
    an empty array for none: nothing to map)."""
    if not count:
        return np.zeros(0, dtype=dtype)
    return np.asarray(np.memmap(path, dtype=dtype, mode="r", shape=(count,)))


def mapped_strings(folder: Path, name: str, count: int) -> pa.LargeStringArray:
    """The strings :class:`~airbench_mteb.models.bm25.build.StringsWriter` wrote, over the mapped files."""
    offsets = mapped(folder / f"{name}.offsets", np.int64, count + 1)
    data = mapped(folder / f"{name}.bytes", np.uint8, int(offsets[-1]) if count else 0)
    return pa.LargeStringArray.from_buffers(count, pa.py_buffer(offsets), pa.py_buffer(data))


class Vocabulary(Mapping[str, int]):
    """Index terms to ids, over Arrow strings in id order: a lookup hashes the vocabulary once for all its terms."""

    def __init__(self, terms: pa.LargeStringArray) -> None:
        self.terms = terms

    def ids(self, terms: Sequence[str]) -> np.ndarray:
        """Each term's id (int64), -1 for a term the index does not know."""
        if not terms or not len(self.terms):
            return np.full(len(terms), -1, dtype=np.int64)
        found = pc.index_in(pa.array(terms, pa.large_string()), value_set=self.terms)
        return found.fill_null(-1).to_numpy().astype(np.int64)

    @cached_property
    def _by_term(self) -> dict[str, int]:
        """Term -> id as a dict, made on the first single lookup: :meth:`ids` hashes the whole vocabulary each
        call, so term-by-term lookups (a Mapping's ``items()`` or ``==``) would cost O(terms) each."""
        return {term: i for i, term in enumerate(self.terms.to_pylist())}

    def __getitem__(self, term: str) -> int:
        return self._by_term[term]

    def __contains__(self, term: object) -> bool:
        return term in self._by_term

    def __iter__(self) -> Iterator[str]:
        return iter(self.terms.to_pylist())

    def __len__(self) -> int:
        return len(self.terms)


def best_first(positions: np.ndarray, scores: np.ndarray, k: int, tie_order: TieOrder | None = None) -> np.ndarray:
    """Indexes of the ``k`` highest ``scores``, best first, ties by position; documents tied at the ``k``-th score
    are kept in ``tie_order`` (default: by position), so results never depend on the partition algorithm
    (``positions`` in any order)."""
    candidates = np.arange(len(scores))
    if len(scores) > k:
        kth = np.partition(scores, len(scores) - k)[len(scores) - k]
        above = np.flatnonzero(scores > kth)
        tied = np.flatnonzero(scores == kth)
        order = tie_order(positions[tied]) if tie_order else np.argsort(positions[tied], kind="stable")
        tied = tied[order[: k - above.size]]
        candidates = np.concatenate([above, tied])
    return candidates[np.lexsort((positions[candidates], -scores[candidates]))]


@dataclass
class QueryBlock:
    """Consecutive queries (term ids) scored together by :meth:`BM25Index.search_block`."""

    queries: list[Sequence[int]]


@dataclass
class BM25Index:
    vocabulary: Vocabulary
    header: IndexHeader
    terms: np.ndarray  # uint8, the term table's blocks: each term's postings count and bytes
    term_blocks: np.ndarray  # int64 (blocks + 1, 3): where each block starts, the postings and bytes before it
    norms: np.ndarray  # uint8 norm byte per document
    postings: np.ndarray  # uint8, the codec's bytes
    checks: np.ndarray  # uint32 CRC-32 per STRETCH bytes of ``postings``
    folder: Path
    files: tuple[Path, ...] = ()  # the mapped files, whose pages a search hands back after each block
    pruning: bool = True  # False: every posting of a query's terms scored (to measure what pruning saves)
    _scratch: tempfile.TemporaryDirectory[str] | None = field(default=None, repr=False)  # the files of build()
    _verified: np.ndarray = field(init=False, repr=False)  # stretches of ``postings`` this process has checked
    _inverse_norm: np.ndarray = field(init=False, repr=False)
    _buffers: tuple[np.ndarray, np.ndarray] | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self._verified = np.zeros(len(self.checks), dtype=bool)
        self._inverse_norm = inverse_norm_table(self.header)

    @property
    def num_documents(self) -> int:
        return self.header.documents

    @classmethod
    def open(cls, folder: Path, header: IndexHeader) -> BM25Index:
        """The index whose files are in ``folder`` (written by :class:`~airbench_mteb.models.bm25.build.IndexWriter`
        with this ``header``), memory-mapped."""
        arrays = {name: mapped(folder / name, dtype, count) for name, (dtype, count) in array_sizes(header).items()
                  if name in (TERM_BLOCKS, "norms", POSTINGS_CHECKS)}
        terms = mapped(folder / TERMS, np.uint8, (folder / TERMS).stat().st_size)
        term_blocks = arrays[TERM_BLOCKS].reshape(-1, 3)
        check_table(term_blocks, terms, header.postings, header.postings_bytes, folder)
        return cls(Vocabulary(read_vocabulary(folder, header.terms)), header, terms=terms, term_blocks=term_blocks,
                   norms=arrays["norms"], postings=mapped(folder / POSTINGS, np.uint8, header.postings_bytes),
                   checks=arrays[POSTINGS_CHECKS], folder=folder, files=(folder / POSTINGS, folder / "norms"))

    @classmethod
    def build(cls, batches: Iterable[Sequence[Sequence[str]]], *, k1: float, b: float) -> BM25Index:
        """Index documents given as batches of term lists, in corpus order, in a temporary folder of its own."""
        scratch = tempfile.TemporaryDirectory(prefix="airbench-mteb-bm25-")
        writer = IndexWriter(Path(scratch.name), k1=k1, b=b)
        for batch in batches:
            writer.add(AnalysedBatch.of(batch))
        index = cls.open(Path(scratch.name), writer.finish())
        index._scratch = scratch
        return index

    def term_ids(self, terms: Iterable[str]) -> list[int]:
        """Vocabulary ids of the terms the index knows (repeats kept: a repeated query term counts twice)."""
        return self.term_ids_of([list(terms)])[0]

    def term_ids_of(self, queries: Sequence[Sequence[str]]) -> list[list[int]]:
        """:meth:`term_ids` of each query, the vocabulary looked up once for all of them."""
        ids = self.vocabulary.ids(list(chain.from_iterable(queries))).tolist()
        bounds = np.cumsum([0, *map(len, queries)]).tolist()
        return [[t for t in ids[start:end] if t >= 0] for start, end in pairwise(bounds)]

    def located(self, ids: np.ndarray) -> np.ndarray:
        """Each term's (postings count, first byte, end byte in ``postings``), int64 rows in ``ids``' order."""
        return locate(self.terms, self.term_blocks, self.header.terms, ids, self.folder)

    def idf(self, counts: np.ndarray) -> np.ndarray:
        """The float32 IDF of terms with these postings counts."""
        return idf_of(counts, self.header.scored_documents)

    def decoded(self, term: int) -> tuple[np.ndarray, np.ndarray]:
        """The term's documents (int32, ascending) and term frequencies (uint32), its bytes checked first."""
        return self._decoded(term, *self.located(np.array([term])).tolist()[0])

    def _decoded(self, term: int, count: int, start: int, end: int) -> tuple[np.ndarray, np.ndarray]:
        self._check(term, start, end)
        return self._decode(term, count, start, end)

    def _decode(self, term: int, count: int, start: int, end: int) -> tuple[np.ndarray, np.ndarray]:
        """The term's postings from its bytes, checked (:meth:`_check`) before."""
        documents, frequencies, status = CODECS[self.header.codec].decode(
            self.postings, start, end, count, self.num_documents, self.header.max_tf, skips=True)
        if status:
            raise self._damage(term, status)
        return documents, frequencies

    def _check(self, term: int, start: int, end: int) -> None:
        """The term's bytes lie in ``postings`` and match their checksums."""
        if not 0 <= start <= end <= len(self.postings):
            raise IndexDamage(f"{self.folder / TERMS}: term {term}'s bytes {start}:{end} lie outside "
                              f"{self.folder / POSTINGS}")
        self._verify(start, end)

    def _verify(self, start: int, end: int) -> None:
        """Check the stretches of ``postings`` holding bytes ``start:end`` that this process has not checked yet."""
        if end <= start:
            return
        first, last = start // STRETCH, (end - 1) // STRETCH
        for stretch in first + np.flatnonzero(~self._verified[first:last + 1]):
            data = self.postings[stretch * STRETCH:(stretch + 1) * STRETCH]
            if zlib.crc32(data) != int(self.checks[stretch]):
                raise IndexDamage(f"{self.folder / POSTINGS}: bytes {stretch * STRETCH:,} to "
                                  f"{stretch * STRETCH + len(data):,} do not match their checksum in {POSTINGS_CHECKS}")
            self._verified[stretch] = True

    def postings_of(self, term: int) -> tuple[np.ndarray, np.ndarray]:
        """The term's documents (int32, ascending) and their float32 BM25 weights."""
        documents, frequencies = self.decoded(term)
        idf = self.idf(np.array([len(documents)], dtype=np.int64))[0]
        return documents, weights(idf, frequencies, self._inverse_norm[self.norms[documents]])

    def search(self, queries: Sequence[Sequence[int]], k: int,
               tie_order: TieOrder | None = None) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Each query's (given as term ids) ``k`` best documents among those sharing a term with it: their
        positions and float32 scores, best first, exact ties by position, those tied at the cut-off kept in
        ``tie_order`` (:func:`best_first`); the scores are those of :meth:`scores`.

        Queries are scored a block at a time (:meth:`query_blocks`, :meth:`search_block`), so the pages read are
        handed back after each block.
        """
        for block in self.query_blocks(queries):
            yield from self.search_block(block, k, tie_order)

    def search_block(self, block: QueryBlock, k: int,
                     tie_order: TieOrder | None = None) -> list[tuple[np.ndarray, np.ndarray]]:
        """The results of :meth:`search` for one block of queries, in order. Each query is scored term at a time
        into a float64 array of every document (kept for the next query: only the documents scored are reset),
        which is exact whatever the order while the weights span less than 2^29, then rounded to float32; postings
        that cannot change the top ``k`` are passed over where :attr:`pruning` (:mod:`.prune`, rank-safe)."""
        results = []
        for terms in block.queries:
            positions, scores = self._scored(terms, k if self.pruning else None)
            best = best_first(positions, scores, k, tie_order)
            results.append((positions[best], scores[best]))
        release_mapped(self.files)  # the block's postings: read again from the page cache if another block needs them
        return results

    def _scored(self, terms: Sequence[int], k: int | None) -> tuple[np.ndarray, np.ndarray]:
        """The positions (int64) and float32 scores of the documents sharing a term with the query, but those that
        cannot be among its ``k`` best (:func:`~airbench_mteb.models.bm25.prune.scored`; ``None``: none left out;
        nor where the query has fewer than ``_PRUNED_POSTINGS`` postings per result)."""
        if self._buffers is None:
            self._buffers = (np.zeros(self.num_documents, np.float64), np.empty(self.num_documents, np.int32))
        ids, repeats = np.unique(np.asarray(terms, dtype=np.int64), return_counts=True)
        located = self.located(ids)
        query = [self._query_term(*row) for row in zip(ids.tolist(), repeats.tolist(), located.tolist(),
                                                        self.idf(located[:, 0]), strict=True)]
        if k is not None and located[:, 0].sum() < _PRUNED_POSTINGS * k:
            k = None  # too few postings for theta to pass over many: scoring them all is as fast
        return scored(self._scoring, query, k, *self._buffers)

    def _query_term(self, term: int, repeats: int, place: list[int], idf: np.float32) -> QueryTerm:
        count, start, end = place
        self._check(term, start, end)
        read = query_term(self.postings, term, repeats, (count, start, end), idf, self.num_documents)
        if isinstance(read, int):
            raise self._damage(term, read)
        return read

    def _damage(self, term: int, status: int) -> IndexDamage:
        return IndexDamage(f"{self.folder / POSTINGS}: the postings of term {term} do not decode (error {status})")

    @cached_property  # built once, not for every query
    def _scoring(self) -> Scoring:
        return Scoring(self.postings, self._inverse_norm, self.norms, self.num_documents, self.header.max_tf,
                       decoded=lambda term: self._decode(term.term, term.count, term.start, term.end),
                       damage=lambda term, status: self._damage(term.term, status))

    def query_blocks(self, queries: Sequence[Sequence[int]]) -> Iterator[QueryBlock]:
        """Consecutive queries, grouped so a block's postings stay under ``_BLOCK_ENTRIES`` (a query alone may
        read more); only the queries' terms are looked up."""
        lengths = np.array([len(terms) for terms in queries], dtype=np.int64)
        flat = np.concatenate([np.zeros(0, np.int64), *(np.asarray(terms, dtype=np.int64) for terms in queries)])
        ids, places = np.unique(flat, return_inverse=True)
        running = np.concatenate([[0], np.cumsum(self.located(ids)[:, 0][places])])
        bounds = np.concatenate([[0], np.cumsum(lengths)])
        block: list[Sequence[int]] = []
        entries = 0
        for terms, size in zip(queries, (running[bounds[1:]] - running[bounds[:-1]]).tolist(), strict=True):
            if block and entries + size > _BLOCK_ENTRIES:
                yield QueryBlock(block)
                block, entries = [], 0
            block.append(terms)
            entries += size
        if block:
            yield QueryBlock(block)

    def scores_of(self, term_ids: Sequence[int], positions: np.ndarray) -> np.ndarray:
        """The :meth:`scores` of the documents at ``positions`` alone, found by binary search in each term's
        postings (documents ascend there). Summed in float64 in the same order as :meth:`scores`, so the float32
        results are the same numbers."""
        wanted = positions.astype(np.int32)  # searchsorted would otherwise convert a whole posting list
        out = np.zeros(len(wanted), dtype=np.float64)
        for t in term_ids:
            documents, term_weights = self.postings_of(t)
            at = np.searchsorted(documents, wanted)
            hit = np.flatnonzero(at < len(documents))
            hit = hit[documents[at[hit]] == wanted[hit]]
            out[hit] += term_weights[at[hit]]
        return out.astype(np.float32)

    def scores(self, term_ids: Sequence[int]) -> np.ndarray:
        """The BM25 score of every document for a query given as term ids."""
        out = np.zeros(self.num_documents, dtype=np.float64)  # Lucene sums a query's clauses in double
        for t in term_ids:
            documents, term_weights = self.postings_of(t)
            out[documents] += term_weights  # one entry per document within a term
        return out.astype(np.float32)

    @property
    def nbytes(self) -> int:
        """Bytes of the index's files (the strings' offsets and bytes included)."""
        return sum(path.stat().st_size for path in self.folder.iterdir() if path.is_file())
