"""Rank-safe pruning of a BM25 top-k search (MaxScore, term at a time): the same ``k`` documents, float32 scores and
tie order as scoring every posting, with less of the postings decoded.

Each query term has an upper bound of its weights: its IDF for a term of one block, else the largest of its blocks'
bounds, read from the skip data at the start of its postings (format 4: each block's last document and bound byte,
:func:`~airbench_mteb.models.bm25.codec.read_skips`). Terms are scored from the largest bound down, every posting
added to the float64 accumulator as the exhaustive search adds it. After each term, ``theta``, the ``k``-th best
float32 score so far, is a lower bound of the final ``k``-th score (weights are never negative), and ``rest``, the
sum of the bounds of the terms not yet scored (repeats counted), bounds what any document can still gain. Once
``float32(rest) < theta``, no document without a score yet can enter the top ``k``: the remaining terms only add to
the candidates, documents whose score plus ``rest`` still reaches ``theta`` in float32, and a block is decoded only
where a candidate lies in its document range and could reach ``theta`` with the block's bound
(:func:`_accumulate_candidates`); the others are passed over from their headers alone. Every comparison that
drops a document or a block is strict and made on an upper bound rounded up by :data:`_MARGIN`, so a document tied
with the ``k``-th score is never dropped and the tie order (position, or ``pyserini_ties``' smallest ids) sees the
same documents. Float64 sums of these float32 weights are exact in any order while they span less than 2^29
(:meth:`~airbench_mteb.models.bm25.index.BM25Index.search_block`), so scoring terms out of id order gives the same
numbers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numba import njit

from airbench_mteb.models.bm25.codec import BAD_BLOCK, BAD_LENGTH, BLOCK, BOUNDS, decode_block, read_skips, skip_packed
from airbench_mteb.models.bm25.format import lucene_weight

BAD_BOUND = -5  # a decoded posting's weight above its block's bound byte
_MARGIN = 1 + 2.0**-30  # far above the float64 rounding of a few sums: an upper bound stays one


@njit(cache=True)
def _accumulate_candidates(data: np.ndarray, start: int, bounds_at: int, end: int, count: int, lasts: np.ndarray,
                           idf: np.float32, repeats: float, inverse_norm: np.ndarray, norms: np.ndarray,
                           n_documents: int, max_frequency: int, candidates: np.ndarray, scores: np.ndarray,
                           theta: np.float32, rest: float) -> int:
    """Add the weights of a term (its bytes ``start:end``, its bound bytes at ``bounds_at``, -1 for a term of one
    block: none) to the ``candidates`` (positive ``scores``, ascending) alone, decoding only the blocks where one of
    them could still reach ``theta`` (``rest``: the bounds of the terms after this one); 0 or an error code."""
    blocks = len(lasts) + 1
    documents = np.empty(BLOCK, dtype=np.int64)
    frequencies = np.empty(BLOCK, dtype=np.int64)
    pos, previous, at = bounds_at + blocks if bounds_at >= 0 else start, -1, 0
    for block in range(blocks):
        n = min(BLOCK, count - block * BLOCK)
        last = lasts[block] if block < blocks - 1 else n_documents - 1
        top = 0.0  # the best candidate score in the block's document range
        while at < len(candidates) and candidates[at] <= last:
            top = max(top, scores[candidates[at]])
            at += 1
        bound = BOUNDS[data[bounds_at + block] if bounds_at >= 0 else len(BOUNDS) - 1]
        if top == 0.0 or np.float32((top + repeats * np.float64(lucene_weight(idf, bound)) + rest) * _MARGIN) < theta:
            pos = skip_packed(data, pos, end, n)
            if pos >= 0:
                pos = skip_packed(data, pos, end, n)
            if pos < 0:
                return pos
        else:
            pos = decode_block(data, pos, end, n, previous, n_documents, max_frequency, documents, frequencies)
            if pos < 0:
                return pos
            if block < blocks - 1 and documents[n - 1] != last:
                return BAD_BLOCK
            for i in range(n):
                x = np.float32(frequencies[i]) * inverse_norm[norms[documents[i]]]
                if x > bound:
                    return BAD_BOUND
                if scores[documents[i]] > 0.0:  # a document scored already (only a candidate's score is read)
                    scores[documents[i]] += repeats * np.float64(lucene_weight(idf, x))
        previous = last
    return 0 if pos == end else BAD_LENGTH


@dataclass
class QueryTerm:
    """A query term as the pruned search reads it."""

    term: int
    repeats: int
    count: int  # postings
    start: int  # its bytes in ``postings``
    end: int
    idf: np.float32
    lasts: np.ndarray  # int64, the last document of each block but the last (empty for a term of one block)
    bounds_at: int  # where its blocks' bound bytes start (-1 for a term of one block: none)
    bound: np.float32  # of every weight of the term


def query_term(postings: np.ndarray, term: int, repeats: int, place: tuple[int, int, int], idf: np.float32,
               n_documents: int) -> QueryTerm | int:
    """The term with its skip data read (its bytes checked against their checksums before), or an error code."""
    count, start, end = place
    if count <= BLOCK:
        return QueryTerm(term, repeats, count, start, end, idf, np.zeros(0, np.int64), -1, idf)
    lasts = np.empty(-(-count // BLOCK) - 1, dtype=np.int64)
    bounds_at = read_skips(postings, start, end, count, n_documents, lasts)
    if bounds_at < 0:
        return bounds_at
    bound = lucene_weight(idf, BOUNDS[int(postings[bounds_at:bounds_at + len(lasts) + 1].max())])
    return QueryTerm(term, repeats, count, start, end, idf, lasts, bounds_at, bound)


def _kth(scores: np.ndarray, k: int) -> np.float32:
    """The ``k``-th largest of the float64 ``scores`` rounded to float32; 0 for fewer than ``k``."""
    if len(scores) < k:
        return np.float32(0)
    found = scores.astype(np.float32)
    return found[np.argpartition(found, len(found) - k)[len(found) - k]]


@njit(cache=True)
def _above(scores: np.ndarray, documents: np.ndarray, bound: np.float32) -> int:
    """How many ``documents`` score above ``bound`` in float32: at least ``k`` just where the ``k``-th best does."""
    count = 0
    for document in documents:
        count += np.float32(scores[document]) > bound
    return count


def _candidates(scores: np.ndarray, documents: np.ndarray, theta: np.float32, rest: float) -> np.ndarray:
    """The ``documents`` (ascending) whose score plus ``rest`` may still reach ``theta``: the others are left out
    of the result (what the remaining terms add to them is never read)."""
    return np.sort(documents[((scores[documents] + rest) * _MARGIN).astype(np.float32) >= theta])


@njit(cache=True)
def accumulate(documents: np.ndarray, frequencies: np.ndarray, idf: np.float32, inverse_norm: np.ndarray,
               norms: np.ndarray, repeats: float, scores: np.ndarray, touched: np.ndarray, count: int) -> int:
    """Add one term's weights (``repeats`` times: a query term given twice counts twice) to ``scores`` (float64,
    as Lucene sums a query's clauses in double); documents scored first here are appended to ``touched``. The
    weight is :func:`~airbench_mteb.models.bm25.format.lucene_weight`."""
    for i in range(len(documents)):
        document = documents[i]
        weight = lucene_weight(idf, np.float32(frequencies[i]) * inverse_norm[norms[document]])
        before = scores[document]
        scores[document] = before + repeats * np.float64(weight)
        if before == 0.0 and scores[document] > 0.0:  # weights are never negative: one 0 -> positive step each
            touched[count] = document
            count += 1
    return count


@dataclass
class Scoring:
    """What scoring a query needs of the index (:class:`~airbench_mteb.models.bm25.index.BM25Index`)."""

    postings: np.ndarray
    inverse_norm: np.ndarray
    norms: np.ndarray
    n_documents: int
    max_frequency: int
    decoded: Callable[[QueryTerm], tuple[np.ndarray, np.ndarray]]  # a term's documents and frequencies, checked
    damage: Callable[[QueryTerm, int], Exception]  # the IndexDamage of a term's error code


def scored(scoring: Scoring, terms: list[QueryTerm], k: int | None, scores: np.ndarray,
           touched: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The positions (int64) and float32 scores of the documents sharing a term with the query, those that cannot
    be among the ``k`` best left out (``None``: every one; see the module), in ``scores`` and ``touched`` (zeros and
    room for every document; left zeros)."""
    if k is not None:  # the largest bounds first: the sooner theta outgrows what is left
        terms = sorted(terms, key=lambda term: -term.repeats * float(term.bound))
    gains = np.array([term.repeats * np.float64(term.bound) for term in terms], dtype=np.float64)
    rests = np.append(np.cumsum(gains[::-1])[::-1][1:], 0.0)[:len(gains)]  # the bounds of the terms after each
    count, candidates = 0, None
    try:
        for term, rest in zip(terms, rests.tolist(), strict=True):
            if candidates is None:
                documents, frequencies = scoring.decoded(term)
                count = accumulate(documents, frequencies, term.idf, scoring.inverse_norm, scoring.norms,
                                   float(term.repeats), scores, touched, count)
                # k documents above what is left are needed for theta to shut out the unscored ones
                if rest and k is not None and count >= k and _above(scores, touched[:count],
                                                                     np.float32(rest * _MARGIN)) >= k:
                    theta = _kth(scores[touched[:count]], k)  # above what any document without a score can reach
                    candidates = _candidates(scores, touched[:count], theta, rest)
                continue
            status = _accumulate_candidates(scoring.postings, term.start, term.bounds_at, term.end, term.count, term.lasts,
                                            term.idf, float(term.repeats), scoring.inverse_norm, scoring.norms,
                                            scoring.n_documents, scoring.max_frequency, candidates, scores,
                                            theta, rest)
            if status:
                raise scoring.damage(term, status)
            if rest:
                theta = _kth(scores[candidates], k)
                candidates = _candidates(scores, candidates, theta, rest)
        positions = (touched[:count] if candidates is None else candidates).astype(np.int64)  # ``touched``: reused
        found = scores[positions].astype(np.float32)
    finally:
        scores[touched[:count]] = 0.0
    keep = found > 0  # Lucene's IDF > 0: positive means a shared term
    return positions[keep], found[keep]
