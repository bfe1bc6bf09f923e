r"""Paired significance tests over per-query scores, and multiple-comparison corrections.

Two models scored on the same queries give two paired vectors ``a`` and ``b``. The tests here
ask whether the mean difference could be chance:

- :func:`paired_randomization_test`: two-sided sign-flip (paired permutation) test. Under the
  null hypothesis the labels A and B of each query are exchangeable, so each query's pair is
  swapped with probability 1/2 -- the difference ``d_q`` changes sign -- and the statistic
  (the mean difference, ``w · (s ∘ d)`` for the sign vector ``s``) recomputed. Queries with
  ``d_q = 0`` change nothing when flipped, so only the ``k`` queries that differ are flipped. With
  ``N`` random sign vectors :math:`p = (\#\{|t^*| \ge |t|\} + 1) / (N + 1)` (never 0; Phipson &
  Smyth, 2010); when :math:`2^k \le N` all :math:`2^k` sign vectors are enumerated and
  :math:`p = \#\{|t^*| \ge |t|\} / 2^k` exactly, which is ``scipy.stats.permutation_test(...,
  permutation_type="samples")``'s exact p-value over all :math:`2^n`. The observed statistic is
  computed the same way as its sign-flipped twins, and a twin within the rounding error of the
  inputs' scale (not the statistic's) counts as a tie (:func:`swap_test`).
- :func:`paired_t_test_p`: ``scipy.stats.ttest_rel``'s p-value.
- :func:`adjust_p_values`: Holm, Bonferroni or Benjamini-Hochberg adjusted p-values, as
  ``statsmodels.stats.multitest.multipletests`` gives them.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterator
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from airbench_mteb.metrics.bootstrap import check_resampling, paired_vectors
from airbench_mteb.metrics.resampling import CORRECTIONS, Correction

# (centre, shift (..., m), each mean's rounding bound (m,)) -> (the statistic of the means centre + shift of A and
# centre - shift of B, a bound on its rounding error), each shaped (...). Negating the shift must negate the statistic.
SwapStatistic = Callable[[np.ndarray, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]

_CHUNK_CELLS = 1 << 20  # sign vectors x queries per chunk (8 MB of float64)
_TIE_ULPS = 100  # per-query values equal in exact arithmetic may differ by this many ulps of the inputs' scale


class RandomizationTest(NamedTuple):
    """A paired randomization test's result; ``n_resamples`` is ``2**k`` (k: queries that differ) when it was exact."""

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


def _sign_chunks(k: int, n_resamples: int, rng: np.random.Generator, exact: bool) -> Iterator[np.ndarray]:
    """±1 matrices, one row per null draw over ``k`` queries: -1 swaps that query's A and B. Exact: every row of
    2**k, in order (row 0 swaps nothing)."""
    total = 2**k if exact else n_resamples
    rows = max(1, _CHUNK_CELLS // max(k, 1))
    for start in range(0, total, rows):
        stop = min(total, start + rows)
        if exact:
            swaps = (np.arange(start, stop)[:, None] >> np.arange(k)) & 1
        else:
            swaps = rng.integers(0, 2, size=(stop - start, k), dtype=np.int8)
        signs = swaps.astype(float)  # 1 - 2 * swaps, in place: the chunk's one float allocation
        signs *= -2.0
        signs += 1.0
        yield signs


def _shifts(signs: np.ndarray, half: np.ndarray) -> np.ndarray:
    """Each row's ``signs @ half``, column by column, as a sum along the row: every row (the observed one too) is
    summed by the same algorithm, so a row and its negation give exactly opposite shifts."""
    return np.stack([(signs * half[:, j]).sum(axis=1) for j in range(half.shape[1])], axis=-1)


def mean_difference(centre: np.ndarray, shift: np.ndarray, error: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The statistic of the paired tests: mean of A minus mean of B (first column), ``w · (s ∘ d)``, i.e. twice
    the shift, with its rounding bound."""
    return 2 * shift[..., 0], np.full(shift.shape[:-1], 2 * error[0])


def swap_test(a: np.ndarray, b: np.ndarray, weights: np.ndarray, statistic: SwapStatistic, *,
              n_resamples: int = 9999, seed: int = 0) -> RandomizationTest:
    r"""Two-sided paired permutation test of any ``statistic`` of the weighted column means of A and B.

    ``a`` and ``b`` are (queries x m) matrices of the same queries; the means are ``weights @ a``
    and ``weights @ b``. A null draw swaps the rows of a random subset of queries between A and B
    (each with probability 1/2): with the signs ``s`` (-1: swapped) the means are ``centre ± shift``,
    ``centre = (weights @ a + weights @ b) / 2`` and ``shift = Σ_q s_q w_q (a_q - b_q) / 2``. The
    observed statistic is the draw that swaps nothing, computed the same way as every other.

    Only the ``k`` queries whose rows differ move anything when swapped, so the draws flip those
    alone: exact over all ``2**k`` sign vectors when that is at most ``n_resamples`` (however many
    tied queries there are), else ``n_resamples`` random ones. A draw counts when its
    ``|statistic|`` reaches the observed one within the rounding bound the statistic gives for
    both: each mean is taken to be off by ``(k + 100)`` ulps of the scale of its inputs
    (``weights @ (|a| + |b|)``), the error of a sum of ``k`` terms plus that of per-query values
    equal in exact arithmetic but rounded differently. Statistics that differ by more than that are
    never taken as tied.
    """
    check_resampling(n_resamples, seed)
    differing = np.flatnonzero((a != b).any(axis=1) & (weights != 0))
    k = differing.size
    half = (a - b)[differing] * weights[differing, None] / 2
    centre = (weights @ a + weights @ b) / 2
    error = (k + _TIE_ULPS) * np.finfo(float).eps * (weights @ (np.abs(a) + np.abs(b)))
    observed_shift = _shifts(np.ones((1, k)), half)
    observed, observed_bound = statistic(centre, observed_shift, error)
    reach = np.abs(observed[0]) - observed_bound[0]
    exact = k < 63 and 2**k <= n_resamples  # (the exact sign vectors are bit patterns of int64 row numbers)
    count = 0
    for signs in _sign_chunks(k, n_resamples, np.random.default_rng(seed), exact):
        value, bound = statistic(centre, _shifts(signs, half), error)
        count += int(np.count_nonzero(np.abs(value) + bound >= reach))
    p_value = count / 2**k if exact else (count + 1) / (n_resamples + 1)
    return RandomizationTest(min(1.0, p_value), float(observed[0]), 2**k if exact else int(n_resamples), exact,
                             int(seed))


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
