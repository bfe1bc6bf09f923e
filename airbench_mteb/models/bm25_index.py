"""An Okapi BM25 index built from a stream of tokenised batches, held as numpy arrays (no Python objects per token).

The index is term-major (CSC): for each term, the documents that contain it and their precomputed
weight ``idf(t) * tf / (tf + k1 * (1 - b + b * dl / avgdl))`` with Lucene's
``idf(t) = log(1 + (N - df + 0.5) / (df + 0.5))`` (as ``bm25s``' "lucene" method and Anserini). As in
Lucene's BM25Similarity, ``dl`` is the document's length as its one-byte norm stores it (exact below 24,
then 4 significant bits: see :func:`lucene_length`), while ``avgdl`` is exact; ``N`` and ``avgdl`` count
only documents with at least one term (Lucene's per-field document count).

Memory: while building, 6 bytes per (document, distinct term) pair and 8 per document, plus one batch
of tokens (8 per pair in a batch where some term occurs over 65,535 times in one document); the
finished index keeps 8 bytes per pair and the vocabulary (a dict, which grows with the number of
distinct terms, not with the corpus). The two overlap only while one is turned into the
other, batch by batch.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np

# Lucene's SmallFloat.intToByte4: byte values below 24 hold the length itself, the rest a 4-bit float.
_EXACT_LENGTHS = 24


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
    return one / (k1_ * ((one - b_) + b_ * lengths.astype(np.float32) / np.float32(avgdl)))


@dataclass
class _BatchPairs:
    """The distinct (document, term) pairs of one batch: 6 bytes per pair, plus 8 per document."""

    terms: np.ndarray  # int32 term id of each pair, grouped by document in corpus order
    counts: np.ndarray  # occurrences of the term in the document: uint16, or uint32 where one exceeds 65,535
    distinct: np.ndarray  # int32 number of pairs (distinct terms) of each document
    lengths: np.ndarray  # int32 number of terms of each document (its length for BM25)

    @classmethod
    def of(cls, docs: list[list[int]]) -> _BatchPairs:
        lengths = np.fromiter(map(len, docs), dtype=np.int64, count=len(docs))
        flat = np.fromiter(chain.from_iterable(docs), dtype=np.int64, count=int(lengths.sum()))
        pairs, counts = np.unique(np.repeat(np.arange(len(docs), dtype=np.int64), lengths) << 32 | flat,
                                  return_counts=True)
        distinct = np.bincount((pairs >> 32).astype(np.int64), minlength=len(docs)).astype(np.int32)
        # Exact counts (Lucene keeps term frequencies as ints), in 2 bytes unless a batch needs more.
        count_type = np.uint16 if not len(counts) or counts.max() <= np.iinfo(np.uint16).max else np.uint32
        return cls((pairs & 0xFFFFFFFF).astype(np.int32), counts.astype(count_type), distinct,
                   lengths.astype(np.int32))


@dataclass
class BM25Index:
    vocabulary: dict[str, int]
    indptr: np.ndarray  # int64, len(vocabulary) + 1: the entries of term t are indptr[t]:indptr[t + 1]
    documents: np.ndarray  # int32 document position of each entry, ascending within a term
    weights: np.ndarray  # float32 BM25 weight of each entry
    num_documents: int

    @classmethod
    def build(cls, batches: Iterable[Sequence[Sequence[str]]], *, k1: float, b: float) -> BM25Index:
        """Index documents given as batches of term lists, in corpus order.

        First pass: each batch becomes its (document, distinct term, count) pairs, kept compactly (term id
        and count; the documents follow from the per-document pair counts). Second pass, once the
        document frequencies are known: each batch's weights are scattered into the final term-major
        arrays and the batch is freed, so the peak is about one copy of the pairs.
        """
        vocabulary: dict[str, int] = {}
        pending: list[_BatchPairs] = []
        for batch in batches:
            ids = [[vocabulary.setdefault(term, len(vocabulary)) for term in doc] for doc in batch]
            pending.append(_BatchPairs.of(ids))
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
            docs = np.repeat(np.arange(first_doc, first_doc + len(pairs.lengths), dtype=np.int32), pairs.distinct)
            tf = pairs.counts.astype(np.float32)
            inverse_norm = _inverse_norms(lucene_length(pairs.lengths), k1, b, avgdl)
            # Lucene's float32 form of idf * tf / (tf + norm), so scores tie where Lucene's do.
            idf_t = idf[pairs.terms]
            weight = idf_t - idf_t / (np.float32(1) + tf * np.repeat(inverse_norm, pairs.distinct))
            order = np.argsort(pairs.terms, kind="stable")  # by term, documents ascending within a term
            terms = pairs.terms[order]
            starts = np.flatnonzero(np.r_[True, terms[1:] != terms[:-1]])
            rank = np.arange(len(terms)) - np.repeat(starts, np.diff(np.r_[starts, len(terms)]))
            position = cursor[terms] + rank
            documents[position] = docs[order]
            weights[position] = weight[order]
            cursor[terms[starts]] += np.diff(np.r_[starts, len(terms)])
            first_doc += len(pairs.lengths)
        return cls(vocabulary, indptr, documents, weights, n_docs)

    def term_ids(self, terms: Iterable[str]) -> list[int]:
        """Vocabulary ids of the terms the index knows (repeats kept: a repeated query term counts twice)."""
        return [self.vocabulary[t] for t in terms if t in self.vocabulary]

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
