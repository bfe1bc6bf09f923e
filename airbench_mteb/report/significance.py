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

The result is a :class:`SignificanceReport` that renders itself to JSON, CSV, Markdown and LaTeX;
:func:`write_significance` writes the four files. Nothing here prints.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from airbench_mteb.data.errors import DatasetError
from airbench_mteb.data.files import atomic_write, read_json
from airbench_mteb.data.per_query import KeptScores, QueryScores, per_query_path, read_kept_for
from airbench_mteb.metrics.bootstrap import paired_bootstrap_ci
from airbench_mteb.metrics.resampling import Resampling
from airbench_mteb.metrics.significance import (
    CORRECTIONS,
    Correction,
    adjust_p_values,
    effect_size,
    paired_randomization_test,
    paired_t_test_p,
    wins_ties_losses,
)
from airbench_mteb.metrics.uncertainty import benchmark_paired_test, rank_intervals, stratified_bootstrap_mean_of_means
from airbench_mteb.report.bias_significance import (
    BiasComparison,
    BiasScores,
    bias_csv_rows,
    bias_json,
    bias_latex,
    bias_markdown,
    compare_biases,
)
from airbench_mteb.report.results import ModelTaskResult, read_results, short_model
from airbench_mteb.report.text_format import p_text, tex
from airbench_mteb.settings import CI_RESAMPLES_RANGE
from airbench_mteb.tasks.closed_book import CLOSED_BOOK

if TYPE_CHECKING:
    from mteb import Benchmark

TEST = "paired-randomization"
MAIN_SCORE = "main_score"  # the metric name that stands for each task's own main score
FILES = ("significance.json", "significance.md", "significance.tex", "significance.csv")
FAMILY = "every task-level comparison in this report: task x split x subset x metric x model pair"
BENCHMARK_FAMILY = "every model pair on the benchmark mean, per metric"


class SignificanceError(DatasetError):
    """A comparison that cannot be made (one model, a closed-book split, too few queries, ...); names the culprit."""


@dataclass(frozen=True)
class Comparison:
    """Model A against model B on one task, split, subset and metric (``difference`` = ``mean_a`` - ``mean_b``)."""

    task: str
    split: str
    subset: str
    metric: str
    model_a: str
    model_b: str
    n_queries: int
    mean_a: float
    mean_b: float
    difference: float
    ci_low: float
    ci_high: float
    p_value: float
    p_adjusted: float
    t_test_p_value: float
    effect_size: float  # +-inf when every query differs by the same non-zero amount
    wins: int
    ties: int
    losses: int
    exact: bool  # the randomization test enumerated every sign vector
    ci_method: str

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["effect_size"] = _finite_or_none(self.effect_size)
        return data


@dataclass(frozen=True)
class BenchmarkModel:
    """One model's mean over the benchmark's tasks, its interval and (3 or more models) its rank interval."""

    model: str
    mean: float
    ci_low: float
    ci_high: float
    ci_method: str
    rank: int | None = None
    rank_low: int | None = None
    rank_high: int | None = None


@dataclass(frozen=True)
class BenchmarkComparison:
    """Two models' benchmark means: the difference, its stratified bootstrap interval and the paired test."""

    model_a: str
    model_b: str
    mean_a: float
    mean_b: float
    difference: float
    ci_low: float
    ci_high: float
    p_value: float
    p_adjusted: float
    exact: bool


@dataclass(frozen=True)
class BenchmarkLevel:
    """The benchmark mean of one metric (``main_score``: each task's own main score, as MTEB averages them)."""

    benchmark: str
    metric: str
    tasks: tuple[str, ...]
    n_queries: int
    models: tuple[BenchmarkModel, ...]
    comparisons: tuple[BenchmarkComparison, ...]

    def to_json(self) -> dict[str, Any]:
        return {"benchmark": self.benchmark, "metric": self.metric, "tasks": list(self.tasks),
                "n_queries": self.n_queries, "family": BENCHMARK_FAMILY, "family_size": len(self.comparisons),
                "models": [asdict(model) for model in self.models],
                "comparisons": [asdict(comparison) for comparison in self.comparisons]}


@dataclass(frozen=True)
class SignificanceReport:
    """Every comparison of the report, how it was computed, and the benchmark level when one was asked for."""

    models: tuple[str, ...]
    comparisons: tuple[Comparison, ...]
    correction: Correction
    n_resamples: int
    seed: int
    alpha: float
    level: float
    benchmark: tuple[BenchmarkLevel, ...] = ()
    source_bias: tuple[BiasComparison, ...] = ()  # co*cktail mixed subsets: the models' Relative Δs compared
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def family_size(self) -> int:
        return len(self.comparisons)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "test": TEST, "n_resamples": self.n_resamples, "seed": self.seed, "correction": self.correction,
            "family_size": self.family_size, "family": FAMILY, "alpha": self.alpha, "level": self.level,
            "models": list(self.models), "comparisons": [c.to_json() for c in self.comparisons]}
        if self.benchmark:
            data["benchmark"] = [level.to_json() for level in self.benchmark]
        if self.source_bias:
            data["source_bias"] = bias_json(self.source_bias)
        if self.notes:
            data["notes"] = list(self.notes)
        return data

    def to_csv(self) -> str:
        return _render_csv(self)

    def to_markdown(self) -> str:
        return _render_markdown(self)

    def to_latex(self) -> str:
        return _render_latex(self)


@dataclass(frozen=True)
class _Entry:
    """One scored split and subset of a task, and each model's per-query values there, aligned by query id."""

    task: str
    split: str
    subset: str
    metrics: Mapping[str, str]  # metric asked for (main_score resolved) -> the metric compared
    query_ids: tuple[str, ...]
    values: Mapping[str, Mapping[str, np.ndarray]]  # model -> metric compared -> values
    by_source: Mapping[str, Mapping[str, QueryScores]]  # model -> source -> its kept scores (mixed subsets only)


def significance(results: Path, models: Sequence[str], *, tasks: Sequence[str] = (),
                 benchmark: str | Benchmark | None = None,
                 metrics: Sequence[str] | None = None, splits: Sequence[str] | None = None,
                 correction: Correction = "holm", n_resamples: int = 9999, seed: int = 0, alpha: float = 0.05,
                 level: float = 0.95) -> SignificanceReport:
    """Compare every pair of ``models`` on ``tasks`` (and the tasks of ``benchmark``) from their kept per-query scores.

    Args:
        results: an MTEB results folder (``mteb run --output-folder``; ``mteb.ResultCache``'s root).
        models: two or more model names (full or short, as :func:`~airbench_mteb.report.results.read_results`).
        tasks: task names; ``benchmark`` (a name, or an ``mteb.Benchmark``) adds its tasks and the
            benchmark-level comparison.
        metrics: MTEB metric names kept per query (``ndcg_at_10``, ...); default ``main_score``, each task's own.
        splits: only these splits; default every scored split (closed-book splits are left out, with a note).
        correction: how p-values are adjusted over the report's family of comparisons.
        n_resamples, seed: bootstrap resamples and random sign vectors, and their seed.
        alpha, level: significance level of the tables' markers; confidence level of the intervals.

    A co*cktail ``mixed`` subset also gets every model pair's source bias compared (``source_bias``:
    Relative Δ_A - Δ_B of each compared metric that source bias is computed for), a family of its own.

    Raises:
        SignificanceError: fewer than two models, an unknown model, task, benchmark or metric, a closed-book
            split asked for, fewer than 2 queries, or results of one task computed on different data.
        DatasetError: a results file without kept per-query scores (rerun with ``--overwrite-strategy always``).
    """
    _check_options(models, correction, n_resamples, seed, alpha, level)
    task_names, bench_name, benchmark_tasks = _task_names(tasks, benchmark)
    wanted = tuple(dict.fromkeys(metrics or (MAIN_SCORE,)))
    found = _model_results(results, models, task_names)
    notes: list[str] = []
    entries = [entry for task in task_names for entry in _task_entries(task, found, wanted, splits, notes)]
    comparisons = _adjusted(_compare_entries(entries, n_resamples, seed, level), correction)
    report_models = tuple(found)
    levels = tuple(_benchmark_level(bench_name, metric, [e for e in entries if e.task in benchmark_tasks],
                                    report_models, correction, n_resamples, seed, level)
                   for metric in wanted) if benchmark else ()
    resampling = Resampling(n_resamples=n_resamples, seed=seed, level=level)
    biases = compare_biases([scores for entry in entries if (scores := _bias_scores(entry)) is not None], resampling,
                            correction)
    return SignificanceReport(report_models, tuple(comparisons), correction, n_resamples, seed, alpha, level, levels,
                              biases, tuple(notes))


def write_significance(report: SignificanceReport, out: Path) -> list[Path]:
    """``significance.json``, ``.md``, ``.tex`` and ``.csv`` in ``out``; returns their paths."""
    texts = (json.dumps(report.to_json(), indent=1, ensure_ascii=False) + "\n", report.to_markdown(),
             report.to_latex(), report.to_csv())
    paths = [out / name for name in FILES]
    for path, text in zip(paths, texts, strict=True):
        with atomic_write(path) as handle:
            handle.write(text)
    return paths


# --- reading ------------------------------------------------------------------------------------------------------

def _check_options(models: Sequence[str], correction: str, n_resamples: int, seed: int, alpha: float,
                   level: float) -> None:
    if len(set(models)) < 2:
        raise SignificanceError(f"a comparison needs at least two different models, got {list(models)!r}")
    if correction not in CORRECTIONS:
        raise SignificanceError(f"unknown correction {correction!r}; use one of {', '.join(CORRECTIONS)}")
    low, high = CI_RESAMPLES_RANGE
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int) or not low <= n_resamples <= high:
        raise SignificanceError(f"{n_resamples!r} resamples: give a whole number from {low:,} to {high:,}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise SignificanceError(f"seed {seed!r} is not a whole number >= 0")
    for name, value in (("alpha", alpha), ("level", level)):
        if not 0 < value < 1:
            raise SignificanceError(f"{name} {value!r} is not between 0 and 1")


def _task_names(tasks: Sequence[str],
                benchmark: str | Benchmark | None) -> tuple[tuple[str, ...], str, frozenset[str]]:
    """The tasks to compare (named ones first, then the benchmark's), the benchmark's name and its tasks."""
    import mteb

    for name in tasks:
        try:
            mteb.get_task(name)
        except KeyError:
            raise SignificanceError(f"unknown task {name!r} (`airbench-mteb available-tasks` lists them)") from None
    if isinstance(benchmark, str):
        try:
            benchmark = mteb.get_benchmark(benchmark)
        except KeyError:
            raise SignificanceError(f"unknown benchmark {benchmark!r} (`airbench-mteb available-benchmarks` "
                                    "lists them)") from None
    in_benchmark = tuple(task.metadata.name for task in benchmark.tasks) if benchmark is not None else ()
    names = tuple(dict.fromkeys((*tasks, *in_benchmark)))
    if not names:
        raise SignificanceError("no task to compare: name tasks (-t) or a benchmark (-b)")
    return names, benchmark.name if benchmark is not None else "", frozenset(in_benchmark)


def _model_results(results: Path, models: Sequence[str],
                   tasks: Sequence[str]) -> dict[str, dict[str, ModelTaskResult]]:
    """``{model label: {task: result}}`` for each requested model, in the order asked; every task present."""
    everything = read_results(results, None, tasks)
    found: dict[str, dict[str, ModelTaskResult]] = {}
    for name in dict.fromkeys(models):
        labels = sorted({r.label for r in everything if r.label == name}) or \
            sorted({r.label for r in everything if name in (r.model, short_model(r.model))})
        if not labels:
            there = sorted({r.label for r in everything}) or ["none"]
            raise SignificanceError(f"no results of model {name!r} on {', '.join(tasks)} in {results} "
                                    f"(models there: {', '.join(there)})")
        if len(labels) > 1:
            raise SignificanceError(f"model {name!r} names several results in {results}: {', '.join(labels)}; "
                                    "give one of them")
        found[labels[0]] = {r.result.task_name: r for r in everything if r.label == labels[0]}
    if len(found) < 2:
        raise SignificanceError(f"{', '.join(models)} name one model only ({next(iter(found))}): "
                                "a comparison needs at least two")
    for label, by_task in found.items():
        missing = [task for task in tasks if task not in by_task]
        if missing:
            raise SignificanceError(f"no results of model {label!r} on task {missing[0]!r} in {results}")
    return found


def _main_score(task: str) -> str:
    import mteb

    return mteb.get_task(task).metadata.main_score


def _task_entries(task: str, found: Mapping[str, Mapping[str, ModelTaskResult]], wanted: Sequence[str],
                  splits: Sequence[str] | None, notes: list[str]) -> list[_Entry]:
    """The scored splits and subsets of ``task`` every model has, with their kept vectors."""
    by_model = {label: by_task[task] for label, by_task in found.items()}
    _check_same_data(task, by_model)
    kept = {label: _kept(result) for label, result in by_model.items()}
    first = next(iter(by_model.values()))
    main = _main_score(task)
    metrics = {metric: main if metric == MAIN_SCORE else metric for metric in wanted}
    scored_by = {label: {(split, subset) for split, subset, _ in _splits_and_subsets(result)}
                 for label, result in by_model.items()}
    entries = []
    for split, subset, closed in _splits_and_subsets(first):
        if splits is not None and split not in splits:
            continue
        without = [label for label, scored in scored_by.items() if (split, subset) not in scored]
        if without:  # a model evaluated on fewer subsets (hf_subsets=...): compare where all were scored
            notes.append(f"{task} {split}/{subset}: not scored for {', '.join(without)}, left out")
            continue
        if closed:
            if splits is not None:
                raise SignificanceError(f"{task} split {split!r} (subset {subset!r}) is closed-book: it has no qrels "
                                        "here, so no per-query scores; score it where its qrels are available")
            notes.append(f"{task} {split}/{subset}: closed-book (no qrels), left out")
            continue
        entries.append(_entry(task, split, subset, kept, metrics))
    if not entries:
        raise SignificanceError(f"{task} has no split and subset every model was scored on to compare"
                                + (f" among {', '.join(splits)}" if splits is not None else
                                   " (closed-book splits have no qrels here)"))
    return entries


def _check_same_data(task: str, by_model: Mapping[str, ModelTaskResult]) -> None:
    (first, result), *others = by_model.items()
    for label, other in others:
        if other.result.dataset_revision != result.result.dataset_revision:
            raise SignificanceError(
                f"{task}: {first} was scored on data {result.result.dataset_revision!r} ({result.path}), {label} "
                f"on {other.result.dataset_revision!r} ({other.path}): rerun both on the same data")


def _kept(found: ModelTaskResult) -> tuple[KeptScores, Path]:
    """The per-query scores kept beside a results file (checked to be its model's, on its data), and their file."""
    meta_path = found.path.parent / "model_meta.json"
    revision = read_json(meta_path).get("revision") if meta_path.is_file() else None
    kept = read_kept_for(found.path, found.model, revision, found.result.task_name, found.result.dataset_revision)
    return kept, per_query_path(found.path)


def _splits_and_subsets(found: ModelTaskResult) -> list[tuple[str, str, bool]]:
    """(split, subset, closed-book?) of every score dict of a results file."""
    return [(split, scores["hf_subset"], CLOSED_BOOK in scores or _is_nan(scores.get("main_score")))
            for split, subsets in found.result.scores.items() for scores in subsets]


def _is_nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


def _entry(task: str, split: str, subset: str, kept: Mapping[str, tuple[KeptScores, Path]],
           metrics: Mapping[str, str]) -> _Entry:
    """The vectors of every model on one split and subset, over the union of their query ids (absent: 0)."""
    scores: dict[str, QueryScores] = {}
    for label, (record, path) in kept.items():
        subset_scores = record.scores.get(split, {}).get(subset)
        if subset_scores is None:
            raise DatasetError(f"no per-query scores of {split}/{subset} for {label} (that split was scored by an "
                               "older version): rerun the model with --overwrite-strategy always", path=path)
        missing = [metric for metric in metrics.values() if metric not in subset_scores.metrics]
        if missing:
            raise SignificanceError(f"metric {missing[0]!r} has no per-query values for {task} {split}/{subset} "
                                    f"(kept: {', '.join(subset_scores.metrics)})")
        scores[label] = subset_scores
    query_ids = tuple(sorted(set().union(*(s.query_ids for s in scores.values()))))
    if len(query_ids) < 2:
        raise SignificanceError(f"{task} {split}/{subset} has {len(query_ids)} scored query: a comparison needs at "
                                "least 2")
    position = {qid: i for i, qid in enumerate(query_ids)}
    values = {}
    for label, subset_scores in scores.items():
        index = np.array([position[qid] for qid in subset_scores.query_ids], dtype=int)
        values[label] = {metric: _spread(subset_scores.metrics[metric], index, len(query_ids))
                         for metric in metrics.values()}
    by_source = {label: s.by_source for label, s in scores.items()} if all(s.by_source for s in scores.values()) else {}
    return _Entry(task, split, subset, metrics, query_ids, values, by_source)


def _spread(values: np.ndarray, index: np.ndarray, size: int) -> np.ndarray:
    aligned = np.zeros(size)
    aligned[index] = values
    return aligned


def _bias_scores(entry: _Entry) -> BiasScores | None:
    """The entry's per-source vectors for the source-bias comparison, when every model kept them."""
    import mteb

    from airbench_mteb.tasks.cocktail import SourceBiasTask

    task = mteb.get_task(entry.task)
    if not entry.by_source or not isinstance(task, SourceBiasTask):
        return None
    return BiasScores(entry.task, entry.split, entry.subset, task.sources[0][0],
                      tuple(dict.fromkeys(entry.metrics.values())), entry.by_source)


# --- computing ----------------------------------------------------------------------------------------------------

def _compare_entries(entries: Sequence[_Entry], n_resamples: int, seed: int, level: float) -> list[Comparison]:
    comparisons = []
    for entry in entries:
        models = list(entry.values)
        for metric in dict.fromkeys(entry.metrics.values()):
            for i, model_a in enumerate(models):
                for model_b in models[i + 1:]:
                    comparisons.append(_compare(entry, metric, model_a, model_b, n_resamples, seed, level))
    return comparisons


def _compare(entry: _Entry, metric: str, model_a: str, model_b: str, n_resamples: int, seed: int,
             level: float) -> Comparison:
    a, b = entry.values[model_a][metric], entry.values[model_b][metric]
    interval = paired_bootstrap_ci(a, b, level=level, n_resamples=n_resamples, seed=seed)
    test = paired_randomization_test(a, b, n_resamples=n_resamples, seed=seed)
    counts = wins_ties_losses(a, b)
    return Comparison(entry.task, entry.split, entry.subset, metric, model_a, model_b, len(a), float(a.mean()),
                      float(b.mean()), float(a.mean() - b.mean()), interval.low, interval.high, test.p_value,
                      test.p_value, paired_t_test_p(a, b), effect_size(a, b), counts.wins, counts.ties, counts.losses,
                      test.exact, interval.method)


def _adjusted(comparisons: list[Comparison], correction: Correction) -> list[Comparison]:
    adjusted = adjust_p_values([c.p_value for c in comparisons], correction) if comparisons else []
    return [replace(c, p_adjusted=float(p)) for c, p in zip(comparisons, adjusted, strict=True)]


def _benchmark_level(benchmark: str, metric: str, entries: Sequence[_Entry], models: Sequence[str],
                     correction: Correction, n_resamples: int, seed: int, level: float) -> BenchmarkLevel:
    """Each model's mean over the benchmark's tasks, as MTEB averages them: the mean over tasks of each task's
    mean over its scored splits and subsets. Every split and subset is a stratum whose queries are resampled
    on their own; stratum ``s`` of a task with ``E`` of them among ``T`` tasks is scaled by ``S / (T E)`` so
    that the unweighted mean over the ``S`` strata the statistics take is exactly that weighted mean."""
    tasks = tuple(dict.fromkeys(entry.task for entry in entries))
    per_task = {task: sum(entry.task == task for entry in entries) for task in tasks}
    scale = [len(entries) / (len(tasks) * per_task[entry.task]) for entry in entries]
    strata = {model: [entry.values[model][entry.metrics[metric]] * factor
                      for entry, factor in zip(entries, scale, strict=True)] for model in models}
    intervals = {model: stratified_bootstrap_mean_of_means(strata[model], level=level, n_resamples=n_resamples,
                                                           seed=seed) for model in models}
    ranks = rank_intervals(strata, level=level, n_resamples=n_resamples, seed=seed) if len(models) >= 3 else {}
    scores = tuple(BenchmarkModel(model, interval.estimate, interval.low, interval.high, interval.method,
                                  *(_rank_fields(ranks.get(model))))
                   for model, interval in intervals.items())
    pairs = []
    for i, model_a in enumerate(models):
        for model_b in models[i + 1:]:
            differences = [a - b for a, b in zip(strata[model_a], strata[model_b], strict=True)]
            interval = stratified_bootstrap_mean_of_means(differences, level=level, n_resamples=n_resamples, seed=seed)
            test = benchmark_paired_test(strata[model_a], strata[model_b], n_resamples=n_resamples, seed=seed)
            pairs.append(BenchmarkComparison(model_a, model_b, intervals[model_a].estimate,
                                             intervals[model_b].estimate, interval.estimate, interval.low,
                                             interval.high, test.p_value, test.p_value, test.exact))
    adjusted = adjust_p_values([pair.p_value for pair in pairs], correction)
    return BenchmarkLevel(benchmark, metric, tasks, sum(len(entry.query_ids) for entry in entries), scores,
                          tuple(replace(pair, p_adjusted=float(p)) for pair, p in zip(pairs, adjusted, strict=True)))


def _rank_fields(rank: Any) -> tuple[int | None, int | None, int | None]:
    return (rank.rank, rank.low, rank.high) if rank is not None else (None, None, None)


# --- rendering ----------------------------------------------------------------------------------------------------

def _finite_or_none(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _letters(models: Sequence[str]) -> dict[str, str]:
    return {model: chr(ord("a") + i) if i < 26 else f"m{i + 1}" for i, model in enumerate(models)}


def _columns(report: SignificanceReport, metric: str) -> list[tuple[str, str, str]]:
    return list(dict.fromkeys((c.task, c.split, c.subset) for c in report.comparisons if c.metric == metric))


def _column_title(report: SignificanceReport, column: tuple[str, str, str]) -> str:
    task, split, subset = column
    same_task = {(s, sub) for t, s, sub in (
        (c.task, c.split, c.subset) for c in report.comparisons) if t == task}
    if len(same_task) == 1:
        return task
    splits = {s for s, _ in same_task}
    subsets = {sub for _, sub in same_task}
    return f"{task} ({', '.join(part for part, many in ((split, len(splits) > 1), (subset, len(subsets) > 1)) if many)})"


def _cells(report: SignificanceReport, metric: str) -> dict[tuple[str, tuple[str, str, str]], tuple[float, list[str]]]:
    """(model, column) -> (mean, letters of the models it is significantly better than after correction)."""
    letters = _letters(report.models)
    cells: dict[tuple[str, tuple[str, str, str]], tuple[float, list[str]]] = {}
    for c in report.comparisons:
        if c.metric != metric:
            continue
        column = (c.task, c.split, c.subset)
        for model, mean in ((c.model_a, c.mean_a), (c.model_b, c.mean_b)):
            cells.setdefault((model, column), (mean, []))
        if c.p_adjusted < report.alpha and c.difference != 0:
            winner, loser = (c.model_a, c.model_b) if c.difference > 0 else (c.model_b, c.model_a)
            cells[(winner, column)][1].append(letters[loser])
    return cells


def _benchmark_cells(level: BenchmarkLevel, alpha: float, models: Sequence[str]) -> dict[str, tuple[float, list[str]]]:
    letters = _letters(models)
    cells = {score.model: (score.mean, []) for score in level.models}
    for pair in level.comparisons:
        if pair.p_adjusted < alpha and pair.difference != 0:
            winner, loser = (pair.model_a, pair.model_b) if pair.difference > 0 else (pair.model_b, pair.model_a)
            cells[winner][1].append(letters[loser])
    return cells


def _metrics(report: SignificanceReport) -> list[str]:
    return list(dict.fromkeys(c.metric for c in report.comparisons))


def _method_sentence(report: SignificanceReport) -> str:
    return (f"Two-sided paired randomization (sign-flip) test over queries, {report.n_resamples:,} seeded sign "
            f"vectors (seed {report.seed}; exact when 2^n is smaller), p = (count + 1) / (n + 1); "
            f"{_correction_name(report.correction)} over {report.family_size} comparisons ({FAMILY}); "
            f"alpha = {report.alpha}. Intervals: paired bootstrap, {report.level:.0%}, {report.n_resamples:,} "
            "resamples.")


def _correction_name(correction: str) -> str:
    return {"holm": "Holm correction", "bonferroni": "Bonferroni correction", "bh": "Benjamini-Hochberg correction",
            "none": "no correction"}[correction]


def _render_markdown(report: SignificanceReport) -> str:
    letters = _letters(report.models)
    lines = ["# Paired comparison of models", "", _method_sentence(report),
             "A superscript lists the models (by letter) the row's model is significantly better than after "
             "correction.", ""]
    for metric in _metrics(report):
        columns = _columns(report, metric)
        cells = _cells(report, metric)
        bench = next((b for b in report.benchmark if _benchmark_metric_matches(b, metric, report)), None)
        titles = [_column_title(report, column) for column in columns] + ([f"{bench.benchmark} mean"] if bench else [])
        lines += [f"## {metric}", "", "| model | " + " | ".join(titles) + " |", "|---" * (len(titles) + 1) + "|"]
        bench_cells = _benchmark_cells(bench, report.alpha, report.models) if bench else {}
        for model in report.models:
            row = [_md_cell(cells.get((model, column))) for column in columns]
            if bench:
                row.append(_md_cell(bench_cells.get(model)))
            lines.append(f"| {letters[model]}. {model} | " + " | ".join(row) + " |")
        lines += ["", "| task | split | subset | A | B | A - B | CI | p | p adjusted | t-test p | effect size | "
                      "wins/ties/losses |", "|---" * 12 + "|"]
        for c in report.comparisons:
            if c.metric == metric:
                lines.append(f"| {c.task} | {c.split} | {c.subset} | {letters[c.model_a]} | {letters[c.model_b]} | "
                             f"{c.difference:+.4f} | [{c.ci_low:+.4f}, {c.ci_high:+.4f}] | {p_text(c.p_value)} | "
                             f"{p_text(c.p_adjusted)} | {p_text(c.t_test_p_value)} | {_effect(c.effect_size)} | "
                             f"{c.wins}/{c.ties}/{c.losses} |")
        lines.append("")
    for bench in report.benchmark:
        lines += _benchmark_markdown(bench, letters)
    lines += bias_markdown(report.source_bias, letters)
    lines += [f"- {note}" for note in report.notes]
    return "\n".join(lines).rstrip() + "\n"


def _benchmark_metric_matches(bench: BenchmarkLevel, metric: str, report: SignificanceReport) -> bool:
    """The benchmark column goes into the table of its metric; a ``main_score`` mean into the table of the main
    score when every task shares it."""
    if bench.metric == metric:
        return True
    used = {c.metric for c in report.comparisons if c.task in bench.tasks}
    return bench.metric == MAIN_SCORE and used == {metric}


def _benchmark_markdown(bench: BenchmarkLevel, letters: Mapping[str, str]) -> list[str]:
    lines = [f"## {bench.benchmark}: mean {bench.metric} over {len(bench.tasks)} tasks", "",
             "| model | mean | CI | rank | rank interval |", "|---|---|---|---|---|"]
    for score in bench.models:
        rank = "" if score.rank is None else str(score.rank)
        interval = "" if score.rank is None else f"[{score.rank_low}, {score.rank_high}]"
        lines.append(f"| {letters[score.model]}. {score.model} | {score.mean:.4f} | "
                     f"[{score.ci_low:.4f}, {score.ci_high:.4f}] | {rank} | {interval} |")
    lines += ["", f"Stratified bootstrap (queries resampled within each task); {BENCHMARK_FAMILY}: "
                  f"{len(bench.comparisons)} comparisons.", "",
              "| A | B | A - B | CI | p | p adjusted |", "|---|---|---|---|---|---|"]
    for pair in bench.comparisons:
        lines.append(f"| {letters[pair.model_a]} | {letters[pair.model_b]} | {pair.difference:+.4f} | "
                     f"[{pair.ci_low:+.4f}, {pair.ci_high:+.4f}] | {p_text(pair.p_value)} | {p_text(pair.p_adjusted)} |")
    return [*lines, ""]


def _md_cell(cell: tuple[float, list[str]] | None) -> str:
    if cell is None:
        return ""
    mean, beaten = cell
    return f"{mean:.4f}" + (f"<sup>{''.join(sorted(beaten))}</sup>" if beaten else "")


def _effect(value: float) -> str:
    return f"{value:+.3f}" if math.isfinite(value) else ("+inf" if value > 0 else "-inf")


def _render_latex(report: SignificanceReport) -> str:
    letters = _letters(report.models)
    tables = []
    for metric in _metrics(report):
        columns = _columns(report, metric)
        cells = _cells(report, metric)
        bench = next((b for b in report.benchmark if _benchmark_metric_matches(b, metric, report)), None)
        bench_cells = _benchmark_cells(bench, report.alpha, report.models) if bench else {}
        keys: list[Any] = [*columns, *(["benchmark"] if bench else [])]
        values = {key: (bench_cells if key == "benchmark" else {m: cells.get((m, key)) for m in report.models})
                  for key in keys}
        best = {key: max((cell[0] for cell in values[key].values() if cell is not None), default=None) for key in keys}
        titles = [tex(_column_title(report, column)) for column in columns] + (
            [tex(f"{bench.benchmark} mean")] if bench else [])
        rows = []
        for model in report.models:
            row = [_tex_cell(values[key].get(model), best[key]) for key in keys]
            rows.append(f"({letters[model]}) {tex(model)} & " + " & ".join(row) + r" \\")
        caption = (f"{tex(metric)}. Best value per column in bold; a superscript lists the models (by letter) a row "
                   f"is significantly better than: two-sided paired randomization test, {report.n_resamples:,} "
                   f"permutations, {_correction_name(report.correction)} over {report.family_size} comparisons, "
                   f"$\\alpha = {report.alpha}$.")
        tables.append("\n".join([
            r"\begin{table}[t]", r"\centering", f"\\caption{{{caption}}}",
            r"\begin{tabular}{l" + "r" * len(keys) + "}", r"\toprule",
            "Model & " + " & ".join(titles) + r" \\", r"\midrule", *rows, r"\bottomrule", r"\end{tabular}",
            r"\end{table}"]))
    tables.append(bias_latex(report.source_bias, _correction_name(report.correction), report.n_resamples))
    return "% requires \\usepackage{booktabs}\n" + "\n\n".join(table for table in tables if table) + "\n"


def _tex_cell(cell: tuple[float, list[str]] | None, best: float | None) -> str:
    if cell is None:
        return ""
    mean, beaten = cell
    number = f"{mean:.4f}"
    if best is not None and mean == best:
        number = f"\\textbf{{{number}}}"
    return number + (f"$^{{{''.join(sorted(beaten))}}}$" if beaten else "")


def _render_csv(report: SignificanceReport) -> str:
    names = ["level", *(f.name for f in fields(Comparison))]
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=names, lineterminator="\n")
    writer.writeheader()
    for c in report.comparisons:
        writer.writerow({"level": "task", **{k: "" if v is None else v for k, v in c.to_json().items()}})
    for bench in report.benchmark:
        for pair in bench.comparisons:
            writer.writerow({"level": "benchmark", "task": bench.benchmark, "metric": bench.metric,
                             "n_queries": bench.n_queries, **asdict(pair)})
    for row in bias_csv_rows(report.source_bias):
        writer.writerow(row)
    return buffer.getvalue()
