"""Cocktail's four settings with the embedding cache vs naively (each setting encoding its corpus).

Runs every setting (human, llm, mixed, mixed-all-relevant) of one Cocktail task with a bundled
model twice, each in a fresh process: once with the embedding cache off
(``AIRBENCH_MTEB_EMBEDDING_CACHE=0``: the human and LLM documents are encoded three times each) and
once with a new, empty cache (each document encoded once). Only ``mteb.evaluate`` is timed.
Prints both times and, last, ``cocktail_cache_ratio=<naive seconds / cached seconds>``.

    python benchmarks/bench_cocktail.py --data-dir DIR [--task CocktailNQUTD]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def child(task_name: str, model_name: str) -> None:
    """Evaluate every setting once and print the evaluation time (the model is loaded untimed)."""
    import mteb

    import airbench_mteb  # noqa: F401  (registers the tasks and models)

    model = mteb.get_model(model_name)
    task = mteb.get_task(task_name)
    start = time.perf_counter()
    mteb.evaluate(model, task, cache=None, show_progress_bar=False)
    print(f"{time.perf_counter() - start:.3f}")


def timed_run(args: argparse.Namespace, cache_setting: str) -> float:
    env = {**os.environ, "AIRBENCH_MTEB_EMBEDDING_CACHE": cache_setting, "AIRBENCH_MTEB_DATA_DIR": str(args.data_dir),
           "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    output = subprocess.run([sys.executable, __file__, "--child", "--task", args.task, "--model", args.model],
                            env=env, check=True, capture_output=True, text=True).stdout
    return float(output.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=None,
                        help="mirror root holding cocktail/<name>/ (default: the data shipped with the package)")
    parser.add_argument("--task", default="CocktailNQUTD")
    parser.add_argument("--model", default="airbench-mteb/all-MiniLM-L6-v2")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.task, args.model)
        return
    if args.data_dir is None:
        from airbench_mteb.data.sample_data import write_sample_data

        args.data_dir = write_sample_data(Path(tempfile.mkdtemp(prefix="sample-data-")))
    with tempfile.TemporaryDirectory(prefix="bench_cocktail_") as cache:
        os.environ["MTEB_CACHE"] = str(Path(cache) / "mteb")
        naive = timed_run(args, "0")
        cached = timed_run(args, str(Path(cache) / "embeddings"))
    print(f"{args.task}, {args.model}, 4 settings: naive {naive:.1f} s, with the embedding cache {cached:.1f} s")
    print(f"cocktail_cache_ratio={naive / cached:.2f}")


if __name__ == "__main__":
    main()
