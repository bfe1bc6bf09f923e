r"""Uncertainty of the plugin's composite figures: benchmark means and ranks, Relative Δ, SSCI and RCCI.

Built on :mod:`airbench_mteb.metrics.bootstrap` (confidence intervals of statistics of per-query
means) and :mod:`airbench_mteb.metrics.significance` (paired randomization tests); everything
takes per-query vectors aligned by query id by the caller, and a fixed seed gives identical results.

- **Benchmark level.** A benchmark's score is MTEB's unweighted mean of its task scores. Its CI
  comes from a stratified bootstrap (:func:`stratified_bootstrap_mean_of_means`: queries resampled
  within each task); two models' benchmark means are compared by :func:`benchmark_paired_test`;
  :func:`rank_intervals` gives each model's rank and the interval of its rank over the same resamples.
- **Source bias (co*cktail).** :func:`relative_delta_ci` bootstraps Relative Δ over queries (one
  ranking gives a query's human and LLM scores, so they are resampled together). The test of "no
  bias" is :func:`~airbench_mteb.metrics.significance.paired_randomization_test` ``(human, llm)``:
  Δ is 0 exactly when the mean difference is. Two models' biases: :func:`relative_delta_difference_ci`
  and :func:`relative_delta_difference_test`.
- **SSCI / RCCI** (IRSC): their intervals and RCCI's test live beside the metrics, in
  :mod:`airbench_mteb.metrics.pairwise`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from airbench_mteb.metrics.bootstrap import (
    ConfidenceInterval,
    Method,
    bootstrap_statistic_ci,
    check_level,
    check_resampling,
    paired_vectors,
    query_vector,
    resampled_means,
)
from airbench_mteb.metrics.significance import (
    RandomizationTest,
    mean_difference,
    swap_test,
)
from airbench_mteb.metrics.source_bias import relative_deltas


@dataclass(frozen=True)
class RankInterval:
    """A model's rank on a benchmark (1 = best mean) and the interval of its rank over bootstrap resamples."""

    rank: int
    low: int
    high: int
    level: float
    n_resamples: int
    seed: int


def _tasks(per_task_vectors: Sequence[ArrayLike], name: str = "per_task_vectors") -> list[np.ndarray]:
    vectors = [query_vector(vector, f"{name}[{t}]") for t, vector in enumerate(per_task_vectors)]
    if not vectors:
        raise ValueError(f"{name} holds no task: a benchmark mean needs at least one")
    return vectors


def _mean_over_strata(means: Sequence[np.ndarray]) -> np.ndarray:
    """MTEB's benchmark score: the unweighted mean over tasks of each task's mean (first column)."""
    return sum(stratum[..., 0] for stratum in means) / len(means)


def stratified_bootstrap_mean_of_means(per_task_vectors: Sequence[ArrayLike], *, level: float = 0.95,
                                       method: Method = "BCa", n_resamples: int = 9999,
                                       seed: int = 0) -> ConfidenceInterval:
    """CI of the unweighted mean over tasks of each task's mean, queries resampled within each task.

    Equals ``scipy.stats.bootstrap(per_task_vectors, mean-of-means)`` (independent samples), within
    Monte-Carlo error. For the difference of two models' benchmark means, pass each task's per-query
    differences ``a_t - b_t``. The same seed and task sizes draw the same resamples for every model,
    so per-model CIs agree with :func:`rank_intervals`.
    """
    return bootstrap_statistic_ci(_tasks(per_task_vectors), _mean_over_strata, level=level, method=method,
                                  n_resamples=n_resamples, seed=seed)


def benchmark_paired_test(per_task_a: Sequence[ArrayLike], per_task_b: Sequence[ArrayLike], *,
                          n_resamples: int = 9999, seed: int = 0) -> RandomizationTest:
    r"""Two-sided paired sign-flip test of the difference of two models' benchmark means.

    The statistic is :math:`t = \frac{1}{T}\sum_t \frac{1}{n_t}\sum_{q \in t} d_q` with
    :math:`d_q = a_q - b_q`: the difference of the two models' MTEB means over the ``T`` tasks.
    Each null draw flips the sign of every query's difference independently with probability
    1/2 -- one sign per query of every task, all tasks in the same draw (the model labels are
    exchangeable query by query) -- and recomputes :math:`t` with the same per-task weights
    :math:`1 / (T n_t)`. p as in :func:`~airbench_mteb.metrics.significance.paired_randomization_test`,
    exact over all :math:`2^k` sign vectors of the ``k`` queries that differ when that is at most ``n_resamples``.
    """
    tasks_a, tasks_b = _tasks(per_task_a, "per_task_a"), _tasks(per_task_b, "per_task_b")
    if len(tasks_a) != len(tasks_b):
        raise ValueError(f"per_task_a and per_task_b must hold the same tasks: {len(tasks_a)} vs {len(tasks_b)}")
    for t, (a, b) in enumerate(zip(tasks_a, tasks_b, strict=True)):
        paired_vectors(a, b, (f"per_task_a[{t}]", f"per_task_b[{t}]"))
    weights = np.concatenate([np.full(a.size, 1 / (len(tasks_a) * a.size)) for a in tasks_a])
    return swap_test(np.concatenate(tasks_a)[:, None], np.concatenate(tasks_b)[:, None], weights, mean_difference,
                     n_resamples=n_resamples, seed=seed)


def rank_intervals(per_model_tasks: Mapping[str, Sequence[ArrayLike]], *, level: float = 0.95,
                   n_resamples: int = 9999, seed: int = 0) -> dict[str, RankInterval]:
    """Each model's benchmark rank and its ``level`` rank interval, from one stratified bootstrap.

    Every resample draws the queries of each task once and applies them to all models (the
    per-query vectors of a task are paired across models); in each resample every model gets the
    rank 1 + (number of models with a strictly higher mean over tasks), so tied models share the
    better rank. The interval is the (1 - level) / 2 and (1 + level) / 2 quantiles of a model's
    ranks, rounded outwards to whole ranks.
    """
    check_level(level)
    check_resampling(n_resamples, seed)
    models = list(per_model_tasks)
    if len(models) < 2:
        raise ValueError(f"ranking needs at least 2 models, got {len(models)}")
    tasks = {model: _tasks(per_model_tasks[model], f"per_model_tasks[{model!r}]") for model in models}
    if len({len(vectors) for vectors in tasks.values()}) != 1:
        raise ValueError("every model must be scored on the same tasks: "
                         + ", ".join(f"{model!r} has {len(vectors)}" for model, vectors in tasks.items()))
    strata = []
    for t in range(len(tasks[models[0]])):
        for model in models[1:]:
            paired_vectors(tasks[models[0]][t], tasks[model][t], (f"{models[0]!r} task {t}", f"{model!r} task {t}"))
        strata.append(np.column_stack([tasks[model][t] for model in models]))
    observed = _ranks(sum(stratum.mean(axis=0) for stratum in strata) / len(strata))
    ranks = _ranks(sum(resampled_means(strata, n_resamples, seed)) / len(strata))
    alpha = (1 - level) / 2
    low = np.quantile(ranks, alpha, axis=0, method="lower")
    high = np.quantile(ranks, 1 - alpha, axis=0, method="higher")
    return {model: RankInterval(int(observed[i]), int(low[i]), int(high[i]), level, int(n_resamples), int(seed))
            for i, model in enumerate(models)}


def _ranks(means: np.ndarray) -> np.ndarray:
    """Rank of each model (last axis): 1 + how many models have a strictly higher mean."""
    return 1 + np.count_nonzero(means[..., None, :] > means[..., :, None], axis=-1)


def _source_means_delta(means: Sequence[np.ndarray]) -> np.ndarray:
    return relative_deltas(means[0][..., 0], means[0][..., 1])


def relative_delta_ci(human: ArrayLike, llm: ArrayLike, *, level: float = 0.95, method: Method = "BCa",
                      n_resamples: int = 9999, seed: int = 0) -> ConfidenceInterval:
    r"""CI of co*cktail's Relative Δ = (M_human - M_llm) / ((M_human + M_llm) / 2) x 100 over per-query vectors.

    Each resample draws queries once and recomputes both means and Δ (BCa's jackknife uses the
    same Δ of the leave-one-out means). Where both means are 0, Δ is 0, as in ``relative_delta``.
    """
    columns = np.column_stack(paired_vectors(human, llm, ("human", "llm")))
    return bootstrap_statistic_ci([columns], _source_means_delta, level=level, method=method,
                                  n_resamples=n_resamples, seed=seed)


def _delta_difference(means: np.ndarray, other: np.ndarray) -> np.ndarray:
    """Δ of a (human, llm) mean pair minus Δ of another."""
    return relative_deltas(means[..., 0], means[..., 1]) - relative_deltas(other[..., 0], other[..., 1])


def _delta_with_bound(means: np.ndarray, error: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Δ of (human, llm) means each off by at most ``error``, and a bound on Δ's resulting error.

    Per-query metric values are >= 0, so a mean within its error of 0 is 0 exactly (Δ's 0 / 0 case,
    not ±200). Δ = 200 (h - l) / (h + l) moves by at most 400 (|l| e_h + |h| e_l) / (h + l)^2 to first
    order; twice that is the bound.
    """
    human, llm = (np.where(np.abs(means[..., i]) <= error[i], 0.0, means[..., i]) for i in (0, 1))
    total = human + llm
    spread = np.abs(llm) * error[0] + np.abs(human) * error[1]
    bound = np.divide(800 * spread, total**2, out=np.zeros(np.shape(total)), where=total != 0)
    return relative_deltas(human, llm), bound


def _swapped_delta_difference(centre: np.ndarray, shift: np.ndarray,
                              error: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Δ_A - Δ_B of the swap test's means (A: centre + shift, B: centre - shift) and its rounding bound."""
    (delta_a, bound_a), (delta_b, bound_b) = (_delta_with_bound(centre + shift, error),
                                              _delta_with_bound(centre - shift, error))
    return delta_a - delta_b, bound_a + bound_b


def _bias_pairs(human_a: ArrayLike, llm_a: ArrayLike, human_b: ArrayLike,
                llm_b: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Two models' (human, llm) per-query columns over the same queries."""
    pair_a = np.column_stack(paired_vectors(human_a, llm_a, ("human_a", "llm_a")))
    pair_b = np.column_stack(paired_vectors(human_b, llm_b, ("human_b", "llm_b")))
    paired_vectors(pair_a[:, 0], pair_b[:, 0], ("human_a", "human_b"))
    return pair_a, pair_b


def relative_delta_difference_ci(human_a: ArrayLike, llm_a: ArrayLike, human_b: ArrayLike, llm_b: ArrayLike, *,
                                 level: float = 0.95, method: Method = "BCa", n_resamples: int = 9999,
                                 seed: int = 0) -> ConfidenceInterval:
    """CI of Δ_A - Δ_B, two models' Relative Δ on the same queries (one resample of queries for all four vectors)."""
    pair_a, pair_b = _bias_pairs(human_a, llm_a, human_b, llm_b)
    return bootstrap_statistic_ci([np.column_stack([pair_a, pair_b])],
                                  lambda means: _delta_difference(means[0][..., :2], means[0][..., 2:]),
                                  level=level, method=method, n_resamples=n_resamples, seed=seed)


def relative_delta_difference_test(human_a: ArrayLike, llm_a: ArrayLike, human_b: ArrayLike, llm_b: ArrayLike, *,
                                   n_resamples: int = 9999, seed: int = 0) -> RandomizationTest:
    """Two-sided paired permutation test of Δ_A - Δ_B: each null draw swaps the two models' (human, llm)
    scores of a random half of the queries and recomputes both Δ (exact over all 2^k swaps of the k queries whose
    scores differ between the models when 2^k <= n_resamples; ties judged within the means' rounding, see swap_test).
    """
    pair_a, pair_b = _bias_pairs(human_a, llm_a, human_b, llm_b)
    return swap_test(pair_a, pair_b, np.full(len(pair_a), 1 / len(pair_a)), _swapped_delta_difference,
                     n_resamples=n_resamples, seed=seed)
