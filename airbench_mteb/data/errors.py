"""The lowest exception families: wrong benchmark data (on disk or on the hub), unusable options, unknown names,
model files or native model code that cannot be used.

They live at the bottom of the layers so that every module (data readers, models, reports, commands)
can raise them; :mod:`airbench_mteb.errors` gathers them with the other families for the CLI.
"""

from __future__ import annotations

from pathlib import Path


class DatasetError(ValueError):
    """Bad or missing benchmark data. The message names the file and the line or id at fault."""

    def __init__(self, message: str, *, path: str | Path | None = None, line: int | None = None,
                 item_id: str | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self.line = line
        self.item_id = item_id
        where = ""
        if path is not None:
            where = str(path) + (f", line {line}" if line is not None else "")
        if item_id is not None:
            where += (": " if where else "") + f"id {item_id!r}"
        super().__init__(f"{where}: {message}" if where else message)


class OptionError(ValueError):
    """A command-line option or a library argument that cannot be used as given: missing, out of range, or
    contradicting another one. The message names the option (``--results``, ``--depth``...)."""


class UnknownNameError(ValueError):
    """A task, benchmark or model name (or model folder) that cannot be used; the message names it."""


class ModelError(RuntimeError):
    """A model that cannot be loaded or run: a damaged or foreign model file, or its native library crashing (in a
    worker process, so the caller lives on). The message names the model file."""
