"""`run`, `available-tasks`, `available-benchmarks`: mteb's own commands, plugin-aware."""

from __future__ import annotations

import argparse
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from airbench_mteb.commands.model_kwargs import OPTION, add_model_kwargs_argument, model_kwargs
from airbench_mteb.commands.options import add_data_dir_argument, apply_data_dir, check_positive_option
from airbench_mteb.data.errors import OptionError
from airbench_mteb.mteb_compat import add_mteb_cli_parsers, torch_deferred
from airbench_mteb.names import check_benchmark_names, check_task_names, model_argument
from airbench_mteb.registry import model_with_arguments, register_models
from airbench_mteb.settings import configure

logger = logging.getLogger(__name__)


def rerank_model_argument(reranker: str, previous_results: Path, top_k: int) -> str:
    """``reranker`` over the first stage saved in ``previous_results``, registered under both models' name."""
    import mteb

    from airbench_mteb.names import reranked_model_meta

    meta = reranked_model_meta(mteb.get_model_meta(reranker), previous_results, top_k)
    register_models([meta])
    return str(meta.name)


def selected_tasks(args: argparse.Namespace) -> tuple[Any, ...]:
    """The tasks `mteb run` evaluates for these arguments (a benchmark's, else the filters'), as mteb selects them."""
    import mteb

    if args.benchmarks:
        return tuple(task for benchmark in mteb.get_benchmarks(names=args.benchmarks) for task in benchmark.tasks)
    return tuple(mteb.get_tasks(categories=args.categories, task_types=args.task_types, languages=args.languages,
                                tasks=args.tasks, eval_splits=args.eval_splits))


def prediction_folder(args: argparse.Namespace) -> Path | None:
    """Where this `run` was asked to write rankings (``--prediction-folder``, or the deprecated
    ``--save_predictions``: the output folder), or None."""
    if args.prediction_folder:
        return Path(args.prediction_folder)
    return Path(args.output_folder) if args.save_predictions else None


def missing_rankings(tasks: tuple[Any, ...], folder: Path) -> list[str]:
    """The retrieval tasks among ``tasks`` (those mteb writes rankings for) without a rankings file in ``folder``."""
    from mteb.abstasks.retrieval import AbsTaskRetrieval

    return [task.metadata.name for task in tasks
            if isinstance(task, AbsTaskRetrieval) and not (folder / task.prediction_file_name).is_file()]


def write_missing_rankings(args: argparse.Namespace, mteb_run: Callable[[argparse.Namespace], Any]) -> None:
    """mteb skips a task whose results are cached, and then writes no rankings for it: each such task is evaluated
    again (``--overwrite-strategy always``) so that the file ``--prediction-folder`` asked for exists.

    Raises:
        OptionError: a task still without its rankings file (never exit 0 without the file asked for).
    """
    folder = prediction_folder(args)
    if folder is None:
        return
    missing = missing_rankings(selected_tasks(args), folder)
    if not missing:
        return
    logger.warning("%s: results cached but no rankings in %s; evaluating again to write them", ", ".join(missing),
                   folder)
    # the benchmark's filters were ignored by mteb; for named tasks they select what the first pass evaluated
    filters = dict.fromkeys(("categories", "task_types", "languages", "eval_splits"), None) if args.benchmarks else {}
    again = argparse.Namespace(**{**vars(args), **filters, "benchmarks": None, "tasks": missing,
                                  "overwrite_strategy": "always", "overwrite": False})
    mteb_run(again)
    still = missing_rankings(selected_tasks(again), folder)
    if still:
        raise OptionError(f"--prediction-folder {folder}: no rankings were written for {', '.join(still)} "
                          f"(see the log above)")


def register_mteb_commands(subparsers: argparse._SubParsersAction) -> None:
    from airbench_mteb.models.bm25 import TORCH_FREE_MODELS
    from airbench_mteb.models.rerankers import RERANK_TOP_K

    add_mteb_cli_parsers(subparsers)  # mteb's own parsers: private to mteb's CLI module
    run_parser = subparsers.choices["run"]
    add_data_dir_argument(run_parser)
    run_parser.add_argument("--previous-results", type=Path, default=None,
                            help="re-rank: the first stage's --prediction-folder; -m is then the reranker")
    run_parser.add_argument("--rerank-top-k", type=int, default=RERANK_TOP_K,
                            help=f"candidates per query taken from --previous-results (default {RERANK_TOP_K})")
    run_parser.add_argument("--no-ci", action="store_true",
                            help="no confidence intervals in the results (per-query scores are still kept); "
                                 "$AIRBENCH_MTEB_CI=off does the same for mteb run and scripts")
    add_model_kwargs_argument(run_parser)
    stock_run = run_parser.get_default("func")

    def mteb_run(args: argparse.Namespace) -> None:
        """mteb's ``run``; without importing torch and sentence-transformers for a model that uses neither."""
        if args.model not in TORCH_FREE_MODELS:
            stock_run(args)
            return
        with torch_deferred():  # the model takes no device: name one, so that mteb does not ask torch
            stock_run(argparse.Namespace(**{**vars(args), "device": args.device or "cpu"}))

    def run(args: argparse.Namespace) -> int:
        import mteb

        from airbench_mteb.report.run_summary import run_summary

        # as mteb's own main: log lines (mteb's and the plugin's, at --verbosity's level) reach stderr as plain lines
        logging.basicConfig(level=logging.WARNING, format="%(message)s")
        check_positive_option("--batch-size", args.batch_size)
        check_positive_option("--rerank-top-k", args.rerank_top_k)
        if args.no_ci:
            configure(ci=None)
        apply_data_dir(args)
        check_task_names(args.tasks)
        check_benchmark_names(args.benchmarks)
        args.model = model_argument(args.model, args.model_revision)
        kwargs = model_kwargs(args.model_kwargs, args.model, args.model_revision)
        if args.previous_results is not None:
            if kwargs:
                raise OptionError(f"{OPTION} with --previous-results: re-ranking takes no model arguments yet")
            args.model = rerank_model_argument(args.model, args.previous_results, args.rerank_top_k)
        with model_with_arguments(args.model, args.model_revision, kwargs):
            mteb_run(args)
            write_missing_rankings(args, mteb_run)
            meta = mteb.get_model_meta(args.model, args.model_revision)
        for line in run_summary(Path(args.output_folder), meta, [task.metadata.name for task in selected_tasks(args)]):
            print(line)
        return 0

    run_parser.set_defaults(func=run)
    for name in ("available-tasks", "available-benchmarks"):
        parser = subparsers.choices[name]
        plain = parser.get_default("func")
        parser.set_defaults(func=lambda args, plain=plain: plain(args) or 0)
