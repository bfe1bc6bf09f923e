"""A model's loader arguments, as MTEB keeps them (``ModelMeta.experiment_kwargs``): the keys a loader
accepts, and the one label that names a model together with its arguments.

``mteb.get_model(name, **kwargs)`` passes ``kwargs`` to the model's loader and records them as the
loaded model's ``experiment_kwargs``; MTEB then files its results under
``results/<model>/<revision>/experiments/<key>_<value>__.../`` and the plugin's embedding cache keys its
namespace by them, so a run with arguments never shares a file with the default run.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mteb.models import ModelMeta

# What MTEB itself gives every loader (the model's name and revision, the device): never a user's argument
MTEB_GIVEN = ("model_name", "revision", "device")
_NAMED = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


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
