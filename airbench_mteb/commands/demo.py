"""`airbench-mteb demo`: the main job, offline — build a small real IRSC benchmark, evaluate the
bundled models with mteb, print an MTEB-style table, compare the models and write the plots.
Every step is a library call: the IRSC ``generate``, ``mteb.evaluate``, ``report.irsc.main_score_table``,
``report.compare``, ``report.write_report``."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from airbench_mteb.generation.irsc import BuildConfig
    from airbench_mteb.generation.summary import GenerationSummary

DEMO_PLOTS = ("table", "radar", "heatmap")


async def build_demo_data(data: Path, config: BuildConfig, llm: bool) -> GenerationSummary:
    """IRSC from the shipped text; with ``llm`` also the LLM-made tasks, by the bundled GGUF model."""
    from airbench_mteb.generation.irsc import generate
    from airbench_mteb.generation.irsc.sources import shipped_records
    from airbench_mteb.generation.llm import LLMClient, ResponseCache, make_backend
    from airbench_mteb.generation.store import llm_cache_path

    client = LLMClient(make_backend("llamacpp"), ResponseCache(llm_cache_path(data))) if llm else None
    try:
        return await generate(config, data, client, sources=shipped_records())
    finally:
        if client is not None:
            await client.aclose()
            print(f"LLM: {client.account.summary()}")


def demo(args: argparse.Namespace) -> int:
    import mteb

    from airbench_mteb.generation.irsc import BuildConfig
    from airbench_mteb.metrics.resampling import configured_resampling
    from airbench_mteb.models import BM25_MODEL, BUNDLED_ENCODERS
    from airbench_mteb.report import ReportRequest, write_report
    from airbench_mteb.report.compare import (
        compare_predictions,
        prediction_folders,
        read_model_predictions,
        write_comparison,
    )
    from airbench_mteb.report.irsc import main_score_table
    from airbench_mteb.settings import configure
    from airbench_mteb.tasks.irsc import built_irsc_task_names

    models = args.models or [*BUNDLED_ENCODERS, BM25_MODEL]
    out: Path = args.out.resolve()
    data, results, predictions = out / "data", out / "results", out / "predictions"
    config = BuildConfig(per_task=args.per_task, corpus_limit=args.corpus_limit, seed=args.seed)
    print(asyncio.run(build_demo_data(data, config, args.llm)).describe())
    configure(data_dir=data)
    task_names = built_irsc_task_names()
    tasks = mteb.get_tasks(tasks=task_names)
    for name in models:
        print(f"\n== evaluating {name} on {len(tasks)} IRSC tasks")
        mteb.evaluate(mteb.get_model(name), tasks, cache=mteb.ResultCache(results), overwrite_strategy="always",
                      prediction_folder=predictions / name.replace("/", "__"))
    print("\nnDCG@10 (main score, mean over the built language settings) [95 % confidence interval over queries]\n")
    print(main_score_table(results, models, task_names))

    print("\n== airbench-mteb compare")
    comparison = compare_predictions([read_model_predictions(f) for f in prediction_folders([predictions])],
                                     resampling=configured_resampling())
    for note in comparison.notes:
        print(note, file=sys.stderr)
    for path in write_comparison(comparison, out / "compare"):
        print(path)
    print("\n== airbench-mteb report")
    for path in write_report(DEMO_PLOTS, ReportRequest(out=out / "report", results=results,
                                                       predictions=out / "compare")):
        print(path)
    print(f"\nresults: {results}\nplots and tables: {out / 'report'}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("demo", help="offline main job: build IRSC, evaluate the bundled models, compare, plot")
    parser.add_argument("--out", type=Path, default=Path("airbench-mteb-demo"), help="folder for data, results, plots")
    parser.add_argument("--models", nargs="+", help="models to evaluate (default: the bundled encoders and BM25)")
    parser.add_argument("--per-task", type=int, default=100, help="queries per IRSC task and language")
    parser.add_argument("--corpus-limit", type=int, default=1000, help="paragraphs per language in the unified corpus")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--llm", action="store_true",
                        help="also build the LLM-made tasks (query, summary, C2E/E2C) with the embedded GGUF model (slow)")
    parser.set_defaults(func=demo)
