"""An Okapi BM25 index built from a stream of tokenised batches, held as numpy arrays (no Python objects per token).

The index is term-major (CSC): for each term, the documents that contain it and their precomputed
weight ``idf(t) * tf / (tf + k1 * (1 - b + b * dl / avgdl))`` with Lucene's
``idf(t) = log(1 + (N - df + 0.5) / (df + 0.5))`` (as ``bm25s``' "lucene" method and Anserini).

Memory: while building, 12 bytes per (document, distinct term) pair plus one batch of tokens; the
finished index keeps 8 bytes per pair, 4 per document and the vocabulary (a dict, which grows with
the number of distinct terms, not with the corpus). The conversion to CSC briefly holds both forms.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np


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
        from scipy import sparse

        vocabulary: dict[str, int] = {}
        docs, terms, counts, lengths = [], [], [], []
        first = 0
        for batch in batches:
            ids = [[vocabulary.setdefault(term, len(vocabulary)) for term in doc] for doc in batch]
            sizes = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
            flat = np.fromiter(chain.from_iterable(ids), dtype=np.int64, count=int(sizes.sum()))
            pairs, tf = np.unique(np.repeat(np.arange(first, first + len(ids), dtype=np.int64), sizes) << 32 | flat,
                                  return_counts=True)
            docs.append((pairs >> 32).astype(np.int32))
            terms.append((pairs & 0xFFFFFFFF).astype(np.int32))
            counts.append(tf.astype(np.float32))
            lengths.append(sizes.astype(np.float32))
            first += len(ids)
        if not vocabulary:
            return cls(vocabulary, np.zeros(1, dtype=np.int64), np.zeros(0, np.int32), np.zeros(0, np.float32), first)
        doc, term, weight = np.concatenate(docs), np.concatenate(terms), np.concatenate(counts)
        del docs, terms, counts
        doc_length = np.concatenate(lengths)
        df = np.bincount(term, minlength=len(vocabulary))
        idf = np.log1p((first - df + 0.5) / (df + 0.5)).astype(np.float32)
        norm = np.float32(k1) * (np.float32(1 - b) + np.float32(b) * doc_length / np.float32(doc_length.mean()))
        weight /= weight + norm[doc]
        weight *= idf[term]
        # scipy's COO -> CSC conversion is a counting sort with 32-bit indices: no 64-bit argsort of every pair
        matrix = sparse.csc_matrix((weight, (doc, term)), shape=(first, len(vocabulary)), dtype=np.float32)
        matrix.sort_indices()
        return cls(vocabulary, matrix.indptr.astype(np.int64), matrix.indices.astype(np.int32, copy=False),
                   matrix.data, first)

    def term_ids(self, terms: Iterable[str]) -> list[int]:
        """Vocabulary ids of the terms the index knows (repeats kept: a repeated query term counts twice)."""
        return [self.vocabulary[t] for t in terms if t in self.vocabulary]

    def scores(self, term_ids: Sequence[int]) -> np.ndarray:
        """The BM25 score of every document for a query given as term ids."""
        out = np.zeros(self.num_documents, dtype=np.float32)
        for t in term_ids:
            start, end = self.indptr[t], self.indptr[t + 1]
            out[self.documents[start:end]] += self.weights[start:end]  # one entry per document within a term
        return out

    @property
    def nbytes(self) -> int:
        return self.indptr.nbytes + self.documents.nbytes + self.weights.nbytes
