"""The one reader of MTEB results files: ``mteb.ResultCache`` finds the files, ``mteb.results.TaskResult``
reads them; this module adds what MTEB lacks for a report: a model's display label (its experiment kwargs,
e.g. BM25 parameters) and the revision its ``model_meta.json`` records, selection by short model name, the
latest file winning (or, for a table of configurations, each revision apart), and errors that name the file.
Every number is checked as it is read (:func:`score_problem`: retrieval measures in [0, 1], the others in the
range their definitions give): an edited or damaged file is refused in one line naming the file, task, split and
key, never shown as a score. A result found by ``mteb run`` for its closing lines is read here too
(:func:`run_result`).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from airbench_mteb.data.errors import DatasetError
from airbench_mteb.data.files import read_json
from airbench_mteb.models.arguments import model_label
from airbench_mteb.tasks.closed_book import CLOSED_BOOK
from airbench_mteb.whole_numbers import whole_number

if TYPE_CHECKING:
    from mteb.models import ModelMeta
    from mteb.results import TaskResult

# The retrieval measures (MTEB's and the plugin's, their tie-neutral forms and interval bounds): a number in [0, 1].
UNIT_METRIC = re.compile(r"(ndcg|map|recall|precision|mrr|judged|hit_rate)_at_\d+(_tie_neutral)?(_ci_(low|high))?")
MAIN_SCORE = "main_score"
SOURCE_BIAS = "source_bias"


@dataclass(frozen=True)
class Bound:
    """The range a key family's definition gives its numbers, and whether NaN (undefined) is one of them."""

    low: float
    high: float
    nan: bool = False
    integer: bool = False
    shown: str = ""  # the range as the error states it

    def problem(self, value: object) -> str | None:
        """Why ``value`` is not in range, or None."""
        if isinstance(value, bool) or not isinstance(value, int | float) or (self.integer and whole_number(value) is None):
            return "not " + ("a whole number" if self.integer else "a number")
        if math.isnan(value):
            return None if self.nan else "not a number in " + self.shown
        return None if math.isfinite(value) and self.low <= value <= self.high else "not a number in " + self.shown


UNIT = Bound(0, 1, shown="[0, 1]")
UNDEFINED_OR_UNIT = Bound(0, 1, nan=True, shown="[0, 1]")  # a p-value or interval bound undefined where data tie
COUNT = Bound(0, math.inf, integer=True, shown="[0, inf)")
# The other measures of a score dict (the first pattern a key matches wins), as their definitions bound them.
ROW_BOUNDS = (
    # MTEB's nAUC, (AUC - flat AUC) / (oracle AUC - flat AUC): no bound either way in MTEB's own output (3.0 for
    # precision@3 on IRSC's shipped data), so a finite number; NaN by its definition where the oracle is flat
    (re.compile(r"nauc_.+"), Bound(-math.inf, math.inf, nan=True, shown="(-inf, inf)")),
    (re.compile(r"accuracy"), UNIT),
)
# The keys under ``source_bias`` (metrics/source_bias.py, metrics/ndsr.py flatten them); an interval bound or
# p-value of one is bounded by :func:`_source_bias_problem`.
SOURCE_BIAS_BOUNDS = (
    (re.compile(r"relative_delta_.+"), Bound(-200, 200, shown="[-200, 200]")),  # 2(a - b) / (a + b) x 100, a, b >= 0
    (re.compile(r"delta_ndsr_at_\d+_.+"), Bound(-1, 1, shown="[-1, 1]")),
    (re.compile(r"(ndcg|map|share|ndsr)_at_\d+_.+|tie_decided_share_at_\d+|ci_level"), UNIT),
    (re.compile(r"tie_checked_queries|tie_decided_queries_at_\d+|ndsr_queries|ci_n_resamples"), COUNT),
)


@dataclass(frozen=True)
class ModelTaskResult:
    """One model's (or one of its experiments') result on one task."""

    model: str  # the model's name, as in its model_meta.json
    label: str  # the name plus its experiment kwargs, e.g. "airbench-mteb/bm25 (b=0.75, k1=1.2)"
    result: TaskResult
    path: Path
    revision: str = ""  # the model's revision (a re-ranked run's holds the depth: ..._top100)
    # the revision model_meta.json records; None without one (then only the folder ties a per-query file to it)
    meta_revision: str | None = None


@dataclass(frozen=True)
class ResultsFolder:
    """The results read from one results folder; ``path`` (as given) is named where a result is missing."""

    path: Path
    found: tuple[ModelTaskResult, ...]


def short_model(name: str) -> str:
    """``org/model`` -> ``model``: how tables and plots name a model."""
    return name.split("/", 1)[-1]


def selected(name: str, wanted: Iterable[str] | None) -> bool:
    """Whether ``name`` is among ``wanted`` (by full or short name); everything is when ``wanted`` is None."""
    if wanted is None:
        return True
    wanted = set(wanted)
    return name in wanted or short_model(name) in wanted


def _model_of(path: Path) -> tuple[str, str, str, str | None]:
    """(name, label, revision, recorded revision) of the model whose result ``path`` is, from the ``model_meta.json``
    beside it (the recorded revision None without one)."""
    meta_path = path.parent / "model_meta.json"
    if not meta_path.is_file():  # results/<model>/<revision>/<Task>.json: the name is in the path
        name = path.parent.parent.name.replace("__", "/")
        return name, name, path.parent.name, None
    meta = read_json(meta_path)
    revision = meta.get("revision")
    return meta["name"], model_label(meta["name"], meta.get("experiment_kwargs")), str(revision or ""), revision


def read_task_result(path: Path) -> TaskResult:
    """One MTEB results file; a file that is not one is a DatasetError naming it."""
    from mteb.results import TaskResult

    try:
        result = TaskResult.from_disk(path)
    except json.JSONDecodeError as error:
        raise DatasetError(f"malformed JSON ({error.msg})", path=path, line=error.lineno) from None
    except ValueError as error:  # pydantic's validation errors are ValueErrors
        raise DatasetError(f"not an MTEB task result ({error})", path=path) from None
    for split, rows in result.scores.items():
        for row in rows:
            problem = score_problem(row)
            if problem:
                raise DatasetError(f"{result.task_name} {split}/{row.get('hf_subset')}: {problem}; the file was "
                                   "edited or damaged: rerun the model (--overwrite-strategy always)", path=path)
            _whole_counts(row)
    return result


def run_result(results: Path, meta: ModelMeta, task: str) -> tuple[Path, TaskResult | None]:
    """Where ``mteb.ResultCache`` under ``results`` writes ``meta``'s result on ``task``, and that result (None when
    no file is there)."""
    import mteb

    path = mteb.ResultCache(results).get_task_result_path(task, meta)
    return path, read_task_result(path) if path.is_file() else None


def score_problem(row: Mapping[str, object]) -> str | None:
    """What is wrong with a number of one split and subset's score dict, or None: a retrieval measure
    (:data:`UNIT_METRIC`) must be a finite number in [0, 1], the main score a finite number (in [0, 1] beside
    retrieval measures); NaN only where the split was searched closed-book. The other measures are held to
    their ranges (:data:`ROW_BOUNDS`, :data:`SOURCE_BIAS_BOUNDS`)."""
    retrieval = any(UNIT_METRIC.fullmatch(key) for key in row)
    for key, value in row.items():
        if key == SOURCE_BIAS and isinstance(value, Mapping):
            problem = _source_bias_problem(value)
            if problem:
                return problem
            continue
        unit = UNIT_METRIC.fullmatch(key) is not None or (key == MAIN_SCORE and retrieval)
        if not unit and key != MAIN_SCORE:
            problem = _bounded_problem(key, value, ROW_BOUNDS)
            if problem:
                return problem
            continue
        shown = f"{key} is {json.dumps(value)}"
        if isinstance(value, bool) or not isinstance(value, int | float):
            return f"{shown}, not a number"
        if math.isnan(value):
            if CLOSED_BOOK in row:  # searched without qrels: the main score is MTEB's NaN marker
                continue
            return f"{shown} and the split was not searched closed-book (no closed_book entry)"
        if not math.isfinite(value) or (unit and not 0 <= value <= 1):
            return f"{shown}, not " + ("a number in [0, 1]" if unit else "a finite number")
    return None


def _bounded_problem(key: str, value: object, bounds: Sequence[tuple[re.Pattern[str], Bound | None]],
                     shown_key: str | None = None) -> str | None:
    """What is wrong with ``value`` of ``key`` under the first of ``bounds`` that matches it (None: unbounded)."""
    for pattern, bound in bounds:
        if pattern.fullmatch(key):
            problem = bound.problem(value) if bound is not None else None
            return f"{shown_key or key} is {json.dumps(value)}, {problem}" if problem else None
    return None


def _source_bias_problem(flat: Mapping[str, object]) -> str | None:
    """The first number under ``source_bias`` out of its range; an interval bound or p-value is held to its
    statistic's range (a p-value to [0, 1]) and may be NaN (undefined where every resample ties)."""
    for key, value in flat.items():
        shown = f"{SOURCE_BIAS}.{key}"
        statistic = re.sub(r"_(p_value|ci_low|ci_high)$", "", key)
        if statistic != key:
            bound = UNDEFINED_OR_UNIT if key.endswith("_p_value") else _nan_allowed(statistic)
            problem = bound.problem(value) if bound is not None else None
            if problem:
                return f"{shown} is {json.dumps(value)}, {problem}"
            continue
        problem = _bounded_problem(key, value, SOURCE_BIAS_BOUNDS, shown)
        if problem:
            return problem
    return None


def _whole_counts(row: dict[str, object]) -> None:
    """The counts under ``source_bias`` as ints: a writer's ``80.0`` is read as 80 (checked whole by
    :func:`score_problem`), so no report shows "80.0 queries"."""
    flat = row.get(SOURCE_BIAS)
    if isinstance(flat, dict):
        for key, value in flat.items():
            bound = next((b for pattern, b in SOURCE_BIAS_BOUNDS if pattern.fullmatch(key)), None)
            if bound is not None and bound.integer:
                flat[key] = whole_number(value)


def _nan_allowed(statistic: str) -> Bound | None:
    """The bound of ``statistic``'s interval bounds: the statistic's own, NaN allowed."""
    bound = next((b for pattern, b in SOURCE_BIAS_BOUNDS if pattern.fullmatch(statistic)), None)
    return None if bound is None else replace(bound, nan=True)


def read_results(results: Path, models: Sequence[str] | None = None, tasks: Sequence[str] | None = None, *,
                 configurations: bool = False) -> ResultsFolder:
    """The results of ``models`` (full or short names; all if None) on ``tasks`` (all if None).

    ``results`` is a results cache root (``mteb run --output-folder``, ``mteb.ResultCache``: it
    holds ``results/<model>/<revision>/<Task>.json``, experiments included) or its ``results/``
    folder. Of several files of one model label and task (revisions, reruns) the latest wins; with
    ``configurations`` each revision of a label is its own (a revision changes the numbers: a re-ranked
    run's holds its depth), its label then marked with what tells its revision from the others
    (:func:`revision_labels`).
    """
    import mteb

    root = results.parent if results.name == "results" and not (results / "results").is_dir() else results
    if not (root / "results").is_dir():
        raise DatasetError("no MTEB results folder (<folder>/results/<model>/<revision>/<Task>.json)", path=results)
    paths = mteb.ResultCache(root).get_cache_paths(tasks=tasks, require_model_meta=False, include_remote=False,
                                                   load_experiments="match_name")
    latest: dict[tuple[str, str, str], tuple[float, ModelTaskResult]] = {}
    for path in sorted(paths):
        model, label, revision, recorded = _model_of(path)
        if not selected(model, models):
            continue
        found = ModelTaskResult(model, label, read_task_result(path), path, revision, recorded)
        key, mtime = (label, revision if configurations else "", found.result.task_name), path.stat().st_mtime
        if key not in latest or mtime >= latest[key][0]:
            latest[key] = (mtime, found)
    chosen = [found for _, found in latest.values()]
    chosen = sorted(revision_labels(chosen) if configurations else chosen, key=lambda r: (r.label, r.result.task_name))
    return ResultsFolder(results, tuple(chosen))


def revision_labels(found: Sequence[ModelTaskResult]) -> list[ModelTaskResult]:
    """``found`` with the label of each result whose label has several revisions marked with the parts of its
    revision (split at ``__``) that tell it from the others: ``[top10]`` and ``[top100]`` for re-ranked runs of
    two depths, the whole revision where the revisions have different numbers of parts."""
    revisions: dict[str, set[str]] = {}
    for r in found:
        revisions.setdefault(r.label, set()).add(r.revision)
    return [replace(r, label=f"{r.label} [{_differing(r.revision, revisions[r.label]) or 'no revision'}]")
            if len(revisions[r.label]) > 1 else r for r in found]


def _differing(revision: str, revisions: set[str]) -> str:
    split = [other.split("__") for other in revisions]
    parts = revision.split("__")
    if len({len(other) for other in split}) != 1:
        return revision
    return "__".join(part for i, part in enumerate(parts) if len({other[i] for other in split}) > 1)


def model_labels(folder: ResultsFolder, models: Sequence[str], tasks: Sequence[str]) -> tuple[str, ...]:
    """The result label each of ``models`` names (a label, or a full or short model name naming one label) among
    the results of ``tasks`` in ``folder`` (both named in the errors)."""
    everything, results = folder.found, folder.path
    labels = []
    for name in dict.fromkeys(models):
        matching = sorted({r.label for r in everything if r.label == name}) or \
            sorted({r.label for r in everything if name in (r.model, short_model(r.model))})
        if not matching:
            there = sorted({r.label for r in everything}) or ["none"]
            raise DatasetError(f"no results of model {name!r} on {', '.join(tasks)} in {results} "
                               f"(models there: {', '.join(there)})")
        if len(matching) > 1:
            raise DatasetError(f"model {name!r} names several results in {results}: {', '.join(matching)}; "
                               "give one of them")
        labels.append(matching[0])
    return tuple(dict.fromkeys(labels))
