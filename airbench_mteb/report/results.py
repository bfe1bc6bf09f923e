"""The one reader of MTEB results behind the reports: ``mteb.ResultCache`` finds the files,
``mteb.results.TaskResult`` reads them; this module adds what MTEB lacks for a report: a
model's display label (its experiment kwargs, e.g. BM25 parameters), selection by short
model name, the latest file winning, and errors that name the file.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from airbench_mteb.data.errors import DatasetError
from airbench_mteb.data.files import read_json
from airbench_mteb.models.arguments import model_label

if TYPE_CHECKING:
    from mteb.results import TaskResult


@dataclass(frozen=True)
class ModelTaskResult:
    """One model's (or one of its experiments') result on one task."""

    model: str  # the model's name, as in its model_meta.json
    label: str  # the name plus its experiment kwargs, e.g. "airbench-mteb/bm25 (b=0.75, k1=1.2)"
    result: TaskResult
    path: Path


def short_model(name: str) -> str:
    """``org/model`` -> ``model``: how tables and plots name a model."""
    return name.split("/", 1)[-1]


def selected(name: str, wanted: Iterable[str] | None) -> bool:
    """Whether ``name`` is among ``wanted`` (by full or short name); everything is when ``wanted`` is None."""
    if wanted is None:
        return True
    wanted = set(wanted)
    return name in wanted or short_model(name) in wanted


def _model_of(path: Path) -> tuple[str, str]:
    """(name, label) of the model whose result ``path`` is, from the ``model_meta.json`` beside it."""
    meta_path = path.parent / "model_meta.json"
    if not meta_path.is_file():  # results/<model>/<revision>/<Task>.json: the name is in the path
        name = path.parent.parent.name.replace("__", "/")
        return name, name
    meta = read_json(meta_path)
    return meta["name"], model_label(meta["name"], meta.get("experiment_kwargs"))


def read_task_result(path: Path) -> TaskResult:
    """One MTEB results file; a file that is not one is a DatasetError naming it."""
    from mteb.results import TaskResult

    try:
        return TaskResult.from_disk(path)
    except json.JSONDecodeError as error:
        raise DatasetError(f"malformed JSON ({error.msg})", path=path, line=error.lineno) from None
    except ValueError as error:  # pydantic's validation errors are ValueErrors
        raise DatasetError(f"not an MTEB task result ({error})", path=path) from None


def read_results(results: Path, models: Sequence[str] | None = None,
                 tasks: Sequence[str] | None = None) -> list[ModelTaskResult]:
    """The results of ``models`` (full or short names; all if None) on ``tasks`` (all if None).

    ``results`` is a results cache root (``mteb run --output-folder``, ``mteb.ResultCache``: it
    holds ``results/<model>/<revision>/<Task>.json``, experiments included) or its ``results/``
    folder. Of several files of one model label and task (revisions, reruns) the latest wins.
    """
    import mteb

    root = results.parent if results.name == "results" and not (results / "results").is_dir() else results
    if not (root / "results").is_dir():
        raise DatasetError("no MTEB results folder (<folder>/results/<model>/<revision>/<Task>.json)", path=results)
    paths = mteb.ResultCache(root).get_cache_paths(tasks=tasks, require_model_meta=False, include_remote=False,
                                                   load_experiments="match_name")
    latest: dict[tuple[str, str], tuple[float, ModelTaskResult]] = {}
    for path in sorted(paths):
        model, label = _model_of(path)
        if not selected(model, models):
            continue
        found = ModelTaskResult(model, label, read_task_result(path), path)
        key, mtime = (label, found.result.task_name), path.stat().st_mtime
        if key not in latest or mtime >= latest[key][0]:
            latest[key] = (mtime, found)
    return sorted((found for _, found in latest.values()), key=lambda r: (r.label, r.result.task_name))


def model_labels(everything: Sequence[ModelTaskResult], models: Sequence[str], results: Path,
                 tasks: Sequence[str]) -> tuple[str, ...]:
    """The result label each of ``models`` names (a label, or a full or short model name naming one label) among
    ``everything``, the results of ``tasks`` in ``results`` (both named in the errors)."""
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
