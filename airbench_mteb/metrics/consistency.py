r"""Rank agreement of two benchmarks over the same models: does a generated test set rank models as human labels do?

The AIR-Bench paper (arXiv 2412.13102, section 4.1, Table 5, Figure 3) scores 17 models on MS MARCO's
human-labelled dev set and on a generated one over the same corpus, and reports Spearman's
:math:`\rho = 0.8211` (p = 5e-5) between the two score columns; 30 random subsets of 2,000 generated
queries give a mean :math:`\rho` of 0.8031, and without quality control :math:`\rho` drops to 0.6912.

- :func:`rank_agreement`: Spearman's :math:`\rho` and Kendall's :math:`\tau_b` with their two-sided p-values:
  for a panel of at most ``EXACT_MAX_MODELS`` models the exact permutation p (:func:`exact_p_value`, every
  ordering of the models enumerated), otherwise as ``scipy.stats.spearmanr`` (its t approximation) and
  ``scipy.stats.kendalltau`` compute them. With 3 or 4 models the t approximation says p = 0 for a perfect
  agreement, where only 2 of the 6 (3 models) or 2 of the 24 (4 models) orderings are as extreme: p = 1/3, 1/12.
- :func:`agreement_intervals`: a bootstrap interval of each. The two sets hold different queries, so
  each is a stratum of its own (:func:`~airbench_mteb.metrics.bootstrap.bootstrap_statistic_ci`): a
  draw resamples the generated queries and, independently, the human ones; every model's mean on both
  sets is recomputed from the drawn queries (one draw serves all models, whose per-query vectors are
  paired), and so are the ranks and the coefficient. A draw that ties every model on one set leaves the
  coefficients undefined; the intervals are read off the other draws (:func:`tied_resamples` counts them).
- :func:`subset_agreement`: the paper's robustness study -- :math:`\rho` between the human means and
  the models' means on ``resamples`` random subsets of ``sample_size`` generated queries (without
  replacement; every query when the set is smaller).

Inputs are (queries x models) matrices of per-query values whose columns are the same models in the
same order; ties in a score column get average ranks (:math:`\tau_b` corrects for them). One tie rule
serves the point estimate, the bootstrap and the subsets: two models' means tie when they are equal to
``TIE_DECIMALS`` decimals (:func:`tie_rounded`), so two models equal in exact arithmetic whose float means
differ in the last bits are tied everywhere, never ordered in one place and tied in another.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike
from scipy.stats import kendalltau, rankdata, spearmanr

from airbench_mteb.metrics.bootstrap import (
    ConfidenceInterval,
    Method,
    bootstrap_statistic_ci,
    check_resampling,
    query_vector,
    resampled_means,
)

MIN_MODELS = 3  # two models always agree or disagree completely: a rank correlation needs three
# Means carry rounding errors of about 1e-16 (a float sum depends on its order), so two models that tie in
# exact arithmetic can differ in the last bits; every coefficient here ranks means rounded to this many
# decimals, so those stay ties (scores are at most 1 in size: far above the error, far below any gap).
TIE_DECIMALS = 12
# Up to this many models the p-values enumerate every ordering (8! = 40,320); above, scipy's.
EXACT_MAX_MODELS = 8
# Two coefficients of one panel are "as extreme" when they differ by less than this: the values of a rank
# correlation of <= 8 models lie on a grid at least 1/504 apart, their float rounding errors near 1e-16.
_EXTREME_TOLERANCE = 1e-9
PMethod = Literal["exact", "scipy"]
P_METHODS: dict[str, str] = {
    "exact": "exact permutation p (two-sided: the share of the n! orderings of one column against the other whose "
             "coefficient is at least as far from 0 as the observed one)",
    "scipy": "scipy's p (Spearman: t approximation; Kendall: scipy.stats.kendalltau's method='auto')",
}


def tie_rounded(means: ArrayLike) -> np.ndarray:
    """``means`` rounded to ``TIE_DECIMALS``: the values every coefficient here ranks (the one tie rule)."""
    return np.round(np.asarray(means, dtype=float), TIE_DECIMALS)


@dataclass(frozen=True)
class RankAgreement:
    """Spearman's rho and Kendall's tau-b between two score columns over the same models, with their p-values
    (``nan`` where a column is constant: the coefficients are undefined)."""

    spearman_rho: float
    spearman_p: float
    kendall_tau: float
    kendall_p: float
    models: int
    p_method: PMethod  # "exact": every ordering enumerated (at most EXACT_MAX_MODELS models); "scipy": scipy's


@dataclass(frozen=True)
class SubsetAgreement:
    """Spearman's rho on each of ``len(rhos)`` random subsets of ``sample_size`` generated queries."""

    rhos: tuple[float, ...]
    sample_size: int
    seed: int

    @property
    def mean(self) -> float:
        return float(np.mean(self.rhos))

    @property
    def std(self) -> float:
        """The spread of rho over the subsets (population standard deviation, as the paper's figure shows it)."""
        return float(np.std(self.rhos))


def _columns(first: ArrayLike, second: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    x, y = query_vector(first, "first scores"), query_vector(second, "second scores")
    if x.size != y.size:
        raise ValueError(f"the two score columns must hold the same models: {x.size} vs {y.size} scores")
    if x.size < MIN_MODELS:
        raise ValueError(f"a rank correlation needs at least {MIN_MODELS} models, got {x.size}")
    return x, y


def rank_agreement(first: ArrayLike, second: ArrayLike) -> RankAgreement:
    """Spearman's rho and Kendall's tau-b (with their two-sided p-values) of two models' score columns.

    The coefficients are ``scipy.stats.spearmanr``'s and ``scipy.stats.kendalltau``'s (tau-b) of the two columns
    after :func:`tie_rounded`, the tie rule the bootstrap (:func:`spearman_rho`, :func:`kendall_tau_b`) follows.
    The p-values are :func:`exact_p_value`'s for at most ``EXACT_MAX_MODELS`` models (``p_method`` "exact"),
    scipy's above (``p_method`` "scipy"; :data:`P_METHODS` says what each is).
    """
    x, y = (tie_rounded(column) for column in _columns(first, second))
    with np.errstate(invalid="ignore", divide="ignore"):
        spearman, kendall = spearmanr(x, y), kendalltau(x, y)
    if p_method(x.size) == "scipy":
        return RankAgreement(float(spearman.statistic), float(spearman.pvalue), float(kendall.statistic),
                             float(kendall.pvalue), int(x.size), "scipy")
    return RankAgreement(float(spearman.statistic), exact_p_value(x, y, spearman_rho), float(kendall.statistic),
                         exact_p_value(x, y, kendall_tau_b), int(x.size), "exact")


def p_method(models: int) -> PMethod:
    """How :func:`rank_agreement` computes the p-values of a panel of ``models``: exact up to EXACT_MAX_MODELS."""
    return "exact" if models <= EXACT_MAX_MODELS else "scipy"


def exact_p_value(first: np.ndarray, second: np.ndarray,
                  statistic: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> float:
    """The two-sided exact permutation p of a rank correlation ``statistic`` (:func:`spearman_rho`,
    :func:`kendall_tau_b`): the share of the n! orderings of ``second`` against ``first`` (ties kept as they
    are) whose coefficient is at least as far from 0 as the observed one; ``nan`` where it is undefined (a
    constant column). Perfect agreement of 3 models: 2 of 6 orderings, p = 1/3; of 4 models: 2/24 = 1/12."""
    orderings = np.array(list(itertools.permutations(range(second.size))))
    observed = float(statistic(first, second))
    if not np.isfinite(observed):
        return float("nan")
    values = statistic(first, second[orderings])
    return float(np.count_nonzero(np.abs(values) >= abs(observed) - _EXTREME_TOLERANCE) / len(orderings))


def spearman_rho(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Spearman's rho over the last axis (models), for every leading index at once: the Pearson correlation of
    the average ranks (means equal to ``TIE_DECIMALS`` decimals tie). ``nan`` where a row is constant."""
    first, second = np.broadcast_arrays(tie_rounded(first), tie_rounded(second))
    x = rankdata(first, axis=-1)
    y = rankdata(second, axis=-1)
    x = x - x.mean(axis=-1, keepdims=True)
    y = y - y.mean(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.sum(x * y, axis=-1) / np.sqrt(np.sum(x * x, axis=-1) * np.sum(y * y, axis=-1))


def kendall_tau_b(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    r"""Kendall's tau-b over the last axis (models), for every leading index at once:
    :math:`\tau_b = (C - D) / \sqrt{(P - T_x)(P - T_y)}` over the :math:`P` model pairs, with :math:`T_x`,
    :math:`T_y` the pairs tied in each column. ``nan`` where a row is constant."""
    first, second = np.broadcast_arrays(tie_rounded(first), tie_rounded(second))
    i, j = np.triu_indices(first.shape[-1], k=1)
    dx = np.sign(first[..., i] - first[..., j])
    dy = np.sign(second[..., i] - second[..., j])
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.sum(dx * dy, axis=-1) / np.sqrt(np.count_nonzero(dx, axis=-1) * np.count_nonzero(dy, axis=-1))


STATISTICS = {"spearman": spearman_rho, "kendall": kendall_tau_b}


def _score_matrix(values: ArrayLike, name: str) -> np.ndarray:
    matrix = np.asarray(values, dtype=float)
    if matrix.ndim != 2:
        raise ValueError(f"{name} must be a queries x models matrix, got shape {matrix.shape}")
    if matrix.shape[1] < MIN_MODELS:
        raise ValueError(f"a rank correlation needs at least {MIN_MODELS} models, {name} has {matrix.shape[1]}")
    for column in range(matrix.shape[1]):
        query_vector(matrix[:, column], f"{name}, model {column}")
    return matrix


def agreement_intervals(generated: ArrayLike, human: ArrayLike, *, level: float = 0.95, method: Method = "BCa",
                        n_resamples: int = 9999, seed: int = 0) -> dict[str, ConfidenceInterval]:
    """Bootstrap intervals of Spearman's rho (``"spearman"``) and Kendall's tau-b (``"kendall"``) between the
    models' mean scores on two query sets.

    ``generated`` (n_g queries x m models) and ``human`` (n_h x m) hold per-query values with the same
    models in the same columns. Each set's queries are resampled on their own (two strata), the models'
    means recomputed on both and the coefficient computed from them; ``method`` and the fallback where
    BCa is undefined are :func:`~airbench_mteb.metrics.bootstrap.bootstrap_statistic_ci`'s. Both
    intervals use the same draws (the same seed and set sizes draw the same resamples).
    """
    first, second = _score_matrix(generated, "generated"), _score_matrix(human, "human")
    if first.shape[1] != second.shape[1]:
        raise ValueError(f"the two sets must score the same models: {first.shape[1]} vs {second.shape[1]} columns")
    return {name: bootstrap_statistic_ci([first, second], lambda means, statistic=statistic: statistic(*means),
                                         level=level, method=method, n_resamples=n_resamples, seed=seed)
            for name, statistic in STATISTICS.items()}


def tied_resamples(generated: ArrayLike, human: ArrayLike, *, n_resamples: int = 9999, seed: int = 0) -> int:
    """How many of :func:`agreement_intervals`' draws (same seed and sizes) tie every model on one of the sets: there
    both coefficients are undefined, and the intervals are read off the other draws. Models whose per-query values
    differ on a few queries only (BM25 at close settings, a tiny set) tie whenever a draw misses those queries."""
    first, second = _score_matrix(generated, "generated"), _score_matrix(human, "human")
    check_resampling(n_resamples, seed)
    means = resampled_means([first, second], n_resamples, seed)
    return int(np.count_nonzero(np.any([np.ptp(tie_rounded(m), axis=-1) == 0 for m in means], axis=0)))


def subset_agreement(generated: ArrayLike, human_scores: ArrayLike, *, sample_size: int = 2000,
                     resamples: int = 30, seed: int = 0) -> SubsetAgreement:
    """Spearman's rho between ``human_scores`` (one per model) and the models' means over each of ``resamples``
    random subsets of ``min(sample_size, n_g)`` rows of ``generated`` (n_g queries x models), drawn without
    replacement by ``numpy.random.default_rng(seed).choice`` one subset after the other."""
    matrix = _score_matrix(generated, "generated")
    human = query_vector(human_scores, "human_scores")
    if human.size != matrix.shape[1]:
        raise ValueError(f"human_scores holds {human.size} models, generated {matrix.shape[1]}")
    check_resampling(resamples, seed)
    if isinstance(sample_size, bool) or not isinstance(sample_size, int) or sample_size < 1:
        raise ValueError(f"sample_size must be a positive integer, got {sample_size!r}")
    size = min(sample_size, len(matrix))
    rng = np.random.default_rng(seed)
    means = np.stack([matrix[rng.choice(len(matrix), size, replace=False)].mean(axis=0) for _ in range(resamples)])
    return SubsetAgreement(tuple(float(rho) for rho in spearman_rho(means, human)), size, seed)
