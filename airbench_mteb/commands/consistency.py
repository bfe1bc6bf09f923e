"""`airbench-mteb consistency`: does a generated benchmark rank models as human labels do
(:mod:`airbench_mteb.report.consistency`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from airbench_mteb.commands.options import apply_data_dir
from airbench_mteb.commands.resampling_flags import add_resampling_flags, resampling_from
from airbench_mteb.names import check_task_names


def consistency(args: argparse.Namespace) -> int:
    from airbench_mteb.report.consistency import QuerySet
    from airbench_mteb.report.consistency import consistency as check_consistency
    from airbench_mteb.report.consistency_output import write_consistency

    resampling = resampling_from(args)
    apply_data_dir(args)
    check_task_names([task for task in (args.generated, args.human, args.without_qc) if task])
    generated = QuerySet(args.generated, args.generated_split, args.generated_subset)
    report = check_consistency(
        args.results, args.models, generated, QuerySet(args.human, args.human_split, args.human_subset),
        without_qc=QuerySet(args.without_qc, args.generated_split, args.generated_subset) if args.without_qc else None,
        metrics=args.metrics, subsets=args.subsets, subset_size=args.subset_size, resampling=resampling,
        check_corpus=not args.no_corpus_check)
    for note in report.notes:
        print(note, file=sys.stderr)
    for path in write_consistency(report, args.out):
        print(path)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "consistency", help="rank agreement of a generated benchmark with a human-labelled one (AIR-Bench 4.1)",
        description="Scores of a panel of models (3 or more) on a generated task and on a human-labelled task over "
                    "the same corpus, from their MTEB results and kept per-query scores: Spearman's rho and Kendall's "
                    "tau with p-values and bootstrap intervals (each set's queries resampled on their own), rho on "
                    "random subsets of the generated queries, and with --without-qc the same for the set before "
                    "quality control. Writes consistency.json, consistency.md and consistency_<metric>.png to --out.")
    parser.add_argument("--results", type=Path, required=True, help="the MTEB results folder (mteb run --output-folder)")
    parser.add_argument("-m", "--models", nargs="+", required=True,
                        help="three or more models (labels such as 'airbench-mteb/bm25 (b=0.75, k1=1.2)', or full or "
                             "short names)")
    parser.add_argument("--generated", required=True, help="the generated task (e.g. custom_qa_healthcare_en_nfcorpus)")
    parser.add_argument("--generated-split", default="test", help="its split (default test)")
    parser.add_argument("--generated-subset", default=None, help="its subset (default: its only one)")
    parser.add_argument("--human", required=True, help="the human-labelled task over the same corpus")
    parser.add_argument("--human-split", default="test", help="its split (default test)")
    parser.add_argument("--human-subset", default=None, help="its subset (default: its only one), e.g. human")
    parser.add_argument("--without-qc", default=None,
                        help="the generated set before quality control, registered as a task of its own "
                             "(register-dataset OUT/pre_qc); same split and subset as --generated")
    parser.add_argument("--metrics", nargs="+", default=None,
                        help="metrics kept per query (ndcg_at_10, recall_at_100, map_at_10, ..., main_score: each "
                             "task's own); default ndcg_at_10, the AIR-Bench paper's")
    parser.add_argument("--subsets", type=int, default=30, help="robustness study: random subsets (default 30)")
    parser.add_argument("--subset-size", type=int, default=2000,
                        help="robustness study: generated queries per subset, capped by the set (default 2000)")
    add_resampling_flags(parser, method="percentile",
                         method_help=" for rho and tau: BCa suits smooth statistics, not the few values a rank "
                                     "correlation of a few models takes; --seed also draws the subsets")
    parser.add_argument("--data-dir", type=Path, default=None,
                        help="local mirror root of the human task's data (as for `airbench-mteb run`)")
    parser.add_argument("--no-corpus-check", action="store_true",
                        help="skip reading both tasks' data to check that they share the corpus")
    parser.add_argument("--out", type=Path, required=True, help="the folder the files go to")
    parser.set_defaults(func=consistency)
