"""Range and relation checks of the generators' options, run where each typed config is built.

A value out of range is refused before a corpus is read or an LLM is loaded (a minimum above its
maximum used to reach llama.cpp as an impossible JSON schema and crash it), with a GenerationError
naming the option as the command line spells it (``--max-negatives``); settings without an option
are named by their field.
"""

from __future__ import annotations

import math
from datetime import date
from numbers import Integral, Real
from pathlib import Path

from airbench_mteb.data.errors import DatasetError
from airbench_mteb.data.languages import eval_language
from airbench_mteb.generation.errors import GenerationError

TEMPERATURE_RANGE = (0.0, 2.0)  # what OpenAI-compatible servers accept
MAX_SEED = 2**31 - 1  # llama.cpp and OpenAI take 32-bit seeds; -1 means "random" to llama.cpp


def _bounds(minimum: float, maximum: float | None, above: bool) -> str:
    if maximum is not None:
        return f"between {minimum} and {maximum}"
    return f"greater than {minimum}" if above else f"at least {minimum}"


def whole_number(option: str, value: object, minimum: int, maximum: int | None = None) -> None:
    """``value`` is an integer (not a bool) in ``[minimum, maximum]``."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise GenerationError(f"{option} must be a whole number, got {value!r}")
    if value < minimum or (maximum is not None and value > maximum):
        raise GenerationError(f"{option} must be {_bounds(minimum, maximum, False)}, got {value}")


def optional_whole_number(option: str, value: object, minimum: int) -> None:
    """None (no limit) or a whole number of at least ``minimum``."""
    if value is not None:
        whole_number(option, value, minimum)


def number(option: str, value: object, minimum: float, maximum: float | None = None, *, above: bool = False) -> None:
    """``value`` is a finite real number (not a bool) of at least ``minimum`` (greater with ``above``), at most
    ``maximum``."""
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value):
        raise GenerationError(f"{option} must be a finite number, got {value!r}")
    if value < minimum or (above and value == minimum) or (maximum is not None and value > maximum):
        raise GenerationError(f"{option} must be {_bounds(minimum, maximum, above)}, got {value}")


def temperature(option: str, value: object) -> None:
    number(option, value, *TEMPERATURE_RANGE)


def seed(option: str, value: object) -> None:
    whole_number(option, value, 0, MAX_SEED)


def ordered(low_option: str, low: float, high_option: str, high: float) -> None:
    """A minimum that is not above its maximum (both already checked alone)."""
    if low > high:
        raise GenerationError(f"{low_option} ({low}) must not exceed {high_option} ({high})")


def one_of(option: str, value: object, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise GenerationError(f"{option} must be one of {', '.join(choices)}; got {value!r}")


def iso_date(option: str, value: object) -> None:
    """A calendar date written YYYY-MM-DD (what catalog entries and MTEB's metadata hold)."""
    try:
        valid = isinstance(value, str) and len(value) == 10 and date.fromisoformat(value).isoformat() == value
    except ValueError:
        valid = False
    if not valid:
        raise GenerationError(f"{option} must be a date written YYYY-MM-DD, got {value!r}")


def language(option: str, code: str) -> None:
    """An ISO 639-1 code MTEB knows (the dataset card and the task's languages are made from it)."""
    try:
        eval_language(code)
    except DatasetError as error:
        raise GenerationError(f"{option}: {error}") from None


def out_folder(option: str, path: Path) -> None:
    """A folder to write into: one that exists, or one that can be made (nothing on its way is a file)."""
    blocking = next((p for p in (path, *path.parents) if p.exists() and not p.is_dir()), None)
    if blocking is not None:
        raise GenerationError(f"{option} {path}: {blocking} is a file, not a folder")
