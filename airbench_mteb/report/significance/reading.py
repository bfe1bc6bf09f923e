"""Reading what ``airbench-mteb significance`` compares: its options, its tasks and the models' results
(:mod:`airbench_mteb.results`, which also holds their kept per-query scores to them).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from airbench_mteb.data.errors import DatasetError, OptionError
from airbench_mteb.metrics.resampling import Resampling
from airbench_mteb.metrics.significance import CORRECTIONS
from airbench_mteb.names import benchmark_named, check_task_names
from airbench_mteb.report.options import check_resampling_options
from airbench_mteb.results.reading import ModelTaskResult, model_labels, read_results
from airbench_mteb.tasks.closed_book import CLOSED_BOOK

if TYPE_CHECKING:
    from mteb import Benchmark


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
    folder = read_results(results, None, tasks)
    found = {label: {r.result.task_name: r for r in folder.found if r.label == label}
             for label in model_labels(folder, models, tasks)}
    if len(found) < 2:
        raise OptionError(f"{', '.join(models)} name one model only ({next(iter(found))}): "
                                "a comparison needs at least two")
    for label, by_task in found.items():
        missing = [task for task in tasks if task not in by_task]
        if missing:
            raise DatasetError(f"no results of model {label!r} on task {missing[0]!r} in {results}")
    return found


def splits_and_subsets(found: ModelTaskResult) -> list[tuple[str, str, bool]]:
    """(split, subset, closed-book?) of every score dict of a results file. Closed-book is what the file says
    (its ``closed_book`` entry); a NaN score without it is refused by the reader (:func:`read_results`)."""
    return [(split, scores["hf_subset"], CLOSED_BOOK in scores)
            for split, subsets in found.result.scores.items() for scores in subsets]
