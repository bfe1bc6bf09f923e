"""Task, benchmark and model names checked where they are looked up, by commands and libraries alike.

MTEB loads the model before it looks the tasks up, and answers an unknown name with a traceback or a bare
``KeyError``; here an unknown name is one short :class:`UnknownNameError` naming it (with MTEB's own suggestions,
each quoted, and where to list the names), which the CLI prints as one line with exit code 2 and a library caller
can catch by its kind.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from airbench_mteb.data.errors import UnknownNameError

if TYPE_CHECKING:
    from mteb import AbsTask, Benchmark
    from mteb.models import ModelMeta

_Found = TypeVar("_Found")

# mteb's suggestions in its KeyError: "... Did you mean: 'a'?", "... Did you mean: a?", "... 'a' or b?"
_SUGGESTED = re.compile(r"Did you mean:\s*(?P<names>.+?)\?\s*$")


# A re-ranked run's model name holds both models, ``<first stage>__reranked-by__<reranker, "/" as "__">`` (MTEB
# wants exactly one organisation part); the leaderboard and the submission read both back.
RERANKED_BY = "__reranked-by__"


def reranked_model_name(first_stage: str, reranker: str) -> str:
    """``<first stage>__reranked-by__<reranker with "/" as "__">``."""
    return f"{first_stage}{RERANKED_BY}{reranker.replace('/', '__', 1)}"


def split_reranked_name(name: str) -> tuple[str, str | None]:
    """(first stage, reranker or None) of a model name made by :func:`reranked_model_name`."""
    if RERANKED_BY not in name:
        return name, None
    first_stage, reranker = name.split(RERANKED_BY, 1)
    return first_stage, reranker.replace("__", "/", 1)


def reranked_model_meta(reranker: ModelMeta, first_stage: Path, top_k: int) -> ModelMeta:
    """``reranker`` over the first stage saved in ``first_stage`` (its top ``top_k``), as one MTEB model named by
    :func:`reranked_model_name` (:func:`airbench_mteb.models.rerankers.reranker_over`)."""
    from airbench_mteb.models.rerankers import reranker_over

    return reranker_over(reranker, first_stage, top_k, reranked_model_name)


def did_you_mean(error: KeyError) -> str:
    """``"; did you mean 'a' or 'b'?"`` with the names mteb's lookup error suggests, each quoted; "" for none."""
    text = str(error.args[0]) if error.args else ""
    found = _SUGGESTED.search(text)
    names = [part.strip().strip("'\"") for part in found["names"].split(" or ")] if found else []
    return f"; did you mean {' or '.join(map(repr, names))}?" if names else ""


def _named(kind: str, name: str, lookup: Callable[[str], _Found], listing: str) -> _Found:
    try:
        return lookup(name)
    except KeyError as error:
        raise UnknownNameError(f"unknown {kind} {name!r}{did_you_mean(error)} ({listing})") from None


def task_named(name: str) -> AbsTask:
    """The task MTEB registers as ``name``; :class:`UnknownNameError` if there is none."""
    import mteb

    from airbench_mteb.tasks.cocktail import SOURCES_TASK_PREFIX

    listing = "`airbench-mteb tasks` lists the plugin's"
    if name.startswith(SOURCES_TASK_PREFIX):  # the name of a task only one `bias --sources` run had
        listing += "; a task made by `bias --sources` lives in that run: `register-dataset` its folder"
    return _named("task", name, mteb.get_task, listing)


def benchmark_named(name: str) -> Benchmark:
    """The benchmark MTEB registers as ``name``; :class:`UnknownNameError` if there is none."""
    import mteb

    return _named("benchmark", name, mteb.get_benchmark, "`airbench-mteb available-benchmarks` lists them")


def check_task_names(names: Sequence[str] | None) -> None:
    """Raise :class:`UnknownNameError` for the first name MTEB does not know as a task."""
    for name in names or ():
        task_named(name)


def check_benchmark_names(names: Sequence[str] | None) -> None:
    """Raise :class:`UnknownNameError` for the first name MTEB does not know as a benchmark."""
    for name in names or ():
        benchmark_named(name)


def check_model_name(name: str, revision: str | None = None) -> None:
    """A model MTEB knows, or one whose metadata the hub gives; else one line with mteb's suggestions and why the
    hub did not answer."""
    import mteb
    from mteb.models import ModelMeta

    try:
        mteb.get_model_meta(name, revision)
        return
    except KeyError as error:
        suggested = did_you_mean(error)
    try:
        ModelMeta.from_hub(name, revision)
    except Exception as error:  # offline, no such repository, no access: all mean "cannot be run"
        raise UnknownNameError(f"unknown model {name!r} (not in mteb's registry, not a local folder, not from the "
                               f"hub: {type(error).__name__}){suggested}") from None


def model_argument(model: str, revision: str | None = None) -> str:
    """The registered name of ``model`` (a name or a local folder); :class:`UnknownNameError` if it cannot run."""
    from airbench_mteb.registry import resolve_model  # mteb: when a command runs, not while its arguments are read

    if Path(model).is_dir():
        try:
            return resolve_model(model)
        except ValueError as error:  # a folder without a model in it
            raise UnknownNameError(str(error)) from None
    check_model_name(model, revision)
    return model
