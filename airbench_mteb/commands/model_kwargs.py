"""``--model-kwargs KEY=VALUE ...``: arguments of a model's loader, as ``mteb.get_model(name, **kwargs)`` takes them.

Each VALUE is read as a JSON scalar (``1.2``, ``true``, ``"x"``); a word that is not JSON (``words``) is text.
The keys are checked against the loader's signature before anything loads, and each value against its parameter's
annotation (:func:`airbench_mteb.models.arguments.typed_argument`: ``pyserini_ties=False`` is the bool, ``k1=1`` the
float ``1.0``, ``workers=1.5`` refused). MTEB records the arguments as the model's ``experiment_kwargs`` and files
its results under ``experiments/<key>_<value>__.../``.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Sequence
from typing import Any

from airbench_mteb.data.errors import OptionError

OPTION = "--model-kwargs"


def add_model_kwargs_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(OPTION, nargs="+", default=[], metavar="KEY=VALUE",
                        help="arguments of the model's loader, as mteb.get_model(name, **kwargs) takes them (e.g. "
                             "k1=1.2 b=0.75 for airbench-mteb/bm25); each VALUE is a JSON scalar (1.2, true, \"x\"), a "
                             "word that is not JSON is text, held to the type of the loader's parameter (k1=1 is "
                             "k1=1.0); results go to MTEB's experiments/<key>_<value>__.../ folder")


def _not_json(constant: str) -> float:
    raise ValueError(constant)  # NaN, Infinity: not JSON, hence text


def parse_value(text: str) -> Any:
    """``text`` as a JSON scalar, or ``text`` itself when it is not JSON.

    Raises:
        OptionError: a JSON array or object, a number too large for a float, ``null`` or an empty text (MTEB leaves the last two out of
            the experiment's name, so the run would share the default run's results).
    """
    try:
        value = json.loads(text, parse_constant=_not_json)
    except ValueError:
        value = text
    if isinstance(value, (list, dict)):
        raise OptionError(f"{OPTION}: {text!r} is not a JSON scalar (a number, true/false or a string)")
    if isinstance(value, float) and not math.isfinite(value):
        raise OptionError(f"{OPTION}: {text!r} is not a finite number")
    if value is None or value == "":
        raise OptionError(f"{OPTION}: {text!r} names no value (MTEB would file the run as the model's default one)")
    return value


def _texts(items: Sequence[str]) -> dict[str, str]:
    """``["k1=1.2"]`` -> ``{"k1": "1.2"}`` (split at the first ``=``); a key given twice, one that is no Python
    identifier or one MTEB gives itself (``device``...) is an :class:`OptionError`."""
    from airbench_mteb.models.arguments import MTEB_GIVEN  # the models package imports mteb: not for --help

    texts: dict[str, str] = {}
    for item in items:
        key, equals, text = item.partition("=")
        if not equals or not key.isidentifier():
            raise OptionError(f"{OPTION}: {item!r} is not KEY=VALUE with a keyword as KEY")
        if key in texts:
            raise OptionError(f"{OPTION}: {key!r} is given twice")
        if key in MTEB_GIVEN:
            raise OptionError(f"{OPTION}: {key!r} is set by MTEB itself (-m, --model-revision, --device)")
        texts[key] = text
    return texts


def parse_model_kwargs(items: Sequence[str]) -> dict[str, Any]:
    """``["k1=1.2", "b=0.75"]`` -> ``{"k1": 1.2, "b": 0.75}``, each value read by :func:`parse_value`, before any
    loader is known (untyped); keys as :func:`_texts` checks them."""
    return {key: parse_value(text) for key, text in _texts(items).items()}


def model_kwargs(items: Sequence[str], model_name: str, revision: str | None = None) -> dict[str, Any]:
    """The ``items`` for the model ``model_name`` (a name MTEB knows), each value as its loader's parameter receives
    it (:func:`~airbench_mteb.models.arguments.typed_argument`); a key its loader does not take, or a value its
    parameter's type does not hold, is an :class:`OptionError` (the keys it takes; what the parameter takes)."""
    import mteb

    from airbench_mteb.models.arguments import accepted_kwargs, argument_kinds, typed_argument

    texts = _texts(items)
    if not texts:
        return {}
    kwargs = {key: parse_value(text) for key, text in texts.items()}
    loader = mteb.get_model_meta(model_name, revision, fetch_from_hf=True).loader
    if loader is None:  # MTEB says so when it loads
        return kwargs
    accepted = accepted_kwargs(loader)
    unknown = sorted(set(kwargs) - set(accepted if accepted is not None else kwargs))
    if unknown:
        raise OptionError(f"{OPTION}: {model_name} does not take {', '.join(map(repr, unknown))} "
                          f"(it takes: {', '.join(accepted or ('nothing',))})")
    kinds = argument_kinds(loader)
    for key, value in kwargs.items():
        try:
            kwargs[key] = typed_argument(value, kinds.get(key))
        except ValueError as error:
            shown = f"{key}={texts[key]}"
            raise OptionError(f"{OPTION}: {shown if shown.isprintable() else repr(shown)}: {model_name}'s {key} "
                              f"{error}") from None
    return kwargs
