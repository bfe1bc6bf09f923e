"""The resampling options every statistics report takes, checked one way: a bad one is an :class:`OptionError`."""

from __future__ import annotations

from airbench_mteb.data.errors import OptionError
from airbench_mteb.metrics.resampling import METHODS, Resampling
from airbench_mteb.settings import CI_RESAMPLES_RANGE


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_resampling_options(resampling: Resampling, **fractions: float) -> None:
    """Refuse an unknown interval method, a number of bootstrap resamples outside :data:`CI_RESAMPLES_RANGE`, a
    seed that is not a whole number >= 0, or any of ``fractions`` (``alpha``) or the level not strictly between
    0 and 1."""
    low, high = CI_RESAMPLES_RANGE
    n_resamples, seed = resampling.n_resamples, resampling.seed
    if resampling.method not in METHODS:
        raise OptionError(f"unknown interval method {resampling.method!r}; use one of {', '.join(METHODS)}")
    if not _whole(n_resamples) or not low <= n_resamples <= high:
        raise OptionError(f"{n_resamples!r} resamples: give a whole number from {low:,} to {high:,}")
    if not _whole(seed) or seed < 0:
        raise OptionError(f"seed {seed!r} is not a whole number >= 0")
    for name, value in {**fractions, "level": resampling.level}.items():
        if not 0 < value < 1:
            raise OptionError(f"{name} {value!r} is not between 0 and 1")
