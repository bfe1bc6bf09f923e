"""AIR-Bench data from the hub (pinned revision, version as config) or from a local mirror.

The mirror holds the hub layout as files: ``<root>/<repo id>/<version>/<split name>.jsonl``,
e.g. ``<root>/AIR-Bench/qa_law_en/AIR-Bench_24.05/corpus_default.jsonl`` and
``<root>/AIR-Bench/qrels-qa_law_en-dev/AIR-Bench_24.05/qrels_default_dev.jsonl``.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from airbench_mteb.catalog import AirBenchEntry
from airbench_mteb.data.errors import DatasetError
from airbench_mteb.data.files import write_jsonl
from airbench_mteb.data.retrieval_data import (
    Document,
    Qrels,
    RetrievalData,
    read_corpus_jsonl,
    read_qrels_jsonl,
    read_queries_jsonl,
)

QRELS_KEYS = ("qid", "docid", "relevance")
logger = logging.getLogger(__name__)


def mirror_file(root: Path, entry: AirBenchEntry, location: tuple[str, str]) -> Path:
    repo, split_name = location
    return root / repo / entry.version / f"{split_name}.jsonl"


def _hub_token(entry: AirBenchEntry, split: str | None) -> str | None:
    """HF_TOKEN for gated splits; a DatasetError that says what to do when it is missing."""
    if split is None or not entry.is_gated(split):
        return None
    token = os.environ.get("HF_TOKEN")
    if not token:
        repo = entry.qrels_location(split)[0]
        raise DatasetError(f"{split} qrels of {entry.task_name} are gated on the hub ({repo}): set HF_TOKEN "
                           f"to an account with access, evaluate --eval-splits dev, or use a local mirror "
                           f"(AIRBENCH_MTEB_DATA_DIR)", item_id=entry.task_name)
    return token


def _hub_rows(entry: AirBenchEntry, location: tuple[str, str], split: str | None = None) -> Iterator[dict[str, Any]]:
    import datasets

    repo, split_name = location
    token = _hub_token(entry, split)
    try:
        rows = datasets.load_dataset(repo, entry.version, split=split_name, revision=entry.revision, token=token)
    except Exception as error:
        raise DatasetError(f"could not load {repo} [{entry.version}] split {split_name} from the hub: {error}",
                           item_id=entry.task_name) from error
    yield from rows


def _corpus_from_rows(rows: Iterator[dict[str, Any]], origin: str) -> dict[str, Document]:
    corpus: dict[str, Document] = {}
    for number, row in enumerate(rows, start=1):
        doc_id, text = str(row["id"]), row["text"]
        if doc_id in corpus:
            raise DatasetError("duplicate document id", path=origin, line=number, item_id=doc_id)
        if not text or not text.strip():
            raise DatasetError("empty document text", path=origin, line=number, item_id=doc_id)
        corpus[doc_id] = Document(text=text)
    return corpus


def load_corpus(entry: AirBenchEntry, data_dir: Path | None) -> dict[str, Document]:
    location = entry.corpus_location()
    if data_dir is not None:
        return read_corpus_jsonl(mirror_file(data_dir, entry, location), keep_titles=False)
    return _corpus_from_rows(_hub_rows(entry, location), "/".join(location))


def load_queries_and_qrels(entry: AirBenchEntry, split: str, data_dir: Path | None) -> tuple[dict[str, str], Qrels, dict[str, str]]:
    queries_at, qrels_at = entry.queries_location(split), entry.qrels_location(split)
    if data_dir is not None:
        queries_file = mirror_file(data_dir, entry, queries_at)
        qrels_file = mirror_file(data_dir, entry, qrels_at)
        if not qrels_file.is_file() and entry.is_gated(split):
            raise DatasetError(f"{split} qrels of {entry.task_name} are missing from the mirror; they are gated on the "
                               f"hub: fill the mirror with HF_TOKEN set, or evaluate --eval-splits dev",
                               path=qrels_file)
        origin = {"queries": str(queries_file), "qrels": str(qrels_file)}
        return read_queries_jsonl(queries_file), read_qrels_jsonl(qrels_file, QRELS_KEYS), origin
    _hub_token(entry, split)  # fail on gating before downloading anything
    queries = {}
    for number, row in enumerate(_hub_rows(entry, queries_at), start=1):
        qid = str(row["id"])
        if qid in queries:
            raise DatasetError("duplicate query id", path="/".join(queries_at), line=number, item_id=qid)
        queries[qid] = row["text"]
    qrels: Qrels = {}
    for row in _hub_rows(entry, qrels_at, split):
        qrels.setdefault(str(row["qid"]), {})[str(row["docid"])] = int(row["relevance"])
    return queries, qrels, {"queries": "/".join(queries_at), "qrels": "/".join(qrels_at)}


def load_split(entry: AirBenchEntry, split: str, data_dir: Path | None,
               corpus: dict[str, Document] | None = None) -> RetrievalData:
    """One validated split; pass ``corpus`` to reuse a corpus already loaded for another split."""
    if corpus is None:
        corpus = load_corpus(entry, data_dir)
    queries, qrels, origin = load_queries_and_qrels(entry, split, data_dir)
    corpus_at = mirror_file(data_dir, entry, entry.corpus_location()) if data_dir else "/".join(entry.corpus_location())
    return RetrievalData(corpus=corpus, queries=queries, qrels=qrels, origin={**origin, "corpus": str(corpus_at)}).validate()


def fill_mirror(entries: list[AirBenchEntry], root: Path, splits: tuple[str, ...] | None = None) -> list[Path]:
    """Download entries from the hub into the mirror layout; files already there are kept (resumable)."""
    written = []
    for entry in tqdm(entries, desc="AIR-Bench datasets", unit="dataset"):
        wanted = [s for s in entry.splits if splits is None or s in splits]
        parts = [(entry.corpus_location(), None)]
        parts += [(entry.queries_location(s), None) for s in wanted]
        readable = [s for s in wanted if not entry.is_gated(s) or os.environ.get("HF_TOKEN")]
        if len(readable) < len(wanted):
            logger.warning("%s: %s qrels skipped, they are gated on the hub (set HF_TOKEN)", entry.task_name,
                           "/".join(s for s in wanted if s not in readable))
        parts += [(entry.qrels_location(s), s) for s in readable]
        for location, split in parts:
            target = mirror_file(root, entry, location)
            if target.is_file():
                continue
            write_jsonl(target, _hub_rows(entry, location, split))
            written.append(target)
    return written
