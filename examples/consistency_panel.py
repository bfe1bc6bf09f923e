"""The panel of models available offline, run on the tasks named: BM25 at three (k1, b) settings, BM25 over words,
all-MiniLM-L6-v2 and multilingual-e5-small (``--no-dense``: the four BM25 runs only).

A co*cktail task is scored on its ``human`` setting. Every result keeps its per-query scores, which
``airbench-mteb consistency`` reads:

    python examples/consistency_panel.py --data-dir sample-data --results results \\
        custom_qa_healthcare_en_nfcorpus CocktailNFCorpus
"""

from __future__ import annotations

import argparse
from pathlib import Path

import mteb

from airbench_mteb.settings import configure

BM25_SETTINGS = ((0.9, 0.4), (1.2, 0.75), (2.0, 1.0))  # Pyserini's default, the classic Okapi one, a high k1 and b
DENSE = ("airbench-mteb/all-MiniLM-L6-v2", "airbench-mteb/multilingual-e5-small")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tasks", nargs="+")
    parser.add_argument("--results", type=Path, required=True, help="the MTEB results folder to write")
    parser.add_argument("--data-dir", type=Path, default=None, help="local mirror root (e.g. airbench-mteb sample-data)")
    parser.add_argument("--no-dense", action="store_true", help="leave out MiniLM and e5-small")
    args = parser.parse_args()
    if args.data_dir is not None:
        configure(data_dir=args.data_dir)
    tasks = [mteb.get_task(name, hf_subsets=["human"], eval_splits=["test"]) if name.startswith("Cocktail")
             else mteb.get_task(name) for name in args.tasks]
    models = [mteb.get_model("airbench-mteb/bm25", k1=k1, b=b) for k1, b in BM25_SETTINGS]
    models += [mteb.get_model(name) for name in ("airbench-mteb/bm25-words", *(() if args.no_dense else DENSE))]
    for model in models:
        mteb.evaluate(model, tasks, cache=mteb.ResultCache(args.results), show_progress_bar=False)


if __name__ == "__main__":
    main()
