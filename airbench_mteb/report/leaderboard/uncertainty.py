r"""What the AIR-Bench leaderboard lacks: intervals of its cells and Averages, and rank groups.

All from the per-query values the plugin keeps beside each result (:mod:`airbench_mteb.data.per_query`,
read and held to their results file by :func:`airbench_mteb.results.panel.score_matrix`), x 100
as the table shows them:

- a cell's interval (95 % by default): the bootstrap over the task's queries
  (:func:`airbench_mteb.metrics.bootstrap.bootstrap_cis`, BCa);
- an Average's: the stratified bootstrap, queries resampled within each column's task
  (:func:`airbench_mteb.metrics.uncertainty.stratified_bootstrap_mean_of_means`) -- the Average is
  the unweighted mean over columns of each column's mean over its queries;
- rank groups: rows in the order of their Average, each compared with the row above it by the
  paired sign-flip test of the difference of their Averages
  (:func:`airbench_mteb.metrics.uncertainty.benchmark_paired_test`), the p-values of these adjacent
  comparisons adjusted (Holm's by default, :func:`airbench_mteb.metrics.significance.adjust_p_values`); a row
  starts a new group when its adjusted p-value is below alpha, else it shares the group above.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import pairwise

import numpy as np

from airbench_mteb.metrics.bootstrap import bootstrap_cis
from airbench_mteb.metrics.per_query import KEPT_METRICS
from airbench_mteb.metrics.resampling import Resampling
from airbench_mteb.metrics.significance import Correction, adjust_p_values
from airbench_mteb.metrics.uncertainty import benchmark_paired_test, stratified_bootstrap_mean_of_means
from airbench_mteb.report.leaderboard.table import LEADERBOARD_METRICS, Interval
from airbench_mteb.results.panel import QuerySet, resolved, score_matrix, set_results
from airbench_mteb.results.reading import ResultsFolder

# The leaderboard's metrics the plugin keeps per query: only these get intervals and rank groups.
INTERVAL_METRICS = tuple(metric for metric in LEADERBOARD_METRICS if metric in KEPT_METRICS)
PERCENT = 100.0  # the table's scale


def query_values(folder: ResultsFolder, labels: Sequence[str], task: str,
                 split: str) -> dict[str, dict[str, np.ndarray]]:
    """``{metric: {label: per-query values x 100}}`` of the labelled runs on one task's split, over the same queries
    in one order (every run checked to be on the same data, its values to reproduce its results file)."""
    query_set = QuerySet(task, split)
    found = set_results(folder, labels, query_set)
    query_set = resolved(query_set, found)
    values = {}
    for metric in INTERVAL_METRICS:
        _, matrix = score_matrix(query_set, found, metric)
        values[metric] = {label: matrix[:, i] * PERCENT for i, label in enumerate(found)}
    return values


def cell_intervals(values: Mapping[str, Mapping[str, np.ndarray]],
                   resampling: Resampling) -> dict[tuple[str, str], Interval]:
    """``{(metric, label): interval}`` of one task: one set of resamples serves every run and metric (same queries)."""
    vectors = {(metric, label): vector for metric, by_label in values.items() for label, vector in by_label.items()}
    if not vectors or len(next(iter(vectors.values()))) < 2:  # a bootstrap needs two queries
        return {}
    keys = list(vectors)
    intervals = bootstrap_cis({str(i): vectors[key] for i, key in enumerate(keys)}, **resampling.interval())
    return {key: Interval(intervals[str(i)].low, intervals[str(i)].high, intervals[str(i)].method)
            for i, key in enumerate(keys)}


def average_interval(per_column: Sequence[np.ndarray], resampling: Resampling) -> Interval | None:
    """The interval of an Average: queries resampled within each column's task (None with a column of < 2 queries)."""
    if not per_column or min(len(vector) for vector in per_column) < 2:
        return None
    interval = stratified_bootstrap_mean_of_means(per_column, **resampling.interval())
    return Interval(interval.low, interval.high, interval.method)


def rank_groups(ordered: Sequence[Sequence[np.ndarray]], alpha: float, correction: Correction,
                resampling: Resampling) -> tuple[list[int], list[float], list[float]]:
    """Group of each row (best Average first; each a per-column list of per-query values), and the p-values of
    the adjacent comparisons (row i - 1 against row i) before and after ``correction``."""
    p_values = [benchmark_paired_test(upper, lower, **resampling.draws()).p_value
                for upper, lower in pairwise(ordered)]
    adjusted = [float(p) for p in adjust_p_values(p_values, correction)] if p_values else []
    groups = [1] * len(ordered)
    for i, p in enumerate(adjusted, start=1):
        groups[i] = groups[i - 1] + (p < alpha)
    return groups, p_values, adjusted
