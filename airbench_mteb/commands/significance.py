"""`airbench-mteb significance`: paired comparison of models from their kept per-query scores
(:mod:`airbench_mteb.report.significance`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from airbench_mteb.commands.resampling_flags import add_resampling_flags, resampling_from


def significance(args: argparse.Namespace) -> int:
    from airbench_mteb.report.significance import significance as compare_models
    from airbench_mteb.report.significance import write_significance

    resampling = resampling_from(args)
    report = compare_models(args.results, args.models, tasks=args.tasks or (), benchmark=args.benchmark,
                            metrics=args.metrics, splits=args.splits, correction=args.correction,
                            resampling=resampling, alpha=args.alpha)
    for note in report.notes:
        print(note, file=sys.stderr)
    for path in write_significance(report, args.out):
        print(path)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "significance", help="paired tests and confidence intervals between models, from their MTEB results",
        description="Compares every pair of models on every task, split, subset and metric from the per-query scores "
                    "kept beside MTEB's results (a paired bootstrap CI of the difference, a two-sided paired "
                    "randomization test with correction over the report's comparisons, the paired t-test, an "
                    "effect size, wins/ties/losses) and writes significance.json/.md/.tex/.csv to --out.")
    parser.add_argument("--results", type=Path, required=True, help="the MTEB results folder (mteb run --output-folder)")
    parser.add_argument("-m", "--models", nargs="+", required=True, help="two or more models (full or short names)")
    parser.add_argument("-t", "--tasks", nargs="+", default=None, help="the tasks to compare on")
    parser.add_argument("-b", "--benchmark", default=None,
                        help="a benchmark: its tasks, and each model's mean over them with a stratified bootstrap CI, "
                             "paired tests and (3 or more models) rank intervals")
    parser.add_argument("--metrics", nargs="+", default=None,
                        help="metrics kept per query (main_score, ndcg_at_10, recall_at_10, recall_at_100, map_at_10, "
                             "mrr_at_10, judged_at_10, judged_at_100); default: each task's main score")
    parser.add_argument("--splits", nargs="+", default=None, help="only these splits (default: every scored split)")
    add_resampling_flags(parser, alpha_help="significance level of the tables' markers")
    parser.add_argument("--out", type=Path, required=True, help="the folder the four files go to")
    parser.set_defaults(func=significance)
