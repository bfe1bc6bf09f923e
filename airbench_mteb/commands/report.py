"""`airbench-mteb report --plot NAME`: tables and PNG plots from MTEB results and predictions."""

from __future__ import annotations

import argparse
from pathlib import Path


def report(args: argparse.Namespace) -> int:
    from airbench_mteb.report import PLOTS

    args.out.mkdir(parents=True, exist_ok=True)
    for name in args.plot:
        for path in PLOTS[name](args):
            print(path)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("report", help="write leaderboard tables and plots (PNG) from results")
    parser.add_argument("--plot", nargs="+", required=True,
                        help="one or more of: bias, heatmap, radar, table (airbench_mteb.report.PLOTS)")
    parser.add_argument("--results", type=Path, required=True, help="MTEB results folder (mteb run --output-folder)")
    parser.add_argument("--predictions", type=Path, default=None, help="folder of `compare` outputs or predictions")
    parser.add_argument("--out", type=Path, required=True, help="where to write the files")
    parser.add_argument("--models", nargs="*", default=None, help="only these models")
    parser.add_argument("--tasks", nargs="*", default=None, help="only these tasks")
    parser.set_defaults(func=report)
