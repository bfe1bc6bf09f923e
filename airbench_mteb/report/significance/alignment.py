"""Pairing what ``airbench-mteb significance`` compares: for each task, the splits and subsets every model was scored
on, and there each model's per-query vectors over the same queries, in one order.

The models of a comparison must have scored the same queries: a query one model's file lacks is an
error naming both files, never a 0 filled in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from airbench_mteb.data.errors import DatasetError, OptionError
from airbench_mteb.data.per_query import QueryScores
from airbench_mteb.report.bias_significance import BiasScores
from airbench_mteb.report.significance.reading import splits_and_subsets
from airbench_mteb.report.significance.records import MAIN_SCORE
from airbench_mteb.results.kept import KeptFile, common_queries, held_scores, read_kept_file
from airbench_mteb.results.panel import check_same_data, main_score
from airbench_mteb.results.reading import ModelTaskResult


@dataclass(frozen=True)
class Entry:
    """One scored split and subset of a task, and each model's per-query values there, aligned by query id."""

    task: str
    split: str
    subset: str
    metrics: Mapping[str, str]  # metric asked for (main_score resolved) -> the metric compared
    query_ids: tuple[str, ...]
    values: Mapping[str, Mapping[str, np.ndarray]]  # model -> metric compared -> values
    by_source: Mapping[str, Mapping[str, QueryScores]]  # model -> source -> its kept scores (mixed subsets only)


def task_entries(task: str, found: Mapping[str, Mapping[str, ModelTaskResult]], wanted: Sequence[str],
                 splits: Sequence[str] | None, notes: list[str]) -> list[Entry]:
    """The scored splits and subsets of ``task`` every model has, with their kept vectors."""
    by_model = {label: by_task[task] for label, by_task in found.items()}
    kept = {label: read_kept_file(result) for label, result in by_model.items()}
    first = next(iter(by_model.values()))
    main = main_score(task)
    metrics = {metric: main if metric == MAIN_SCORE else metric for metric in wanted}
    scored_by = {label: {(split, subset) for split, subset, _ in splits_and_subsets(result)}
                 for label, result in by_model.items()}
    entries = []
    for split, subset, closed in splits_and_subsets(first):
        if splits is not None and split not in splits:
            continue
        without = [label for label, scored in scored_by.items() if (split, subset) not in scored]
        if without:  # a model evaluated on fewer subsets (hf_subsets=...): compare where all were scored
            notes.append(f"{task} {split}/{subset}: not scored for {', '.join(without)}, left out")
            continue
        if closed:
            if splits is not None:
                raise OptionError(f"{task} split {split!r} (subset {subset!r}) is closed-book: it has no qrels "
                                  "here, so no per-query scores; score it where its qrels are available")
            notes.append(f"{task} {split}/{subset}: closed-book (no qrels), left out")
            continue
        check_same_data(task, by_model, split)
        entries.append(_entry(task, split, subset, kept, metrics))
    if not entries:
        raise DatasetError(f"{task} has no split and subset every model was scored on to compare"
                           + (f" among {', '.join(splits)}" if splits is not None else
                              " (closed-book splits have no qrels here)"))
    return entries


def _entry(task: str, split: str, subset: str, kept: Mapping[str, KeptFile], metrics: Mapping[str, str]) -> Entry:
    """The vectors of every model on one split and subset, in the order of their (common) sorted query ids."""
    compared = tuple(dict.fromkeys(metrics.values()))
    scores = {label: held_scores(file, split, subset, compared) for label, file in kept.items()}
    query_ids = common_queries(f"{task} {split}/{subset}", scores, kept)
    if len(query_ids) < 2:
        raise DatasetError(f"{task} {split}/{subset} has {len(query_ids)} scored query: a comparison needs at "
                           "least 2")
    values = {}
    for label, subset_scores in scores.items():
        order = sorted(range(len(query_ids)), key=subset_scores.query_ids.__getitem__)
        values[label] = {metric: subset_scores.metrics[metric][order] for metric in compared}
    by_source = {label: s.by_source for label, s in scores.items()} if all(s.by_source for s in scores.values()) else {}
    return Entry(task, split, subset, metrics, query_ids, values, by_source)


def bias_scores(entry: Entry) -> BiasScores | None:
    """The entry's per-source vectors for the source-bias comparison, when every model kept them."""
    import mteb

    from airbench_mteb.tasks.cocktail import SourceBiasTask

    task = mteb.get_task(entry.task)
    if not entry.by_source or not isinstance(task, SourceBiasTask):
        return None
    return BiasScores(entry.task, entry.split, entry.subset, task.sources[0][0],
                      tuple(dict.fromkeys(entry.metrics.values())), entry.by_source)
