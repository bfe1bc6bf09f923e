"""The one module that touches mteb's private registries (tested with mteb 2.26.x; setup.cfg pins that range).

MTEB builds its task, benchmark and model registries once, at import, from its own
modules and offers no plugin hook; everything here adds the plugin's objects to those
structures. If a new mteb release moves them, only this file has to change.
"""

from __future__ import annotations

import functools
import importlib
import warnings
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mteb import AbsTask, Benchmark
    from mteb.models import ModelMeta

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
            # one clash (e.g. a user's registered dataset) must not keep every other task out of mteb
            warnings.warn(f"airbench-mteb: task {name!r} not registered: the name is already used by "
                          f"{_defined_at(known)}", stacklevel=2)
            continue
        registry[name] = cls
        new.append(cls)
    if new:
        kept = tuple(c for c in tasks_module.TASK_LIST if registry.get(c.metadata.name) is c)
        tasks_module.TASK_LIST = (*kept, *(c for c in new if c not in kept))


def task_owner(name: str) -> str | None:
    """Where the task mteb knows under ``name`` is defined (``module.Class``), or None if there is none."""
    register_all()
    known = importlib.import_module("mteb.get_tasks")._TASKS_REGISTRY.get(name)
    return None if known is None else _defined_at(known)


def _defined_at(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def register_benchmarks(make_benchmarks: Callable[[], Iterable[Benchmark]]) -> None:
    """Expose benchmarks to mteb.get_benchmark(s) and `mteb run -b`, built on first lookup.

    mteb imports its own benchmark definitions (about a second) only when a benchmark is
    looked up, so the plugin's join that lookup instead of forcing the import at start.
    """
    lookup = importlib.import_module("mteb.benchmarks.get_benchmark")
    if getattr(lookup._build_registry, "_airbench_mteb", False):
        return
    build_registry = lookup._build_registry

    @functools.cache
    def ours() -> dict[str, Benchmark]:
        return {b.name: b for b in make_benchmarks()}

    @functools.cache
    def with_plugin_benchmarks() -> dict[str, Benchmark]:
        return {**build_registry(), **ours()}

    with_plugin_benchmarks._airbench_mteb = True  # type: ignore[attr-defined]
    lookup._build_registry = with_plugin_benchmarks


def register_models(metas: Iterable[ModelMeta]) -> None:
    """Expose model aliases to mteb.get_model(_meta) and `mteb run -m`."""
    from mteb.models.model_implementations import MODEL_REGISTRY

    for meta in metas:
        MODEL_REGISTRY[meta.name] = meta


def resolve_model(name_or_folder: str) -> str:
    """A local model folder becomes a registered ``local/<name>`` model; other names pass through."""
    from pathlib import Path

    if Path(name_or_folder).is_dir():
        from airbench_mteb.models.local import local_model_meta

        meta = local_model_meta(name_or_folder)
        register_models([meta])
        return str(meta.name)
    return name_or_folder


def guard_results_against_other_data() -> None:
    """Never report results computed on other data than the data a plugin task reads now.

    MTEB skips a task whose results file already holds every split, whatever data produced it. Before
    its cache check, a plugin task records what it reads (``pin_data_revision``: the hub revision, or a
    fingerprint of the mirror files) as the dataset revision MTEB writes into results; an existing
    result with another revision stops the run with a message naming the flag that recomputes.
    """
    from airbench_mteb.data.errors import DatasetError

    evaluate_module = importlib.import_module("mteb.evaluate")
    check_cache = evaluate_module._check_cache
    if getattr(check_cache, "_airbench_mteb", False):
        return

    @functools.wraps(check_cache)
    def check_cache_on_this_data(task: AbsTask, meta: ModelMeta, cache: Any, overwrite_strategy: Any) -> tuple[Any, Any]:
        pin = getattr(task, "pin_data_revision", None)
        if pin is not None:
            pin()
        existing, missing = check_cache(task, meta, cache, overwrite_strategy)
        if pin is not None and existing is not None and existing.dataset_revision != task.metadata.revision:
            raise DatasetError(
                f"results of {task.metadata.name} for {meta.name} were computed on other data (dataset revision "
                f"{existing.dataset_revision!r}); this run reads {task.metadata.revision!r}. Recompute with "
                "--overwrite-strategy always (overwrite_strategy='always'), or write to another --output-folder.")
        return existing, missing

    check_cache_on_this_data._airbench_mteb = True  # type: ignore[attr-defined]
    evaluate_module._check_cache = check_cache_on_this_data


def write_results_atomically() -> None:
    """MTEB writes a result file in place, so a full disk or a kill leaves it cut off and the next run
    stops on it, and a FIFO or a read-only file at its path is written into; write it through the
    plugin's one safe writer instead (checked target, old file kept on failure)."""
    from pathlib import Path

    from mteb.results.task_result import TaskResult

    from airbench_mteb.data.files import atomic_path
    from airbench_mteb.data.per_query import write_kept

    to_disk = TaskResult.to_disk
    if getattr(to_disk, "_airbench_mteb", False):
        return

    @functools.wraps(to_disk)
    def to_disk_atomically(self: TaskResult, path: Path) -> None:
        with atomic_path(path) as scratch:
            to_disk(self, scratch)
        write_kept(self.task_name, self.dataset_revision, Path(path))  # the per-query scores, beside the file

    to_disk_atomically._airbench_mteb = True  # type: ignore[attr-defined]
    TaskResult.to_disk = to_disk_atomically  # type: ignore[method-assign]


def register_all() -> None:
    """Register every task family, benchmark and bundled model of the plugin (idempotent)."""
    global _registered
    if _registered:
        return
    from airbench_mteb.models import bundled_model_metas
    from airbench_mteb.tasks import all_benchmarks, all_task_classes

    register_tasks(all_task_classes())
    register_benchmarks(all_benchmarks)
    register_models(bundled_model_metas())
    guard_results_against_other_data()
    write_results_atomically()
    _registered = True
