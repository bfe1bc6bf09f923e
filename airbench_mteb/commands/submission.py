"""`package-submission` and `score-submission`: AIR-Bench leaderboard packages from MTEB prediction files."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from airbench_mteb.commands.run import apply_data_dir
from airbench_mteb.data.errors import DatasetError
from airbench_mteb.data.files import atomic_write


def package(args: argparse.Namespace) -> int:
    from airbench_mteb.submission import package_submission

    apply_data_dir(args)
    path = package_submission(args.predictions, args.out, model_name=args.model_name, reranker_name=args.reranker_name,
                              top_k=args.top_k, overwrite=args.overwrite, dev_only=args.dev_only)
    print(path)
    return 0


def score(args: argparse.Namespace) -> int:
    from airbench_mteb.submission import score_submission

    apply_data_dir(args)
    if args.output is not None and args.output.is_dir():  # refused before the scoring, not after
        raise DatasetError("--output names the JSON file to write, and this is a folder", path=args.output)
    results = score_submission(args.package, split=args.split, dev_only=args.dev_only)
    for result in results:
        print(f"{result.task_name}\t{result.split}\t{result.main_score}\t{result.scores[result.main_score]:.5f}")
    mean = sum(r.scores[r.main_score] for r in results) / len(results)
    print(f"mean main score over {len(results)} datasets: {mean:.5f}")
    if args.output is not None:
        with atomic_write(args.output) as handle:
            json.dump([vars(r) for r in results], handle, indent=1)
    return 0 if math.isfinite(mean) else 1


def register(subparsers: argparse._SubParsersAction) -> None:
    from airbench_mteb.commands.run import add_data_dir_argument

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
    parser.set_defaults(func=package)

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
    parser.set_defaults(func=score)
