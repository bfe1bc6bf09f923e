"""A small AIR-Bench mirror made of the real data the package ships: a layout example that runs offline.

AIR-Bench's data come from the hub. :func:`write_airbench_example` writes two of its QA datasets in the hub
layout that ``--data-dir`` reads (:func:`airbench_mteb.data.airbench_source.mirror_file`), each from another
co*cktail dataset shipped with the package (:mod:`airbench_mteb.data.sample_data`): its human-written documents,
its real queries and its relevance judgments.

- ``AIR-Bench_24.05_qa_healthcare_en`` from NFCorpus (NutritionFacts questions over medical articles): a sample
  of its dev and test queries, the documents judged for them, and documents judged for its other queries
  (on-topic distractors);
- ``AIR-Bench_24.05_qa_news_en`` from NQ-UTD (questions on 2023-24 news): its queries shared between dev and
  test, its whole corpus, its graded judgments (relevance 0 marks a judged hard negative, as in AIR-Bench).

It is a layout example, not AIR-Bench data: its scores say nothing about a model on AIR-Bench.
"""

from __future__ import annotations

import random
import tempfile
from collections.abc import Sequence
from pathlib import Path

from airbench_mteb.data.airbench_source import AirBenchDataset, mirror_file
from airbench_mteb.data.beir_folder import read_beir_corpus, read_beir_split
from airbench_mteb.data.files import make_folder, write_jsonl
from airbench_mteb.data.qrels import Qrels
from airbench_mteb.data.retrieval_data import Document
from airbench_mteb.data.sample_data import sample_files, write_sample_data

# the AIR-Bench dataset (task) -> the shipped co*cktail dataset whose texts stand in for it
EXAMPLE_DATASETS = {"AIR-Bench_24.05_qa_healthcare_en": "nfcorpus", "AIR-Bench_24.05_qa_news_en": "nq-utd"}
CORPUS_FILE = "corpus/human.jsonl"
QUERIES_PER_SPLIT = 30
MAX_JUDGED = 40  # queries with more judged documents are left out: they alone would make the corpus large
CORPUS_SIZE = 1000  # documents judged for other queries fill the corpus up to this size


def write_airbench_example(out: str | Path, entries: Sequence[AirBenchDataset], seed: int = 0) -> Path:
    """Write the example datasets among ``entries`` (those :data:`EXAMPLE_DATASETS` names) under ``out``."""
    entries = [entry for entry in entries if entry.task_name in EXAMPLE_DATASETS]
    root = make_folder(out)
    names = {EXAMPLE_DATASETS[entry.task_name] for entry in entries}
    with tempfile.TemporaryDirectory() as scratch:
        shipped = write_sample_data(scratch, only=[f for f in sample_files() if f.split("/")[1] in names])
        for entry in entries:
            _write_entry(root, entry, shipped / "cocktail" / EXAMPLE_DATASETS[entry.task_name], random.Random(seed))
    return root


def _write_entry(root: Path, entry: AirBenchDataset, source: Path, rng: random.Random) -> None:
    corpus = read_beir_corpus(source, CORPUS_FILE)
    splits = {split: read_beir_split(source, split, corpus, corpus_file=CORPUS_FILE)
              for split in ("dev", "test") if (source / "qrels" / f"{split}.tsv").is_file()}
    taken: set[str] = set()
    chosen: dict[str, Qrels] = {}
    for split in entry.splits:  # a split the source lacks (NQ-UTD's dev) takes test queries no other split took
        data = splits.get(split, splits["test"])
        candidates = sorted(q for q, docs in data.qrels.items() if q not in taken and len(docs) <= MAX_JUDGED)
        picked = rng.sample(candidates, min(QUERIES_PER_SPLIT, len(candidates)))
        taken.update(picked)
        chosen[split] = {q: data.qrels[q] for q in sorted(picked)}
        queries = ({"id": q, "text": data.queries[q]} for q in chosen[split])
        write_jsonl(mirror_file(root, entry, entry.queries_location(split)), queries)
        write_jsonl(mirror_file(root, entry, entry.qrels_location(split)),
                    ({"qid": q, "docid": d, "relevance": r} for q, docs in chosen[split].items() for d, r in docs.items()))
    judged = {d for qrels in chosen.values() for docs in qrels.values() for d in docs}
    others = sorted({d for data in splits.values() for docs in data.qrels.values() for d in docs} - judged)
    kept = judged | set(rng.sample(others, max(0, min(len(others), CORPUS_SIZE - len(judged)))))
    write_jsonl(mirror_file(root, entry, entry.corpus_location()),
                ({"id": d, "text": _text(corpus[d])} for d in sorted(kept)))


def _text(document: Document) -> str:
    """AIR-Bench's corpus has text only: a title, where there is one, opens it."""
    return f"{document.title}\n{document.text}" if document.title else document.text
