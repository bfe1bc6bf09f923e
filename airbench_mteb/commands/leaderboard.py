"""`airbench-mteb leaderboard`: the AIR-Bench leaderboard's table of your own runs, with intervals, as files and a
page (:mod:`airbench_mteb.report.leaderboard`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from airbench_mteb.commands.resampling_flags import add_resampling_flags, resampling_from


def leaderboard(args: argparse.Namespace) -> int:
    from airbench_mteb.report.leaderboard import leaderboard as build
    from airbench_mteb.report.leaderboard.output import write_leaderboard

    resampling = resampling_from(args)
    board = build(args.results, split=args.split, benchmark=args.benchmark, resampling=resampling,
                  correction=args.correction, alpha=args.alpha)
    for note in board.notes:
        print(note, file=sys.stderr)
    for path in write_leaderboard(board, args.out):
        print(path)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "leaderboard", help="the AIR-Bench leaderboard's table of your runs, with intervals, and a page",
        description="Builds the AIR-Bench leaderboard's QA and Long-Doc tables (every metric it offers; Average and "
                    "Rank by its rules) from MTEB results of any retrievers and re-ranked runs, adds intervals (95%% by "
                    "default), Judged@10 and rank groups, and writes leaderboard.json/.md/.csv, leaderboard.html and the "
                    "result files the leaderboard app reads (eval_results/<version>/<retriever>/<reranker>/).")
    parser.add_argument("--results", type=Path, required=True, help="the MTEB results folder (mteb run --output-folder)")
    parser.add_argument("--split", choices=("dev", "test"), default="dev",
                        help="the split the table shows (default dev: test qrels are gated, test runs are closed-book)")
    parser.add_argument("--benchmark", default="AIR-Bench_24.05",
                        help="the AIR-Bench version (default AIR-Bench_24.05; or AIR-Bench_24.04, or a _qa or "
                             "_long-doc part)")
    add_resampling_flags(parser, alpha_help="significance level of the rank groups")
    parser.add_argument("--out", type=Path, default=Path("leaderboard"), help="the folder to write to (default leaderboard)")
    parser.set_defaults(func=leaderboard)
