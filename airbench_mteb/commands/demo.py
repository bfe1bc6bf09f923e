"""`airbench-mteb demo`: the main job, offline — build a small real IRSC benchmark, evaluate the
bundled models with mteb, print an MTEB-style table, compare the models and write the plots."""

from __future__ import annotations

import argparse
from pathlib import Path

from airbench_mteb.models import BM25_MODEL, BUNDLED_ENCODERS

DEMO_MODELS = (*BUNDLED_ENCODERS, BM25_MODEL)


def evaluate_models(models: list[str], task_names: list[str], results: Path, predictions: Path) -> None:
    import mteb

    tasks = mteb.get_tasks(tasks=task_names)
    for name in models:
        print(f"\n== evaluating {name} on {len(tasks)} IRSC tasks")
        mteb.evaluate(mteb.get_model(name), tasks, cache=mteb.ResultCache(results), overwrite_strategy="always",
                      prediction_folder=predictions / name.replace("/", "__"))


def main_score_table(results: Path, models: list[str], task_names: list[str]) -> str:
    """Models x tasks, main score (nDCG@10) averaged over the subsets, as MTEB's summary tables show it."""
    import mteb

    loaded = mteb.ResultCache(results).load_results(models=models, tasks=task_names)
    rows = [["Model", *[t.removeprefix("IRSC").removesuffix("Retrieval") for t in task_names], "Mean"]]
    for model_result in loaded.model_results:
        by_task = {r.task_name: r.get_score() for r in model_result.task_results}
        scores = [by_task.get(t) for t in task_names]
        present = [s for s in scores if s is not None]
        rows.append([model_result.model_name, *[f"{s:.4f}" if s is not None else "-" for s in scores],
                     f"{sum(present) / len(present):.4f}" if present else "-"])
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |" for r in rows]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def demo(args: argparse.Namespace) -> int:
    from airbench_mteb.cli import main as cli
    from airbench_mteb.settings import configure
    from airbench_mteb.tasks.irsc import built_irsc_task_names

    out: Path = args.out.resolve()
    data, results, predictions = out / "data", out / "results", out / "predictions"
    build = ["build-irsc", "--out", str(data), "--per-task", str(args.per_task), "--corpus-limit",
             str(args.corpus_limit), "--seed", str(args.seed), *(["--llm"] if args.llm else [])]
    if cli(build) != 0:
        return 1
    configure(data_dir=data)
    task_names = built_irsc_task_names()
    evaluate_models(args.models, task_names, results, predictions)
    print("\nnDCG@10 (main score, mean over the built language settings)\n")
    print(main_score_table(results, args.models, task_names))
    steps = [["compare", "--predictions", *[str(p) for p in sorted(predictions.iterdir())], "--out",
              str(out / "compare")],
             ["report", "--plot", "table", "radar", "heatmap", "--results", str(results), "--predictions",
              str(out / "compare"), "--out", str(out / "report")]]
    for step in steps:
        print(f"\n== airbench-mteb {step[0]}")
        if cli(step) != 0:
            return 1
    print(f"\nresults: {results}\nplots and tables: {out / 'report'}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("demo", help="offline main job: build IRSC, evaluate the bundled models, compare, plot")
    parser.add_argument("--out", type=Path, default=Path("airbench-mteb-demo"), help="folder for data, results, plots")
    parser.add_argument("--models", nargs="+", default=list(DEMO_MODELS), help="models to evaluate")
    parser.add_argument("--per-task", type=int, default=100, help="queries per IRSC task and language")
    parser.add_argument("--corpus-limit", type=int, default=1000, help="paragraphs per language in the unified corpus")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--llm", action="store_true",
                        help="also build the LLM-made tasks (query, summary, C2E/E2C) with the embedded GGUF model (slow)")
    parser.set_defaults(func=demo)
