"""Task, benchmark and model names given on the command line, checked before any work starts.

MTEB loads the model before it looks the tasks up, and answers an unknown name with a traceback;
a user gets one line naming what is unknown (with MTEB's own suggestions) and exit code 2.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from airbench_mteb.errors import UnknownNameError
from airbench_mteb.registry import resolve_model


def _reason(error: BaseException) -> str:
    # mteb's KeyError messages are quoted by KeyError.__str__ and sometimes prefixed with "KeyError: "
    text = str(error.args[0]) if isinstance(error, KeyError) and error.args else str(error)
    return text.removeprefix("KeyError: ") or type(error).__name__


def check_task_names(names: Sequence[str] | None) -> None:
    """Raise :class:`UnknownNameError` for the first name MTEB does not know as a task."""
    import mteb

    from airbench_mteb.tasks.cocktail import UNREGISTERED_SOURCES_TASK

    _check_names("task", names, mteb.get_task, "available-tasks", f"; {UNREGISTERED_SOURCES_TASK}")


def check_benchmark_names(names: Sequence[str] | None) -> None:
    import mteb

    _check_names("benchmark", names, mteb.get_benchmark, "available-benchmarks")


def _check_names(kind: str, names: Sequence[str] | None, lookup: Callable[[str], object], listing: str,
                 hint: str = "") -> None:
    for name in names or ():
        try:
            lookup(name)
        except KeyError as error:
            raise UnknownNameError(f"unknown {kind} {name!r}: {_reason(error)} "
                                   f"(`airbench-mteb {listing}` lists them){hint}") from None


def check_model_name(name: str, revision: str | None = None) -> None:
    """A model MTEB knows, or one whose metadata the hub gives; else one line with both reasons."""
    import mteb
    from mteb.models import ModelMeta

    try:
        mteb.get_model_meta(name, revision)
        return
    except KeyError as error:
        registry_reason = _reason(error)
    try:
        ModelMeta.from_hub(name, revision)
    except Exception as error:  # offline, no such repository, no access: all mean "cannot be run"
        raise UnknownNameError(f"unknown model {name!r}: {registry_reason} It is not a local model folder, and "
                               f"the hub lookup failed ({type(error).__name__}: {str(error).splitlines()[0]})") from None


def model_argument(model: str, revision: str | None = None) -> str:
    """The registered name of ``model`` (a name or a local folder); :class:`UnknownNameError` if it cannot run."""
    if Path(model).is_dir():
        try:
            return resolve_model(model)
        except ValueError as error:  # a folder without a model in it
            raise UnknownNameError(str(error)) from None
    check_model_name(model, revision)
    return model
