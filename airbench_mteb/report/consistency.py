"""Does a generated benchmark rank models as human labels do? The library behind ``airbench-mteb consistency``.

AIR-Bench's central check (arXiv 2412.13102, section 4.1): score a panel of models on a generated test
set and on a human-labelled one over the same corpus, and compare the two rankings. :func:`consistency`
reads the panel's results and kept per-query scores (:mod:`airbench_mteb.data.per_query`) of both sets
and gives, per metric:

- each model's score on both sets, with the confidence interval its results carry;
- Spearman's rho and Kendall's tau-b with their p-values (exact over every ordering of a panel of at most
  ``EXACT_MAX_MODELS`` models, scipy's above; each agreement records which) and bootstrap intervals (each set's queries
  resampled on their own, :func:`airbench_mteb.metrics.consistency.agreement_intervals`);
- the robustness study: rho on random subsets of the generated queries (the paper: 30 x 2,000);
- with ``without_qc`` (the generator's pre-QC set, registered as a task of its own): the same for the
  set before quality control, the paper's ablation (rho 0.8211 with QC against 0.6912 without).

The result is a :class:`ConsistencyReport` that renders itself to JSON and Markdown
(:class:`~airbench_mteb.report.protocol.Report`);
:func:`airbench_mteb.report.consistency_output.write_consistency` writes them and one plot per metric.
Nothing here prints.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from airbench_mteb.data.errors import DatasetError, OptionError
from airbench_mteb.metrics.consistency import (
    EXACT_MAX_MODELS,
    MIN_MODELS,
    P_METHODS,
    PMethod,
    agreement_intervals,
    p_method,
    rank_agreement,
    subset_agreement,
    tied_resamples,
)
from airbench_mteb.metrics.resampling import Resampling
from airbench_mteb.metrics.retrieval import is_relevant
from airbench_mteb.report.intervals import recorded_interval
from airbench_mteb.report.options import check_resampling_options
from airbench_mteb.report.protocol import finite_or_none
from airbench_mteb.report.text_format import markdown_text, p_text
from airbench_mteb.results.panel import (
    MAIN_SCORE,
    QuerySet,
    main_score,
    resolved,
    score_matrix,
    set_results,
)
from airbench_mteb.results.reading import ModelTaskResult, model_labels, read_results

GENERATED, WITHOUT_QC, HUMAN = "generated", "without QC", "human"
DEFAULT_METRIC = "ndcg_at_10"  # the paper's; main scores differ between families (co*cktail's is NDCG@1)
# Percentile by default: a rank correlation of a few models is a step function of the means, taking few values,
# and BCa's bias correction (made for smooth statistics) swings with the share of draws below the estimate.
CONSISTENCY_RESAMPLING = Resampling(method="percentile")


@dataclass(frozen=True)
class ModelScore:
    """One model's mean on one set and the interval its results record (``None`` where they record none)."""

    model: str
    score: float
    ci_low: float | None
    ci_high: float | None


@dataclass(frozen=True)
class Agreement:
    """One generated set (``name``: with or without QC) against the human set on one metric."""

    name: str
    spearman_rho: float
    spearman_p: float
    spearman_ci: tuple[float, float]
    kendall_tau: float
    kendall_p: float
    kendall_ci: tuple[float, float]
    ci_method: str  # the interval method used (BCa falls back to percentile where it is undefined)
    tied_draws: int  # bootstrap draws that tie every model on one set (coefficients undefined, left out)
    subset_size: int  # the robustness study: rho on random subsets of this many generated queries
    subset_rhos: tuple[float, ...]
    p_method: PMethod  # how both p-values were computed (metrics.consistency.P_METHODS)

    @property
    def subset_mean(self) -> float:
        return float(np.mean(self.subset_rhos))

    @property
    def subset_std(self) -> float:
        return float(np.std(self.subset_rhos))

    def to_json(self) -> dict[str, Any]:
        data = {key: finite_or_none(value) for key, value in asdict(self).items()}
        data["spearman_ci"] = [finite_or_none(v) for v in self.spearman_ci]
        data["kendall_ci"] = [finite_or_none(v) for v in self.kendall_ci]
        data["subset_rhos"] = [finite_or_none(v) for v in self.subset_rhos]
        return {**data, "subset_mean": finite_or_none(self.subset_mean), "subset_std": finite_or_none(self.subset_std)}


@dataclass(frozen=True)
class MetricConsistency:
    """One metric: every set's scores per model (keys: ``generated``, ``human``, ``without QC``) and the agreements."""

    metric: str
    metrics: Mapping[str, str]  # set name -> the metric read there (main_score resolved per task)
    scores: Mapping[str, tuple[ModelScore, ...]]
    n_queries: Mapping[str, int]
    agreements: tuple[Agreement, ...]

    def to_json(self) -> dict[str, Any]:
        return {"metric": self.metric, "metrics": dict(self.metrics), "n_queries": dict(self.n_queries),
                "scores": {name: [asdict(score) for score in scores] for name, scores in self.scores.items()},
                "agreements": [agreement.to_json() for agreement in self.agreements]}


@dataclass(frozen=True)
class ConsistencyReport:
    """The check of one generated set (and optionally its pre-QC set) against a human-labelled set."""

    generated: QuerySet
    human: QuerySet
    without_qc: QuerySet | None
    models: tuple[str, ...]
    metrics: tuple[MetricConsistency, ...]
    resampling: Resampling  # of the intervals; its seed also draws the robustness study's subsets
    subsets: int
    subset_size: int
    notes: tuple[str, ...] = field(default_factory=tuple)

    def to_json(self) -> dict[str, Any]:
        sets = {GENERATED: self.generated, HUMAN: self.human, **({WITHOUT_QC: self.without_qc} if self.without_qc
                                                                 else {})}
        return {"sets": {name: asdict(query_set) for name, query_set in sets.items()}, "models": list(self.models),
                "bootstrap": {**self.resampling.draws(), "level": self.resampling.level,
                              "method": self.resampling.method,
                              "scheme": "each set's queries resampled on their own; models' means and ranks "
                                        "recomputed per draw"},
                "robustness": {"subsets": self.subsets, "subset_size": self.subset_size, "seed": self.resampling.seed,
                               "scheme": "random subsets of the generated queries, without replacement, "
                                         "against the human set's full means"},
                "metrics": [metric.to_json() for metric in self.metrics], "notes": list(self.notes)}

    def to_markdown(self) -> str:
        return _render_markdown(self)


def consistency(results: Path, models: Sequence[str], generated: QuerySet, human: QuerySet, *,
                without_qc: QuerySet | None = None, metrics: Sequence[str] | None = None, subsets: int = 30,
                subset_size: int = 2000, resampling: Resampling = CONSISTENCY_RESAMPLING,
                check_corpus: bool = True) -> ConsistencyReport:
    """Compare how ``models`` rank on the ``generated`` set and on the ``human`` set, from their kept per-query scores.

    Args:
        results: an MTEB results folder (``mteb run --output-folder``) holding every model's results on every set.
        models: three or more models (labels, full or short names, as :func:`~airbench_mteb.results.reading.read_results`).
        generated, human: the two sets; ``without_qc``: the generated set before quality control.
        metrics: metric names kept per query (default ``ndcg_at_10``, the paper's; ``main_score``: each task's own).
        subsets, subset_size: the robustness study's random subsets of generated queries (size capped by the set).
        resampling: the bootstrap of the intervals (and the subsets' seed); percentile by default
            (:data:`CONSISTENCY_RESAMPLING`).
        check_corpus: refuse sets over different corpora (every relevant document of a generated set must
            be a document of the human set's corpus); reads both tasks' data.

    Raises:
        OptionError: fewer than 3 models (or names of fewer results), two sets that are one, a task not of this
            plugin with the corpus check on, an unknown interval method, subsets, resamples, seed or level out of
            range.
        UnknownNameError: an unknown task.
        DatasetError: a model without results on one set, an unknown split, subset or metric, results of one set
            computed on different data, sets over different corpora, or a results file without kept per-query
            scores (rerun with ``--overwrite-strategy always``).
    """
    _check_options(models, subsets, subset_size, resampling)
    sets = {GENERATED: generated, HUMAN: human, **({WITHOUT_QC: without_qc} if without_qc else {})}
    tasks = [query_set.task for query_set in sets.values()]
    folder = read_results(results, None, tasks)
    labels = model_labels(folder, models, tasks)
    if len(labels) < MIN_MODELS:
        raise OptionError(f"{', '.join(models)} name {len(labels)} different results: a rank agreement needs "
                          f"at least {MIN_MODELS} models")
    found = {name: set_results(folder, labels, query_set) for name, query_set in sets.items()}
    sets = {name: resolved(query_set, found[name]) for name, query_set in sets.items()}
    _check_distinct(sets)
    if check_corpus:
        for name in (GENERATED, WITHOUT_QC):
            if name in sets:
                _check_same_corpus(sets[name], sets[HUMAN])
    wanted = tuple(dict.fromkeys(metrics or (DEFAULT_METRIC,)))
    reports = tuple(_metric(metric, sets, found, subsets, subset_size, resampling) for metric in wanted)
    notes = tuple(f"{sets[a.name]} holds {a.subset_size} scored queries, no more than the subset size "
                  f"{subset_size:,}: every subset is the whole set, so the robustness study adds nothing"
                  for a in reports[0].agreements if a.subset_size == reports[0].n_queries[a.name])
    return ConsistencyReport(sets[GENERATED], sets[HUMAN], sets.get(WITHOUT_QC), labels, reports, resampling,
                             subsets, subset_size, notes)


# --- reading ------------------------------------------------------------------------------------------------------

def _check_options(models: Sequence[str], subsets: int, subset_size: int, resampling: Resampling) -> None:
    if len(set(models)) < MIN_MODELS:
        raise OptionError(f"a rank agreement needs at least {MIN_MODELS} different models, got {list(models)!r}")
    check_resampling_options(resampling)
    for name, value in (("subsets", subsets), ("subset size", subset_size)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise OptionError(f"{name} {value!r} is not a whole number >= 1")


def _check_distinct(sets: Mapping[str, QuerySet]) -> None:
    """Two sets that are one (the same task, split and subset) agree perfectly by construction (rho 1, tau 1):
    that measures nothing, so it is refused."""
    seen: dict[QuerySet, str] = {}
    for name, query_set in sets.items():
        if query_set in seen:
            raise OptionError(f"the {seen[query_set]} and the {name} set are both {query_set}: a set agrees "
                              "with itself by construction (rho 1, tau 1); give two different sets")
        seen[query_set] = name


def _check_same_corpus(generated: QuerySet, human: QuerySet) -> None:
    """Every document a generated set judges relevant is in the human set's corpus: by its id, or by the id a
    co*cktail setting gives its copy (``<id>-<source>``, the source being the subset). The generator keeps the ids
    of the corpus it read; its own hard negatives are extra documents, never relevant."""
    generated_data, human_data = _split_data(generated), _split_data(human)
    relevant = list(dict.fromkeys(doc for docs in generated_data.qrels.values() for doc, grade in docs.items()
                                  if is_relevant(grade)))
    absent = _missing(human_data.corpus, relevant)
    copies_absent = set(_missing(human_data.corpus, [f"{doc}-{human.subset}" for doc in absent]))
    absent = [doc for doc in absent if f"{doc}-{human.subset}" in copies_absent]
    if absent:
        raise DatasetError(f"{generated} and {human} are over different corpora: {len(absent)} of the "
                           f"{len(relevant)} documents the generated set judges relevant are not in the human "
                           f"set's corpus (first: {absent[0]!r}); give the human task over the corpus the "
                           "generator read")


def _missing(corpus: Any, ids: list[str]) -> list[str]:
    from airbench_mteb.data.arrow_corpus import missing_ids

    return [doc for doc in ids if doc not in corpus] if isinstance(corpus, dict) else missing_ids(corpus, ids)


def _split_data(query_set: QuerySet) -> Any:
    import mteb

    from airbench_mteb.tasks.base import PluginRetrievalTask

    task = mteb.get_task(query_set.task)
    if not isinstance(task, PluginRetrievalTask):
        raise OptionError(f"{query_set.task} is not a task of this plugin: its data cannot be checked "
                          "(pass check_corpus=False / --no-corpus-check to skip the corpus check)")
    return task.load_split(str(query_set.subset), query_set.split)


def _model_scores(query_set: QuerySet, found: Mapping[str, ModelTaskResult], metric: str,
                  matrix: np.ndarray) -> tuple[ModelScore, ...]:
    scores = []
    for (label, result), mean in zip(found.items(), matrix.mean(axis=0), strict=True):
        row = next(row for row in result.result.scores[query_set.split] if row["hf_subset"] == query_set.subset)
        interval = recorded_interval(row, metric)
        scores.append(ModelScore(label, float(mean), *(interval if interval else (None, None))))
    return tuple(scores)


def _metric(metric: str, sets: Mapping[str, QuerySet], found: Mapping[str, Mapping[str, ModelTaskResult]],
            subsets: int, subset_size: int, resampling: Resampling) -> MetricConsistency:
    read = {name: main_score(query_set.task) if metric == MAIN_SCORE else metric for name, query_set in sets.items()}
    matrices = {name: score_matrix(sets[name], found[name], read[name])[1] for name in sets}
    for name, matrix in matrices.items():
        if len(matrix) < 2:
            raise DatasetError(f"{sets[name]} has {len(matrix)} scored query: the intervals need at least 2")
    human = matrices[HUMAN]
    agreements = []
    for name in (GENERATED, WITHOUT_QC):
        if name not in matrices:
            continue
        generated = matrices[name]
        correlations = rank_agreement(generated.mean(axis=0), human.mean(axis=0))
        intervals = agreement_intervals(generated, human, **resampling.interval())
        robust = subset_agreement(generated, human.mean(axis=0), sample_size=subset_size, resamples=subsets,
                                  seed=resampling.seed)
        used = {interval.method for interval in intervals.values()}
        agreements.append(Agreement(
            name, correlations.spearman_rho, correlations.spearman_p,
            (intervals["spearman"].low, intervals["spearman"].high), correlations.kendall_tau,
            correlations.kendall_p, (intervals["kendall"].low, intervals["kendall"].high),
            resampling.common_method(used), tied_resamples(generated, human, **resampling.draws()),
            robust.sample_size, robust.rhos,
            correlations.p_method))
    return MetricConsistency(metric, read, {name: _model_scores(sets[name], found[name], read[name], matrices[name])
                                            for name in sets},
                             {name: len(matrix) for name, matrix in matrices.items()}, tuple(agreements))


# --- rendering ----------------------------------------------------------------------------------------------------

def _number(value: float) -> str:
    return "undefined" if not math.isfinite(value) else f"{value:+.4f}"


def _interval(low: float | None, high: float | None) -> str:
    return "" if low is None or high is None else f"[{low:.4f}, {high:.4f}]"


def _p_method_text(models: int) -> str:
    """Which p-values the report's panel of ``models`` gets (the rule of metrics.consistency.rank_agreement)."""
    if p_method(models) == "exact":
        return f"the {P_METHODS['exact']}, over the {math.factorial(models):,} orderings of the {models} models"
    return f"{P_METHODS['scipy']} ({models} models: more than {EXACT_MAX_MODELS} to enumerate)"


def _render_markdown(report: ConsistencyReport) -> str:
    resampling = report.resampling
    sets = [(GENERATED, report.generated), (HUMAN, report.human)] + (
        [(WITHOUT_QC, report.without_qc)] if report.without_qc else [])
    lines = ["# Rank agreement of a generated benchmark with human labels", "",
             *(f"- {name}: {markdown_text(str(query_set))}" for name, query_set in sets if query_set is not None), "",
             f"Spearman's rho and Kendall's tau-b between the models' scores on the two sets; p: "
             f"{_p_method_text(len(report.models))}; {resampling.level:.0%} {resampling.method} bootstrap "
             f"intervals from {resampling.n_resamples:,} draws (seed {resampling.seed}), each set's queries resampled "
             f"on their own and the models' means and ranks recomputed per draw. Robustness: rho on {report.subsets} "
             "random subsets of the generated queries (without replacement) against the human set's full means, as in "
             "AIR-Bench section 4.1.", ""]
    for metric in report.metrics:
        names = list(metric.scores)
        lines += [f"## {metric.metric}", "",
                  "| model | " + " | ".join(f"{name} ({metric.metrics[name]}, {metric.n_queries[name]} queries)"
                                          for name in names) + " |", "|---" * (len(names) + 1) + "|"]
        for i, model in enumerate(report.models):
            cells = [metric.scores[name][i] for name in names]
            lines.append(f"| {markdown_text(model)} | " + " | ".join(
                f"{cell.score:.4f} {_interval(cell.ci_low, cell.ci_high)}".rstrip() for cell in cells) + " |")
        lines += ["", "| set | Spearman rho | CI | p | Kendall tau | CI | p | subsets: mean rho | spread (sd) |"
                      " [min, max] |", "|---" * 10 + "|"]
        for a in metric.agreements:
            finite = [rho for rho in a.subset_rhos if math.isfinite(rho)]
            extremes = f"[{min(finite):+.4f}, {max(finite):+.4f}]" if finite else ""
            lines.append(f"| {a.name} | {_number(a.spearman_rho)} | [{a.spearman_ci[0]:+.4f}, {a.spearman_ci[1]:+.4f}]"
                         f" | {p_text(a.spearman_p)} | {_number(a.kendall_tau)} | "
                         f"[{a.kendall_ci[0]:+.4f}, {a.kendall_ci[1]:+.4f}] | {p_text(a.kendall_p)} | "
                         f"{_number(a.subset_mean)} ({len(a.subset_rhos)} x {a.subset_size}) | "
                         f"{a.subset_std:.4f} | {extremes} |")
        lines += [""] * any(a.tied_draws for a in metric.agreements)
        lines += [f"- {a.name}: {a.tied_draws:,} of {resampling.n_resamples:,} draws tie every model on one set; the "
                  "coefficients are undefined there and the intervals are read off the other draws"
                  for a in metric.agreements if a.tied_draws]
        lines.append("")
    lines += [f"- {note}" for note in report.notes]
    return "\n".join(lines).rstrip() + "\n"
