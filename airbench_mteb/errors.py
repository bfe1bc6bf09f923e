"""The project's user errors, one family per kind of problem, each told in one line.

* :class:`DatasetError`: benchmark data (a file, line or id);
* :class:`OptionError`: a command option or argument (missing, out of range, contradicting another);
* :class:`SettingsError`: an ``AIRBENCH_MTEB_*`` environment variable or what it points at;
* :class:`GenerationError`: an LLM generator's input, configuration or output;
* :class:`UnknownNameError`: a task, benchmark or model name;
* :class:`ModelError`: a model file or the native code that runs it (llama.cpp).

The CLI's one error path and the start-up hook (which tells them to a stock ``mteb`` command) both
read the family here, so neither has to import the other.
"""

from __future__ import annotations

from airbench_mteb.data.errors import DatasetError, ModelError, OptionError, UnknownNameError
from airbench_mteb.generation.errors import GenerationError
from airbench_mteb.settings import SettingsError

USER_ERRORS: tuple[type[Exception], ...] = (DatasetError, OptionError, GenerationError, SettingsError,
                                            UnknownNameError, ModelError)


def one_line(error: BaseException) -> str:
    return " ".join(str(error).splitlines())
