"""`airbench-mteb register-dataset DIR`: make a generated dataset an MTEB task."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from airbench_mteb.catalog import register_user_entry, user_catalog_path
from airbench_mteb.data.errors import DatasetError
from airbench_mteb.registry import task_owner


def register_dataset(args: argparse.Namespace) -> int:
    entry_file = args.folder / "catalog_entry.json"
    if not entry_file.is_file():
        raise DatasetError("not a generated dataset (no catalog_entry.json): run `airbench-mteb generate` first",
                           path=entry_file)
    try:
        entry = json.loads(entry_file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise DatasetError(f"malformed JSON ({error.msg})", path=entry_file, line=error.lineno) from None
    registered = register_user_entry(entry, args.folder, owner_of=task_owner, replace=args.replace)
    print(f"registered task {registered.task_name} (data: {registered.data_dir}) in {user_catalog_path()}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("register-dataset",
                                   help="add a generated dataset folder to the task catalog (visible to mteb)")
    parser.add_argument("folder", type=Path, help="output folder of `airbench-mteb generate airbench`")
    parser.add_argument("--replace", action="store_true",
                        help="point a task name already registered for another folder at this one")
    parser.set_defaults(func=register_dataset)
