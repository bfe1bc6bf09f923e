"""The project's user errors: a mistake in data, an option, a setting or a name, told in one line.

The CLI's one error path and the start-up hook (which tells them to a stock ``mteb`` command) both
read the family here, so neither has to import the other.
"""

from __future__ import annotations

from airbench_mteb.data.errors import DatasetError
from airbench_mteb.generation.errors import GenerationError
from airbench_mteb.settings import SettingsError


class UnknownNameError(ValueError):
    """A task, benchmark or model name (or model folder) that cannot be used; the message names it."""


USER_ERRORS: tuple[type[Exception], ...] = (DatasetError, GenerationError, SettingsError, UnknownNameError)


def one_line(error: BaseException) -> str:
    return " ".join(str(error).splitlines())
