"""`encode`: fill the embedding cache with a model's corpus vectors on a Ray cluster, before `run`."""

from __future__ import annotations

import argparse

from airbench_mteb.commands.model_kwargs import OPTION, add_model_kwargs_argument, model_kwargs
from airbench_mteb.commands.options import add_data_dir_argument, apply_data_dir
from airbench_mteb.data.errors import DatasetError
from airbench_mteb.names import check_benchmark_names, check_task_names, model_argument
from airbench_mteb.settings import SettingsError


def _encode(args: argparse.Namespace) -> int:
    import importlib.util

    import mteb

    from airbench_mteb.distributed import encode_corpora

    if importlib.util.find_spec("ray") is None:
        raise SettingsError("needs Ray: pip install 'airbench-mteb[distributed]'")
    apply_data_dir(args)
    check_task_names(args.tasks)
    check_benchmark_names(args.benchmarks)
    model = model_argument(args.model)
    kwargs = model_kwargs(args.model_kwargs, model)
    if args.benchmarks:
        tasks = [task for benchmark in mteb.get_benchmarks(names=args.benchmarks) for task in benchmark.tasks]
    else:
        tasks = list(mteb.get_tasks(tasks=args.tasks))
    # the options, the cache folder and the model are checked there, before Ray starts
    block = {"rows_per_block": args.rows_per_block} if args.rows_per_block is not None else {}  # else its default
    summary = encode_corpora(model, tasks, ray_address=args.ray_address, num_workers=args.num_workers,
                             gpus_per_worker=args.gpus_per_worker, batch_size=args.batch_size, loader_kwargs=kwargs,
                             **block)
    print(summary.line())
    if not summary.complete:
        raise DatasetError(f"only {summary.stored:,} of {summary.documents:,} documents are in the embedding cache "
                           f"as this machine reads it; a following run encodes the other "
                           f"{summary.documents - summary.stored:,} (see the warnings above)", path=summary.cache_root)
    same = f" {OPTION} {' '.join(args.model_kwargs)}" if kwargs else ""
    print(f"now `airbench-mteb run -m {args.model}{same} ...` (same embedding cache) encodes no corpus document again")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    from airbench_mteb.settings import EMBEDDING_CACHE_ENV

    parser = subparsers.add_parser(
        "encode", help="encode the corpora of tasks on a Ray cluster into the embedding cache",
        description=f"Encode every corpus of the tasks with the model on Ray (one model per worker) into the "
                    f"embedding cache (${EMBEDDING_CACHE_ENV}; on several machines, a folder all of them mount). A "
                    f"following `run` of the same model and tasks encodes no corpus document. Needs the "
                    f"`distributed` extra.")
    parser.add_argument("-m", "--model", required=True, help="a model name mteb knows, or a local model folder")
    add_model_kwargs_argument(parser)
    selection = parser.add_mutually_exclusive_group(required=True)
    selection.add_argument("-t", "--tasks", nargs="+", help="task names")
    selection.add_argument("-b", "--benchmarks", nargs="+", help="benchmark names")
    parser.add_argument("--ray-address", default=None,
                        help="a running Ray cluster (`ray start --head` prints it; 'auto' finds a local one); "
                             "default: start a local one for this command")
    parser.add_argument("--num-workers", type=int, default=1, help="Ray actors, one model instance each")
    parser.add_argument("--gpus-per-worker", type=float, default=0, help="GPUs per actor (0: CPU)")
    parser.add_argument("--batch-size", type=int, default=32, help="encode batch size")
    parser.add_argument("--rows-per-block", type=int, default=None,
                        help="documents per unit of work (the most a killed worker loses; default: one chunk of the "
                             "embedding cache)")
    add_data_dir_argument(parser)
    parser.set_defaults(func=_encode)
