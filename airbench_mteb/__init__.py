"""airbench-mteb: AIR-Bench, co*cktail and IRSC as MTEB tasks, and LLM-built benchmarks of that kind.

Importing this package registers every task, benchmark and bundled model with ``mteb``;
after ``pip install`` the start-up hook does the same whenever ``mteb`` is imported. The one
exception is the ``airbench-mteb`` command line, which registers once its arguments are parsed
(:func:`airbench_mteb.cli.main`), so that its help and argument errors answer without importing mteb.
"""

from __future__ import annotations

import gc
import logging
import os
import sys

from airbench_mteb.data.errors import DatasetError, OptionError

__version__ = "0.1.0"

__all__ = ["DatasetError", "OptionError", "__version__", "register_all"]

# The plugin's log lines follow mteb's verbosity, as mteb's own do: `mteb run` (-v 2, its default) shows their INFO
# lines (a stored BM25 index reused, an embedding cache hit), -v 1 only warnings; a library caller's logging decides.
logging.getLogger(__name__).parent = logging.getLogger("mteb")

CLI_SCRIPT = "airbench-mteb"
CLI_MODULE = "airbench_mteb.cli"


def register_all() -> None:
    """Register every task, benchmark and bundled model with mteb (idempotent)."""
    # Importing mteb and registering the tasks makes objects that live as long as the process; the cyclic collector,
    # run again and again while they pile up, took about a quarter of that time.
    collecting = gc.isenabled()
    gc.disable()
    try:
        from airbench_mteb.models.tokenizer_threads import keep_user_setting
        from airbench_mteb.registry import register_all as register

        keep_user_setting()  # before mteb's `run` sets TOKENIZERS_PARALLELISM for the whole process
        register()
    finally:
        if collecting:
            gc.enable()


def _command_line() -> bool:
    """Whether this process is ``airbench-mteb`` (the console script, or ``python -m airbench_mteb.cli``)."""
    if sys.argv and os.path.basename(sys.argv[0]) == CLI_SCRIPT:
        return True
    given = getattr(sys, "orig_argv", [])
    module = given.index("-m") + 1 if "-m" in given else len(given)  # argv[0] is still "-m" while runpy imports
    return given[module:module + 1] == [CLI_MODULE]


if not _command_line():
    register_all()
