"""A model's loader arguments, as MTEB keeps them (``ModelMeta.experiment_kwargs``): the keys a loader
accepts, and the one label that names a model together with its arguments.

``mteb.get_model(name, **kwargs)`` passes ``kwargs`` to the model's loader and records them as the
loaded model's ``experiment_kwargs``; MTEB then files its results under
``results/<model>/<revision>/experiments/<key>_<value>__.../`` and the plugin's embedding cache keys its
namespace by them, so a run with arguments never shares a file with the default run.

A value is typed by the loader's annotation of its parameter (:func:`argument_kinds`, :func:`typed_argument`): a
value of another type is refused rather than coerced by the loader (``"False"`` is truthy, ``true`` counts as 1), and
equal values get one spelling (``1``, ``1.0`` and ``1.00`` of a float are ``1.0``), so they are one experiment: one
results folder, one label, one BM25 index.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from airbench_mteb.whole_numbers import whole_number

if TYPE_CHECKING:
    from mteb.models import ModelMeta

# What MTEB itself gives every loader (the model's name and revision, the device): never a user's argument
MTEB_GIVEN = ("model_name", "revision", "device")
_NAMED = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
# The annotations a value is checked against; any other (none, Any, a class) lets the JSON scalar through as read
SCALARS: tuple[type, ...] = (bool, int, float, str)
# The plugin's models compute in float32 (BM25's k1 and b): a float beyond its range would become infinity there
FLOAT32_MAX = float(np.finfo(np.float32).max)
PYTHON_BOOLS = {"True": True, "False": False}  # Python's spelling, read as JSON's true and false for a bool
_TAKES = {bool: "true or false", int: "a whole number", float: f"a finite number within float32's range "
          f"(-{FLOAT32_MAX:.4g} to {FLOAT32_MAX:.4g})", str: "text"}


def model_label(name: str, kwargs: Mapping[str, Any] | None = None) -> str:
    """``airbench-mteb/bm25 (b=0.75, k1=1.2)``: the name, and its arguments sorted by key (as MTEB's
    ``ModelMeta.model_name_with_experiment``); the bare name without arguments."""
    if not kwargs:
        return name
    return f"{name} ({', '.join(f'{key}={value}' for key, value in sorted(kwargs.items()))})"


def meta_label(meta: ModelMeta) -> str:
    """:func:`model_label` of a loaded model's metadata (``model.mteb_model_meta``)."""
    return model_label(str(meta.name), meta.experiment_kwargs)


def accepted_kwargs(loader: Callable[..., Any]) -> tuple[str, ...] | None:
    """The keyword arguments ``loader`` takes besides :data:`MTEB_GIVEN`, sorted; None when it takes any
    (a ``**kwargs`` loader, e.g. one that hands them on to sentence-transformers)."""
    parameters = inspect.signature(loader).parameters.values()
    if any(parameter.kind is inspect.Parameter.VAR_KEYWORD for parameter in parameters):
        return None
    return tuple(sorted(parameter.name for parameter in parameters
                        if parameter.kind in _NAMED and parameter.name not in MTEB_GIVEN))


def argument_kinds(loader: Callable[..., Any]) -> dict[str, frozenset[type] | None]:
    """Per keyword argument of ``loader`` (besides :data:`MTEB_GIVEN`): the :data:`SCALARS` its annotation allows
    (``int | None`` -> ``{int}``: MTEB never passes a user's null), or None where the annotation is none of them."""
    namespace = getattr(loader.__init__ if isinstance(loader, type) else loader, "__globals__", {})
    return {parameter.name: _kinds(_evaluated(parameter.annotation, namespace))
            for parameter in inspect.signature(loader).parameters.values()
            if parameter.kind in _NAMED and parameter.name not in MTEB_GIVEN}


def _evaluated(annotation: Any, namespace: Mapping[str, Any]) -> Any:
    """A string annotation (``from __future__ import annotations``) evaluated where the loader was written; one that
    names what only type checkers import is unknown (Any)."""
    if not isinstance(annotation, str):
        return annotation
    holder = types.SimpleNamespace(__annotations__={"value": annotation})
    try:
        return typing.get_type_hints(holder, globalns=dict(namespace))["value"]
    except Exception:  # NameError for a TYPE_CHECKING import, anything a stranger annotation raises
        return Any


def _kinds(annotation: Any) -> frozenset[type] | None:
    members = typing.get_args(annotation) if typing.get_origin(annotation) in (typing.Union, types.UnionType) \
        else (annotation,)
    members = tuple(member for member in members if member is not type(None))
    return frozenset(members) if members and all(member in SCALARS for member in members) else None


def takes(kinds: frozenset[type]) -> str:
    """What a parameter of ``kinds`` takes, in words: ``true or false``, ``a whole number``..."""
    return " or ".join(_TAKES[kind] for kind in SCALARS if kind in kinds)


def typed_argument(value: Any, kinds: frozenset[type] | None) -> Any:
    """``value`` (a JSON scalar or text, as ``--model-kwargs`` reads it) as a parameter of ``kinds`` receives it, in
    one spelling per value: a bool from ``true``/``false`` or Python's ``True``/``False``; an int from a whole number
    (``80.0`` is 80); a float from any finite number float32 can hold (``1`` is ``1.0``); text as it is. ``kinds``
    None: ``value`` unchanged.

    Raises:
        ValueError: a value of none of ``kinds``, saying what the parameter takes.
    """
    if kinds is None:
        return value
    if bool in kinds and (isinstance(value, bool) or value in PYTHON_BOOLS):
        return PYTHON_BOOLS.get(value, value) if isinstance(value, str) else value
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if number and float in kinds and abs(value) <= FLOAT32_MAX:  # NaN fails too; a huge int is never converted
        return float(value) + 0.0  # -0.0 is 0.0: one value, one folder
    if number and int in kinds and whole_number(value) is not None:
        return whole_number(value)
    if isinstance(value, str) and str in kinds:
        return value
    raise ValueError(f"takes {takes(kinds)}")
