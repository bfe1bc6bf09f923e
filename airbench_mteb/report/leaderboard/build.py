"""The leaderboard of one AIR-Bench version and split from MTEB results: every tab and metric, with intervals.

Columns are the version's datasets that have the split (on test: exactly the leaderboard's columns,
its datasets with a test split) and that some run has a value on; a column every run searched
closed-book (no qrels here) is listed apart (:attr:`TabColumns.closed_book`), as the app never sees it.
Rows are the runs with any result in the tab. A closed-book cell counts as missing: its row's
Average is -1, as the app computes it from the result files, which hold no value for it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

import numpy as np

from airbench_mteb import __version__
from airbench_mteb.catalog import AirBenchEntry
from airbench_mteb.data.errors import OptionError
from airbench_mteb.metrics.resampling import DEFAULT_RESAMPLING, Resampling
from airbench_mteb.metrics.significance import Correction
from airbench_mteb.report.leaderboard.board import Leaderboard
from airbench_mteb.report.leaderboard.reading import Run, TaskScores, benchmark_entries, read_runs
from airbench_mteb.report.leaderboard.table import (
    LEADERBOARD_METRICS,
    MISSING_AVERAGE,
    TAB_TITLES,
    Cell,
    Column,
    GroupTest,
    Interval,
    Row,
    Tab,
    column_name,
    leaderboard_average,
    leaderboard_ranks,
)
from airbench_mteb.report.leaderboard.uncertainty import (
    INTERVAL_METRICS,
    average_interval,
    cell_intervals,
    query_values,
    rank_groups,
)
from airbench_mteb.report.options import check_resampling_options
from airbench_mteb.results.reading import ResultsFolder

SPLITS = ("dev", "test")


@dataclass(frozen=True)
class TabData:
    """What every metric of one tab is computed from."""

    task_type: str
    columns: tuple[Column, ...]
    closed_book: tuple[Column, ...]  # columns without any value: every run searched them closed-book
    runs: Mapping[Run, Mapping[str, TaskScores]]  # the tab's rows: runs with any result in it
    values: Mapping[str, Mapping[str, Mapping[str, np.ndarray]]]  # task -> metric -> label -> per-query x 100
    intervals: Mapping[str, Mapping[tuple[str, str], Interval]]  # task -> (metric, label) -> interval


def check_options(split: str, resampling: Resampling, alpha: float) -> None:
    if split not in SPLITS:
        raise OptionError(f"split {split!r}: the leaderboard has {' and '.join(SPLITS)}")
    check_resampling_options(resampling, alpha=alpha)


def leaderboard(results: Path, *, split: str = "dev", benchmark: str = "AIR-Bench_24.05",
                resampling: Resampling = DEFAULT_RESAMPLING, correction: Correction = "holm",
                alpha: float = 0.05) -> Leaderboard:
    """The AIR-Bench leaderboard of ``benchmark``'s version on ``split`` from the MTEB results in ``results``.

    Every tab (QA, Long-Doc) and every metric the leaderboard offers (:data:`LEADERBOARD_METRICS`), computed by the
    leaderboard's rules (:mod:`.table`); for the metrics kept per query (:data:`INTERVAL_METRICS`) each cell and
    Average gets a bootstrap interval and each row a rank group (:mod:`.uncertainty`; by ``resampling``, groups at
    ``alpha`` after ``correction``).

    Raises:
        OptionError: a split other than dev and test, not an AIR-Bench benchmark or none of its datasets with
            ``split``, resamples, seed, level or alpha out of range.
        UnknownNameError: a benchmark MTEB does not register.
        DatasetError: no result of the benchmark on ``split``, runs of one task scored on different data or queries,
            per-query values missing or not reproducing their results file (rerun with ``--overwrite-strategy always``).
    """
    check_options(split, resampling, alpha)
    version, entries = benchmark_entries(benchmark)
    entries = tuple(entry for entry in entries if split in entry.splits)
    if not entries:
        raise OptionError(f"{benchmark} has no dataset with a {split} split")
    folder, runs = read_runs(results, entries, split)
    tabs, notes = {}, []
    for task_type in TAB_TITLES:
        typed = [entry for entry in entries if entry.task_type == task_type]
        data = _tab_data(task_type, typed, runs, folder, split, resampling)
        if data is None:
            continue
        tabs[task_type] = {metric: _tab(data, metric, alpha, correction, resampling) for metric in LEADERBOARD_METRICS}
        notes += [f"{TAB_TITLES[task_type]} {column.name}: closed-book for every run (no qrels here), no value"
                  for column in data.closed_book]
    fingerprints = {r.result.task_name: r.result.dataset_revision for r in folder.found
                    if any(r.result.task_name == e.task_name for e in entries)}
    return Leaderboard(version, split, tabs, __version__, dict(sorted(fingerprints.items())), resampling, correction,
                       alpha, tuple(notes))


def _column(entry: AirBenchEntry) -> Column:
    return Column(column_name(entry.domain, entry.language, entry.dataset), entry.task_name, entry.domain,
                  entry.language, entry.dataset)


def _tab_data(task_type: str, entries: Sequence[AirBenchEntry], runs: Mapping[Run, Mapping[str, TaskScores]],
              folder: ResultsFolder, split: str, resampling: Resampling) -> TabData | None:
    tasks = {entry.task_name for entry in entries}
    rows = {run: {task: scores for task, scores in by_task.items() if task in tasks}
            for run, by_task in runs.items() if tasks & set(by_task)}
    if not rows:
        return None
    columns, closed, values, intervals = [], [], {}, {}
    for entry in entries:
        scored = [run.label for run, by_task in rows.items()
                  if entry.task_name in by_task and not by_task[entry.task_name].closed_book]
        if scored:
            columns.append(_column(entry))
            values[entry.task_name] = query_values(folder, scored, entry.task_name, split)
            intervals[entry.task_name] = cell_intervals(values[entry.task_name], resampling)
        elif any(entry.task_name in by_task for by_task in rows.values()):
            closed.append(_column(entry))
    return TabData(task_type, tuple(columns), tuple(closed), rows, values, intervals)


def _cell(data: TabData, run: Run, column: Column, metric: str) -> Cell | None:
    scores = data.runs[run].get(column.task)
    if scores is None:
        return None
    if scores.scores is None:
        return Cell(closed_book=True)
    value, judged = scores.scores.get(metric), scores.scores.get("judged_at_10")
    return Cell(None if value is None else float(value), data.intervals[column.task].get((metric, run.label)),
                None if judged is None else float(judged))


def _tab(data: TabData, metric: str, alpha: float, correction: Correction, resampling: Resampling) -> Tab:
    """One metric of a tab: cells, Averages (unrounded cells, as the app's first table), Ranks; intervals and rank
    groups for a metric kept per query."""
    cells = {run: {column.name: cell for column in (*data.columns, *data.closed_book)
                   if (cell := _cell(data, run, column, metric)) is not None} for run in data.runs}
    averages = {run: leaderboard_average([cell.value if (cell := cells[run].get(c.name)) else None
                                          for c in data.columns]) for run in data.runs}
    ordered = sorted(data.runs, key=lambda run: (-_sortable(averages[run]), run.retriever, run.reranker))
    ranks = dict(zip(ordered, leaderboard_ranks([averages[run] for run in ordered]), strict=True))
    kept = metric in INTERVAL_METRICS
    vectors = {run: [data.values[c.task][metric][run.label] for c in data.columns]
               for run in ordered if kept and averages[run] not in (None, MISSING_AVERAGE)}
    groups: dict[Run, int] = {}
    tests = []
    if vectors:
        grouped = [run for run in ordered if run in vectors]
        numbers, p_values, adjusted = rank_groups([vectors[run] for run in grouped], alpha, correction, resampling)
        groups = dict(zip(grouped, numbers, strict=True))
        tests = [GroupTest(_name(upper), _name(lower), p, q)
                 for (upper, lower), p, q in zip(pairwise(grouped), p_values, adjusted, strict=True)]
    rows = tuple(Row(run.retriever, run.reranker, cells[run], averages[run], ranks[run],
                     average_interval(vectors[run], resampling) if run in vectors else None,
                     groups.get(run)) for run in ordered)
    return Tab(data.task_type, metric, data.columns, rows, tuple(tests), data.closed_book)


def _sortable(average: float | None) -> float:
    return -math.inf if average is None else average


def _name(run: Run) -> str:
    return f"{run.retriever} / {run.reranker}"
