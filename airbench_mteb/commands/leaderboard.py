"""`airbench-mteb leaderboard`: the AIR-Bench leaderboard's table of your own runs, with intervals, as files and a
page (:mod:`airbench_mteb.report.leaderboard`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def leaderboard(args: argparse.Namespace) -> int:
    from airbench_mteb.report.leaderboard import leaderboard as build
    from airbench_mteb.report.leaderboard.output import write_leaderboard

    board = build(args.results, split=args.split, benchmark=args.benchmark, n_resamples=args.n_resamples,
                  seed=args.seed, alpha=args.alpha)
    for note in board.notes:
        print(note, file=sys.stderr)
    for path in write_leaderboard(board, args.out):
        print(path)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "leaderboard", help="the AIR-Bench leaderboard's table of your runs, with intervals, and a page",
        description="Builds the AIR-Bench leaderboard's QA and Long-Doc tables (every metric it offers; Average and "
                    "Rank by its rules) from MTEB results of any retrievers and re-ranked runs, adds 95%% intervals, "
                    "Judged@10 and rank groups, and writes leaderboard.json/.md/.csv, leaderboard.html and the "
                    "result files the leaderboard app reads (eval_results/<version>/<retriever>/<reranker>/).")
    parser.add_argument("--results", type=Path, required=True, help="the MTEB results folder (mteb run --output-folder)")
    parser.add_argument("--split", choices=("dev", "test"), default="dev",
                        help="the split the table shows (default dev: test qrels are gated, test runs are closed-book)")
    parser.add_argument("--benchmark", default="AIR-Bench_24.05",
                        help="the AIR-Bench version (default AIR-Bench_24.05; or AIR-Bench_24.04, or a _qa or "
                             "_long-doc part)")
    parser.add_argument("--n-resamples", type=int, default=9999,
                        help="bootstrap resamples and random sign vectors (default 9999)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the resampling (default 0)")
    parser.add_argument("--alpha", type=float, default=0.05, help="significance level of the rank groups (default 0.05)")
    parser.add_argument("--out", type=Path, default=Path("leaderboard"), help="the folder to write to (default leaderboard)")
    parser.set_defaults(func=leaderboard)
