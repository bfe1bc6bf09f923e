"""Every task family of the plugin, generated from the catalogs."""

from __future__ import annotations

from mteb import AbsTask, Benchmark

from airbench_mteb.tasks.airbench import airbench_benchmarks, airbench_task_classes
from airbench_mteb.tasks.cocktail import cocktail_benchmarks, cocktail_task_classes, user_source_bias_task_classes
from airbench_mteb.tasks.irsc import irsc_benchmarks, irsc_task_classes, user_irsc_task_classes


def all_task_classes() -> list[type[AbsTask]]:
    """Every family's packaged tasks, and those of the user's registered datasets (AIR-Bench's among its own)."""
    return [*airbench_task_classes(), *cocktail_task_classes(), *irsc_task_classes(),
            *user_source_bias_task_classes(), *user_irsc_task_classes()]


def all_benchmarks() -> list[Benchmark]:
    return [*airbench_benchmarks(), *cocktail_benchmarks(), *irsc_benchmarks()]
