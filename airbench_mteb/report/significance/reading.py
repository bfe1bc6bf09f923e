"""Reading what ``airbench-mteb significance`` compares: its options, the models' results, and their kept per-query
scores, each held to the results file beside it.

A per-query file is trusted only as far as it reproduces its results: on every split and subset
compared, its digest must be the one the results' score dict records (any edit is refused; results
written before the digest existed record none), each metric's per-query values must be finite and
average to the results file's score (to within half a unit of the last decimal MTEB keeps of that
metric, :func:`~airbench_mteb.metrics.per_query.stored_decimals`, plus 1e-9), and a mixed subset's
per-source vectors must score the same queries. A file with queries added, dropped or changed is
refused with one line naming it (and the metric and both values where a mean differs).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from airbench_mteb.data.errors import DatasetError, OptionError
from airbench_mteb.data.files import read_json
from airbench_mteb.data.per_query import (
    RERUN_HINT,
    KeptScores,
    QueryScores,
    check_bound,
    per_query_path,
    read_kept_for,
)
from airbench_mteb.metrics.per_query import stored_decimals
from airbench_mteb.metrics.resampling import Resampling
from airbench_mteb.metrics.significance import CORRECTIONS
from airbench_mteb.names import benchmark_named, check_task_names
from airbench_mteb.report.options import check_resampling_options
from airbench_mteb.report.results import ModelTaskResult, model_labels, read_results
from airbench_mteb.report.significance.records import SignificanceError
from airbench_mteb.tasks.closed_book import CLOSED_BOOK

if TYPE_CHECKING:
    from mteb import Benchmark

_MATCH = 1e-9  # how far a per-query mean may be from its results score beyond that rounding


def check_options(models: Sequence[str], correction: str, resampling: Resampling, alpha: float) -> None:
    if len(set(models)) < 2:
        raise OptionError(f"a comparison needs at least two different models, got {list(models)!r}")
    if correction not in CORRECTIONS:
        raise OptionError(f"unknown correction {correction!r}; use one of {', '.join(CORRECTIONS)}")
    check_resampling_options(resampling, alpha=alpha)


def task_names(tasks: Sequence[str],
               benchmark: str | Benchmark | None) -> tuple[tuple[str, ...], str, frozenset[str]]:
    """The tasks to compare (named ones first, then the benchmark's), the benchmark's name and its tasks."""
    check_task_names(tasks)
    if isinstance(benchmark, str):
        benchmark = benchmark_named(benchmark)
    in_benchmark = tuple(task.metadata.name for task in benchmark.tasks) if benchmark is not None else ()
    names = tuple(dict.fromkeys((*tasks, *in_benchmark)))
    if not names:
        raise OptionError("no task to compare: name tasks (-t) or a benchmark (-b)")
    return names, benchmark.name if benchmark is not None else "", frozenset(in_benchmark)


def model_results(results: Path, models: Sequence[str],
                  tasks: Sequence[str]) -> dict[str, dict[str, ModelTaskResult]]:
    """``{model label: {task: result}}`` for each requested model, in the order asked; every task present."""
    everything = read_results(results, None, tasks)
    found = {label: {r.result.task_name: r for r in everything if r.label == label}
             for label in model_labels(everything, models, results, tasks)}
    if len(found) < 2:
        raise SignificanceError(f"{', '.join(models)} name one model only ({next(iter(found))}): "
                                "a comparison needs at least two")
    for label, by_task in found.items():
        missing = [task for task in tasks if task not in by_task]
        if missing:
            raise SignificanceError(f"no results of model {label!r} on task {missing[0]!r} in {results}")
    return found


def main_score(task: str) -> str:
    import mteb

    return mteb.get_task(task).metadata.main_score


def splits_and_subsets(found: ModelTaskResult) -> list[tuple[str, str, bool]]:
    """(split, subset, closed-book?) of every score dict of a results file. Closed-book is what the file says
    (its ``closed_book`` entry); a NaN score without it is refused by the reader (:func:`read_results`)."""
    return [(split, scores["hf_subset"], CLOSED_BOOK in scores)
            for split, subsets in found.result.scores.items() for scores in subsets]


def kept_scores(found: ModelTaskResult) -> tuple[KeptScores, Path]:
    """The per-query scores kept beside a results file (checked to be its model's, on its data), and their file."""
    meta_path = found.path.parent / "model_meta.json"
    revision = read_json(meta_path).get("revision") if meta_path.is_file() else None
    kept = read_kept_for(found.path, found.model, revision, found.result.task_name, found.result.dataset_revision)
    return kept, per_query_path(found.path)


def held_scores(label: str, found: ModelTaskResult, kept: tuple[KeptScores, Path], split: str, subset: str,
                metrics: Sequence[str]) -> QueryScores:
    """One model's kept scores of ``metrics`` on one split and subset, held to its results file (module docstring).

    Raises:
        DatasetError: a closed-book split (searched, never scored), no kept scores of that split and subset,
            scores that are not those the results were written with (digest), a value that is not finite, a
            mean that is not the results' score, or per-source vectors of other queries; each names the file.
        SignificanceError: a metric without per-query values.
    """
    record, path = kept
    results = next(s for s in found.result.scores[split] if s["hf_subset"] == subset)
    if CLOSED_BOOK in results:
        raise DatasetError(f"{record.task_name} {split}/{subset} is closed-book for {label} (searched, not scored: "
                           "no qrels), so it has no per-query scores; compare a scored split",
                           path=found.path)
    scores = record.scores.get(split, {}).get(subset)
    if scores is None:
        raise DatasetError(f"no per-query scores of {split}/{subset} for {label} (that split was scored by an "
                           "older version): rerun the model with --overwrite-strategy always", path=path)
    missing = [metric for metric in metrics if metric not in scores.metrics]
    if missing:
        raise SignificanceError(f"metric {missing[0]!r} has no per-query values for {record.task_name} "
                                f"{split}/{subset} (kept: {', '.join(scores.metrics)})")
    check_bound(scores, results, f"{split}/{subset}", path, found.path)
    twice = next((qid for qid, count in Counter(scores.query_ids).items() if count > 1), None)
    if twice is not None:
        raise DatasetError(f"query {twice!r} is scored twice in {split}/{subset}: {RERUN_HINT}", path=path)
    for metric in metrics:
        _check_values(scores, metric, f"{split}/{subset}", path)
        _check_mean(scores.metrics[metric], results.get(metric), metric, f"{split}/{subset}", path, found.path)
    for source, source_scores in scores.by_source.items():
        where = f"{split}/{subset}/{source}"
        if source_scores.query_ids != scores.query_ids:
            raise DatasetError(f"per-query scores of source {source!r} ({where}) are of other queries than "
                               f"{split}/{subset}'s ({len(source_scores.query_ids)} against "
                               f"{len(scores.query_ids)}): {RERUN_HINT}", path=path)
        for metric in source_scores.metrics:
            _check_values(source_scores, metric, where, path)
    return scores


def _check_values(scores: QueryScores, metric: str, where: str, path: Path) -> None:
    values = scores.metrics[metric]
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        raise DatasetError(f"per-query {metric} of {where} is {values[bad[0]]} for query "
                           f"{scores.query_ids[bad[0]]!r}: every value must be a finite number; {RERUN_HINT}",
                           path=path)


def _check_mean(values: np.ndarray, score: Any, metric: str, where: str, path: Path, results_path: Path) -> None:
    """The per-query values average to the results' score (no query added, dropped or changed)."""
    if isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
        raise DatasetError(f"the results file {results_path} has no {metric} of {where} ({score!r}) to hold the "
                           f"per-query values to", path=path)
    mean = float(values.mean()) if values.size else math.nan
    rounding = 0.5 * 10.0**-stored_decimals(metric)  # the score is MTEB's mean rounded to that many decimals
    if not abs(mean - score) <= rounding + _MATCH:
        raise DatasetError(f"per-query {metric} of {where} average {mean!r} over {values.size} queries, but the "
                           f"results file {results_path} says {score!r}: {RERUN_HINT}", path=path)
