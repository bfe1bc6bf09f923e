"""`airbench-mteb package-submission`: an AIR-Bench leaderboard package (zip) from MTEB prediction files."""

from __future__ import annotations

import argparse
from pathlib import Path

from airbench_mteb.commands.options import add_data_dir_argument, apply_data_dir


def package_submission(args: argparse.Namespace) -> int:
    from airbench_mteb.submission import package_submission as package

    apply_data_dir(args)
    path = package(args.predictions, args.out, model_name=args.model_name, reranker_name=args.reranker_name,
                   top_k=args.top_k, overwrite=args.overwrite, dev_only=args.dev_only)
    print(path)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("package-submission",
                                   help="zip MTEB predictions of AIR-Bench tasks for the AIR-Bench leaderboard")
    parser.add_argument("--predictions", type=Path, required=True, help="an mteb --prediction-folder")
    parser.add_argument("--out", type=Path, required=True, help="folder of the zip <model>_<reranker>.zip")
    parser.add_argument("--model-name", default=None, help="retriever name on the leaderboard (default: from the predictions)")
    parser.add_argument("--reranker-name", default=None,
                        help="reranker name (default: from a re-ranked model's name, else NoReranker)")
    parser.add_argument("--top-k", type=int, choices=(1000, 100), default=None,
                        help="results kept per query (default: 1000 for a retriever, 100 after a reranker)")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing zip")
    parser.add_argument("--dev-only", action="store_true",
                        help="package the dev rankings only: a package to check with score-submission, not for the "
                             "leaderboard (which scores test; without this flag every test split must be ranked)")
    add_data_dir_argument(parser)
    parser.set_defaults(func=package_submission)
