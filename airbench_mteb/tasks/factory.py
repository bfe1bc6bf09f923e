"""The one task-class factory: every family supplies what differs, the factory makes a real class.

A generated class has complete ``PluginTaskMetadata`` (text retrieval, MTEB's vocabulary), its
description as docstring, and the family module as ``__module__``; the family module puts it in
its globals (:func:`expose`), so ``airbench_mteb.tasks.<family>.<ClassName>`` imports it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from airbench_mteb.tasks.base import PluginRetrievalTask
from airbench_mteb.tasks.statistics import KnownStats, PluginTaskMetadata, StatsFolder

Task = TypeVar("Task", bound=PluginRetrievalTask)


def build_task_class(base: type[Task], class_name: str, *, module: str, attributes: Mapping[str, Any] | None = None,
                    stats_folder: StatsFolder | None = None, known_stats: KnownStats | None = None,
                    **metadata: Any) -> type[Task]:
    """A subclass of ``base`` named ``class_name`` with ``attributes`` and its task metadata.

    Args:
        base: the family's task class (loading and scoring).
        class_name: a Python identifier (the task's name where that is one).
        module: the family module the class belongs to.
        attributes: class attributes of the family (its catalog entry, sources, ...).
        stats_folder: where its descriptive statistics live (default: the package's folder).
        known_stats: statistics known without the data (e.g. catalog sizes).
        metadata: ``TaskMetadata`` fields; type, category, modality and dialect are those of every plugin task.
    """
    task_metadata = PluginTaskMetadata(type="Retrieval", category="t2t", modalities=["text"], dialect=[], **metadata)
    task_metadata.with_statistics(folder=stats_folder, known=known_stats)
    namespace = {"metadata": task_metadata, "__module__": module, "__doc__": task_metadata.description,
                 **(attributes or {})}
    return type(class_name, (base,), namespace)


def expose(classes: Iterable[type[PluginRetrievalTask]], namespace: dict[str, Any]) -> None:
    """Make generated classes importable from their family module (``namespace``: its ``globals()``)."""
    namespace.update({cls.__name__: cls for cls in classes})
