"""What the shared embedding cache saves on the five IRSC tasks searching one unified corpus.

Data: the offline IRSC build (gensim's Wikipedia sample; English setting), all five query types.
No LLM ships offline, so the query and summary queries of this benchmark come from fixed templates
(a question around the paragraph's YAKE keywords; its lead sentence). They only set the query
texts: the cost compared here is encoding the unified corpus. Model: the bundled
``airbench-mteb/all-MiniLM-L6-v2``. In one process, timed:

* warm-up:     one task, cache off (untimed: model start-up costs would land on the first run);
* independent: ``mteb.evaluate`` on the five tasks with the cache off
  (``AIRBENCH_MTEB_EMBEDDING_CACHE=0``): the corpus is encoded five times;
* shared:      the same with the cache on, from an empty cache folder: encoded once.

Scores of both runs are checked to be identical. Last line ``irsc_cache_ratio=<independent / shared>``.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ["MTEB_CACHE"] = tempfile.mkdtemp(prefix="bench-mteb-")

import mteb

import airbench_mteb  # noqa: F401  (registers the tasks and the bundled model)
from airbench_mteb.data import DATA_DIR_ENV
from airbench_mteb.generation.irsc import BuildConfig, build_irsc
from airbench_mteb.generation.irsc.sources import wikipedia_sample_records
from airbench_mteb.generation.irsc.text import paragraph_keywords, split_sentences
from airbench_mteb.generation.llm import Completion, LLMClient, LLMParams
from airbench_mteb.settings import EMBEDDING_CACHE_ENV as CACHE_ENV
from airbench_mteb.tasks.irsc import irsc_task_classes


class TemplateBackend:
    """Stand-in for the LLM: template questions and lead sentences (see the module docstring)."""

    kind, model = "templates", "keywords-and-lead"

    @property
    def identity(self) -> dict[str, str]:
        return {"kind": self.kind, "model": self.model}

    async def complete(self, messages: list[dict[str, str]], params: LLMParams) -> Completion:
        prompt = messages[0]["content"]
        passage = prompt.split("Passage: ", 1)[-1]
        if prompt.startswith("Write one question"):
            keywords = paragraph_keywords(passage, "en")
            reply = f"What does the text say about {keywords}?" if keywords else ""
        else:
            reply = split_sentences(passage, "en")[0]
        return Completion(reply, 0, 0)

    async def aclose(self) -> None:
        pass


def evaluate(model: object, results: Path, names: list[str]) -> dict[str, float]:
    tasks = [mteb.get_task(name, hf_subsets=["en"]) for name in names]
    outcome = mteb.evaluate(model, tasks, cache=mteb.ResultCache(results), overwrite_strategy="always",
                            encode_kwargs={"batch_size": 32}, show_progress_bar=False)
    return {r.task_name: r.get_score() for r in outcome.task_results}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-task", type=int, default=40)
    parser.add_argument("--corpus", type=int, default=400, help="paragraphs in the unified English corpus")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-irsc-"))
    summary = build_irsc(wikipedia_sample_records(), work / "data", BuildConfig(per_task=args.per_task, corpus_limit=args.corpus),
                         LLMClient(TemplateBackend()))
    os.environ[DATA_DIR_ENV] = str(work / "data")
    corpus, queries = summary.corpus_sizes["en"], sum(summary.built["en"].values())
    print(f"unified corpus: {corpus} paragraphs; queries: {summary.built['en']}")
    print(f"texts to encode: {5 * corpus + queries} with the corpus per task, {corpus + queries} with it shared")
    model = mteb.get_model("airbench-mteb/all-MiniLM-L6-v2")
    names = [cls.metadata.name for cls in irsc_task_classes()]

    os.environ[CACHE_ENV] = "0"
    evaluate(model, work / "results-warmup", names[:1])  # one-time start-up costs out of both timings
    start = time.perf_counter()
    independent = evaluate(model, work / "results-independent", names)
    independent_time = time.perf_counter() - start

    os.environ[CACHE_ENV] = str(work / "embeddings")
    start = time.perf_counter()
    shared = evaluate(model, work / "results-shared", names)
    shared_time = time.perf_counter() - start

    for task, score in independent.items():
        if abs(score - shared[task]) > 1e-6:
            raise SystemExit(f"{task}: scores differ with and without the cache ({score} vs {shared[task]})")
    print(f"five tasks, corpus encoded per task (cache off): {independent_time:.1f} s")
    print(f"five tasks, corpus encoded once (shared cache):  {shared_time:.1f} s")
    print(f"irsc_cache_ratio={independent_time / shared_time:.2f}")


if __name__ == "__main__":
    main()
