"""`airbench-mteb sample-data`: write the real data shipped with the package as a local mirror."""

from __future__ import annotations

import argparse
from pathlib import Path

from airbench_mteb.data.errors import OptionError


def sample_data(args: argparse.Namespace) -> int:
    from airbench_mteb.data.sample_data import write_sample_data

    if not args.out:  # Path("") is the current folder: 16 MB written where the user stands, unasked
        raise OptionError("--out is empty: give the folder to write the sample data into (`--out .` for this one)")
    # the folder alone on stdout, so `--data-dir "$(airbench-mteb sample-data --out DIR)"` works
    print(write_sample_data(Path(args.out)).resolve())
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "sample-data", help="write co*cktail NFCorpus and NQ-UTD (shipped with the package) as a --data-dir mirror")
    parser.add_argument("--out", required=True, help="mirror root to write (kept where already intact)")
    parser.set_defaults(func=sample_data)
