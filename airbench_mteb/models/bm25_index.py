"""An Okapi BM25 index, read from the files :mod:`~airbench_mteb.models.bm25_build` writes, memory-mapped.

The index is term-major (CSC): for each term, the documents that contain it and their precomputed
weight ``idf(t) * tf / (tf + k1 * (1 - b + b * dl / avgdl))`` (Lucene's, see
:func:`~airbench_mteb.models.bm25_build.lucene_length`). Every array is a read-only memory map of its file, so
a search reads only the postings of its queries' terms, and search worker processes share the pages; the
vocabulary is Arrow strings over the mapped bytes, looked up a whole search's terms at once.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain, pairwise
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from scipy import sparse

from airbench_mteb.models.bm25_build import ARRAYS, AnalysedBatch, IndexCounts, IndexWriter
from airbench_mteb.models.mapped_pages import release_mapped

# Postings scored in one sparse product by BM25Index.search (~30 bytes each while a block is scored).
_BLOCK_ENTRIES = 1 << 22


def mapped(path: Path, dtype: type, count: int) -> np.ndarray:
    """The file's ``count`` values, a read-only memory map (an empty array for none: nothing to map)."""
    if not count:
        return np.zeros(0, dtype=dtype)
    return np.memmap(path, dtype=dtype, mode="r", shape=(count,))


def mapped_strings(folder: Path, name: str, count: int) -> pa.LargeStringArray:
    """The strings :class:`~airbench_mteb.models.bm25_build.StringsWriter` wrote, over the mapped files."""
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

    def __getitem__(self, term: str) -> int:
        found = int(self.ids([term])[0])
        if found < 0:
            raise KeyError(term)
        return found

    def __contains__(self, term: object) -> bool:
        return isinstance(term, str) and int(self.ids([term])[0]) >= 0

    def __iter__(self) -> Iterator[str]:
        return iter(self.terms.to_pylist())

    def __len__(self) -> int:
        return len(self.terms)


def best_first(positions: np.ndarray, scores: np.ndarray, k: int) -> np.ndarray:
    """Indexes of the ``k`` highest ``scores``, best first; ties by position, also at the cut-off, so results
    never depend on the partition algorithm (``positions`` in any order)."""
    candidates = np.arange(len(scores))
    if len(scores) > k:
        kth = np.partition(scores, len(scores) - k)[len(scores) - k]
        above = np.flatnonzero(scores > kth)
        tied = np.flatnonzero(scores == kth)
        tied = tied[np.argsort(positions[tied], kind="stable")[: k - above.size]]
        candidates = np.concatenate([above, tied])
    return candidates[np.lexsort((positions[candidates], -scores[candidates]))]


def _positive(positions: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The entries with a positive score (Lucene's IDF > 0: positive means a shared term)."""
    keep = scores > 0
    return positions[keep], scores[keep]


@dataclass
class QueryBlock:
    """Consecutive queries (term ids) scored together by :meth:`BM25Index.search_block`."""

    queries: list[Sequence[int]]
    dense: bool  # one query, scored into a dense array of every document


@dataclass
class BM25Index:
    vocabulary: Vocabulary
    indptr: np.ndarray  # int64, len(vocabulary) + 1: the entries of term t are indptr[t]:indptr[t + 1]
    documents: np.ndarray  # int32 document position of each entry, ascending within a term
    weights: np.ndarray  # float32 BM25 weight of each entry
    num_documents: int
    files: tuple[Path, ...] = ()  # the mapped files, whose pages a search hands back after each block
    _scratch: tempfile.TemporaryDirectory[str] | None = field(default=None, repr=False)  # the files of build()

    @classmethod
    def open(cls, folder: Path, counts: IndexCounts) -> BM25Index:
        """The index whose files are in ``folder`` (written by :class:`~airbench_mteb.models.bm25_build.IndexWriter`
        with these ``counts``), memory-mapped."""
        sizes = {"indptr": counts.terms + 1, "documents": counts.postings, "weights": counts.postings}
        arrays = {name: mapped(folder / name, dtype, sizes[name]) for name, dtype in ARRAYS.items()}
        return cls(Vocabulary(mapped_strings(folder, "vocabulary", counts.terms)), num_documents=counts.documents,
                   files=tuple(folder / name for name in ARRAYS), **arrays)

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

    def search(self, queries: Sequence[Sequence[int]], k: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Each query's (given as term ids) ``k`` best documents among those sharing a term with it: their
        positions and float32 scores, best first, exact ties by position (:func:`best_first`); the scores are
        those of :meth:`scores`.

        Queries are scored a block at a time (:meth:`query_blocks`, :meth:`search_block`), so the work follows
        the postings read, not the corpus size times the number of queries.
        """
        for block in self.query_blocks(queries):
            yield from self.search_block(block, k)

    def search_block(self, block: QueryBlock, k: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """The results of :meth:`search` for one block of queries, in order.

        A block is scored as one sparse product, (query x term counts) @ (term x document weights)
        restricted to the block's terms; a query that reads more postings than a quarter of the documents
        is scored alone into a dense array (:meth:`scores`), which is cheaper there. A query's float32
        weights are summed in float64 (as Lucene sums clauses), which is exact whatever the order while they
        span less than 2^29, then rounded to float32.
        """
        if block.dense:
            scores = self.scores(block.queries[0])
            positions = np.flatnonzero(scores > 0)  # Lucene's IDF > 0: positive means a shared term
            rows: Iterable[tuple[np.ndarray, np.ndarray]] = [(positions, scores[positions])]
        else:
            product = self._product(block.queries)
            rows = (_positive(product.indices[start:end], product.data[start:end].astype(np.float32))
                    for start, end in zip(product.indptr[:-1], product.indptr[1:], strict=True))
        results = []
        for positions, scores in rows:
            best = best_first(positions, scores, k)
            results.append((positions[best].astype(np.int64), scores[best]))
        release_mapped(self.files)  # the block's postings: read again from the page cache if another block needs them
        return results

    def query_blocks(self, queries: Sequence[Sequence[int]]) -> Iterator[QueryBlock]:
        """Consecutive queries, grouped so a block's postings stay under ``_BLOCK_ENTRIES``; a query that
        reads more than a quarter of the documents is a dense block of its own."""
        postings = np.diff(self.indptr)
        block: list[Sequence[int]] = []
        entries = 0
        for terms in queries:
            size = int(postings[np.asarray(terms, dtype=np.int64)].sum())
            dense = size > self.num_documents // 4
            if block and (dense or entries + size > _BLOCK_ENTRIES):
                yield QueryBlock(block, dense=False)
                block, entries = [], 0
            if dense:
                yield QueryBlock([terms], dense=True)
                continue
            block.append(terms)
            entries += size
        if block:
            yield QueryBlock(block, dense=False)

    def _product(self, queries: Sequence[Sequence[int]]) -> sparse.csr_array:
        """The queries' float64 scores as a (query x document) sparse matrix (documents in no set order in a row)."""
        flat = np.fromiter(chain.from_iterable(queries), dtype=np.int64)
        rows = np.repeat(np.arange(len(queries)), [len(terms) for terms in queries])
        used, columns = np.unique(flat, return_inverse=True)
        lengths = self.indptr[used + 1] - self.indptr[used]
        starts = np.concatenate([[0], np.cumsum(lengths)])
        entries = np.repeat(self.indptr[used] - starts[:-1], lengths) + np.arange(starts[-1])
        postings = sparse.csr_array((self.weights[entries].astype(np.float64), self.documents[entries], starts),
                                    shape=(len(used), self.num_documents))
        # Duplicates are summed: a query term given twice counts twice, as in scores().
        counts = sparse.csr_array((np.ones(len(flat)), (rows, columns)), shape=(len(queries), len(used)))
        return counts @ postings

    def scores_of(self, term_ids: Sequence[int], positions: np.ndarray) -> np.ndarray:
        """The :meth:`scores` of the documents at ``positions`` alone, found by binary search in each term's
        postings (documents ascend there): the work follows the candidates, not the corpus. Summed in float64 in
        the same order as :meth:`scores`, so the float32 results are the same numbers."""
        wanted = positions.astype(self.documents.dtype)  # searchsorted would otherwise convert a whole posting list
        out = np.zeros(len(wanted), dtype=np.float64)
        for t in term_ids:
            start, end = self.indptr[t], self.indptr[t + 1]
            at = np.searchsorted(self.documents[start:end], wanted)
            hit = np.flatnonzero(at < end - start)
            hit = hit[self.documents[start + at[hit]] == wanted[hit]]
            out[hit] += self.weights[start + at[hit]]
        return out.astype(np.float32)

    def scores(self, term_ids: Sequence[int]) -> np.ndarray:
        """The BM25 score of every document for a query given as term ids."""
        out = np.zeros(self.num_documents, dtype=np.float64)  # Lucene sums a query's clauses in double
        for t in term_ids:
            start, end = self.indptr[t], self.indptr[t + 1]
            out[self.documents[start:end]] += self.weights[start:end]  # one entry per document within a term
        return out.astype(np.float32)

    @property
    def nbytes(self) -> int:
        return self.indptr.nbytes + self.documents.nbytes + self.weights.nbytes
