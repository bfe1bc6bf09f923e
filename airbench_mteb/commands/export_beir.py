"""`airbench-mteb export-beir`: write a retrieval task's data as BEIR folders."""

from __future__ import annotations

import argparse
from pathlib import Path

from airbench_mteb.commands.options import add_data_dir_argument, apply_data_dir
from airbench_mteb.names import check_task_names


def export_beir(args: argparse.Namespace) -> int:
    apply_data_dir(args)
    import mteb

    from airbench_mteb.data.beir_export import export_task
    from airbench_mteb.tasks.selection import check_selection

    check_task_names([args.task])
    check_selection(mteb.get_task(args.task), args.splits, args.subsets, splits_option="--splits")
    task = mteb.get_task(args.task, eval_splits=args.splits, hf_subsets=args.subsets)
    for folder in export_task(task, args.out):
        print(f"wrote BEIR folder {folder}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "export-beir", help="write a retrieval task's corpus, queries and qrels as BEIR folders",
        description="Write a retrieval task's data as a BEIR folder (corpus.jsonl, queries.jsonl, "
                    "qrels/<split>.tsv) that beir's GenericDataLoader reads; a task with several "
                    "subsets gets one folder per subset under --out.")
    parser.add_argument("-t", "--task", required=True, help="task name, e.g. AIR-Bench_24.05_qa_news_en")
    parser.add_argument("--out", type=Path, required=True, help="folder to write")
    parser.add_argument("--splits", nargs="+", help="only these splits (default: the task's eval splits)")
    parser.add_argument("--subsets", nargs="+", help="only these subsets (default: all)")
    add_data_dir_argument(parser)
    parser.set_defaults(func=export_beir)
