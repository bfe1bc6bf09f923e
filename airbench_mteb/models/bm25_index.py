"""An Okapi BM25 index built from a stream of tokenised batches, held as numpy arrays (no Python objects per token).

The index is term-major (CSC): for each term, the documents that contain it and their precomputed
weight ``idf(t) * tf / (tf + k1 * (1 - b + b * dl / avgdl))`` with Lucene's
``idf(t) = log(1 + (N - df + 0.5) / (df + 0.5))`` (as ``bm25s``' "lucene" method and Anserini). As in
Lucene's BM25Similarity, ``dl`` is the document's length as its one-byte norm stores it (exact below 24,
then 4 significant bits: see :func:`lucene_length`), while ``avgdl`` is exact; ``N`` and ``avgdl`` count
only documents with at least one term (Lucene's per-field document count).

Memory: while building, 8 bytes per (document, distinct term) pair and 4 per document, each batch's
distinct terms as Arrow strings until all batches are in, plus one batch of tokens (10 bytes per pair in
a batch where some term occurs over 65,535 times in one document); the
finished index keeps 8 bytes per pair and the vocabulary (a dict, which grows with the number of
distinct terms, not with the corpus). The two overlap only while one is turned into the
other, batch by batch.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from scipy import sparse

# Postings scored in one sparse product by BM25Index.search (~30 bytes each while a block is scored).
_BLOCK_ENTRIES = 1 << 22
# Lucene's SmallFloat.intToByte4: byte values below 24 hold the length itself, the rest a 4-bit float.
_EXACT_LENGTHS = 24


def _merge_vocabularies(vocabularies: list[pa.StringArray], pending: list[_BatchPairs]) -> dict[str, int]:
    """The corpus vocabulary, ids in order of first occurrence (batch after batch); each batch's local term ids
    in ``pending`` are overwritten with these ids.

    One Arrow dictionary encoding of every batch's terms end to end assigns ids in order of first
    appearance: the ids a sequential merge gives, without a Python operation per (batch, term).
    """
    bounds = np.concatenate([[0], np.cumsum([len(v) for v in vocabularies], dtype=np.int64)])
    encoded = pc.dictionary_encode(pa.chunked_array(vocabularies, pa.string()))  # chunks share one dictionary
    vocabularies.clear()
    chunks = [chunk for chunk in encoded.chunks if len(chunk)]
    terms = chunks[-1].dictionary if chunks else pa.array([], pa.string())
    if chunks and not chunks[0].dictionary.equals(terms):
        raise RuntimeError("BM25: Arrow's dictionary encoding gave the batches different dictionaries")
    ids = np.concatenate([np.zeros(0, np.int32), *(c.indices.to_numpy(zero_copy_only=False) for c in chunks)])
    for i, pairs in enumerate(pending):  # a batch's global ids: its stretch of the encoded terms
        pairs.terms[:] = ids[bounds[i]:bounds[i + 1]][pairs.terms]  # in place: no second copy of every batch
    return dict(zip(terms.to_pylist(), range(len(terms)), strict=True))


def lucene_length(lengths: np.ndarray) -> np.ndarray:
    """Document lengths as Lucene's norm byte keeps them: ``24 + x`` with ``x`` truncated to its 4 most
    significant bits (exact while ``x < 16``)."""
    lengths = np.asarray(lengths, dtype=np.int64)
    excess = np.maximum(lengths - _EXACT_LENGTHS, 0)
    bits = np.zeros_like(excess)
    nonzero = excess > 0
    bits[nonzero] = np.floor(np.log2(excess[nonzero])).astype(np.int64) + 1  # bit length
    shift = np.maximum(bits - 4, 0)
    return np.where(lengths < _EXACT_LENGTHS, lengths, _EXACT_LENGTHS + ((excess >> shift) << shift))


def _inverse_norms(lengths: np.ndarray, k1: float, b: float, avgdl: float) -> np.ndarray:
    """``1 / (k1 * (1 - b + b * dl / avgdl))`` step by step in float32, as Lucene's BM25 computes it."""
    one, k1_, b_ = np.float32(1), np.float32(k1), np.float32(b)
    # a document without terms gets inf where b = 1; it has no postings, so that value is never read
    with np.errstate(divide="ignore"):
        return one / (k1_ * ((one - b_) + b_ * lengths.astype(np.float32) / np.float32(avgdl)))


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
    vocabulary: dict[str, int]
    indptr: np.ndarray  # int64, len(vocabulary) + 1: the entries of term t are indptr[t]:indptr[t + 1]
    documents: np.ndarray  # int32 document position of each entry, ascending within a term
    weights: np.ndarray  # float32 BM25 weight of each entry
    num_documents: int

    @classmethod
    def build(cls, batches: Iterable[Sequence[Sequence[str]]], *, k1: float, b: float) -> BM25Index:
        """Index documents given as batches of term lists, in corpus order."""
        return cls.from_analysed(map(AnalysedBatch.of, batches), k1=k1, b=b)

    @classmethod
    def from_analysed(cls, batches: Iterable[AnalysedBatch], *, k1: float, b: float) -> BM25Index:
        """Index analysed batches, in corpus order (term ids follow the terms' first occurrence in the corpus).

        First pass: each batch's pairs are kept compactly (term id, document within the batch, count),
        term-major as the analysis sorted them, their term ids turned global. Second pass, once the document
        frequencies are known: each batch's weights are scattered into the final term-major arrays (no sort:
        a term's pairs are together and in document order) and the batch is freed, so the peak is about one
        copy of the pairs.
        """
        vocabularies: list[pa.StringArray] = []
        pending: list[_BatchPairs] = []
        for batch in batches:
            vocabularies.append(batch.vocabulary)
            pending.append(batch.pairs)
        vocabulary = _merge_vocabularies(vocabularies, pending)
        n_docs = sum(len(p.lengths) for p in pending)
        n_scored = sum(int(np.count_nonzero(p.lengths)) for p in pending)  # Lucene's docCount
        df = np.zeros(len(vocabulary), dtype=np.int64)
        for pairs in pending:
            df += np.bincount(pairs.terms, minlength=len(vocabulary))
        indptr = np.concatenate([[0], np.cumsum(df)])
        documents = np.empty(indptr[-1], dtype=np.int32)
        weights = np.empty(indptr[-1], dtype=np.float32)
        if not indptr[-1]:
            return cls(vocabulary, indptr, documents, weights, n_docs)
        idf = np.log1p((n_scored - df + 0.5) / (df + 0.5)).astype(np.float32)
        avgdl = sum(float(p.lengths.sum()) for p in pending) / n_scored
        cursor = indptr[:-1].copy()  # next free entry of each term
        first_doc = 0
        while pending:
            pairs = pending.pop(0)
            batch_first, first_doc = first_doc, first_doc + len(pairs.lengths)
            if not len(pairs.terms):  # documents without terms (stopwords only, or empty)
                continue
            tf = pairs.counts.astype(np.float32)
            inverse_norm = _inverse_norms(lucene_length(pairs.lengths), k1, b, avgdl)
            # Lucene's float32 form of idf * tf / (tf + norm), so scores tie where Lucene's do.
            idf_t = idf[pairs.terms]
            weight = idf_t - idf_t / (np.float32(1) + tf * inverse_norm[pairs.documents])
            # The batch is term-major already: each term's pairs go, in order, to the term's next free entries.
            starts = np.flatnonzero(np.r_[True, pairs.terms[1:] != pairs.terms[:-1]])
            sizes = np.diff(np.r_[starts, len(pairs.terms)])
            position = cursor[pairs.terms] + (np.arange(len(pairs.terms)) - np.repeat(starts, sizes))
            documents[position] = pairs.documents.astype(np.int32) + batch_first
            weights[position] = weight
            cursor[pairs.terms[starts]] += sizes
        return cls(vocabulary, indptr, documents, weights, n_docs)

    def term_ids(self, terms: Iterable[str]) -> list[int]:
        """Vocabulary ids of the terms the index knows (repeats kept: a repeated query term counts twice)."""
        return [self.vocabulary[t] for t in terms if t in self.vocabulary]

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
