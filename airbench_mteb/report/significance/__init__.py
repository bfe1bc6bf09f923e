"""Paired comparison of models from their kept per-query scores: the library behind ``airbench-mteb significance``.

Every plugin task keeps the per-query values of its reported metrics beside MTEB's results file
(:mod:`airbench_mteb.data.per_query`). :func:`significance` reads them for every pair of models on
every task, split, subset and metric asked for -- never searching again -- and compares them:
the mean of each model, the difference (A - B) with a paired bootstrap confidence interval, a
two-sided paired randomization (sign-flip) test, the paired t-test's p-value, an effect size
(mean difference / standard deviation of the differences) and win/tie/loss counts over queries,
all from :mod:`airbench_mteb.metrics`. p-values are adjusted over a stated family (every
task-level comparison of the report). With a benchmark, each model's mean over its tasks (as MTEB
averages them) gets a stratified bootstrap interval, every pair a paired test of the difference,
and with 3 or more models each model a rank interval.

The result is a :class:`SignificanceReport` that renders itself to JSON, CSV, Markdown and LaTeX
(:class:`~airbench_mteb.report.protocol.Report`); :func:`write_significance` writes the four files.
Nothing here prints. The work is split by job: :mod:`.reading` (options, results, per-query files held
to their results), :mod:`.alignment` (the entries every model was scored on, vectors paired by query
id), :mod:`.computing` (the figures), :mod:`.records` (what is found) and :mod:`.rendering` (Markdown,
LaTeX, CSV).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from airbench_mteb.metrics.resampling import DEFAULT_RESAMPLING, TEST, Resampling
from airbench_mteb.metrics.significance import Correction
from airbench_mteb.report.bias_significance import compare_biases
from airbench_mteb.report.protocol import write_report_files
from airbench_mteb.report.significance.alignment import bias_scores, task_entries
from airbench_mteb.report.significance.computing import adjusted, benchmark_level, compare_entries
from airbench_mteb.report.significance.reading import check_options, model_results, task_names
from airbench_mteb.report.significance.records import (
    BENCHMARK_FAMILY,
    FAMILY,
    FILES,
    MAIN_SCORE,
    STEM,
    BenchmarkComparison,
    BenchmarkLevel,
    BenchmarkModel,
    Comparison,
    ReportContent,
)
from airbench_mteb.report.significance.rendering import render_csv, render_latex, render_markdown

if TYPE_CHECKING:
    from mteb import Benchmark

__all__ = ["BENCHMARK_FAMILY", "FAMILY", "FILES", "MAIN_SCORE", "TEST", "BenchmarkComparison", "BenchmarkLevel",
           "BenchmarkModel", "Comparison", "SignificanceReport", "significance",
           "write_significance"]


@dataclass(frozen=True)
class SignificanceReport(ReportContent):
    """The report's content (:class:`~airbench_mteb.report.significance.records.ReportContent`) with its renderings."""

    def to_csv(self) -> str:
        return render_csv(self)

    def to_markdown(self) -> str:
        return render_markdown(self)

    def to_latex(self) -> str:
        return render_latex(self)


def significance(results: Path, models: Sequence[str], *, tasks: Sequence[str] = (),
                 benchmark: str | Benchmark | None = None,
                 metrics: Sequence[str] | None = None, splits: Sequence[str] | None = None,
                 correction: Correction = "holm", resampling: Resampling = DEFAULT_RESAMPLING,
                 alpha: float = 0.05) -> SignificanceReport:
    """Compare every pair of ``models`` on ``tasks`` (and the tasks of ``benchmark``) from their kept per-query scores.

    Args:
        results: an MTEB results folder (``mteb run --output-folder``; ``mteb.ResultCache``'s root).
        models: two or more model names (full or short, as :func:`~airbench_mteb.results.reading.read_results`).
        tasks: task names; ``benchmark`` (a name, or an ``mteb.Benchmark``) adds its tasks and the
            benchmark-level comparison.
        metrics: MTEB metric names kept per query (``ndcg_at_10``, ...); default ``main_score``, each task's own.
        splits: only these splits; default every scored split (closed-book splits are left out, with a note).
        correction: how p-values are adjusted over the report's family of comparisons.
        resampling: bootstrap resamples and random sign vectors, their seed, and the intervals' level and method.
        alpha: significance level of the tables' markers.

    A co*cktail ``mixed`` subset also gets every model pair's source bias compared (``source_bias``:
    Relative Δ_A - Δ_B of each compared metric that source bias is computed for), a family of its own.

    Raises:
        OptionError: fewer than two models (or names of one model), no task, an unknown correction, a closed-book
            split asked for, resamples, seed, alpha or level out of range.
        UnknownNameError: an unknown task or benchmark.
        DatasetError: an unknown model or metric, fewer than 2 queries, models scored on different queries, results
            of one task computed on different data, a results file without kept per-query scores (rerun with
            ``--overwrite-strategy always``), or kept scores that do not reproduce the results file's (a value not
            finite, a mean that is not the results' score).
    """
    check_options(models, correction, resampling, alpha)
    names, bench_name, benchmark_tasks = task_names(tasks, benchmark)
    wanted = tuple(dict.fromkeys(metrics or (MAIN_SCORE,)))
    found = model_results(results, models, names)
    notes: list[str] = []
    entries = [entry for task in names for entry in task_entries(task, found, wanted, splits, notes)]
    comparisons = adjusted(compare_entries(entries, resampling), correction)
    report_models = tuple(found)
    levels = tuple(benchmark_level(bench_name, metric, [e for e in entries if e.task in benchmark_tasks],
                                   report_models, correction, resampling)
                   for metric in wanted) if benchmark else ()
    biases = compare_biases([scores for entry in entries if (scores := bias_scores(entry)) is not None], resampling,
                            correction)
    return SignificanceReport(report_models, tuple(comparisons), correction, resampling, alpha, levels, biases,
                              tuple(notes))


def write_significance(report: SignificanceReport, out: Path) -> list[Path]:
    """``significance.json``, ``.md``, ``.tex`` and ``.csv`` (:data:`FILES`) in ``out``; returns their paths."""
    return write_report_files(report, out, STEM)
