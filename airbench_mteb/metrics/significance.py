r"""Paired significance tests over per-query scores, and multiple-comparison corrections.

Two models scored on the same queries give two paired vectors ``a`` and ``b``. The tests here
ask whether the mean difference could be chance:

- :func:`paired_randomization_test`: two-sided sign-flip (paired permutation) test. Under the
  null hypothesis the labels A and B of each query are exchangeable, so each query's pair is
  swapped with probability 1/2 -- the difference ``d_q`` changes sign -- and the statistic
  (the mean difference) recomputed. With ``N`` random sign vectors
  :math:`p = (\#\{|t^*| \ge |t|\} + 1) / (N + 1)` (never 0; Phipson & Smyth, 2010); when
  :math:`2^n \le N` all :math:`2^n` sign vectors are enumerated and
  :math:`p = \#\{|t^*| \ge |t|\} / 2^n` exactly, which is ``scipy.stats.permutation_test(...,
  permutation_type="samples")``'s exact p-value. As in scipy, resampled statistics within a
  relative ``100 * eps`` of the observed one count as ties (theoretically equal, numerically not).
- :func:`paired_t_test_p`: ``scipy.stats.ttest_rel``'s p-value.
- :func:`adjust_p_values`: Holm, Bonferroni or Benjamini-Hochberg adjusted p-values, as
  ``statsmodels.stats.multitest.multipletests`` gives them.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterator
from typing import Literal, NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from airbench_mteb.metrics.bootstrap import check_resampling, paired_vectors, single_threaded_blas

Correction = Literal["holm", "bonferroni", "bh", "none"]
CORRECTIONS: tuple[Correction, ...] = ("holm", "bonferroni", "bh", "none")

# (means of A, means of B), each (..., m) -> the statistic, shaped (...). Swapping A and B must negate it.
SwapStatistic = Callable[[np.ndarray, np.ndarray], np.ndarray]

_CHUNK_CELLS = 1 << 20  # sign vectors x queries per chunk (8 MB of float64)
_TIE_TOLERANCE = 100 * np.finfo(float).eps  # scipy.stats.permutation_test's relative tolerance for ties


class RandomizationTest(NamedTuple):
    """A paired randomization test's result; ``n_resamples`` is ``2**n`` when the test was exact."""

    p_value: float
    statistic: float
    n_resamples: int
    exact: bool
    seed: int


class WinsTiesLosses(NamedTuple):
    """Queries where a scores higher than b, the same, lower."""

    wins: int
    ties: int
    losses: int


def _swap_chunks(n: int, n_resamples: int, rng: np.random.Generator, exact: bool) -> Iterator[np.ndarray]:
    """0/1 matrices, one row per null draw: 1 swaps that query's A and B. Exact: every row of 2**n, in order."""
    total = 2**n if exact else n_resamples
    rows = max(1, _CHUNK_CELLS // n)
    for start in range(0, total, rows):
        stop = min(total, start + rows)
        if exact:
            yield ((np.arange(start, stop)[:, None] >> np.arange(n)) & 1).astype(float)
        else:
            yield rng.integers(0, 2, size=(stop - start, n), dtype=np.int8).astype(float)


def swap_test(a: np.ndarray, b: np.ndarray, weights: np.ndarray, statistic: SwapStatistic, *,
              n_resamples: int = 9999, seed: int = 0) -> RandomizationTest:
    r"""Two-sided paired permutation test of any ``statistic`` of the weighted column means of A and B.

    ``a`` and ``b`` are (queries x m) matrices of the same queries; the means are ``weights @ a``
    and ``weights @ b``. Each null draw swaps the rows of a random subset of queries between A
    and B (each query with probability 1/2, independently), which moves ``weights_q (b_q - a_q)``
    from B's means to A's: one matrix product per chunk of draws. The p-value is the share of
    draws whose ``|statistic|`` reaches the observed one (see the module docstring).
    """
    check_resampling(n_resamples, seed)
    mean_a, mean_b = weights @ a, weights @ b
    shift = (b - a) * weights[:, None]
    observed = float(statistic(mean_a, mean_b))
    threshold = abs(observed) - _TIE_TOLERANCE * abs(observed)
    n = len(weights)
    exact = n < 63 and 2**n <= n_resamples  # (the exact sign vectors are bit patterns of int64 row numbers)
    count = 0
    with single_threaded_blas():
        for swaps in _swap_chunks(n, n_resamples, np.random.default_rng(seed), exact):
            moved = swaps @ shift
            count += int(np.count_nonzero(np.abs(statistic(mean_a + moved, mean_b - moved)) >= threshold))
    p_value = count / 2**n if exact else (count + 1) / (n_resamples + 1)
    return RandomizationTest(min(1.0, p_value), observed, 2**n if exact else int(n_resamples), exact, int(seed))


def mean_difference(mean_a: np.ndarray, mean_b: np.ndarray) -> np.ndarray:
    """The statistic of the paired tests: mean of A minus mean of B (first column)."""
    return (mean_a - mean_b)[..., 0]


def paired_randomization_test(a: ArrayLike, b: ArrayLike, *, n_resamples: int = 9999,
                              seed: int = 0) -> RandomizationTest:
    """Two-sided sign-flip test of mean(a) - mean(b) over paired per-query vectors (module docstring).

    Identical vectors give p = 1; swapping a and b negates the statistic and keeps p.
    """
    x, y = paired_vectors(a, b)
    return swap_test(x[:, None], y[:, None], np.full(x.size, 1 / x.size), mean_difference, n_resamples=n_resamples,
                     seed=seed)


def paired_t_test_p(a: ArrayLike, b: ArrayLike) -> float:
    """``scipy.stats.ttest_rel(a, b).pvalue``, except 1.0 (not NaN) when a equals b on every query.

    Differences that are all equal but not zero give t = ±inf and p = 0, as in scipy.
    """
    x, y = paired_vectors(a, b)
    if np.array_equal(x, y):
        return 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # scipy's "nearly identical data" notice: p is still right
        return float(stats.ttest_rel(x, y).pvalue)


def effect_size(a: ArrayLike, b: ArrayLike) -> float:
    """Standardised mean difference of paired vectors, mean(d) / std(d, ddof=1) with d = a - b (Cohen's d_z).

    0.0 when every difference is 0; ±inf (the sign of the mean) when the differences are all equal
    but not zero: a constant shift is infinitely many standard deviations, as the t statistic is.
    """
    x, y = paired_vectors(a, b)
    differences = x - y
    if np.ptp(differences) == 0:
        return math.copysign(math.inf, differences[0]) if differences[0] else 0.0
    return float(differences.mean() / differences.std(ddof=1))


def wins_ties_losses(a: ArrayLike, b: ArrayLike) -> WinsTiesLosses:
    """How many queries a scores higher than b, exactly the same, lower."""
    x, y = paired_vectors(a, b)
    return WinsTiesLosses(int(np.count_nonzero(x > y)), int(np.count_nonzero(x == y)), int(np.count_nonzero(x < y)))


def adjust_p_values(p_values: ArrayLike, method: Correction = "holm") -> np.ndarray:
    r"""Adjusted p-values of a family of ``m`` tests, in the input order (statsmodels' ``multipletests``).

    With :math:`p_{(1)} \le \dots \le p_{(m)}` the sorted p-values:

    - ``holm`` (step-down): :math:`\tilde p_{(i)} = \min(1, \max_{j \le i} (m - j + 1)\, p_{(j)})`;
    - ``bonferroni``: :math:`\min(1, m\, p_i)`;
    - ``bh`` (Benjamini-Hochberg, step-up, controls the false discovery rate):
      :math:`\tilde p_{(i)} = \min(1, \min_{j \ge i} m\, p_{(j)} / j)`;
    - ``none``: the raw p-values.

    Holm and Bonferroni never lower a p-value; all three keep the order of the raw p-values.
    """
    if method not in CORRECTIONS:
        raise ValueError(f"unknown correction {method!r}; use one of {', '.join(CORRECTIONS)}")
    p = np.asarray(p_values, dtype=float)
    if p.ndim != 1:
        raise ValueError(f"p-values must be a vector, got an array of shape {p.shape}")
    outside = np.flatnonzero(~((p >= 0) & (p <= 1)))
    if outside.size:
        raise ValueError(f"p-value {outside[0]} is {p[outside[0]]}: p-values must be in [0, 1]")
    m = p.size
    if method == "none" or m == 0:
        return p.copy()
    if method == "bonferroni":
        return np.minimum(1.0, m * p)
    order = np.argsort(p, kind="stable")
    ranked = p[order]
    if method == "holm":
        adjusted = np.maximum.accumulate((m - np.arange(m)) * ranked)
    else:
        adjusted = np.minimum.accumulate((m / np.arange(1, m + 1) * ranked)[::-1])[::-1]
    result = np.empty(m)
    result[order] = np.minimum(1.0, adjusted)
    return result
