"""`airbench-mteb report --plot NAME`: tables and PNG plots from MTEB results and `compare` output
(:func:`airbench_mteb.report.write_report`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from airbench_mteb.commands.resampling_flags import add_resampling_flags, resampling_from
from airbench_mteb.report import PLOT_MODULES


def report(args: argparse.Namespace) -> int:
    from airbench_mteb.report import ReportRequest, write_report

    request = ReportRequest(out=args.out, results=args.results, predictions=args.predictions,
                            models=tuple(args.models) if args.models else None,
                            tasks=tuple(args.tasks) if args.tasks else None, reference=args.reference,
                            resampling=resampling_from(args))
    for path in write_report(args.plot, request):
        print(path)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("report", help="write leaderboard tables and plots (PNG) from results")
    parser.add_argument("--plot", nargs="+", required=True, choices=sorted(PLOT_MODULES),
                        help="one or more of: %(choices)s (airbench_mteb.report.PLOTS)")
    parser.add_argument("--results", type=Path, default=None,
                        help="MTEB results folder (mteb run --output-folder); bias, radar and table read it")
    parser.add_argument("--predictions", type=Path, default=None, help="the --out folder of `compare` (heatmap)")
    parser.add_argument("--out", type=Path, required=True, help="where to write the files")
    parser.add_argument("--models", nargs="*", default=None, help="only these models")
    parser.add_argument("--tasks", nargs="*", default=None, help="only these tasks")
    parser.add_argument("--reference", default=None,
                        help="bias: the reference source (e.g. human) of source-bias tasks not registered here, "
                             "such as a `bias --sources` folder")
    add_resampling_flags(parser)  # of the intervals by-attribute computes; the others show recorded ones
    parser.set_defaults(func=report)
