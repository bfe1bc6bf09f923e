"""`airbench-mteb download`: fill a local mirror from the hub (where the hub is reachable)."""

from __future__ import annotations

import argparse
from pathlib import Path

from airbench_mteb.errors import UnknownNameError


def download(args: argparse.Namespace) -> int:
    from airbench_mteb.catalog import airbench_entries
    from airbench_mteb.data.airbench_source import fill_mirror

    entries = [e for e in airbench_entries()
               if (not args.version or e.version in args.version) and (not args.tasks or e.task_name in args.tasks)]
    if not entries:
        raise UnknownNameError(f"no AIR-Bench dataset matches --version {' '.join(args.version or ['(any)'])} "
                               f"--tasks {' '.join(args.tasks or ['(any)'])} (`airbench-mteb tasks` lists them)")
    written = fill_mirror(entries, args.data_dir, tuple(args.splits) if args.splits else None)
    print(f"{len(written)} files written under {args.data_dir}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("download", help="copy AIR-Bench datasets from the hub into a local mirror")
    parser.add_argument("--data-dir", type=Path, required=True, help="mirror root to fill")
    parser.add_argument("--version", nargs="*", help="e.g. AIR-Bench_24.05 (default: all)")
    parser.add_argument("-t", "--tasks", nargs="*", help="task names (default: all of the versions)")
    parser.add_argument("--splits", nargs="*", help="dev and/or test (test qrels need HF_TOKEN)")
    parser.set_defaults(func=download)
