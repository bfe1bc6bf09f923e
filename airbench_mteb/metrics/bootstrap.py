r"""Bootstrap confidence intervals over queries, as ``scipy.stats.bootstrap`` computes them, vectorised.

A retrieval score is a mean over queries, so its uncertainty comes from which queries the test
set happened to hold: resample the queries with replacement, recompute the score, and read the
interval off the distribution of the resampled scores (Efron & Tibshirani, *An Introduction to
the Bootstrap*, 1993). Every statistic here is a function of per-query *means* -- a mean, a
difference of paired means, co*cktail's Relative Δ, a benchmark's mean over tasks -- which makes
the whole bootstrap two matrix operations:

- a resample of ``n`` queries is a row of counts (how often each query was drawn), so the means
  of a chunk of resamples are one product ``counts @ values / n``: no Python loop per resample,
  and memory bounded by the chunk;
- the jackknife BCa needs (each query left out once) is closed-form: the mean without query
  ``i`` is ``(sum - x_i) / (n - 1)``.

Intervals (``level`` = 1 - 2α):

- ``"percentile"``: the α and 1 - α quantiles of the resampled statistic.
- ``"BCa"`` (default; bias-corrected and accelerated, Efron & Tibshirani 14.3 and eq. 15.36):
  :math:`z_0 = \Phi^{-1}(\text{share of resamples below the estimate})` (ties count half),
  acceleration :math:`a = \sum U_i^3 / (6 (\sum U_i^2)^{3/2})` from the jackknife values
  :math:`U_i = (n - 1)(\bar\theta_{(\cdot)} - \theta_{(i)})` (summed over strata, each term
  scaled by :math:`n^{-3}` and :math:`n^{-2}`), and the quantile levels
  :math:`\Phi(z_0 + (z_0 + z_\alpha) / (1 - a (z_0 + z_\alpha)))` and the same with
  :math:`z_{1-\alpha}`. Where BCa is undefined -- every resample equal (a degenerate sample:
  all queries score the same gives ``[x, x]``), a constant jackknife, or the estimate outside
  the resampled values (infinite :math:`z_0`) -- the percentile interval is used and
  :attr:`ConfidenceInterval.method` says so.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import ndtr, ndtri
from threadpoolctl import ThreadpoolController

from airbench_mteb.metrics.resampling import METHODS, Method

# A statistic of per-stratum column means: one array (..., m_t) per stratum -> array (...).
MeansStatistic = Callable[[Sequence[np.ndarray]], np.ndarray]

# Resamples x queries drawn per chunk: 8 MB of float64 counts, fast on two cores and bounded for any n.
_CHUNK_CELLS = 1 << 20


@dataclass(frozen=True)
class ConfidenceInterval:
    """A bootstrap confidence interval and how it was computed (``method``: the one actually used)."""

    estimate: float
    low: float
    high: float
    level: float
    method: Method
    n_resamples: int
    seed: int


def query_vector(values: ArrayLike, name: str = "values") -> np.ndarray:
    """``values`` as a float vector of at least 2 finite per-query values; ValueError naming ``name`` otherwise."""
    vector = np.asarray(values, dtype=float)
    if vector.ndim != 1:
        raise ValueError(f"{name} must be a vector of per-query values, got an array of shape {vector.shape}")
    if vector.size < 2:
        raise ValueError(f"{name} holds {vector.size} per-query value(s); uncertainty needs at least 2 queries")
    bad = np.flatnonzero(~np.isfinite(vector))
    if bad.size:
        raise ValueError(f"{name}[{bad[0]}] is {vector[bad[0]]}: per-query values must be finite")
    return vector


def paired_vectors(a: ArrayLike, b: ArrayLike, names: tuple[str, str] = ("a", "b")) -> tuple[np.ndarray, np.ndarray]:
    """Two per-query vectors over the same queries (same length, aligned by query id by the caller)."""
    x, y = query_vector(a, names[0]), query_vector(b, names[1])
    if x.size != y.size:
        raise ValueError(f"{names[0]} and {names[1]} must score the same queries: {x.size} vs {y.size} values")
    return x, y


def check_resampling(n_resamples: int, seed: int) -> None:
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int | np.integer) or n_resamples < 1:
        raise ValueError(f"n_resamples must be a positive integer, got {n_resamples!r}")
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")


def check_level(level: float) -> None:
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), e.g. 0.95, got {level!r}")


def _check_interval(level: float, method: str) -> None:
    check_level(level)
    if method not in METHODS:
        raise ValueError(f"unknown interval method {method!r}; use one of {', '.join(METHODS)}")


@functools.cache
def _thread_pools() -> ThreadpoolController:
    return ThreadpoolController()


def single_threaded_blas() -> AbstractContextManager[object]:
    """Run BLAS on one thread: the resampling products are small and memory-bound, so BLAS threads only wait on
    each other (on two busy cores, 5 ms per chunk on one thread against 28 ms on two)."""
    return _thread_pools().limit(limits=1, user_api="blas")


def _counts(rng: np.random.Generator, size: int, n: int) -> np.ndarray:
    """``size`` bootstrap resamples of ``n`` queries as counts: [r, i] = times query i was drawn in resample r."""
    draws = rng.integers(0, n, size=(size, n))
    draws += np.arange(0, size * n, n)[:, None]  # offset each row so one bincount counts every row at once
    return np.bincount(draws.ravel(), minlength=size * n).reshape(size, n).astype(float)


def resampled_means(strata: Sequence[np.ndarray], n_resamples: int, seed: int) -> list[np.ndarray]:
    """Column means of every stratum in each of ``n_resamples`` bootstrap resamples: one (n_resamples, m_t) each.

    Each stratum (n_t queries x m_t columns) is resampled on its own (a stratified bootstrap when
    there are several, scipy's unpaired multi-sample bootstrap); all columns of a stratum share the
    drawn rows, so paired columns stay paired. The same seed and stratum sizes give the same draws,
    whatever the values. Columns are centred on their first query, so a constant column resamples
    to exactly its value.
    """
    rng = np.random.default_rng(seed)
    rows = max(1, _CHUNK_CELLS // sum(len(stratum) for stratum in strata))
    centred = [stratum - stratum[0] for stratum in strata]
    chunks: list[list[np.ndarray]] = [[] for _ in strata]
    with single_threaded_blas():
        for start in range(0, n_resamples, rows):
            size = min(rows, n_resamples - start)
            for stratum, deviations, out in zip(strata, centred, chunks, strict=True):
                out.append(stratum[0] + _counts(rng, size, len(stratum)) @ deviations / len(stratum))
    return [np.concatenate(out) for out in chunks]


def _means(stratum: np.ndarray) -> np.ndarray:
    return stratum[0] + (stratum - stratum[0]).mean(axis=0)


def _leave_one_out_means(stratum: np.ndarray) -> np.ndarray:
    """Row i: the column means without query i (closed form)."""
    deviations = stratum - stratum[0]
    return stratum[0] + (deviations.sum(axis=0) - deviations) / (len(stratum) - 1)


def _jackknife(strata: Sequence[np.ndarray], statistic: MeansStatistic) -> list[np.ndarray]:
    """For each stratum, the statistic with each of its queries left out (the other strata whole)."""
    full = [_means(stratum) for stratum in strata]
    return [statistic([*full[:j], _leave_one_out_means(stratum), *full[j + 1:]]) for j, stratum in enumerate(strata)]


def _bca_levels(estimate: float, distribution: np.ndarray, jackknife: Sequence[np.ndarray],
                alpha: float) -> np.ndarray | None:
    """The BCa quantile levels (alpha_1, alpha_2) as scipy.stats.bootstrap computes them; None where undefined."""
    if np.ptp(distribution) == 0:
        return None
    below = np.count_nonzero(distribution < estimate) + np.count_nonzero(distribution <= estimate)
    z0 = ndtri(below / (2 * distribution.size))
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):  # extreme values: caught by the checks below
        spread = [(values.size - 1) * (values.mean() - values) for values in jackknife]
        skew = sum(np.sum(u**3) / u.size**3 for u in spread)
        scale = sum(np.sum(u**2) / u.size**2 for u in spread)
        if not (np.isfinite(z0) and np.isfinite(scale) and scale > 0):
            return None  # every resample on one side of the estimate, or a jackknife without spread
        acceleration = skew / (6 * scale**1.5)
        z = ndtri(np.array([alpha, 1 - alpha]))
        levels = ndtr(z0 + (z0 + z) / (1 - acceleration * (z0 + z)))
    return levels if np.isfinite(levels).all() else None


def _as_strata(strata: Sequence[ArrayLike]) -> list[np.ndarray]:
    checked = []
    for t, stratum in enumerate(strata):
        array = np.asarray(stratum, dtype=float)
        array = array[:, None] if array.ndim == 1 else array
        if array.ndim != 2:
            raise ValueError(f"stratum {t} must be a queries x columns matrix, got shape {array.shape}")
        for column in range(array.shape[1]):
            query_vector(array[:, column], f"stratum {t}, column {column}")
        checked.append(array)
    if not checked:
        raise ValueError("no stratum: a bootstrap needs at least one vector of per-query values")
    return checked


def _interval(estimate: float, distribution: np.ndarray, jackknife: Sequence[np.ndarray], level: float,
              method: Method, n_resamples: int, seed: int) -> ConfidenceInterval:
    """The interval read off a bootstrap distribution: BCa's levels where asked and defined, else percentile's.

    A statistic undefined in some resamples (a rank correlation of models that all tie there) is read off the
    resamples where it is defined; undefined in all of them, the interval is (nan, nan)."""
    alpha = (1 - level) / 2
    distribution = distribution[np.isfinite(distribution)]
    if not distribution.size:
        return ConfidenceInterval(estimate, math.nan, math.nan, level, "percentile", int(n_resamples), int(seed))
    levels = _bca_levels(estimate, distribution, jackknife, alpha) if method == "BCa" else None
    used: Method = "percentile" if levels is None else "BCa"
    low, high = np.quantile(distribution, [alpha, 1 - alpha] if levels is None else levels)
    return ConfidenceInterval(estimate, float(low), float(high), level, used, int(n_resamples), int(seed))


def bootstrap_statistic_ci(strata: Sequence[ArrayLike], statistic: MeansStatistic, *, level: float = 0.95,
                           method: Method = "BCa", n_resamples: int = 9999, seed: int = 0) -> ConfidenceInterval:
    """Confidence interval of ``statistic`` (a function of the strata's column means), queries resampled per stratum.

    ``strata``: one (n_t queries x m_t columns) matrix per stratum (a vector is one column); rows
    are queries, resampled together across a stratum's columns. ``statistic`` receives one array
    of column means per stratum, shaped (..., m_t), and returns the statistic over the leading
    axes (it must broadcast: it is called on all resamples, and on each stratum's leave-one-out
    means, at once). Equals ``scipy.stats.bootstrap`` on the same data with the same statistic
    (unpaired samples = strata), within Monte-Carlo error.
    """
    _check_interval(level, method)
    check_resampling(n_resamples, seed)
    checked = _as_strata(strata)
    estimate = float(statistic([_means(stratum) for stratum in checked]))
    distribution = statistic(resampled_means(checked, n_resamples, seed))
    return _interval(estimate, distribution, _jackknife(checked, statistic), level, method, n_resamples, seed)


def bootstrap_cis(vectors: Mapping[str, ArrayLike], *, level: float = 0.95, method: Method = "BCa",
                  n_resamples: int = 9999, seed: int = 0) -> dict[str, ConfidenceInterval]:
    """:func:`bootstrap_ci` of each named per-query vector over the same queries (a task's metrics), at once.

    One set of resamples serves every vector (drawing the queries is most of the cost), so m
    metrics cost little more than one; each interval equals ``bootstrap_ci`` of its vector with the
    same seed, to rounding.
    """
    _check_interval(level, method)
    check_resampling(n_resamples, seed)
    if not vectors:
        return {}
    names = list(vectors)
    columns = [query_vector(vectors[name], name) for name in names]
    for name, column in zip(names[1:], columns[1:], strict=True):
        paired_vectors(columns[0], column, (names[0], name))
    matrix = np.column_stack(columns)
    estimates, leave_one_out = _means(matrix), _leave_one_out_means(matrix)
    distributions = resampled_means([matrix], n_resamples, seed)[0]
    return {name: _interval(float(estimates[i]), distributions[:, i], [leave_one_out[:, i]], level, method,
                            n_resamples, seed) for i, name in enumerate(names)}


def _first_column(means: Sequence[np.ndarray]) -> np.ndarray:
    return means[0][..., 0]


def bootstrap_ci(values: ArrayLike, *, level: float = 0.95, method: Method = "BCa", n_resamples: int = 9999,
                 seed: int = 0) -> ConfidenceInterval:
    """Confidence interval of the mean of per-query ``values`` (a task's score), queries resampled.

    Equals ``scipy.stats.bootstrap((values,), np.mean, method=...)`` within Monte-Carlo error.
    """
    return bootstrap_statistic_ci([query_vector(values)], _first_column, level=level, method=method,
                                  n_resamples=n_resamples, seed=seed)


def paired_bootstrap_ci(a: ArrayLike, b: ArrayLike, *, level: float = 0.95, method: Method = "BCa",
                        n_resamples: int = 9999, seed: int = 0) -> ConfidenceInterval:
    """Confidence interval of mean(a) - mean(b) over paired per-query vectors (two models on the same queries).

    One resample of query indices applies to both vectors, which is resampling the per-query
    differences ``a - b``: scipy's ``bootstrap((a, b), lambda a, b: mean(a) - mean(b), paired=True)``.
    """
    x, y = paired_vectors(a, b)
    return bootstrap_statistic_ci([x - y], _first_column, level=level, method=method, n_resamples=n_resamples,
                                  seed=seed)
