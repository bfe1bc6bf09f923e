"""Registry of the plots behind ``airbench-mteb report --plot NAME``.

A plot is a function ``(args: argparse.Namespace) -> list[Path]`` that writes its files
under ``args.out`` and returns their paths. Plot modules register themselves with
:func:`register_plot`; they are imported on first access of :data:`PLOTS` so that
``import airbench_mteb`` stays free of matplotlib.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

PlotFunction = Callable[[argparse.Namespace], list[Path]]

# Every module that registers plots; each must exist (a missing one is a packaging bug).
PLOT_MODULES = ("airbench_mteb.report.irsc", "airbench_mteb.report.bias")

_registered: dict[str, PlotFunction] = {}


def register_plot(name: str) -> Callable[[PlotFunction], PlotFunction]:
    """Decorator adding a plot function to :data:`PLOTS` under ``name``."""

    def decorate(function: PlotFunction) -> PlotFunction:
        if name in _registered and _registered[name] is not function:
            raise ValueError(f"plot {name!r} is registered twice")
        _registered[name] = function
        return function

    return decorate


class _PlotRegistry(Mapping[str, PlotFunction]):
    """Read-only view of the registered plots that imports the plot modules lazily."""

    def _plots(self) -> dict[str, PlotFunction]:
        for module in PLOT_MODULES:
            importlib.import_module(module)
        return _registered

    def __getitem__(self, name: str) -> PlotFunction:
        plots = self._plots()
        if name not in plots:
            raise KeyError(f"unknown plot {name!r}; available: {', '.join(sorted(plots))}")
        return plots[name]

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._plots()))

    def __len__(self) -> int:
        return len(self._plots())


PLOTS: Mapping[str, PlotFunction] = _PlotRegistry()
