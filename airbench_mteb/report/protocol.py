"""What every statistics report is: a record of how its uncertainty was computed that renders itself; and the one
writer of every file the report layer writes (reports, plots, the leaderboard): all or none, JSON strict.

A report (significance, leaderboard, consistency, SSCI/RCCI comparison) carries its :class:`Resampling` (None: a
comparison asked without intervals) and, where it adjusts p-values, its correction; it renders itself as JSON
(``to_json``, a dict) and Markdown (``to_markdown``), and as CSV (``to_csv``) and LaTeX (``to_latex``) where such a
table fits. Renderers read the choices off that record, never restate them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from contextlib import ExitStack
from pathlib import Path, PurePosixPath
from typing import IO, Any, Protocol, runtime_checkable

from airbench_mteb.data.files import (
    atomic_folder,
    atomic_write,
    check_folder_target,
    check_writable_target,
    make_folder,
    output_folder,
)
from airbench_mteb.metrics.resampling import Resampling

# Each rendering a report may have: the file suffix and the method giving its text, in the order they are written.
RENDERINGS = (("json", "to_json"), ("md", "to_markdown"), ("tex", "to_latex"), ("csv", "to_csv"))

# A file written beside the renderings: its text, or what draws it into a binary handle (a plot).
Extra = str | Callable[[IO[bytes]], None]


@runtime_checkable
class Report(Protocol):
    """A report that renders itself; ``to_csv`` and ``to_latex`` are optional (looked up by :func:`renderings`)."""

    @property
    def resampling(self) -> Resampling | None: ...

    def to_json(self) -> dict[str, Any]: ...

    def to_markdown(self) -> str: ...


def finite_or_none(value: Any) -> Any:
    """``value``, or None for a float that is not finite: a report's JSON writes an undefined number as null."""
    return None if isinstance(value, float) and not math.isfinite(value) else value


def json_text(data: object) -> str:
    """A JSON file's text: strict JSON (no NaN: a report writes an undefined number as null), one space indent."""
    return json.dumps(data, indent=1, ensure_ascii=False, allow_nan=False) + "\n"


def renderings(report: Report, stem: str) -> dict[str, str]:
    """``{file name: text}`` of every rendering ``report`` has, named ``<stem>.<suffix>``."""
    texts = {}
    for suffix, method in RENDERINGS:
        render = getattr(report, method, None)
        if render is not None:
            found = render()
            texts[f"{stem}.{suffix}"] = json_text(found) if suffix == "json" else found
    return texts


def _write(stack: ExitStack, path: Path, content: Extra) -> None:
    if isinstance(content, str):
        stack.enter_context(atomic_write(path)).write(content)
    else:
        content(stack.enter_context(atomic_write(path, "wb")))


def write_files(folder: Path, files: Mapping[str, Extra],
                replaced: Mapping[str, Mapping[PurePosixPath, str]] | None = None) -> list[Path]:
    """The one writer: ``files`` (paths relative to ``folder``) and each ``replaced`` folder (a path relative to
    ``folder``: its new content, which replaces it as a whole), all or none; returns the paths written.

    Every target is checked before any folder is made; each file is renamed into place only once every one is
    written, and a failure leaves no new folder and the previous output as it was.
    """
    for name in files:
        check_writable_target(folder / name)
    for name in replaced or {}:
        check_folder_target(folder / name)
    written = [folder / name for name in files]
    with output_folder(folder), ExitStack() as stack:
        for name, contents in (replaced or {}).items():
            staging = make_folder(stack.enter_context(atomic_folder(folder / name)))
            for relative, text in contents.items():
                _write(stack, staging.joinpath(*relative.parts), text)
            written += [(folder / name).joinpath(*relative.parts) for relative in contents]
        for name, content in files.items():
            _write(stack, folder / name, content)
    return written


def write_report_files(report: Report, folder: Path, stem: str, extra: Mapping[str, Extra] | None = None) -> list[Path]:
    """Every rendering of ``report`` as ``folder/<stem>.<suffix>`` and the ``extra`` files (paths relative to
    ``folder``), through :func:`write_files`; returns their paths."""
    return write_files(folder, {**renderings(report, stem), **(extra or {})})
