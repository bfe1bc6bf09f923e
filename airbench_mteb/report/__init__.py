"""The report layer: library functions that read MTEB results and prediction files and write tables and plots.

Results folders (MTEB results and the per-query scores kept beside them) are read and trusted in one place,
:mod:`airbench_mteb.results`, below this layer. What it holds: the intervals tables show (``intervals``), the
plots and tables of ``airbench-mteb report`` (``bias``, ``irsc``, ``cocktail_quality``, ``by_attribute``), the
libraries behind the statistics commands (``compare``: SSCI/RCCI, with ``pairwise_tables``; ``significance``;
``bias_significance``; ``consistency`` and ``consistency_output``; ``leaderboard``), each report rendering itself
by the one protocol (``protocol``: its resampling record, ``to_json``, ``to_markdown``, ...; the one writer of its
files), the lines ``airbench-mteb run`` ends with (``run_summary``) and the shared text formatting
(``text_format``).

This module is the registry of the plots behind ``airbench-mteb report --plot NAME``. A plot is a function
``(request: ReportRequest) -> list[Path]`` that writes its files under ``request.out`` and returns their paths;
:func:`write_report` runs several. Plot modules register themselves with :func:`register_plot`; each is imported
when one of its plots is first looked up, so that ``import airbench_mteb`` stays free of matplotlib.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from airbench_mteb.data.errors import OptionError
from airbench_mteb.data.files import output_folder

if TYPE_CHECKING:
    from airbench_mteb.metrics.resampling import Resampling


@dataclass(frozen=True)
class ReportRequest:
    """What a plot reads and where it writes."""

    out: Path  # the folder the files go to
    results: Path | None = None  # MTEB results (a ResultCache root, e.g. `mteb run --output-folder`)
    predictions: Path | None = None  # the output of `airbench-mteb compare`
    models: tuple[str, ...] | None = None  # only these models (full or short names); None: all
    tasks: tuple[str, ...] | None = None  # only these tasks; None: all
    reference: str | None = None  # the reference source of source-bias tasks mteb does not know
    resampling: Resampling | None = None  # of the intervals a plot computes (by-attribute); None: the defaults

    def results_folder(self, plot: str) -> Path:
        if self.results is None:
            raise OptionError(f"the {plot} plot reads MTEB results: give the results folder (--results)")
        return self.results


PlotFunction = Callable[[ReportRequest], list[Path]]

# Every plot and the module that registers it (each must exist and register exactly these: a packaging bug
# otherwise): the names are known, for the command line's choices, before any plot module is imported.
PLOT_MODULES = {"table": "airbench_mteb.report.irsc", "radar": "airbench_mteb.report.irsc",
                "heatmap": "airbench_mteb.report.irsc", "bias": "airbench_mteb.report.bias",
                "cocktail-quality": "airbench_mteb.report.cocktail_quality",
                "by-attribute": "airbench_mteb.report.by_attribute"}

_registered: dict[str, PlotFunction] = {}


def register_plot(name: str) -> Callable[[PlotFunction], PlotFunction]:
    """Decorator adding a plot function to :data:`PLOTS` under ``name`` (one of :data:`PLOT_MODULES`)."""

    def decorate(function: PlotFunction) -> PlotFunction:
        if PLOT_MODULES.get(name) != function.__module__:
            raise ValueError(f"plot {name!r} of {function.__module__} is not listed in PLOT_MODULES")
        if name in _registered and _registered[name] is not function:
            raise ValueError(f"plot {name!r} is registered twice")
        _registered[name] = function
        return function

    return decorate


class _PlotRegistry(Mapping[str, PlotFunction]):
    """Read-only view of the plots: names from :data:`PLOT_MODULES`, each function imported on first use."""

    def __getitem__(self, name: str) -> PlotFunction:
        if name not in PLOT_MODULES:
            raise KeyError(f"unknown plot {name!r}; available: {', '.join(sorted(PLOT_MODULES))}")
        importlib.import_module(PLOT_MODULES[name])
        return _registered[name]

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(PLOT_MODULES))

    def __len__(self) -> int:
        return len(PLOT_MODULES)


PLOTS: Mapping[str, PlotFunction] = _PlotRegistry()


def write_report(plots: Sequence[str], request: ReportRequest) -> list[Path]:
    """Run the plots named ``plots`` (keys of :data:`PLOTS`) and return every file they wrote."""
    functions = [PLOTS[name] for name in plots]  # an unknown name fails before anything is written
    with output_folder(request.out):  # a plot that fails before writing leaves no empty folder
        return [path for function in functions for path in function(request)]
