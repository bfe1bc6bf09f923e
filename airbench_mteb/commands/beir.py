"""`airbench-mteb export-beir`: write a retrieval task's data as BEIR folders."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from airbench_mteb.commands.run import add_data_dir_argument, apply_data_dir
from airbench_mteb.data.errors import DatasetError
from airbench_mteb.data.retrieval_data import Document, RetrievalData

if TYPE_CHECKING:
    from mteb import AbsTask


def export_task(task: AbsTask, out: Path) -> list[Path]:
    """Load an MTEB retrieval task and write one BEIR folder per subset (``out`` itself if it has one subset)."""
    from mteb.abstasks.retrieval import AbsTaskRetrieval

    from airbench_mteb.data.beir_folder import write_beir_folder

    name = task.metadata.name
    if not isinstance(task, AbsTaskRetrieval):
        raise TypeError(f"task {name!r} is a {task.metadata.type} task; only retrieval tasks have a BEIR form")
    task.load_data()
    task.convert_v1_dataset_format_to_v2(num_proc=None)  # as MTEB's evaluate does, for tasks still in v1 form
    written = []
    for subset, splits in task.dataset.items():
        data = {split: _from_mteb_split(splits[split], f"{name} {subset}/{split}")
                for split in task.eval_splits if split in splits}
        if not data:
            raise DatasetError(f"task {name!r} has none of its eval splits {task.eval_splits} in subset {subset!r}")
        written.append(write_beir_folder(data, out if len(task.dataset) == 1 else out / subset))
    return written


def _from_mteb_split(split_data: Mapping[str, Any], where: str) -> RetrievalData:
    """The inverse of ``RetrievalData.to_mteb`` for one loaded (subset, split) of an MTEB retrieval task."""
    if split_data.get("top_ranked"):
        raise DatasetError(f"{where} re-ranks given candidates (top_ranked), which a BEIR folder cannot hold")
    corpus_rows, query_rows = split_data["corpus"], split_data["queries"]
    titles = corpus_rows["title"] if "title" in corpus_rows.column_names else [""] * len(corpus_rows)
    corpus = {str(doc_id): Document(text=text or "", title=title or "")
              for doc_id, text, title in zip(corpus_rows["id"], corpus_rows["text"], titles, strict=True)}
    queries = {}
    for qid, text in zip(query_rows["id"], query_rows["text"], strict=True):
        if not isinstance(text, str):
            raise DatasetError(f"{where}: query text is a {type(text).__name__}, not a string; BEIR queries are "
                               "plain text", item_id=str(qid))
        queries[str(qid)] = text
    qrels = {str(qid): {str(doc): int(rel) for doc, rel in docs.items()}
             for qid, docs in split_data["relevant_docs"].items()}
    return RetrievalData(corpus=corpus, queries=queries, qrels=qrels,
                         origin={"corpus": where, "queries": where, "qrels": where})


def export_beir(args: argparse.Namespace) -> int:
    apply_data_dir(args)
    import mteb

    import airbench_mteb  # noqa: F401  (registers the plugin's tasks with mteb)

    task = mteb.get_task(args.task, eval_splits=args.splits, hf_subsets=args.subsets)
    for folder in export_task(task, args.out):
        print(f"wrote BEIR folder {folder}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "export-beir", help="write a retrieval task's corpus, queries and qrels as BEIR folders",
        description="Write a retrieval task's data as a BEIR folder (corpus.jsonl, queries.jsonl, "
                    "qrels/<split>.tsv) that beir's GenericDataLoader reads; a task with several "
                    "subsets gets one folder per subset under --out.")
    parser.add_argument("-t", "--task", required=True, help="task name, e.g. AIR-Bench_24.05_qa_news_en")
    parser.add_argument("--out", type=Path, required=True, help="folder to write")
    parser.add_argument("--splits", nargs="+", help="only these splits (default: the task's eval splits)")
    parser.add_argument("--subsets", nargs="+", help="only these subsets (default: all)")
    add_data_dir_argument(parser)
    parser.set_defaults(func=export_beir)
