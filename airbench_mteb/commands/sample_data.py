"""`airbench-mteb sample-data`: write the real data shipped with the package as a local mirror."""

from __future__ import annotations

import argparse
from pathlib import Path

from airbench_mteb.data.errors import OptionError

LAYOUTS = ("cocktail", "airbench")


def sample_data(args: argparse.Namespace) -> int:
    if not args.out:  # Path("") is the current folder: 16 MB written where the user stands, unasked
        raise OptionError("--out is empty: give the folder to write the sample data into (`--out .` for this one)")
    if args.layout == "airbench":
        from airbench_mteb.catalog import airbench_entries
        from airbench_mteb.data.airbench_example import write_airbench_example

        out = write_airbench_example(Path(args.out), airbench_entries())
    else:
        from airbench_mteb.data.sample_data import write_sample_data

        out = write_sample_data(Path(args.out))
    # the folder alone on stdout, so `--data-dir "$(airbench-mteb sample-data --out DIR)"` works
    print(out.resolve())
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "sample-data", help="write co*cktail NFCorpus and NQ-UTD (shipped with the package) as a --data-dir mirror, "
                            "or as a small AIR-Bench layout example (--layout airbench)")
    parser.add_argument("--out", required=True, help="mirror root to write (kept where already intact)")
    parser.add_argument("--layout", choices=LAYOUTS, default="cocktail",
                        help="cocktail: the two datasets as released; airbench: their texts, queries and judgments as "
                             "a small AIR-Bench layout example (AIR-Bench_24.05_qa_healthcare_en from NFCorpus, "
                             "AIR-Bench_24.05_qa_news_en from NQ-UTD; not AIR-Bench data)")
    parser.set_defaults(func=sample_data)
