"""MTEB descriptive statistics for plugin tasks, kept where the plugin can write and ship them.

MTEB reads ``metadata.descriptive_stats`` (and ``n_samples``) from ``metadata.descriptive_stat_path``,
which for its own tasks is a file inside the ``mteb`` package; ``calculate_descriptive_statistics``
writes there too. Plugin tasks use :class:`PluginTaskMetadata`, whose path is chosen per family:

* data with a fixed identity (co*cktail's published data, AIR-Bench's pinned hub revisions): a file
  shipped in ``airbench_mteb/descriptive_stats/<type>/<name>.json``, as MTEB ships its own;
* data built locally (IRSC): a cache inside the build, under the hash of the build's manifest, so a
  rebuild never shows the statistics of the previous build.

Where no file exists, a task may still know its sizes: AIR-Bench's catalog, the co*cktail paper's
dataset table, an IRSC build's manifest (or the IRSC paper's sizes). Those are the statistics until
computed ones replace them.
"""

from __future__ import annotations

import json
import logging
import tempfile
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from pathlib import Path
from typing import Any

from mteb import AbsTask, TaskMetadata
from mteb.types.statistics import DescriptiveStatistics
from pydantic import PrivateAttr

from airbench_mteb.data.errors import DatasetError
from airbench_mteb.data.files import atomic_write
from airbench_mteb.tasks.closed_book import is_closed_book

logger = logging.getLogger(__name__)

SHIPPED_STATS = Path(__file__).resolve().parent.parent / "descriptive_stats"

StatsFolder = Callable[[], Path]
KnownStats = Callable[[], "dict[str, DescriptiveStatistics] | None"]


class PluginTaskMetadata(TaskMetadata):
    """``TaskMetadata`` whose descriptive statistics live in a plugin folder instead of mteb's package.

    Set the folder (and any statistics known without the data) with :meth:`with_statistics`; both are
    functions, called at each lookup, because where the data are can change after the class is made.
    """

    _stats_folder: StatsFolder | None = PrivateAttr(default=None)  # None: the shipped folder
    _known_stats: KnownStats | None = PrivateAttr(default=None)

    def with_statistics(self, folder: StatsFolder | None = None, known: KnownStats | None = None) -> PluginTaskMetadata:
        self._stats_folder = folder
        self._known_stats = known
        return self

    @property
    def descriptive_stat_path(self) -> Path:
        folder = SHIPPED_STATS if self._stats_folder is None else self._stats_folder()
        return folder / str(self.type) / f"{self.name}.json"

    @property
    def descriptive_stats(self) -> dict[str, DescriptiveStatistics] | None:
        computed = super().descriptive_stats
        if computed is not None or self._known_stats is None:
            return computed
        return self._known_stats()


def compute_descriptive_statistics(tasks: Iterable[AbsTask], num_proc: int | None = None) -> dict[str, Path]:
    """Compute each task's statistics with MTEB's ``calculate_descriptive_statistics`` (loading its data).

    Returns the file written per task name. A task whose data are not at hand raises the loader's
    ``DatasetError``, which names what is missing.
    """
    written = {}
    for task in tasks:
        metadata = task.metadata
        target = metadata.descriptive_stat_path
        update: dict[str, Any] = {}
        evaluated = list(task.hf_subsets)
        if evaluated != list(metadata.hf_subsets):
            # MTEB walks every declared subset; a partial build (IRSC offline) has data for these only
            langs = metadata.hf_subsets_to_langscripts
            update["eval_langs"] = {subset: langs[subset] for subset in evaluated}
        task.load_data(num_proc=num_proc)
        scored = [split for split in metadata.eval_splits
                  if not any(is_closed_book(task.dataset[subset][split]) for subset in evaluated)]
        if not scored:
            raise DatasetError(f"{metadata.name}: no split has its qrels here, so there is nothing to describe")
        if scored != list(metadata.eval_splits):
            # MTEB's relevance statistics need qrels; a closed-book split (AIR-Bench test without them) is left out
            logger.warning("%s: statistics of %s only (no qrels here for the other splits)", metadata.name, scored)
            update["eval_splits"] = scored
        with tempfile.TemporaryDirectory() as staging:
            # MTEB writes its file with a plain open(): let it write a scratch copy, and publish atomically
            task.metadata = metadata.model_copy(update=update)
            if isinstance(task.metadata, PluginTaskMetadata):
                task.metadata.with_statistics(folder=partial(Path, staging))
            try:
                stats = task.calculate_descriptive_statistics(overwrite_results=True, num_proc=num_proc)
            finally:
                task.metadata = metadata
        with atomic_write(target) as handle:
            json.dump(stats, handle, indent=4)
        written[metadata.name] = target
        logger.info("%s: descriptive statistics written to %s", metadata.name, target)
    return written


def sizes_only(num_documents: int, queries: dict[str, int], relevant: dict[str, int]) -> dict[str, Any]:
    """Split statistics from sizes alone (MTEB's retrieval keys that sizes determine), per split."""
    return {split: subset_sizes(num_documents, count, relevant.get(split)) for split, count in queries.items()}


def subset_sizes(num_documents: int | None, num_queries: int, num_relevant: int | None = None,
                 relevant_per_query: float | None = None) -> dict[str, Any]:
    """One split or subset described by its sizes; ``None`` where a size is not known.

    ``num_samples`` is documents plus queries, as MTEB counts them; the queries alone when the number of
    documents is unknown. ``relevant_per_query`` defaults to ``num_relevant / num_queries``.
    """
    relevant = None
    if num_relevant is not None:
        average = relevant_per_query if relevant_per_query is not None else num_relevant / max(num_queries, 1)
        relevant = {"num_relevant_docs": num_relevant, "average_relevant_docs_per_query": average}
    return {"num_samples": (num_documents or 0) + num_queries, "num_documents": num_documents,
            "num_queries": num_queries, "relevant_docs_statistics": relevant}


def split_of_subsets(subsets: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    """A split of a task with several subsets: MTEB's split-level counts are the sums of its subsets'."""
    parts = list(subsets.values())
    documents = [part["num_documents"] for part in parts]
    relevant = [part["relevant_docs_statistics"] for part in parts]
    split = subset_sizes(None if None in documents else sum(documents), sum(part["num_queries"] for part in parts),
                         None if None in relevant else sum(r["num_relevant_docs"] for r in relevant))
    return {**split, "hf_subset_descriptive_stats": dict(subsets)}
