"""The randomization tests' p-values against exact enumeration in integer (or rational) arithmetic (issue 28).

Per-query metrics live on grids (nDCG@1 is 0 or 1, recall@10 is j / r), and co*cktail's comparisons
have a handful of differing queries among hundreds of ties. The float p-value must then be the exact
one -- every sign vector of the differing queries enumerated, ties judged exactly -- for every seed,
and on continuous random vectors it must be scipy's exact permutation p-value.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from airbench_mteb.metrics import benchmark_paired_test, paired_randomization_test, relative_delta_difference_test

PROPERTY = settings(max_examples=30, deadline=None)


def sign_vectors(k: int) -> np.ndarray:
    """All 2^k vectors of ±1 as an int64 matrix."""
    return 1 - 2 * ((np.arange(2**k)[:, None] >> np.arange(k)) & 1)


def exact_sign_flip_p(weighted: np.ndarray) -> Fraction:
    """Share of sign vectors s with |s · x| >= |1 · x| for integer x, in integer arithmetic."""
    sums = np.abs(sign_vectors(weighted.size) @ weighted.astype(np.int64))
    return Fraction(int(np.count_nonzero(sums >= abs(int(weighted.sum())))), 2**weighted.size)


def grid_pair(rng: np.random.Generator, n: int, k: int, denominator: int) -> tuple[np.ndarray, np.ndarray,
                                                                                np.ndarray]:
    """Numerators (0..denominator) of two models' per-query values, equal except on ``k`` random queries; the
    float values are numerator / denominator, rounded like real metric values."""
    y = rng.integers(0, denominator + 1, n)
    x = y.copy()
    differing = rng.choice(n, size=k, replace=False)
    for q in differing:
        x[q] = rng.choice([v for v in range(denominator + 1) if v != y[q]])
    return x, y, differing


@PROPERTY
@given(st.integers(0, 20), st.sampled_from([1, 3, 7, 10]), st.integers(200, 400), st.integers(0, 2**32 - 1))
def test_property_few_differing_queries_among_ties_give_the_exact_p_for_every_seed(k, denominator, n, seed):
    rng = np.random.default_rng(seed)
    x, y, differing = grid_pair(rng, n, k, denominator)
    result = paired_randomization_test(x / denominator, y / denominator, n_resamples=2**20, seed=seed)
    assert result.exact and result.n_resamples == 2**k
    assert Fraction(result.p_value) == exact_sign_flip_p((x - y)[differing])
    assert result.statistic == pytest.approx((x - y).sum() / denominator / n, abs=1e-15)


@PROPERTY
@given(st.integers(0, 13), st.integers(0, 2**32 - 1))
def test_property_the_default_draws_are_exact_when_at_most_13_queries_differ(k, seed):
    x, y, differing = grid_pair(np.random.default_rng(seed), 300, k, 10)
    result = paired_randomization_test(x / 10, y / 10, seed=seed)
    assert result.exact and Fraction(result.p_value) == exact_sign_flip_p((x - y)[differing])


def test_six_equal_differences_among_tied_queries_give_p_1_32_for_every_seed():
    """The issue's synthetic case: 3 % of seeds gave 0.0146 where the exact p is 2 / 64 = 0.03125."""
    rng = np.random.default_rng(28)
    b = rng.random(300)
    a = b.copy()
    a[rng.choice(300, 6, replace=False)] += 0.0123
    assert {paired_randomization_test(a, b, seed=seed).p_value for seed in range(60)} == {0.03125}


def test_one_differing_query_among_322_ties_gives_p_one():
    """co*cktail NFCorpus test, mixed nDCG@1, BM25 against BM25-words: 1/322/0 wins/ties/losses was reported
    p = 0.4899; a single difference and its flip are equally extreme, so p = 1."""
    rng = np.random.default_rng(3)
    a = (rng.random(323) < 0.43).astype(float)
    b = a.copy()
    a[17], b[17] = 1.0, 0.0
    assert paired_randomization_test(a, b).p_value == 1.0
    assert paired_randomization_test(a, b).exact


def test_four_wins_one_loss_of_recall_among_ties_gives_the_exact_p():
    """NFCorpus dev, llm recall@10, 4/319/1: reported 0.2176 against the exact p of 8 / 32 = 0.25."""
    rng = np.random.default_rng(4)
    relevant = rng.integers(1, 12, 324)
    hits = np.minimum(rng.integers(0, 6, 324), relevant)
    other = hits.copy()
    for q, change in zip(rng.choice(324, 5, replace=False), (1, 1, 1, 1, -1), strict=True):
        other[q] = hits[q] + change if 0 <= hits[q] + change <= relevant[q] else hits[q] - change
    numerators = other - hits
    a, b = other / relevant, hits / relevant
    # the exact p of the differences j / r over the common denominator of their recalls
    scale = math.lcm(*(int(r) for r in relevant[numerators != 0]))
    expected = exact_sign_flip_p((numerators * (scale // relevant))[numerators != 0])
    assert Fraction(paired_randomization_test(a, b).p_value) == expected


@PROPERTY
@given(st.integers(2, 12), st.integers(0, 2**32 - 1))
def test_property_continuous_vectors_give_scipys_exact_p(n, seed):
    rng = np.random.default_rng(seed)
    a, b = rng.random(n), rng.random(n)
    theirs = stats.permutation_test((a, b), lambda x, y, axis: np.mean(x - y, axis=axis), permutation_type="samples",
                                    n_resamples=9999).pvalue
    assert paired_randomization_test(a, b).p_value == theirs


@PROPERTY
@given(st.lists(st.integers(40, 150), min_size=1, max_size=4), st.integers(0, 13), st.integers(0, 2**32 - 1))
def test_property_benchmark_test_with_few_differing_queries_is_exact(sizes, k, seed):
    """Task t weighs its queries 1 / (T n_t): over lcm(n_t) the statistic is an integer sum."""
    rng = np.random.default_rng(seed)
    x, y, differing = grid_pair(rng, sum(sizes), k, 1)
    task_of = np.repeat(np.arange(len(sizes)), sizes)
    bounds = np.cumsum((0, *sizes))
    split = [slice(lo, hi) for lo, hi in itertools.pairwise(bounds)]
    result = benchmark_paired_test([x[s] * 1.0 for s in split], [y[s] * 1.0 for s in split], seed=seed)
    common = math.lcm(*sizes)
    weighted = (x - y)[differing] * (common // np.array(sizes)[task_of[differing]])
    assert result.exact and Fraction(result.p_value) == exact_sign_flip_p(weighted)


def exact_delta(human: int, llm: int) -> Fraction:
    return Fraction(0) if human + llm == 0 else Fraction(200 * (human - llm), human + llm)


def exact_bias_swap_p(a: np.ndarray, b: np.ndarray) -> Fraction:
    """Exact p of the swap test of Δ_A - Δ_B over integer (human, llm) rows (the 1 / n of the means cancels in Δ)."""
    differing = np.flatnonzero((a != b).any(axis=1))
    base_a, base_b = a.sum(axis=0) - a[differing].sum(axis=0), b.sum(axis=0) - b[differing].sum(axis=0)
    statistics = []
    for swaps in itertools.product((False, True), repeat=differing.size):
        mean_a, mean_b = base_a.copy(), base_b.copy()
        for q, swapped in zip(differing, swaps, strict=True):
            mean_a += b[q] if swapped else a[q]
            mean_b += a[q] if swapped else b[q]
        statistics.append(abs(exact_delta(*map(int, mean_a)) - exact_delta(*map(int, mean_b))))
    return Fraction(sum(value >= statistics[0] for value in statistics), len(statistics))


@PROPERTY
@given(st.integers(0, 10), st.integers(50, 300), st.sampled_from([1, 4]), st.integers(0, 2**32 - 1))
def test_property_source_bias_swap_test_with_few_differing_queries_is_exact(k, n, top, seed):
    """nDCG@1-like (0/1) or graded per-query values: coincidences of Δ (3:1 and 6:2 both give Δ = 100) tie exactly."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, top + 1, (n, 2))
    b = a.copy()
    for q in rng.choice(n, size=k, replace=False):
        while (b[q] == a[q]).all():
            b[q] = rng.integers(0, top + 1, 2)
    result = relative_delta_difference_test(a[:, 0] / top, a[:, 1] / top, b[:, 0] / top, b[:, 1] / top, seed=seed)
    assert result.exact and result.n_resamples == 2**k
    assert Fraction(result.p_value) == exact_bias_swap_p(a, b)
