"""Run one bad-input case and say what the user got: a clear error, a correct result, or a failure.

A case is either a command line (``argv``: run in-process through ``airbench_mteb.cli.main``, as the
``airbench-mteb`` command runs it) or a library call (``call``). It expects one of two outcomes:

* ``error``: a substring (the culprit: a file, id, option or value) that the one-line error must
  name. A command must exit 2 with that line as the last line on stderr; a library call must raise
  an exception of the project's error family whose message is one line and names it.
* ``check``: the input is fine (or fixable) and the result must be right; ``check`` asserts it
  against an independent computation (it receives the case's workspace and what the call returned).

Anything else is counted against the project: a traceback (an exception outside the error family, or
an uncaught one), an unclear error (right exit, culprit not named, or several lines), or a silent
wrong result (no error where one was due, or a ``check`` that fails).
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import shutil
import traceback
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, ClassVar

CLEAR_ERROR = "clear_error"
CORRECT = "correct"


class Outcome(str, Enum):
    CLEAR_ERROR = CLEAR_ERROR
    CORRECT = CORRECT
    TRACEBACK = "traceback"
    UNCLEAR_ERROR = "unclear_error"
    SILENT_WRONG = "silent_wrong"


@dataclass(frozen=True)
class Case:
    """One input a user might give. Exactly one of ``argv``/``call``; exactly one of ``error``/``check``."""

    id: str
    argv: Callable[[Workspace], list[str]] | None = None
    call: Callable[[Workspace], Any] | None = None
    error: str | Callable[[Workspace], str] | None = None
    check: Callable[[Workspace, Any], None] | None = None
    env: dict[str, str] = field(default_factory=dict)
    # runs `mteb run` in a process or a model over a corpus: left out by `pytest -m "not slow"`
    slow: bool = False

    def __post_init__(self) -> None:
        if (self.argv is None) == (self.call is None):
            raise ValueError(f"case {self.id}: give exactly one of argv and call")
        if (self.error is None) == (self.check is None):
            raise ValueError(f"case {self.id}: give exactly one of error and check")


@dataclass
class Result:
    case: Case
    outcome: Outcome
    detail: str


class Workspace:
    """A scratch folder for one case, plus shared read-only data made once per session.

    ``shared`` maps a name to a builder ``(folder) -> Any`` run at most once per process; cases that
    change data copy it into ``tmp`` first.
    """

    _made: ClassVar[dict[str, Any]] = {}
    builders: ClassVar[dict[str, Callable[[Path], Any]]] = {}
    shared_root: ClassVar[Path | None] = None

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.tmp.mkdir(parents=True, exist_ok=True)

    def shared(self, name: str) -> Any:
        if name not in Workspace._made:
            if Workspace.shared_root is None:
                raise RuntimeError("Workspace.shared_root is not set")
            folder = Workspace.shared_root / name
            folder.mkdir(parents=True, exist_ok=True)
            Workspace._made[name] = Workspace.builders[name](folder)
        return Workspace._made[name]


def shared_data(name: str) -> Callable[[Callable[[Path], Any]], Callable[[Path], Any]]:
    """Declare a session-wide data builder: ``@shared_data("nfcorpus_bm25_predictions")``."""
    def register(builder: Callable[[Path], Any]) -> Callable[[Path], Any]:
        Workspace.builders[name] = builder
        return builder
    return register


def results_copy(ws: Workspace, shared: str) -> Path:
    """The case's own copy of the ``results`` folder of the shared data ``shared``, which the case may change."""
    copy = ws.tmp / "results"
    if not copy.exists():
        shutil.copytree(ws.shared(shared) / "results", copy)
    return copy


def mutated_results(shared: str, mutate: Callable[[Path], None]) -> Callable[[Workspace], Path]:
    """A case's results folder: :func:`results_copy` of ``shared``, changed by ``mutate``."""
    def root(ws: Workspace) -> Path:
        copy = results_copy(ws, shared)
        mutate(copy)
        return copy
    return root


def error_family() -> tuple[type[BaseException], ...]:
    """The project's error types: what a user may see as a one-line message."""
    from airbench_mteb.errors import USER_ERRORS

    return USER_ERRORS


@contextlib.contextmanager
def _environment(env: dict[str, str]) -> Iterator[None]:
    from airbench_mteb import settings

    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    settings._configured = None
    try:
        yield
    finally:
        for key, value in old.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        settings._configured = None


def _last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _run_argv(argv: list[str]) -> tuple[int, str, Any]:
    from airbench_mteb.cli import main

    err = io.StringIO()
    # logging handlers installed earlier still point at the old stderr; the error line goes to sys.stderr
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main(argv)
        except SystemExit as exit_:  # argparse's usage errors
            code = exit_.code if isinstance(exit_.code, int) else 1
    return int(code or 0), err.getvalue(), None


def run_case(case: Case, workspace: Workspace) -> Result:
    expected = case.error(workspace) if callable(case.error) else case.error
    logging.disable(logging.WARNING)  # warnings are not the error line; keep stderr to what the CLI prints
    try:
        with _environment(case.env):
            if case.argv is not None:
                code, stderr, value = _run_argv(case.argv(workspace))
                error_text = _last_line(stderr) if code != 0 else None
                raised = None
            else:
                code, value, error_text = 0, None, None
                try:
                    value = case.call(workspace)
                except error_family() as error:  # type: ignore[misc]
                    raised, error_text = error, str(error)
                else:
                    raised = None
    except Exception:
        return Result(case, Outcome.TRACEBACK, traceback.format_exc(limit=-6))
    finally:
        logging.disable(logging.NOTSET)
    if error_text is not None:
        if expected is None:
            return Result(case, Outcome.SILENT_WRONG if raised is None and case.argv is None else Outcome.UNCLEAR_ERROR,
                          f"an error where a result was due: {error_text}")
        if case.argv is not None and code != 2:
            return Result(case, Outcome.UNCLEAR_ERROR, f"exit {code}, not 2: {error_text}")
        if "\n" in error_text.strip() or expected.lower() not in error_text.lower():
            return Result(case, Outcome.UNCLEAR_ERROR, f"does not name {expected!r}: {error_text}")
        return Result(case, Outcome.CLEAR_ERROR, error_text)
    if expected is not None:
        return Result(case, Outcome.SILENT_WRONG, f"no error; {expected!r} was due")
    try:
        assert case.check is not None
        case.check(workspace, value)
    except AssertionError as failure:
        return Result(case, Outcome.SILENT_WRONG, f"wrong result: {failure}")
    return Result(case, Outcome.CORRECT, "")


def all_cases() -> list[Case]:
    """Every case of every ``cases_*.py`` module, ids unique."""
    import importlib
    import pkgutil

    import tests.bad_inputs as package

    cases: list[Case] = []
    for module in sorted(m.name for m in pkgutil.iter_modules(package.__path__) if m.name.startswith("cases_")):
        cases.extend(importlib.import_module(f"tests.bad_inputs.{module}").CASES)
    ids = [c.id for c in cases]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ValueError(f"duplicate case ids: {duplicates}")
    return cases


def tally(results: Iterable[Result]) -> dict[str, int]:
    results = list(results)
    counts = {o.value: sum(r.outcome is o for r in results) for o in Outcome}
    return {"inputs": len(results), "clear_errors": counts[CLEAR_ERROR], "correct": counts[CORRECT],
            "unclear_errors": counts["unclear_error"], "tracebacks": counts["traceback"],
            "silent_wrong": counts["silent_wrong"]}
