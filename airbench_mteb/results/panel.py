"""A panel of models' kept per-query scores on one task's split and subset, as a (queries x models) matrix.

The reports that recompute statistics of several models on one set of queries (``consistency``, scores
by query attribute, the leaderboard's intervals) read them here: the models named by label
(:func:`~airbench_mteb.results.reading.model_labels`), every model's results on the task checked to be on the
same data, the subset named or the task's only one, and the vectors (held to their results file by
:func:`~airbench_mteb.results.kept.held_scores`, as every report holds them) aligned by query id.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from airbench_mteb.data.errors import DatasetError
from airbench_mteb.names import task_named
from airbench_mteb.results.kept import common_queries, held_scores, read_kept_file
from airbench_mteb.results.reading import ModelTaskResult, ResultsFolder
from airbench_mteb.tasks.base import SPLIT_DATA_KEY

MAIN_SCORE = "main_score"  # the metric name that stands for each task's own main score


@dataclass(frozen=True)
class QuerySet:
    """Where scores are read: a task's split and subset (``None``: the task's only one)."""

    task: str
    split: str = "test"
    subset: str | None = None

    def __str__(self) -> str:
        return f"{self.task} {self.split}" + (f"/{self.subset}" if self.subset else "")


def set_results(folder: ResultsFolder, labels: Sequence[str], query_set: QuerySet) -> dict[str, ModelTaskResult]:
    """Every labelled model's results on ``query_set``'s task (all required), all on the same data."""
    by_label = {r.label: r for r in folder.found if r.result.task_name == query_set.task}
    missing = [label for label in labels if label not in by_label]
    if missing:
        raise DatasetError(f"no results of model {missing[0]!r} on task {query_set.task!r} in {folder.path}: "
                           "run it there")
    found = {label: by_label[label] for label in labels}
    check_same_data(query_set.task, found, query_set.split)
    return found


def check_same_data(task: str, found: Mapping[str, ModelTaskResult], split: str) -> None:
    """The one rule of every report that sets models side by side: their scores of ``split`` rest on the same data
    (:func:`split_data`); else a DatasetError naming both files."""
    data = {label: split_data(result, split) for label, result in found.items()}
    (first, result), *others = found.items()
    for label, other in others:
        if data[label] != data[first]:
            raise DatasetError(f"{task}: {first} was scored on data {data[first]!r} ({result.path}), {label} "
                               f"on {data[label]!r} ({other.path}): rerun both on the same data")


def split_data(found: ModelTaskResult, split: str) -> str:
    """What a result's scores of ``split`` rest on: the corpus and that split's queries and qrels (the score dict's
    ``split_data_revision``); a split without one (searched closed-book: nothing scored) rests on all its data."""
    recorded = next((row[SPLIT_DATA_KEY] for row in found.result.scores.get(split, []) if SPLIT_DATA_KEY in row), None)
    return found.result.dataset_revision if recorded is None else str(recorded)


def resolved(query_set: QuerySet, found: Mapping[str, ModelTaskResult]) -> QuerySet:
    """``query_set`` with its subset named, checked against the split and subsets the results hold."""
    result = next(iter(found.values())).result
    if query_set.split not in result.scores:
        raise DatasetError(f"{query_set.task} has no scored split {query_set.split!r} "
                           f"(scored: {', '.join(sorted(result.scores)) or 'none'})")
    subsets = [row["hf_subset"] for row in result.scores[query_set.split]]
    if query_set.subset is None:
        if len(subsets) != 1:
            raise DatasetError(f"{query_set.task} {query_set.split} has several subsets ({', '.join(subsets)}): "
                               "name one")
        return replace(query_set, subset=subsets[0])
    if query_set.subset not in subsets:
        raise DatasetError(f"{query_set.task} {query_set.split} has no subset {query_set.subset!r} "
                           f"(subsets: {', '.join(subsets)})")
    return query_set


def main_score(task: str) -> str:
    return task_named(task).metadata.main_score


def score_matrix(query_set: QuerySet, found: Mapping[str, ModelTaskResult],
                 metric: str) -> tuple[tuple[str, ...], np.ndarray]:
    """The sorted query ids and the (queries x models) per-query values of ``metric`` on a resolved ``query_set``,
    models in ``found``'s order. Each model's values are held to its results file
    (:func:`~airbench_mteb.results.kept.held_scores`); the models must have scored the same queries."""
    kept = {label: read_kept_file(result) for label, result in found.items()}
    scores = {label: held_scores(file, query_set.split, str(query_set.subset), (metric,))
              for label, file in kept.items()}
    queries = common_queries(str(query_set), scores, kept)
    columns = [dict(zip(s.query_ids, s.metrics[metric], strict=True)) for s in scores.values()]
    return queries, np.array([[column[query] for column in columns] for query in queries])
