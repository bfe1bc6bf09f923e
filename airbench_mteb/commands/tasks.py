"""`airbench-mteb tasks [--json]`: every plugin task with its family and metadata."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mteb import AbsTask

FAMILIES = ("airbench", "cocktail", "irsc")  # the modules of airbench_mteb.tasks that declare task classes


def task_family(task: AbsTask) -> str:
    return type(task).__module__.rsplit(".", 1)[-1]


def describe(task: AbsTask) -> dict[str, Any]:
    meta = task.metadata
    entry = getattr(task, "entry", None)
    return {
        "name": meta.name,
        "family": task_family(task),
        "version": getattr(entry, "version", None),
        "type": getattr(entry, "task_type", None) or meta.type,
        "domains": meta.domains,
        "languages": meta.languages,
        "subsets": list(meta.hf_subsets),
        "splits": list(meta.eval_splits),
        "main_score": meta.main_score,
        "is_public": meta.is_public,
    }


def plugin_tasks() -> list[AbsTask]:
    from airbench_mteb.tasks import all_task_classes

    return [cls() for cls in all_task_classes()]


def list_tasks(args: argparse.Namespace) -> int:
    rows = [describe(t) for t in plugin_tasks()]
    if args.family:
        rows = [r for r in rows if r["family"] == args.family]
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    columns = ("name", "family", "version", "type", "domains", "languages", "subsets", "splits", "main_score")
    for row in rows:
        print("  ".join(f"{c}={row[c]}" if c != "name" else row[c] for c in columns))
    print(f"{len(rows)} tasks")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("tasks", help="list every task of the plugin")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.add_argument("--family", choices=FAMILIES, help="only this family")
    parser.set_defaults(func=list_tasks)
