"""Pure metric functions over plain ``qrels`` / ``run`` dicts (no I/O, no MTEB objects).

The names below are loaded from their modules on first use: numpy and scipy come with them, not with every module
of the package (the command line's options read :mod:`airbench_mteb.metrics.resampling` alone).
"""

from __future__ import annotations

import importlib
from typing import Any

# each public name -> the module of this package defining it
_MODULES = {
    "bootstrap": ("ConfidenceInterval", "bootstrap_ci", "bootstrap_cis", "paired_bootstrap_ci"),
    "pairwise": ("rcci_ci", "rcci_test", "ssci_ci"),
    "retrieval": ("MTEB_K_VALUES", "evaluate_run", "ranking"),
    "significance": ("RandomizationTest", "WinsTiesLosses", "adjust_p_values", "effect_size",
                     "paired_randomization_test", "paired_t_test_p", "wins_ties_losses"),
    "uncertainty": ("RankInterval", "benchmark_paired_test", "rank_intervals", "relative_delta_ci",
                    "relative_delta_difference_ci", "relative_delta_difference_test",
                    "stratified_bootstrap_mean_of_means"),
}
_HOME = {name: module for module, names in _MODULES.items() for name in names}

__all__ = sorted(_HOME)


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
