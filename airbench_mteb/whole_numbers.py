"""Numbers as JSON writers write them: a count may come as ``80`` or as ``80.0`` (JavaScript, pandas, a float that
went through ``json.dumps``); both are the whole number 80. Every reader of a count (results files, manifests, model
arguments, qrels) reads it through :func:`whole_number`, so no writer's spelling is refused and ``80.5`` always is.
"""

from __future__ import annotations

import math
from numbers import Integral, Real


def whole_number(value: object) -> int | None:
    """``value`` as an int when it is a whole number however JSON spells it (``80``, ``80.0``, ``8e1``); None for
    anything else (``80.5``, ``true``, ``"80"``, NaN, infinity, null)."""
    if isinstance(value, bool):  # JSON's true is no number, though Python counts it as 1
        return None
    if isinstance(value, Integral):
        return int(value)
    if isinstance(value, Real) and math.isfinite(value) and float(value).is_integer():
        return int(value)
    return None


def count(value: object, name: str) -> int:
    """``value`` as :func:`whole_number` reads it; a ValueError naming ``name`` for anything else."""
    whole = whole_number(value)
    if whole is None:
        raise ValueError(f"{name} is {value!r}, not a whole number")
    return whole
