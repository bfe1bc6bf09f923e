"""Registration of the plugin's tasks, benchmarks and models with mteb, which has no plugin hook.

Which objects are registered, and what to do on a name clash, is decided here; the mteb internals
that take them (its registries, its results cache check and writer) are reached only through
:mod:`airbench_mteb.mteb_compat`.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from airbench_mteb import mteb_compat
from airbench_mteb.data.errors import OptionError

if TYPE_CHECKING:
    from mteb import AbsTask, Benchmark
    from mteb.models import ModelMeta

_registered = False


def register_tasks(task_classes: Iterable[type[AbsTask]]) -> None:
    """Make task classes visible to get_task(s), filters, the CLI and TaskResult loading."""
    new: dict[str, type[AbsTask]] = {}
    for cls in task_classes:
        name = cls.metadata.name
        known = new.get(name) or mteb_compat.registered_task(name)
        if known is cls:
            continue
        if known is not None and known.__module__ != cls.__module__:
            # one clash (e.g. a user's registered dataset) must not keep every other task out of mteb
            warnings.warn(f"airbench-mteb: task {name!r} not registered: the name is already used by "
                          f"{_defined_at(known)}", stacklevel=2)
            continue
        new[name] = cls
    if new:
        mteb_compat.add_task_classes(list(new.values()))


def task_owner(name: str) -> str | None:
    """Where the task mteb knows under ``name`` is defined (``module.Class``), or None if there is none."""
    register_all()
    known = mteb_compat.registered_task(name)
    return None if known is None else _defined_at(known)


def _defined_at(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def register_benchmarks(make_benchmarks: Callable[[], Iterable[Benchmark]]) -> None:
    """Expose benchmarks to mteb.get_benchmark(s) and `mteb run -b`, built on first lookup.

    mteb imports its own benchmark definitions (about a second) only when a benchmark is
    looked up, so the plugin's join that lookup instead of forcing the import at start.
    """
    mteb_compat.join_benchmark_lookup(make_benchmarks)


def register_models(metas: Iterable[ModelMeta]) -> None:
    """Expose model aliases to mteb.get_model(_meta) and `mteb run -m`."""
    mteb_compat.add_model_metas(metas)


@contextlib.contextmanager
def model_with_arguments(name: str, revision: str | None, kwargs: Mapping[str, Any]) -> Iterator[None]:
    """While the block runs, ``mteb.get_model(name)`` (and so ``mteb run -m name``) loads the model as
    ``mteb.get_model(name, **kwargs)`` does, through MTEB's own ``get_model_meta(name, experiment_kwargs=kwargs)``:
    the loader gets ``kwargs``, the results go to the experiment's folder. A loader that refuses a value
    (``ValueError``, ``TypeError``) raises an :class:`OptionError` naming the model and the arguments."""
    import mteb

    if not kwargs:
        yield
        return
    meta = mteb.get_model_meta(name, revision, fetch_from_hf=True, experiment_kwargs=dict(kwargs))
    with mteb_compat.model_meta_registered(meta.model_copy(update={"loader": _refusing(meta.loader, name, kwargs)})):
        yield


def _refusing(loader: Callable[..., Any], name: str, kwargs: Mapping[str, Any]) -> Callable[..., Any]:
    def load(*args: Any, **given: Any) -> Any:
        try:
            return loader(*args, **given)
        except (TypeError, ValueError) as error:
            from airbench_mteb.models.arguments import model_label

            raise OptionError(f"{model_label(name, kwargs)}: the model's loader refused these arguments "
                              f"({type(error).__name__}: {error})") from None
    return load


def resolve_model(name_or_folder: str) -> str:
    """A local model folder becomes a registered ``local/<name>`` model; other names pass through."""
    from pathlib import Path

    if Path(name_or_folder).is_dir():
        from airbench_mteb.models.local import local_model_meta

        meta = local_model_meta(name_or_folder)
        register_models([meta])
        return str(meta.name)
    return name_or_folder


def register_all() -> None:
    """Register every task family, benchmark and bundled model of the plugin (idempotent)."""
    global _registered
    if _registered:
        return
    from airbench_mteb.models import bundled_model_metas
    from airbench_mteb.tasks import all_benchmarks, all_task_classes

    register_tasks(all_task_classes())
    register_benchmarks(all_benchmarks)
    register_models(bundled_model_metas())
    mteb_compat.install_result_hooks()  # plugin tasks: data-revision guard and safe writer (tasks/base.py)
    _registered = True
