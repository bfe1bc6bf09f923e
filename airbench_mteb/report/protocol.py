"""What every statistics report is: a record of how its uncertainty was computed that renders itself; and the one
writer of a report's files.

A report (significance, leaderboard, consistency, SSCI/RCCI comparison) carries its :class:`Resampling` (None: a
comparison asked without intervals) and, where it adjusts p-values, its correction; it renders itself as JSON
(``to_json``, a dict) and Markdown (``to_markdown``), and as CSV (``to_csv``) and LaTeX (``to_latex``) where such a
table fits. Renderers read the choices off that record, never restate them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, Any, Protocol, runtime_checkable

from airbench_mteb.data.files import all_or_none
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


def write_report_files(report: Report, folder: Path, stem: str, extra: Mapping[str, Extra] | None = None) -> list[Path]:
    """Every rendering of ``report`` as ``folder/<stem>.<suffix>`` and the ``extra`` files (paths relative to
    ``folder``), all or none (:func:`~airbench_mteb.data.files.all_or_none`); returns their paths."""
    files: dict[str, Extra] = {**renderings(report, stem), **(extra or {})}
    with all_or_none(folder) as open_file:
        for name, content in files.items():
            if isinstance(content, str):
                open_file(folder / name).write(content)
            else:
                content(open_file(folder / name, "wb"))
    return [folder / name for name in files]
