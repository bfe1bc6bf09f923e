"""`airbench-mteb register-dataset DIR`: make a generated dataset (AIR-Bench, co*cktail-style or IRSC) MTEB tasks."""

from __future__ import annotations

import argparse
from pathlib import Path

from airbench_mteb.data.folder_names import NAME_RULE


def register_dataset(args: argparse.Namespace) -> int:
    from airbench_mteb.catalog.user import folder_entry, register_user_entry, task_names
    from airbench_mteb.registry import task_owner

    entry = folder_entry(args.folder, args.name)
    catalog = register_user_entry(entry, owner_of=task_owner, replace=args.replace)
    names = task_names(entry)
    print(f"registered task{'s' if len(names) > 1 else ''} {', '.join(names)} (data: {entry.data_dir}) in {catalog}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("register-dataset",
                                   help="add a generated dataset folder to the task catalog (visible to mteb)")
    parser.add_argument("folder", type=Path,
                        help="output folder of `airbench-mteb generate airbench` (catalog_entry.json), "
                             "`generate cocktail` (cocktail.json) or `generate irsc` (irsc/manifest.json)")
    parser.add_argument("--name", help="task name of a co*cktail-style folder (default Cocktail_<folder name>), "
                                       "or the suffix of an IRSC build's task names (default: the folder name); "
                                       f"{NAME_RULE}, not a packaged task's or a benchmark's name")
    parser.add_argument("--replace", action="store_true",
                        help="point a task name already registered for another folder at this one, or register "
                             "a folder already registered under another name under this one instead")
    parser.set_defaults(func=register_dataset)
