"""`airbench-mteb stats -t TASK...`: compute MTEB descriptive statistics of plugin tasks whose data are at hand."""

from __future__ import annotations

import argparse

from airbench_mteb.commands.options import add_data_dir_argument, apply_data_dir
from airbench_mteb.names import check_task_names


def compute_stats(args: argparse.Namespace) -> int:
    import mteb

    from airbench_mteb.tasks.statistics import compute_descriptive_statistics

    apply_data_dir(args)
    check_task_names(args.tasks)
    written = compute_descriptive_statistics(mteb.get_tasks(tasks=args.tasks), num_proc=args.num_proc)
    for name, path in written.items():
        print(f"{name}: {path}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "stats", help="compute MTEB descriptive statistics of tasks (co*cktail: shipped file; IRSC: into the build)")
    parser.add_argument("-t", "--tasks", nargs="+", required=True, help="task names")
    parser.add_argument("--num-proc", type=int, default=None, help="processes for loading the data")
    add_data_dir_argument(parser)
    parser.set_defaults(func=compute_stats)
