"""What ``airbench-mteb significance`` finds: one record per comparison, the benchmark level, the report's content.

Plain frozen dataclasses, with the JSON form of each (``to_json``); Markdown, LaTeX and CSV are in
:mod:`airbench_mteb.report.significance.rendering`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from airbench_mteb.metrics.resampling import Resampling
from airbench_mteb.metrics.significance import Correction
from airbench_mteb.report.bias_significance import BiasComparison, bias_json
from airbench_mteb.report.protocol import finite_or_none

MAIN_SCORE = "main_score"  # the metric name that stands for each task's own main score
STEM = "significance"  # the files' name: significance.json, .md, .tex and .csv
FILES = tuple(f"{STEM}.{suffix}" for suffix in ("json", "md", "tex", "csv"))
FAMILY = "every task-level comparison in this report: task x split x subset x metric x model pair"
BENCHMARK_FAMILY = "every model pair on the benchmark mean, per metric"


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
        data["effect_size"] = finite_or_none(self.effect_size)
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
class ReportContent:
    """Every comparison of the report, how it was computed (``resampling``, ``correction``, ``alpha``), and the
    benchmark level when one was asked for (:class:`~airbench_mteb.report.significance.SignificanceReport` adds its
    renderings)."""

    models: tuple[str, ...]
    comparisons: tuple[Comparison, ...]
    correction: Correction
    resampling: Resampling
    alpha: float
    benchmark: tuple[BenchmarkLevel, ...] = ()
    source_bias: tuple[BiasComparison, ...] = ()  # co*cktail mixed subsets: the models' Relative Δs compared
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def family_size(self) -> int:
        return len(self.comparisons)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "test": self.resampling.test, "n_resamples": self.resampling.n_resamples, "seed": self.resampling.seed,
            "correction": self.correction, "family_size": self.family_size, "family": FAMILY, "alpha": self.alpha,
            "level": self.resampling.level,
            "models": list(self.models), "comparisons": [c.to_json() for c in self.comparisons]}
        if self.benchmark:
            data["benchmark"] = [level.to_json() for level in self.benchmark]
        if self.source_bias:
            data["source_bias"] = bias_json(self.source_bias)
        if self.notes:
            data["notes"] = list(self.notes)
        return data
