"""`airbench-mteb compare`: SSCI and RCCI of N models from their MTEB prediction files
(:mod:`airbench_mteb.report.compare`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from airbench_mteb.commands.options import add_data_dir_argument, apply_data_dir
from airbench_mteb.commands.resampling_flags import add_resampling_flags, resampling_from
from airbench_mteb.data.errors import OptionError


def compare(args: argparse.Namespace) -> int:
    from airbench_mteb.report.compare import (
        compare_predictions,
        prediction_folders,
        read_model_predictions,
        write_comparison,
    )

    if args.depth < 2:
        raise OptionError(f"--depth must be at least 2 (SSCI and RCCI divide by depth - 1), got {args.depth}")
    resampling = resampling_from(args)  # checked with --no-ci too: every statistics command refuses a bad flag
    apply_data_dir(args)
    models = [read_model_predictions(folder, args.tasks) for folder in prediction_folders(args.predictions)]
    comparison = compare_predictions(models, split=args.split, depth=args.depth,
                                     resampling=None if args.no_ci else resampling,
                                     correction=args.correction, alpha=args.alpha)
    for note in comparison.notes:
        print(note, file=sys.stderr)
    for path in write_comparison(comparison, args.out):
        print(path)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "compare", help="SSCI and RCCI between models from their MTEB prediction files",
        description="Reads <Task>_predictions.json of each model (mteb run --prediction-folder), loads the qrels "
                    "from the task data and writes N x N SSCI/RCCI matrices per task and subset, each cell with "
                    "its bootstrap confidence interval over queries, and RCCI's paired sign-flip test "
                    "(adjusted over the model pairs, Holm's correction by default).")
    parser.add_argument("--predictions", type=Path, nargs="+", required=True,
                        help="one prediction folder per model, or a folder of such folders")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--tasks", nargs="*", default=None, help="only these tasks")
    parser.add_argument("--split", default="test")
    parser.add_argument("--depth", type=int, default=10, help="ranks compared per query (n + 1)")
    add_resampling_flags(parser, alpha_help="significance level of RCCI's daggers and the heatmap's marks",
                         method="BCa")
    parser.add_argument("--no-ci", action="store_true", help="no confidence intervals or tests")
    add_data_dir_argument(parser)
    parser.set_defaults(func=compare)
