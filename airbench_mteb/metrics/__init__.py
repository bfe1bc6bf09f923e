"""Pure metric functions over plain ``qrels`` / ``run`` dicts (no I/O, no MTEB objects)."""

from __future__ import annotations

from airbench_mteb.metrics.bootstrap import ConfidenceInterval, bootstrap_ci, bootstrap_cis, paired_bootstrap_ci
from airbench_mteb.metrics.pairwise import rcci_ci, rcci_test, ssci_ci
from airbench_mteb.metrics.retrieval import MTEB_K_VALUES, evaluate_run, ranking
from airbench_mteb.metrics.significance import (
    RandomizationTest,
    WinsTiesLosses,
    adjust_p_values,
    effect_size,
    paired_randomization_test,
    paired_t_test_p,
    wins_ties_losses,
)
from airbench_mteb.metrics.uncertainty import (
    RankInterval,
    benchmark_paired_test,
    rank_intervals,
    relative_delta_ci,
    relative_delta_difference_ci,
    relative_delta_difference_test,
    stratified_bootstrap_mean_of_means,
)

__all__ = [
    "MTEB_K_VALUES",
    "ConfidenceInterval",
    "RandomizationTest",
    "RankInterval",
    "WinsTiesLosses",
    "adjust_p_values",
    "benchmark_paired_test",
    "bootstrap_ci",
    "bootstrap_cis",
    "effect_size",
    "evaluate_run",
    "paired_bootstrap_ci",
    "paired_randomization_test",
    "paired_t_test_p",
    "rank_intervals",
    "ranking",
    "rcci_ci",
    "rcci_test",
    "relative_delta_ci",
    "relative_delta_difference_ci",
    "relative_delta_difference_test",
    "ssci_ci",
    "stratified_bootstrap_mean_of_means",
    "wins_ties_losses",
]
