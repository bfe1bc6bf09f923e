"""Scores by query attribute: `airbench-mteb report --plot by-attribute --results R --tasks GENERATED_TASK`.

A generated AIR-Bench set samples every query's attributes (AIR-Bench Appendix A.2.1: type, length,
overall or partial information, rewrite styles) and ``generate airbench`` keeps them in the dataset
folder's ``candidates.jsonl``. :func:`scores_by_attribute` groups the kept per-query scores of each model
(:mod:`airbench_mteb.results.panel`) by one attribute at a time and gives each group's mean with its
bootstrap interval (:func:`airbench_mteb.metrics.bootstrap.bootstrap_cis`: the group's queries resampled,
one draw for every model). A group of one query has no interval. Writes ``by_attribute.json`` and
``by_attribute.md``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from airbench_mteb.data.errors import DatasetError, OptionError
from airbench_mteb.data.files import read_jsonl
from airbench_mteb.metrics.bootstrap import bootstrap_cis
from airbench_mteb.metrics.resampling import Resampling
from airbench_mteb.names import task_named
from airbench_mteb.report import ReportRequest, register_plot
from airbench_mteb.report.protocol import finite_or_none, json_text, write_files
from airbench_mteb.results.panel import (
    MAIN_SCORE,
    QuerySet,
    main_score,
    resolved,
    score_matrix,
    set_results,
)
from airbench_mteb.results.reading import model_labels, read_results

CANDIDATES = "candidates.jsonl"  # written by `generate airbench` beside the dataset
FINAL_STYLE = "final_style"  # the style of the last rewrite, the one that became the query
ATTRIBUTES = ("query_type", "length", "information", FINAL_STYLE)
FILES = ("by_attribute.json", "by_attribute.md")


@dataclass(frozen=True)
class GroupScore:
    """One model's mean over the queries whose ``attribute`` is ``value``, and its interval (None: one query)."""

    model: str
    attribute: str
    value: str
    n_queries: int
    mean: float
    ci_low: float | None
    ci_high: float | None
    ci_method: str | None


@dataclass(frozen=True)
class AttributeReport:
    """Every model's scores by attribute on one split and subset of a generated task."""

    query_set: QuerySet
    metric: str
    models: tuple[str, ...]
    groups: tuple[GroupScore, ...]
    resampling: Resampling
    unattributed: int  # scored queries without a candidates.jsonl row (none in a generator's own folder)

    def to_json(self) -> dict[str, Any]:
        return {"task": self.query_set.task, "split": self.query_set.split, "subset": self.query_set.subset,
                "metric": self.metric, "models": list(self.models), "resampling": asdict(self.resampling),
                "unattributed_queries": self.unattributed,
                "groups": [{key: finite_or_none(value) for key, value in asdict(group).items()}
                           for group in self.groups]}

    def to_markdown(self) -> str:
        lines = [f"## {self.query_set}: {self.metric} by query attribute", "",
                 f"Mean per group of queries with its {self.resampling.level:.0%} bootstrap interval "
                 f"({self.resampling.method}, {self.resampling.n_resamples:,} resamples of the group's queries, "
                 f"seed {self.resampling.seed}).", ""]
        for attribute in dict.fromkeys(group.attribute for group in self.groups):
            rows = [group for group in self.groups if group.attribute == attribute]
            values = list(dict.fromkeys(group.value for group in rows))
            lines += [f"### {attribute}", "", "| value | queries | " + " | ".join(self.models) + " |",
                      "|---" * (len(self.models) + 2) + "|"]
            for value in values:
                cells = {group.model: group for group in rows if group.value == value}
                lines.append(f"| {value} | {cells[self.models[0]].n_queries} | " + " | ".join(
                    _cell(cells[model]) for model in self.models) + " |")
            lines.append("")
        if self.unattributed:
            lines.append(f"- {self.unattributed} scored queries have no row in {CANDIDATES}: left out")
        return "\n".join(lines).rstrip() + "\n"


def _cell(group: GroupScore) -> str:
    interval = "" if group.ci_low is None else f" [{group.ci_low:.4f}, {group.ci_high:.4f}]"
    return f"{group.mean:.4f}{interval}"


def query_attributes(candidates: Path, attributes: Sequence[str] = ATTRIBUTES) -> dict[str, dict[str, str]]:
    """``{query id: {attribute: value}}`` of the kept queries in a ``candidates.jsonl`` (rows with a ``qid``).

    An attribute is a key of a row's ``attributes`` (``query_type``, ``length``, ``information``; a list
    such as ``rewrite_styles`` is joined with ``+``), ``final_style`` (the last rewrite style), or a
    top-level text field of the row (``character``, ``scenario``: free text, so mostly groups of one).
    """
    found: dict[str, dict[str, str]] = {}
    for line, row in read_jsonl(candidates):
        if "qid" not in row:
            continue
        sampled = row.get("attributes") or {}
        styles = sampled.get("rewrite_styles") or []
        values = {**{key: row[key] for key in row if isinstance(row[key], str)}, **sampled,
                  FINAL_STYLE: styles[-1] if styles else "none (no rewrite)"}
        unknown = [name for name in attributes if name not in values]
        if unknown:
            raise DatasetError(f"query {row['qid']} has no attribute {unknown[0]!r} (it has: "
                               f"{', '.join(sorted(values))})", path=candidates, line=line)
        found[str(row["qid"])] = {name: "+".join(map(str, values[name])) if isinstance(values[name], list)
                                  else str(values[name]) for name in attributes}
    return found


def candidates_file(task: str) -> Path:
    """The ``candidates.jsonl`` beside a registered generated task's data."""
    from airbench_mteb.tasks.airbench import AirBenchTask

    instance = task_named(task)
    folder = instance.entry.data_dir if isinstance(instance, AirBenchTask) else None
    if not folder:
        raise DatasetError(f"{task} is not a generated AIR-Bench task registered from a folder (register-dataset): "
                           f"it has no {CANDIDATES}")
    path = Path(folder) / CANDIDATES
    if not path.is_file():
        raise DatasetError(f"no {CANDIDATES} beside the generated task's data (written by `generate airbench`)",
                           path=path)
    return path


def scores_by_attribute(results: Path, query_set: QuerySet, models: Sequence[str] | None = None, *,
                        metric: str = MAIN_SCORE, attributes: Sequence[str] = ATTRIBUTES,
                        candidates: Path | None = None, resampling: Resampling | None = None) -> AttributeReport:
    """Each model's mean of ``metric`` per value of each attribute on ``query_set`` of a generated task.

    ``models``: labels or names (default every model with results on the task); ``candidates``: the
    generator's ``candidates.jsonl`` (default: the one in the registered task's folder).
    """
    resampling = resampling or Resampling()
    folder = read_results(results, None, [query_set.task])
    names = models if models else sorted({r.label for r in folder.found if r.result.task_name == query_set.task})
    if not names:
        raise DatasetError(f"no results of task {query_set.task!r} in {results}")
    found = set_results(folder, model_labels(folder, names, [query_set.task]), query_set)
    query_set = resolved(query_set, found)
    read = main_score(query_set.task) if metric == MAIN_SCORE else metric
    query_ids, matrix = score_matrix(query_set, found, read)
    labelled = query_attributes(candidates or candidates_file(query_set.task), attributes)
    rows = [i for i, qid in enumerate(query_ids) if qid in labelled]
    groups = []
    for attribute in attributes:
        members: dict[str, list[int]] = defaultdict(list)
        for i in rows:
            members[labelled[query_ids[i]][attribute]].append(i)
        for value in sorted(members):
            groups += _group_scores(found, attribute, value, matrix[members[value]], resampling)
    return AttributeReport(query_set, read, tuple(found), tuple(groups), resampling, len(query_ids) - len(rows))


def _group_scores(found: Mapping[str, Any], attribute: str, value: str, values: Any,
                  resampling: Resampling) -> list[GroupScore]:
    intervals = bootstrap_cis({label: values[:, j] for j, label in enumerate(found)},
                              **resampling.interval()) if len(values) > 1 else {}
    return [GroupScore(label, attribute, value, len(values), float(values[:, j].mean()),
                       *((intervals[label].low, intervals[label].high, intervals[label].method)
                         if label in intervals else (None, None, None)))
            for j, label in enumerate(found)]


def write_by_attribute(reports: Sequence[AttributeReport], out: Path) -> list[Path]:
    """``by_attribute.json`` (a list of reports) and ``by_attribute.md`` in ``out``."""
    texts = (json_text([report.to_json() for report in reports]),
             "# Scores by query attribute\n\n" + "\n".join(report.to_markdown() for report in reports))
    return write_files(out, dict(zip(FILES, texts, strict=True)))


@register_plot("by-attribute")
def by_attribute_plot(request: ReportRequest) -> list[Path]:
    """Every scored split of each task given (``--tasks``: generated AIR-Bench tasks) by query attribute."""
    results = request.results_folder("by-attribute")
    if not request.tasks:
        raise OptionError("the by-attribute table needs the generated task(s): --tasks TASK")
    reports = []
    for task in request.tasks:
        found = read_results(results, None, [task]).found  # --models may name labels: scores_by_attribute resolves
        if not found:
            raise DatasetError(f"no results of task {task!r} in {results}")
        reports += [scores_by_attribute(results, QuerySet(task, split), request.models,
                                        resampling=request.resampling)
                    for split in sorted(found[0].result.scores)]
    return write_by_attribute(reports, request.out)
