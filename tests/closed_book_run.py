"""A BM25 run over a mirror whose AIR-Bench test qrels were withheld, as a user without test access has it."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from airbench_mteb.catalog import AirBenchEntry, airbench_entries
from airbench_mteb.data.airbench_source import mirror_file

NEWS_EN = "AIR-Bench_24.05_qa_news_en"  # dev + test: test qrels withheld
ARXIV_LLAMA2 = "AIR-Bench_24.05_long-doc_arxiv_en_llama2"  # dev only
FINANCE_ZH_2404 = "AIR-Bench_24.04_qa_finance_zh"  # another version


def entry(name: str) -> AirBenchEntry:
    return next(e for e in airbench_entries() if e.task_name == name)


def closed_book_mirror(source: Path, target: Path) -> Path:
    """A copy of ``source`` without the test qrels of NEWS_EN."""
    shutil.copytree(source, target, dirs_exist_ok=True)
    news = entry(NEWS_EN)
    mirror_file(target, news, news.qrels_location("test")).unlink()
    return target


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def mirror_qrels(root: Path, name: str, split: str) -> dict[str, dict[str, int]]:
    """Qrels read straight from the mirror's files (not through the plugin's loaders)."""
    e = entry(name)
    qrels: dict[str, dict[str, int]] = {}
    for row in read_jsonl(mirror_file(root, e, e.qrels_location(split))):
        qrels.setdefault(row["qid"], {})[row["docid"]] = int(row["relevance"])
    return qrels


def mirror_query_ids(root: Path, name: str, split: str) -> list[str]:
    e = entry(name)
    return [row["id"] for row in read_jsonl(mirror_file(root, e, e.queries_location(split)))]


@contextmanager
def data_dir(root: Path) -> Iterator[None]:
    old = os.environ.get("AIRBENCH_MTEB_DATA_DIR")
    os.environ["AIRBENCH_MTEB_DATA_DIR"] = str(root)
    try:
        yield
    finally:
        if old is None:
            del os.environ["AIRBENCH_MTEB_DATA_DIR"]
        else:
            os.environ["AIRBENCH_MTEB_DATA_DIR"] = old


@dataclass
class Run:
    mirror: Path
    predictions: Path
    results: Path

    def scores(self, model_folder: str, task: str, split: str) -> dict:
        files = list((self.results / "results" / model_folder).glob(f"*/{task}.json"))
        assert len(files) == 1, files
        return json.loads(files[0].read_text())["scores"][split][0]


def run_bm25(mirror: Path, out: Path, tasks: list[str], splits: list[str]) -> Run:
    """``mteb run -m airbench-mteb/bm25 -t TASKS --eval-splits SPLITS --prediction-folder P`` in Python."""
    import mteb

    run = Run(mirror=mirror, predictions=out / "predictions", results=out / "results")
    with data_dir(mirror):
        mteb.evaluate(mteb.get_model("airbench-mteb/bm25"), mteb.get_tasks(tasks=tasks, eval_splits=splits),
                      cache=mteb.ResultCache(run.results), prediction_folder=run.predictions, show_progress_bar=False)
    return run
