"""Rank-safe pruning of BM25's top-k search: the same documents, float32 scores and order as scoring every posting
(ties at the cut-off by position, or by the smallest ids as ``pyserini_ties`` keeps them), on small corpora full of
exact ties and terms of several blocks; skip data that lies is damage, never a wrong result."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from airbench_mteb.models.bm25 import index as index_module
from airbench_mteb.models.bm25 import prune
from airbench_mteb.models.bm25.codec import BAD_BLOCK, BLOCK, BOUNDS, ForCodec, read_skips
from airbench_mteb.models.bm25.index import BM25Index


@pytest.fixture(autouse=True, scope="module")
def _pruning_at_any_size() -> Iterator[None]:
    """Pruning for every query of these small corpora (the index prunes only queries of many postings per result)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(index_module, "_PRUNED_POSTINGS", 0)
        yield


def _corpus(seed: int, documents: int, words: int, copies: bool) -> list[list[str]]:
    """Zipf-like documents of 1 to 6 terms; with ``copies``, drawn from 30 texts (so many exact ties)."""
    rng = np.random.default_rng(seed)
    vocabulary = [f"w{i}" for i in range(words)]
    odds = 1 / np.arange(1, words + 1)
    texts = [rng.choice(vocabulary, size=int(rng.integers(1, 7)), p=odds / odds.sum()).tolist()
             for _ in range(30 if copies else documents)]
    return [texts[i] for i in rng.integers(0, len(texts), size=documents)] if copies else texts


def _expected(index: BM25Index, terms: list[int], k: int, rank: np.ndarray | None) -> tuple[list[int], list[float]]:
    """Every document scored (:meth:`BM25Index.scores`), the ``k`` best by score then position, those tied at the
    ``k``-th score kept by ``rank`` (smallest first) where given, else by position."""
    scores = index.scores(terms)
    positions = np.flatnonzero(scores > 0)
    if len(positions) > k:
        kth = np.sort(scores[positions])[::-1][k - 1]
        above = positions[scores[positions] > kth]
        tied = sorted(positions[scores[positions] == kth].tolist(), key=lambda p: rank[p] if rank is not None else p)
        positions = np.concatenate([above, tied[:k - len(above)]]).astype(np.int64)
    best = sorted(positions.tolist(), key=lambda p: (-scores[p], p))
    return best, scores[best].tolist()


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), documents=st.integers(1, 700), words=st.integers(1, 9), copies=st.booleans(),
       queries=st.lists(st.lists(st.integers(0, 9), min_size=1, max_size=6), min_size=1, max_size=8),
       k=st.integers(1, 40) | st.sampled_from([100, 1000]), pyserini_ties=st.booleans())
def test_pruned_search_gives_what_scoring_every_posting_gives(seed: int, documents: int, words: int, copies: bool,
                                                              queries: list[list[int]], k: int,
                                                              pyserini_ties: bool) -> None:
    index = BM25Index.build([_corpus(seed, documents, words, copies)], k1=0.9, b=0.4)
    term_ids = [index.term_ids(f"w{word}" for word in query) for query in queries]  # repeats kept, unknown dropped
    rank = np.random.default_rng(seed).permutation(documents) if pyserini_ties else None
    tie_order = (lambda positions: np.argsort(rank[positions], kind="stable")) if rank is not None else None
    for pruning in (True, False):
        index.pruning = pruning
        for terms, (positions, scores) in zip(term_ids, index.search(term_ids, k, tie_order), strict=True):
            best, best_scores = _expected(index, terms, k, rank)
            assert positions.tolist() == best
            assert scores.dtype == np.float32 and scores.tolist() == best_scores


def test_pruning_passes_over_blocks_and_keeps_the_result(monkeypatch: pytest.MonkeyPatch) -> None:
    index = BM25Index.build([_corpus(7, 5_000, 400, copies=False)], k1=0.9, b=0.4)
    queries = [index.term_ids(["w0", "w1", "w2", f"w{rare}"]) for rare in range(100, 140)]
    index.pruning = False
    expected = list(index.search(queries, 10))
    calls: list[int] = []
    accumulate_candidates = prune._accumulate_candidates

    def counted(*arguments: object) -> int:
        calls.append(1)
        return accumulate_candidates(*arguments)

    monkeypatch.setattr(prune, "_accumulate_candidates", counted)
    index.pruning = True
    for (positions, scores), (want, want_scores) in zip(index.search(queries, 10), expected, strict=True):
        assert positions.tolist() == want.tolist() and scores.tolist() == want_scores.tolist()
    assert calls  # the common terms were scored on the candidates alone


def _term() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One term of 3 blocks' postings (every other document of 700) encoded with skip data, and its inputs."""
    documents = np.arange(0, 2 * (2 * BLOCK + 50), 2, dtype=np.int32)
    frequencies = (np.arange(len(documents)) % 5 + 1).astype(np.uint32)
    inverse_norms = np.full(len(documents), 0.75, np.float32)
    data, _ = ForCodec.encode(documents, frequencies, np.array([len(documents)]), inverse_norms)
    return data, documents, frequencies


def test_skip_data_is_read_back_and_passed_over_by_decoding() -> None:
    data, documents, frequencies = _term()
    lasts = np.empty(2, np.int64)
    bounds_at = read_skips(data, 0, len(data), len(documents), 700, lasts)
    assert lasts.tolist() == [documents[BLOCK - 1], documents[2 * BLOCK - 1]]
    x = np.float32(5) * np.float32(0.75)  # every block's largest tf / norm
    codes = data[bounds_at:bounds_at + 3]
    assert (BOUNDS[codes] > x).all() and (BOUNDS[codes - 1] <= x).all()  # the least bound above it
    got, got_tf, status = ForCodec.decode(data, 0, len(data), len(documents), 700, 5, skips=True)
    assert status == 0 and got.tolist() == documents.tolist() and got_tf.tolist() == frequencies.tolist()


def test_skip_data_that_lies_is_damage() -> None:
    data, documents, _ = _term()
    lasts = np.empty(2, np.int64)
    bounds_at = read_skips(data, 0, len(data), len(documents), 700, lasts)
    moved = data.copy()
    moved[2] ^= 1  # the first block's last document, one off
    assert ForCodec.decode(moved, 0, len(moved), len(documents), 700, 5, skips=True)[2] == BAD_BLOCK
    assert read_skips(data, 0, len(data), len(documents), int(lasts[-1]) + 50, lasts) < 0  # beyond the corpus
    low = data.copy()
    low[bounds_at + 1] = 1  # the second block's bound below its weights
    status = prune._accumulate_candidates(low, 0, bounds_at, len(low), len(documents), lasts, np.float32(2.0), 1.0,
                                          np.full(256, 0.75, np.float32), np.zeros(700, np.uint8), 700, 5,
                                          documents.copy(), np.ones(700), np.float32(0), 0.0)
    assert status == prune.BAD_BOUND
