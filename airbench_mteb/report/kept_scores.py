"""A panel of models' kept per-query scores on one task's split and subset, as a (queries x models) matrix.

The reports that recompute statistics of several models on one set of queries (``consistency``, scores
by query attribute) read them here: the models named by label or name (:mod:`airbench_mteb.report.results`),
every model's results on the task checked to be on the same data, the subset named or the task's only
one, and the vectors (:mod:`airbench_mteb.data.per_query`, held to their results file as ``significance``
holds them) aligned by query id.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from airbench_mteb.data.errors import DatasetError
from airbench_mteb.data.per_query import RERUN_HINT
from airbench_mteb.names import task_named
from airbench_mteb.report.results import ModelTaskResult
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


def set_results(everything: Sequence[ModelTaskResult], labels: Sequence[str], query_set: QuerySet,
                results: Path) -> dict[str, ModelTaskResult]:
    """Every labelled model's results on ``query_set``'s task (all required), all on the same data."""
    by_label = {r.label: r for r in everything if r.result.task_name == query_set.task}
    missing = [label for label in labels if label not in by_label]
    if missing:
        raise DatasetError(f"no results of model {missing[0]!r} on task {query_set.task!r} in {results}: run it there")
    found = {label: by_label[label] for label in labels}
    identities = split_data(found.values(), query_set.split)
    (first, result), *others = found.items()
    for label, other in others:
        if identities[other.path] != identities[result.path]:
            raise DatasetError(f"{query_set.task}: {first} was scored on data {identities[result.path]!r} "
                               f"({result.path}), {label} on {identities[other.path]!r} ({other.path}): "
                               "rerun both on the same data")
    return found


def split_data(found: Iterable[ModelTaskResult], split: str) -> dict[Path, str]:
    """What each result's scores of ``split`` rest on: the corpus and that split's queries and qrels (the score dict's
    ``split_data_revision``) where every result records it, else (results of older versions) all its data."""
    found = list(found)
    recorded = [next((row[SPLIT_DATA_KEY] for row in r.result.scores.get(split, []) if SPLIT_DATA_KEY in row), None)
                for r in found]
    if any(value is None for value in recorded):
        return {r.path: r.result.dataset_revision for r in found}
    return {r.path: str(value) for r, value in zip(found, recorded, strict=True)}


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
    models in ``found``'s order. Each model's values are held to its results file as ``significance`` holds them
    (the digest its results record, finite, averaging to the results' score); the models must have scored the
    same queries."""
    from airbench_mteb.report.significance.reading import held_scores, kept_scores

    subset = str(query_set.subset)
    scores = {label: held_scores(label, result, kept_scores(result), query_set.split, subset, (metric,))
              for label, result in found.items()}
    (first, first_scores), *others = scores.items()
    for label, other in others:
        only = sorted(set(first_scores.query_ids) ^ set(other.query_ids))
        if only:
            holder = first if only[0] in first_scores.query_ids else label
            raise DatasetError(f"{query_set}: query {only[0]!r} is scored for {holder} only "
                               f"({len(first_scores.query_ids)} queries for {first}, {len(other.query_ids)} for "
                               f"{label}): {RERUN_HINT}")
    queries = tuple(sorted(first_scores.query_ids))
    columns = [dict(zip(s.query_ids, s.metrics[metric], strict=True)) for s in scores.values()]
    return queries, np.array([[column[query] for column in columns] for query in queries])
