"""What the leaderboard is built from: the AIR-Bench tasks of a benchmark, and every run's results on one split.

A run is one retriever, or one retriever re-ranked by a reranker (the plugin names such a model
``<retriever>__reranked-by__<reranker>``, :mod:`airbench_mteb.names`); its label keeps
the experiment's parameters (``airbench-mteb/bm25 (b=0.75, k1=1.2)``), so two experiments of one
model are two rows, and so are two revisions of one label (a re-ranked run at two depths, ``..._top10`` and
``..._top100``: a row is one configuration), each label marked with what differs (``[top10]``). Results come
from :func:`airbench_mteb.results.reading.read_results` (the latest file of a label, revision and task wins).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from airbench_mteb.catalog import AirBenchEntry
from airbench_mteb.data.errors import DatasetError, OptionError
from airbench_mteb.names import benchmark_named, split_reranked_name
from airbench_mteb.report.leaderboard.table import NO_RERANKER
from airbench_mteb.results.reading import ModelTaskResult, ResultsFolder, read_results
from airbench_mteb.tasks.closed_book import CLOSED_BOOK


@dataclass(frozen=True)
class Run:
    """One row of the leaderboard: a retriever and its reranker (``NoReranker``), and the result label behind them."""

    retriever: str
    reranker: str
    label: str


@dataclass(frozen=True)
class TaskScores:
    """One run's scores on one task's split: MTEB's score dict (None when closed-book) and its results file."""

    result: ModelTaskResult
    scores: Mapping[str, Any] | None

    @property
    def closed_book(self) -> bool:
        return self.scores is None


def benchmark_entries(benchmark: str) -> tuple[str, tuple[AirBenchEntry, ...]]:
    """(version, catalog entries) of an AIR-Bench benchmark (``AIR-Bench_24.05``, ``AIR-Bench_24.05_qa``, ...)."""
    tasks = benchmark_named(benchmark).tasks
    entries = tuple(entry for task in tasks if isinstance(entry := getattr(task, "entry", None), AirBenchEntry))
    versions = {entry.version for entry in entries}
    if not entries or len(entries) != len(tasks) or len(versions) != 1:
        raise OptionError(f"benchmark {benchmark!r} is not one AIR-Bench version (the leaderboard shows "
                          "AIR-Bench_24.04, AIR-Bench_24.05 and their _qa and _long-doc parts)")
    return versions.pop(), entries


def run_of(found: ModelTaskResult) -> Run:
    """The retriever and reranker a result label names (a re-ranked model's name holds both).

    Raises:
        DatasetError: a re-ranked model whose reranker's name is empty or the app's ``NoReranker`` (its row
            would read as the retriever's alone).
    """
    retriever, reranker = split_reranked_name(found.model)
    if reranker is not None and reranker in ("", NO_RERANKER):
        raise DatasetError(f"{found.path}: model {found.model!r} names the reranker {reranker!r}, which the "
                           f"leaderboard app reads as no reranker ({NO_RERANKER}): rename the reranker")
    return Run(retriever + found.label[len(found.model):], reranker or NO_RERANKER, found.label)


def _check_one_label_per_row(runs: Sequence[Run]) -> None:
    """Two result labels that name one retriever and reranker would be one row: refused, naming both."""
    rows: dict[tuple[str, str], str] = {}
    for run in runs:
        other = rows.setdefault((run.retriever, run.reranker), run.label)
        if other != run.label:
            raise DatasetError(f"the results of {other!r} and {run.label!r} would be one row (retriever "
                               f"{run.retriever!r}, reranker {run.reranker!r}): rename one of the models")


def split_scores(found: ModelTaskResult, split: str) -> TaskScores | None:
    """The run's scores on ``split`` (its only subset: AIR-Bench tasks have one), None when that split was not run."""
    rows = found.result.scores.get(split)
    if not rows:
        return None
    if len(rows) != 1:
        raise DatasetError(f"{found.path}: {split} has {len(rows)} subsets; an AIR-Bench task has one")
    row = rows[0]
    if CLOSED_BOOK in row:
        return TaskScores(found, None)
    main = row.get("main_score")
    if not isinstance(main, int | float) or not math.isfinite(main):
        raise DatasetError(f"{found.path}: {split} has no main score ({main!r}) and was not searched "
                           "closed-book; the result is broken, rerun it (--overwrite-strategy always)")
    return TaskScores(found, row)


def read_runs(results: Path, entries: Sequence[AirBenchEntry],
              split: str) -> tuple[ResultsFolder, dict[Run, dict[str, TaskScores]]]:
    """Every result on the entries' tasks, and each run's scores on ``split`` by task (runs sorted by name)."""
    folder = read_results(results, None, [entry.task_name for entry in entries], configurations=True)
    runs: dict[Run, dict[str, TaskScores]] = {}
    for found in folder.found:
        scores = split_scores(found, split)
        if scores is not None:
            runs.setdefault(run_of(found), {})[found.result.task_name] = scores
    _check_one_label_per_row(list(runs))
    if not runs:
        raise DatasetError(f"no results of {', '.join(sorted({e.version for e in entries}))} tasks on the "
                           f"{split} split in {results} (run them with mteb run --eval-splits {split})")
    return folder, dict(sorted(runs.items(), key=lambda item: (item[0].retriever, item[0].reranker)))
