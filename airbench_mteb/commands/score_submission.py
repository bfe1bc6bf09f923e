"""`airbench-mteb score-submission`: check an AIR-Bench leaderboard package as the leaderboard reads it, and score it."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from airbench_mteb.commands.options import add_data_dir_argument, apply_data_dir
from airbench_mteb.data.errors import OptionError
from airbench_mteb.data.files import atomic_write


def score_submission(args: argparse.Namespace) -> int:
    from airbench_mteb.submission import score_submission as score_package

    apply_data_dir(args)
    if args.output is not None and args.output.is_dir():  # refused before the scoring, not after
        raise OptionError(f"--output names the JSON file to write, and {args.output} is a folder")
    results = score_package(args.package, split=args.split, dev_only=args.dev_only)
    for result in results:
        print(f"{result.task_name}\t{result.split}\t{result.main_score}\t{result.scores[result.main_score]:.5f}")
    mean = sum(r.scores[r.main_score] for r in results) / len(results)
    print(f"mean main score over {len(results)} datasets: {mean:.5f}")
    if args.output is not None:
        with atomic_write(args.output) as handle:
            json.dump([vars(r) for r in results], handle, indent=1)
    return 0 if math.isfinite(mean) else 1


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("score-submission",
                                   help="check an AIR-Bench leaderboard package (zip or folder) as the leaderboard "
                                        "reads it, and score it on the local dev qrels")
    parser.add_argument("package", type=Path, help="<model>_<reranker>.zip, or the folder holding <task_type>/<domain>/")
    parser.add_argument("--split", default="dev", help="split to score (default: dev; test qrels are private)")
    parser.add_argument("--output", type=Path, default=None, help="write every score as JSON here")
    parser.add_argument("--dev-only", action="store_true",
                        help="accept a package without the test files the leaderboard scores (one made with "
                             "package-submission --dev-only, or official runs of dev only)")
    add_data_dir_argument(parser)
    parser.set_defaults(func=score_submission)
