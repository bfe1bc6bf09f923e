"""The one module that touches mteb's private registries (tested with mteb 2.26.x).

MTEB builds its task, benchmark and model registries once, at import, from its own
modules and offers no plugin hook; everything here adds the plugin's objects to those
structures. If a new mteb release moves them, only this file has to change.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mteb import AbsTask, Benchmark
    from mteb.models import ModelMeta

TESTED_MTEB_VERSIONS = ">=2.26,<2.27"

_registered = False


def register_tasks(task_classes: Iterable[type[AbsTask]]) -> None:
    """Make task classes visible to get_task(s), filters, the CLI and TaskResult loading."""
    tasks_module = importlib.import_module("mteb.get_tasks")
    registry: dict[str, type[AbsTask]] = tasks_module._TASKS_REGISTRY
    new = []
    for cls in task_classes:
        name = cls.metadata.name
        known = registry.get(name)
        if known is cls:
            continue
        if known is not None and known.__module__ != cls.__module__:
            raise ValueError(f"task name {name!r} is already used by {known.__module__}.{known.__qualname__}")
        registry[name] = cls
        new.append(cls)
    if new:
        kept = tuple(c for c in tasks_module.TASK_LIST if registry.get(c.metadata.name) is c)
        tasks_module.TASK_LIST = (*kept, *(c for c in new if c not in kept))


def register_benchmarks(benchmarks: Iterable[Benchmark]) -> None:
    """Expose benchmarks to mteb.get_benchmark(s) and `mteb run -b`."""
    module = importlib.import_module("mteb.benchmarks.benchmarks")
    lookup = importlib.import_module("mteb.benchmarks.get_benchmark")
    for benchmark in benchmarks:
        attribute = "AIRBENCH_MTEB_" + "".join(ch if ch.isalnum() else "_" for ch in benchmark.name).upper()
        setattr(module, attribute, benchmark)
    lookup._build_registry.cache_clear()
    lookup._build_aliases_registry.cache_clear()


def register_models(metas: Iterable[ModelMeta]) -> None:
    """Expose model aliases to mteb.get_model(_meta) and `mteb run -m`."""
    from mteb.models.model_implementations import MODEL_REGISTRY

    for meta in metas:
        MODEL_REGISTRY[meta.name] = meta


def register_all() -> None:
    """Register every task family, benchmark and bundled model of the plugin (idempotent)."""
    global _registered
    if _registered:
        return
    from airbench_mteb.models import bundled_model_metas
    from airbench_mteb.tasks import all_benchmarks, all_task_classes

    register_tasks(all_task_classes())
    register_benchmarks(all_benchmarks())
    register_models(bundled_model_metas())
    _registered = True
