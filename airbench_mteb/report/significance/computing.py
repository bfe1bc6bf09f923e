"""The figures of ``airbench-mteb significance``: every model pair compared on every aligned entry, p-values adjusted
over the report's family, and the benchmark level (stratified intervals, paired tests, rank intervals).

All numbers come from :mod:`airbench_mteb.metrics`; nothing here reads or renders.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from airbench_mteb.metrics.bootstrap import paired_bootstrap_ci
from airbench_mteb.metrics.resampling import Resampling
from airbench_mteb.metrics.significance import (
    Correction,
    adjust_p_values,
    effect_size,
    paired_randomization_test,
    paired_t_test_p,
    wins_ties_losses,
)
from airbench_mteb.metrics.uncertainty import benchmark_paired_test, rank_intervals, stratified_bootstrap_mean_of_means
from airbench_mteb.report.significance.alignment import Entry
from airbench_mteb.report.significance.records import BenchmarkComparison, BenchmarkLevel, BenchmarkModel, Comparison


def compare_entries(entries: Sequence[Entry], resampling: Resampling) -> list[Comparison]:
    comparisons = []
    for entry in entries:
        models = list(entry.values)
        for metric in dict.fromkeys(entry.metrics.values()):
            for i, model_a in enumerate(models):
                for model_b in models[i + 1:]:
                    comparisons.append(_compare(entry, metric, model_a, model_b, resampling))
    return comparisons


def _compare(entry: Entry, metric: str, model_a: str, model_b: str, resampling: Resampling) -> Comparison:
    a, b = entry.values[model_a][metric], entry.values[model_b][metric]
    interval = paired_bootstrap_ci(a, b, **resampling.interval())
    test = paired_randomization_test(a, b, **resampling.draws())
    counts = wins_ties_losses(a, b)
    return Comparison(entry.task, entry.split, entry.subset, metric, model_a, model_b, len(a), float(a.mean()),
                      float(b.mean()), float(a.mean() - b.mean()), interval.low, interval.high, test.p_value,
                      test.p_value, paired_t_test_p(a, b), effect_size(a, b), counts.wins, counts.ties, counts.losses,
                      test.exact, interval.method)


def adjusted(comparisons: list[Comparison], correction: Correction) -> list[Comparison]:
    adjusted = adjust_p_values([c.p_value for c in comparisons], correction) if comparisons else []
    return [replace(c, p_adjusted=float(p)) for c, p in zip(comparisons, adjusted, strict=True)]


def benchmark_level(benchmark: str, metric: str, entries: Sequence[Entry], models: Sequence[str],
                     correction: Correction, resampling: Resampling) -> BenchmarkLevel:
    """Each model's mean over the benchmark's tasks, as MTEB averages them: the mean over tasks of each task's
    mean over its scored splits and subsets. Every split and subset is a stratum whose queries are resampled
    on their own; stratum ``s`` of a task with ``E`` of them among ``T`` tasks is scaled by ``S / (T E)`` so
    that the unweighted mean over the ``S`` strata the statistics take is exactly that weighted mean."""
    tasks = tuple(dict.fromkeys(entry.task for entry in entries))
    per_task = {task: sum(entry.task == task for entry in entries) for task in tasks}
    scale = [len(entries) / (len(tasks) * per_task[entry.task]) for entry in entries]
    strata = {model: [entry.values[model][entry.metrics[metric]] * factor
                      for entry, factor in zip(entries, scale, strict=True)] for model in models}
    intervals = {model: stratified_bootstrap_mean_of_means(strata[model], **resampling.interval())
                 for model in models}
    ranks = rank_intervals(strata, level=resampling.level, **resampling.draws()) if len(models) >= 3 else {}
    scores = tuple(BenchmarkModel(model, interval.estimate, interval.low, interval.high, interval.method,
                                  *(_rank_fields(ranks.get(model))))
                   for model, interval in intervals.items())
    pairs = []
    for i, model_a in enumerate(models):
        for model_b in models[i + 1:]:
            differences = [a - b for a, b in zip(strata[model_a], strata[model_b], strict=True)]
            interval = stratified_bootstrap_mean_of_means(differences, **resampling.interval())
            test = benchmark_paired_test(strata[model_a], strata[model_b], **resampling.draws())
            pairs.append(BenchmarkComparison(model_a, model_b, intervals[model_a].estimate,
                                             intervals[model_b].estimate, interval.estimate, interval.low,
                                             interval.high, test.p_value, test.p_value, test.exact))
    adjusted = adjust_p_values([pair.p_value for pair in pairs], correction)
    return BenchmarkLevel(benchmark, metric, tasks, sum(len(entry.query_ids) for entry in entries), scores,
                          tuple(replace(pair, p_adjusted=float(p)) for pair, p in zip(pairs, adjusted, strict=True)))


def _rank_fields(rank: Any) -> tuple[int | None, int | None, int | None]:
    return (rank.rank, rank.low, rank.high) if rank is not None else (None, None, None)
