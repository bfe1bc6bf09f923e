"""Confidence intervals where tables show a score: ``0.7272 [0.70, 0.75]``.

A score dict of a plugin task carries ``<metric>_ci_low``/``_ci_high`` (and ``ci_method``,
``ci_n_resamples``, ``ci_seed``). A table cell of one split and subset shows those. A cell that
averages several subsets (MTEB's ``TaskResult.get_score``), or tasks, gets the interval of that
mean from the per-query scores kept beside the results, held to them as every report holds them
(:func:`airbench_mteb.results.kept.kept_vectors`): a stratified bootstrap, the queries of each subset
resampled within it. Where no interval is recorded (results written with CIs off) or no per-query file is
kept, the bare value is shown; a per-query file the results do not trust is refused.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from airbench_mteb.metrics.bootstrap import bootstrap_statistic_ci
from airbench_mteb.metrics.resampling import Resampling
from airbench_mteb.results.kept import kept_vectors
from airbench_mteb.results.reading import ModelTaskResult

Interval = tuple[float, float]


def recorded_interval(scores: Mapping[str, Any], metric: str) -> Interval | None:
    """The interval of ``metric`` recorded in one score dict, if any."""
    low, high = scores.get(f"{metric}_ci_low"), scores.get(f"{metric}_ci_high")
    return None if low is None or high is None else (float(low), float(high))


def _rows(found: ModelTaskResult) -> list[tuple[str, Mapping[str, Any]]]:
    return [(split, row) for split, rows in found.result.scores.items() for row in rows]


def _resampling(row: Mapping[str, Any]) -> Resampling:
    """How a row's intervals were computed, to compute the interval of a mean over rows the same way."""
    return Resampling(method=row["ci_method"], n_resamples=int(row["ci_n_resamples"]), seed=int(row["ci_seed"]),
                      level=float(row["ci_level"]))


def mean_interval(tasks: Sequence[ModelTaskResult], metric: str) -> Interval | None:
    """Interval of the mean over ``tasks`` of each task's mean over its splits and subsets of ``metric``
    (MTEB's ``get_score`` per task, then their plain mean), as the tasks' own intervals were computed.

    One task with one split and subset: its recorded interval. Otherwise a stratified bootstrap over
    the kept per-query values (each split and subset resampled within itself). None when an
    interval is not recorded for every row, or the per-query values are not kept.

    Raises:
        DatasetError: kept per-query values that do not reproduce their results file.
    """
    rows = [row for found in tasks for _, row in _rows(found)]
    if not rows or any(recorded_interval(row, metric) is None for row in rows):
        return None
    if len(rows) == 1:
        return recorded_interval(rows[0], metric)
    strata, weights = [], []
    for found in tasks:
        vectors = kept_vectors(found, metric)
        if vectors is None:
            return None
        strata += vectors
        weights += [1 / (len(tasks) * len(vectors))] * len(vectors)
    resampling = _resampling(rows[0])
    interval = bootstrap_statistic_ci(
        strata, lambda means: sum(w * m[..., 0] for w, m in zip(weights, means, strict=True)),
        level=resampling.level, method=resampling.method, n_resamples=resampling.n_resamples, seed=resampling.seed)
    return interval.low, interval.high
