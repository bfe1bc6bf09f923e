"""Every task family of the plugin, generated from the catalogs."""

from __future__ import annotations

from mteb import AbsTask, Benchmark

from airbench_mteb.tasks.airbench import airbench_benchmarks, airbench_task_classes


def all_task_classes() -> list[type[AbsTask]]:
    return [*airbench_task_classes()]


def all_benchmarks() -> list[Benchmark]:
    return [*airbench_benchmarks()]
