"""`airbench-mteb bias`: ranking performance and source bias of a model, per evaluation setting.

Two ways to name the data:

* ``-t CocktailNFCorpus ...``: registered source-bias tasks (the Cocktail datasets); ``--data-dir``
  is then the local mirror root (``<data-dir>/cocktail/<name>/``), as for ``airbench-mteb run``;
* ``--sources human llm=my-rewrites``: ``--data-dir`` is itself a multi-source folder
  (``corpus/<stem>.jsonl`` per source, same ids; ``queries.jsonl``; ``qrels/<split>.tsv``), the
  first source being the reference.

Results go to MTEB's results layout under ``--output-folder``; a summary table
(:func:`airbench_mteb.report.bias.bias_summary_table`) is printed.
"""

from __future__ import annotations

import argparse
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from airbench_mteb.commands.model_kwargs import add_model_kwargs_argument, model_kwargs
from airbench_mteb.commands.options import apply_data_dir, check_positive_option
from airbench_mteb.data.errors import OptionError
from airbench_mteb.data.files import output_folder
from airbench_mteb.errors import UnknownNameError
from airbench_mteb.names import check_task_names, model_argument


def _tasks(args: argparse.Namespace) -> list[Any]:
    import mteb

    from airbench_mteb.registry import register_tasks
    from airbench_mteb.tasks.cocktail import SourceBiasTask, make_source_bias_task
    from airbench_mteb.tasks.selection import check_selection

    if args.sources:
        if args.tasks or args.data_dir is None:
            raise OptionError("--sources evaluates the folder given by --data-dir, without -t")
        task = make_source_bias_task(args.data_dir, args.sources, name=args.name, splits=args.eval_splits,
                                     settings=args.settings, keep_titles=args.keep_titles or None)
        register_tasks([type(task)])  # results of the task are then loadable by name
        return [task]
    if not args.tasks:
        raise OptionError("give -t TASK... (e.g. CocktailNFCorpus) or --data-dir FOLDER --sources ...")
    apply_data_dir(args)
    check_task_names(args.tasks)
    tasks = []
    for name in args.tasks:
        task = mteb.get_task(name)
        if not isinstance(task, SourceBiasTask):
            raise UnknownNameError(f"{name!r} is not a source-bias task (a co*cktail task or a registered "
                                   "multi-source folder)")
        check_selection(task, args.eval_splits, args.settings, subsets_option="--settings")
        task = mteb.get_task(name, eval_splits=args.eval_splits, hf_subsets=args.settings)
        task.keep_titles = task.keep_titles or args.keep_titles
        tasks.append(task)
    return tasks


def bias(args: argparse.Namespace) -> int:
    import mteb

    from airbench_mteb.models.arguments import meta_label
    from airbench_mteb.registry import model_with_arguments
    from airbench_mteb.report.bias import bias_summary_table

    check_positive_option("--batch-size", args.batch_size)
    tasks = _tasks(args)
    name = model_argument(args.model)
    kwargs = model_kwargs(args.model_kwargs, name)
    with model_with_arguments(name, None, kwargs):
        model = mteb.get_model(name)
    print(meta_label(model.mteb_model_meta))
    # a run that fails before MTEB writes a result leaves no new folder
    with output_folder(args.output_folder) if args.output_folder else nullcontext():
        options: dict[str, Any] = {"cache": mteb.ResultCache(args.output_folder)} if args.output_folder else {}
        results = mteb.evaluate(model, tasks, encode_kwargs={"batch_size": args.batch_size} if args.batch_size else {},
                                overwrite_strategy=args.overwrite_strategy, **options)
    by_name = {task_result.task_name: task_result for task_result in results.task_results}
    for task in tasks:
        print(bias_summary_table(by_name[task.metadata.name], [label for label, _ in task.sources]))
    if args.output_folder:
        print(f"results written under {Path(args.output_folder) / 'results'}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "bias", help="ranking performance and source bias (Cocktail settings) of a model",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-m", "--model", required=True, help="model name, bundled alias or local model folder")
    add_model_kwargs_argument(parser)
    parser.add_argument("-t", "--tasks", nargs="+", help="source-bias tasks, e.g. CocktailNFCorpus CocktailNQUTD")
    parser.add_argument("--data-dir", type=Path, default=None,
                        help="with -t: local mirror root; with --sources: the multi-source folder to evaluate")
    parser.add_argument("--sources", nargs="+", metavar="[LABEL=]STEM",
                        help="corpus files corpus/<STEM>.jsonl of --data-dir, the reference (human) first")
    parser.add_argument("--name", help="task name for --sources (default SourceBias_<folder name>)")
    parser.add_argument("--settings", nargs="+", metavar="SETTING",
                        help="subsets to run: source labels (e.g. human llm), mixed, mixed-all-relevant (default: all)")
    parser.add_argument("--eval-splits", nargs="+", help="splits to evaluate (default: the task's)")
    parser.add_argument("--keep-titles", action="store_true", help="keep document titles (dropped by default)")
    parser.add_argument("--output-folder", type=Path, default=None, help="MTEB results folder (default: mteb's cache)")
    parser.add_argument("--batch-size", type=int, default=None, help="encoding batch size")
    parser.add_argument("--overwrite-strategy", default="only-missing",
                        choices=["always", "never", "only-missing", "only-cache"], help="as in `mteb run`")
    parser.set_defaults(func=bias)
