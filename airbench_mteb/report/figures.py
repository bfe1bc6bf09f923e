"""Matplotlib, set up in one place: the file-only backend, and a figure as a PNG file for the report writer."""

from __future__ import annotations

from collections.abc import Callable
from typing import IO, Any


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the Agg backend: the plots are files, and a machine without a display has no other."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def png(figure: Any, **savefig: Any) -> Callable[[IO[bytes]], None]:
    """What draws ``figure`` as PNG into a handle (an extra file of :func:`~airbench_mteb.report.protocol.write_files`),
    closing it after: a figure left open is kept by pyplot until the process ends."""

    def draw(handle: IO[bytes]) -> None:
        try:
            figure.savefig(handle, format="png", **savefig)
        finally:
            pyplot().close(figure)

    return draw
