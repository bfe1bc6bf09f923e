"""What the content-keyed embedding cache saves on a whole ``mteb.evaluate`` run.

One retrieval task with a dev and a test split over one shared corpus of real Wikipedia passages
(gensim's test sample), queried by sentences of those passages; model: the bundled
``airbench-mteb/all-MiniLM-L6-v2``. In one process, timed:

* plain:  ``mteb.evaluate`` with the cache switched off (the model is not wrapped; mteb's own path);
* cold:   with the cache, starting from an empty cache folder;
* warm:   the same again, after dropping the in-process memo (what a re-run in a new process sees);
* memo:   the same again, memo kept (a later task over the same corpus in the same process).

Every run passes ``cache=None`` (no MTEB results cache) and ``overwrite_strategy="always"``, so
nothing is skipped, and the scores of all runs are checked to be identical. Prints wall and CPU
times and their ratios to plain (CPU time is steadier when other jobs share the machine); last
line ``eval_cache_warm_ratio=<warm wall time / plain wall time>``. Size: ``--docs`` etc.
"""

from __future__ import annotations

import argparse
import bz2
import os
import random
import re
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ["MTEB_CACHE"] = tempfile.mkdtemp(prefix="bench-mteb-")

import mteb
from mteb import TaskMetadata

import airbench_mteb  # noqa: F401  (registers the bundled model)
from airbench_mteb.data.retrieval_data import Document, RetrievalData
from airbench_mteb.models.embedding_cache import forget_loaded_stores
from airbench_mteb.settings import EMBEDDING_CACHE_ENV as CACHE_ENV
from airbench_mteb.tasks.base import PluginRetrievalTask

SPLITS = ("dev", "test")


def wikipedia_passages(max_words: int) -> list[tuple[str, str]]:
    """(page title, paragraph) pairs from gensim's Wikipedia sample, paragraphs of 30+ words cut to ``max_words``."""
    from gensim.corpora.wikicorpus import extract_pages, filter_wiki
    from gensim.test.utils import datapath

    dump = datapath("enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2")
    passages = []
    with bz2.open(dump) as handle:
        for title, markup, _ in extract_pages(handle):
            for paragraph in re.split(r"\n\s*\n", filter_wiki(markup)):
                words = paragraph.split()
                if len(words) >= 30:
                    passages.append((title, " ".join(words[:max_words])))
    return passages


def build_splits(passages: list[tuple[str, str]], docs: int, queries: int) -> dict[str, RetrievalData]:
    """One corpus for both splits; each query is the second sentence of a passage, which is its answer."""
    if len(passages) < docs:
        raise SystemExit(f"the Wikipedia sample has {len(passages)} passages; ask for at most that many")
    rng = random.Random(0)
    chosen = rng.sample(passages, docs)
    corpus = {f"w{i}": Document(text=text, title=title) for i, (title, text) in enumerate(chosen)}
    askable = [doc_id for doc_id, doc in corpus.items() if len(re.split(r"(?<=\.) ", doc.text)) > 1]
    picked = rng.sample(askable, 2 * queries)
    splits = {}
    for n, split in enumerate(SPLITS):
        ids = picked[n * queries:(n + 1) * queries]
        splits[split] = RetrievalData(
            corpus=corpus,
            queries={f"{split}-{d}": re.split(r"(?<=\.) ", corpus[d].text)[1] for d in ids},
            qrels={f"{split}-{d}": {d: 1} for d in ids},
        )
    return splits


def task_class(splits: dict[str, RetrievalData]) -> type[PluginRetrievalTask]:
    class WikipediaSentenceRetrieval(PluginRetrievalTask):
        metadata = TaskMetadata(
            name="BenchWikipediaSentenceRetrieval",
            description="Find the Wikipedia passage a sentence comes from (benchmark of the embedding cache).",
            reference=None, dataset={"path": "gensim/enwiki-sample", "revision": "0"}, type="Retrieval",
            category="t2t", modalities=["text"], eval_splits=list(SPLITS), eval_langs=["eng-Latn"],
            main_score="ndcg_at_10", date=None, domains=["Encyclopaedic"], task_subtypes=None, license=None,
            annotations_creators=None, dialect=None, sample_creation="found", bibtex_citation="")

        def load_split(self, hf_subset: str, split: str) -> RetrievalData:
            return splits[split]

    return WikipediaSentenceRetrieval


def timed_run(model: object, task_cls: type[PluginRetrievalTask], cache: str) -> tuple[float, float, dict[str, float]]:
    """Wall and CPU seconds of one evaluation (CPU time is the steadier figure on a shared machine), and its scores."""
    os.environ[CACHE_ENV] = cache
    wall, cpu = time.perf_counter(), time.process_time()
    result = mteb.evaluate(model, task_cls(), cache=None, overwrite_strategy="always", show_progress_bar=False,
                           encode_kwargs={"batch_size": 32, "show_progress_bar": False})
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    scores = result.task_results[0].scores
    return wall, cpu, {split: scores[split][0]["ndcg_at_10"] for split in SPLITS}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=1000, help="corpus passages shared by both splits")
    parser.add_argument("--queries", type=int, default=100, help="queries per split")
    parser.add_argument("--max-words", type=int, default=48, help="words kept per passage")
    args = parser.parse_args()

    passages = wikipedia_passages(args.max_words)
    splits = build_splits(passages, args.docs, args.queries)
    model = mteb.get_model("airbench-mteb/all-MiniLM-L6-v2")
    timed_run(model, task_class(build_splits(passages, 32, 4)), "off")  # one-time costs stay out of the timings

    task_cls = task_class(splits)
    cache_root = Path(tempfile.mkdtemp(prefix="bench-embeddings-"))
    runs = {"plain mteb.evaluate": timed_run(model, task_cls, "off")}
    forget_loaded_stores()
    runs["cache, cold (empty)"] = timed_run(model, task_cls, str(cache_root))
    forget_loaded_stores()
    runs["cache, warm (from disk)"] = timed_run(model, task_cls, str(cache_root))
    runs["cache, warm (in memory)"] = timed_run(model, task_cls, str(cache_root))

    plain_wall, plain_cpu, plain_scores = runs["plain mteb.evaluate"]
    same = all(abs(scores[s] - plain_scores[s]) < 1e-6 for _, _, scores in runs.values() for s in SPLITS)
    stored = sum(f.stat().st_size for f in cache_root.rglob("*") if f.is_file())
    print(f"task: {args.docs} Wikipedia passages (<= {args.max_words} words) shared by {len(SPLITS)} splits, "
          f"{args.queries} queries per split; model airbench-mteb/all-MiniLM-L6-v2 on {os.cpu_count()} cores")
    print(f"nDCG@10 {plain_scores}; identical in every run: {'yes' if same else 'NO'}")
    print(f"{'':24} {'wall s':>8} {'ratio':>7} {'CPU s':>8} {'ratio':>7}")
    for name, (wall, cpu, _) in runs.items():
        print(f"{name:24} {wall:8.2f} {wall / plain_wall:7.3f} {cpu:8.2f} {cpu / plain_cpu:7.3f}")
    print(f"cache folder: {stored / 1e6:.1f} MB")
    cold, warm = runs["cache, cold (empty)"][0] / plain_wall, runs["cache, warm (from disk)"][0] / plain_wall
    print(f"eval_cache_cold_ratio={cold:.4f}")
    print(f"eval_cache_warm_ratio={warm:.4f}")


if __name__ == "__main__":
    main()
