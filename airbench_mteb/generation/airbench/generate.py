"""The AIR-Bench generation pipeline end to end: corpus -> candidates -> quality control -> dataset.

Resumable: every finished candidate is a journal record and every LLM answer is in the response
cache, both durable before the next step; a restarted run skips finished items, replays
unfinished ones from the cache, and produces the same files as an uninterrupted run.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from dataclasses import asdict
from datetime import date
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from airbench_mteb.data.files import atomic_write, write_jsonl
from airbench_mteb.generation.airbench import prompts
from airbench_mteb.generation.airbench.attributes import AttributeSampler
from airbench_mteb.generation.airbench.candidates import CandidateGenerator
from airbench_mteb.generation.airbench.config import AirBenchConfig
from airbench_mteb.generation.airbench.corpus import (
    PreparedCorpus,
    prepare_qa_corpus,
    read_corpus_file,
    read_long_document,
    split_long_document,
)
from airbench_mteb.generation.airbench.output import (
    PRE_QC_FOLDER,
    catalog_entry,
    distributions,
    pre_qc_dataset,
    pre_qc_splits,
    split_queries,
    write_card,
    write_dataset,
)
from airbench_mteb.generation.airbench.qc import (
    LabelledQueries,
    LLMJudge,
    QCInput,
    QCResult,
    QualityControl,
)
from airbench_mteb.generation.airbench.records import Candidate
from airbench_mteb.generation.errors import GenerationError
from airbench_mteb.generation.llm.client import LLMClient
from airbench_mteb.generation.shared_models import DEFAULT_PLACEMENT, ModelPlacement, make_encoder, make_reranker
from airbench_mteb.generation.store import open_journal
from airbench_mteb.generation.summary import GenerationSummary, LLMUse, published_files


def prepare_corpus(config: AirBenchConfig) -> PreparedCorpus:
    """The documents queries are made for; a command calls it before loading an LLM, so an unreadable
    corpus or too few documents for ``num_queries`` cost nothing (the config checked the language)."""
    source = config.source_name or Path(config.corpus).name
    if config.task_type == "long-doc":
        text = read_long_document(config.corpus)
        corpus = PreparedCorpus(documents=split_long_document(text, chunk_size=config.chunk_size,
                                                              chunk_overlap=config.chunk_overlap), source=source)
    else:
        corpus = prepare_qa_corpus(read_corpus_file(config.corpus), language=config.language,
                                   min_length=config.min_length, max_length=config.max_length, source=source)
    _check_enough_documents(config, corpus)
    return corpus


def _check_enough_documents(config: AirBenchConfig, corpus: PreparedCorpus) -> None:
    if config.num_queries > len(corpus.documents):
        raise GenerationError(f"--num-queries {config.num_queries} exceeds the {len(corpus.documents)} documents "
                              f"left after corpus preparation of {config.corpus}")


def plan_items(config: AirBenchConfig, corpus: PreparedCorpus) -> list[dict[str, Any]]:
    """The seeded choice of positive documents: rows ``{index, positive_id, text}``, one per query to make.
    Rows are independent, so they can be cut into JSONL shards and processed anywhere."""
    _check_enough_documents(config, corpus)
    ids = sorted(corpus.documents)
    positives = random.Random(f"positives:{config.seed}").sample(ids, config.num_queries)
    return [{"index": i, "positive_id": d, "text": corpus.documents[d]} for i, d in enumerate(positives)]


async def generate_candidates(rows: list[dict[str, Any]], config: AirBenchConfig,
                              client: LLMClient) -> list[Candidate]:
    """Candidate records for a shard of ``plan_items`` rows (same result as inside a full run)."""
    generator = CandidateGenerator(client, config.candidates, config.seed)
    sampler = AttributeSampler(config.task_type, config.seed, config.rewrites)
    records = await asyncio.gather(*(generator.generate(r["index"], r["positive_id"], r["text"],
                                                        sampler.sample(r["index"])) for r in rows))
    return list(records)


class AirBenchPipeline:
    def __init__(self, config: AirBenchConfig, client: LLMClient | None, out: str | Path,
                 placement: ModelPlacement = DEFAULT_PLACEMENT, *, show_progress: bool = False) -> None:
        self.config = config
        self.client = client
        self.out = Path(out)
        self.placement = placement  # where the QC models run: not part of the fingerprint, a resume may move
        self.show_progress = show_progress
        self.stage_seconds: dict[str, float] = {}
        self.journal = open_journal(self.out)
        run = self.journal.get("run", "config")
        if run is None:
            self.journal.put("run", "config", fingerprint=config.fingerprint(), config=asdict(config))
        elif run["fingerprint"] != config.fingerprint():
            raise GenerationError(f"{self.journal.path} belongs to a run with other settings; use another --out "
                                  f"or the same settings to resume it")
        if client is not None:  # a pipeline opened without an LLM (journal and QC checks only) pins none
            self.journal.pin("llm", "identity", dict(client.backend.identity),
                             "this run was made by another LLM; use another --out, or the same LLM to resume it")

    async def _candidates(self, corpus: PreparedCorpus) -> list[Candidate]:
        rows = plan_items(self.config, corpus)
        generator = CandidateGenerator(self.client, self.config.candidates, self.config.seed)
        sampler = AttributeSampler(self.config.task_type, self.config.seed, self.config.rewrites)
        done = {int(r["key"]): Candidate.from_json(r["record"]) for r in self.journal.records("candidate")}
        account = self.client.account
        with tqdm(total=len(rows), initial=len(done), desc="candidates", unit="item",
                  disable=not self.show_progress) as bar:
            async def one(row: dict[str, Any]) -> None:
                index = row["index"]
                record = await generator.generate(index, row["positive_id"], row["text"], sampler.sample(index))
                self.journal.put("candidate", str(index), record=record.as_json())
                done[index] = record
                bar.set_postfix(tokens=account.tokens_in + account.tokens_out, cached=account.cache_hits)
                bar.update()
            await asyncio.gather(*(one(row) for row in rows if row["index"] not in done))
        return [done[row["index"]] for row in rows]

    def _qc_input(self, corpus: PreparedCorpus, candidates: list[Candidate]) -> QCInput:
        data = QCInput(queries={}, positives={}, hard_negatives={}, corpus=dict(corpus.documents),
                       language=self.config.language)
        for record in candidates:
            if not record.ok:
                continue
            qid, negative_ids = record.qid, record.negative_ids
            data.queries[qid] = record.query
            data.positives[qid] = record.positive_id
            data.hard_negatives[qid] = negative_ids
            for doc_id, text in zip(negative_ids, record.hard_negatives, strict=True):
                if doc_id in data.corpus:
                    raise GenerationError(f"generated document id {doc_id!r} collides with a corpus id")
                data.corpus[doc_id] = text
        return data

    def _lap(self, stage: str, started: float) -> float:
        now = time.perf_counter()
        self.stage_seconds[stage] = round(now - started, 3)
        return now

    async def finish(self, corpus: PreparedCorpus, candidates: list[Candidate]) -> GenerationSummary:
        """Quality control and output, from candidate records (made here or by ``generate_candidates``
        over shards elsewhere)."""
        c = self.config
        started = time.perf_counter()
        data = self._qc_input(corpus, candidates)
        recall = make_encoder(c.recall_encoder or ("minilm" if c.language == "en" else "e5"), self.placement)
        rerankers = [make_reranker(spec, self.client, self.placement) for spec in c.rerankers]
        judge = LLMJudge(self.client, seed=c.seed, document_chars=c.candidates.document_chars)
        started = self._lap("load_qc_models", started)
        result = await QualityControl(judge, recall, rerankers, c.qc, show_progress=self.show_progress).run(data)
        started = self._lap("quality_control", started)
        entry, pre_qc = self._write(corpus, candidates, result, data.labelled(), recall.name,
                                    [r.name for r in rerankers], judge.name)
        self._lap("write", started)
        with atomic_write(self.out / "run_account.json") as handle:
            json.dump({**self.client.account.as_dict(), "stage_seconds": self.stage_seconds}, handle, indent=1)
        return self._summary(entry, pre_qc, candidates, result)

    def _summary(self, entry: dict[str, Any], pre_qc: dict[str, Any], candidates: list[Candidate],
                 result: QCResult) -> GenerationSummary:
        outcomes = {"made": sum(r.ok for r in candidates), "dropped": sum(not r.ok for r in candidates)}
        return GenerationSummary(family="AIR-Bench", root=self.out, files=published_files(self.out),
                                 counts={"queries": dict(entry["size"]["queries"]),
                                         "pre_qc_queries": dict(pre_qc["size"]["queries"]),
                                         "corpus": {"documents": entry["size"]["corpus"]},
                                         "candidates": outcomes,
                                         "quality_control_dropped": dict(result.counts["dropped_by"])},
                                 llm=LLMUse.of([self.client.account]))

    async def run(self, corpus: PreparedCorpus | None = None) -> GenerationSummary:
        """Run every stage (the corpus is prepared here unless given: see :func:`prepare_corpus`);
        ``run_account.json`` gets this process's LLM account and stage times (a resumed run shows what the
        resume itself cost)."""
        started = time.perf_counter()
        if corpus is None:
            corpus = prepare_corpus(self.config)
            started = self._lap("prepare_corpus", started)
        candidates = await self._candidates(corpus)
        self._lap("candidates", started)
        return await self.finish(corpus, candidates)

    def _write(self, corpus: PreparedCorpus, candidates: list[Candidate], result: QCResult, before: LabelledQueries,
               recall: str, rerankers: list[str], judge: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """Write the dataset, the candidates ``before`` quality control (``pre_qc/``), the logs and card; returns
        the two catalog entries written."""
        c = self.config
        release_date = c.release_date or date.today().isoformat()
        splits = split_queries(list(result.queries), c.task_type, c.seed, c.long_doc_split)
        entry = catalog_entry(task_type=c.task_type, domain=c.domain, language=c.language, dataset=c.dataset,
                              version=c.version, source_name=corpus.source, source_url=c.source_url,
                              source_license=c.source_license, release_date=release_date, result=result, splits=splits)
        before_splits = pre_qc_splits(splits, list(before.queries), c.task_type, c.seed, c.long_doc_split)
        pre_qc = catalog_entry(task_type=c.task_type, domain=c.domain, language=c.language,
                               dataset=pre_qc_dataset(c.dataset), version=c.version, source_name=corpus.source,
                               source_url=c.source_url, source_license=c.source_license, release_date=release_date,
                               result=before, splits=before_splits)
        write_jsonl(self.out / "candidates.jsonl", (r.output_row() for r in candidates))
        write_jsonl(self.out / "qc_decisions.jsonl", result.decisions)
        if not result.queries:  # no split to register or evaluate: say why instead of writing an unusable dataset
            raise GenerationError(
                f"quality control kept none of the {result.counts['before']['queries']} queries (dropped: "
                + ", ".join(f"{cause} {n}" for cause, n in result.counts["dropped_by"].items() if n)
                + f"); the reasons are in {self.out / 'qc_decisions.jsonl'}: loosen the query filters "
                "(QCSettings) or the judge's positive levels")
        write_dataset(self.out, entry, result, splits)
        write_dataset(self.out / PRE_QC_FOLDER, pre_qc, before, before_splits, beir=False)
        dropped: dict[str, int] = {}
        for record in candidates:
            if not record.ok:
                dropped[record.stage] = dropped.get(record.stage, 0) + 1
        card = {
            "task_type": c.task_type, "domain": c.domain, "language": c.language, "dataset": c.dataset,
            "version": c.version,
            "corpus": {"source": corpus.source, "url": c.source_url, "license": c.source_license,
                       "preparation": corpus.stats(),
                       "settings": ({"chunk_size": c.chunk_size, "chunk_overlap": c.chunk_overlap}
                                    if c.task_type == "long-doc" else
                                    {"min_length": c.min_length, "max_length": c.max_length})},
            "llm": {"backend": self.client.backend.kind, "model": self.client.backend.model,
                    "temperature": c.candidates.temperature, "judge": judge},
            "prompts_sha256": prompts.template_hashes(),
            "seed": c.seed, "config_fingerprint": c.fingerprint(), "num_queries_requested": c.num_queries,
            "candidates_dropped_by_stage": dropped,
            "quality_control": {"recall_encoder": recall, "recall_depth": c.qc.recall_depth, "rerankers": rerankers,
                                "thresholds": {"generated_hard_negative": c.qc.hard_negative_threshold,
                                               "other": c.qc.other_threshold},
                                "judge_positive_levels": list(c.qc.positive_levels),
                                "query_filters": {"copied_run": c.qc.copied_run, "copied_overlap": c.qc.copied_overlap,
                                                  "language_share": c.qc.language_share,
                                                  "easy_percentile": c.qc.easy_percentile}},
            "qc_counts": result.counts,
            "splits": {s: len(q) for s, q in splits.items()},
            "pre_qc": {"folder": PRE_QC_FOLDER, "dataset": pre_qc["dataset"],
                       "splits": {s: len(q) for s, q in before_splits.items()}},
            "distributions": distributions(candidates, set(result.queries)),
        }
        write_card(self.out / "README.md", card, entry)
        return entry, pre_qc

    def close(self) -> None:
        self.journal.close()


async def generate(config: AirBenchConfig, out: str | Path, client: LLMClient, *,
                   placement: ModelPlacement = DEFAULT_PLACEMENT, corpus: PreparedCorpus | None = None,
                   show_progress: bool = False) -> GenerationSummary:
    """Generate the dataset into ``out`` (resuming a run there) from ``corpus`` (by default prepared from
    ``config.corpus``); progress bars only with ``show_progress``."""
    pipeline = AirBenchPipeline(config, client, out, placement, show_progress=show_progress)
    try:
        return await pipeline.run(corpus)
    finally:
        pipeline.close()
