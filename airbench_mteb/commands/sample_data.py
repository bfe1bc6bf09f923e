"""`airbench-mteb sample-data`: write the real data shipped with the package as a local mirror."""

from __future__ import annotations

import argparse
from pathlib import Path


def sample_data(args: argparse.Namespace) -> int:
    from airbench_mteb.data.sample_data import write_sample_data

    # the folder alone on stdout, so `--data-dir "$(airbench-mteb sample-data --out DIR)"` works
    print(write_sample_data(args.out).resolve())
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "sample-data", help="write co*cktail NFCorpus and NQ-UTD (shipped with the package) as a --data-dir mirror")
    parser.add_argument("--out", type=Path, required=True, help="mirror root to write (kept where already intact)")
    parser.set_defaults(func=sample_data)
