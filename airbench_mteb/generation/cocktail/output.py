"""The files of a generated folder: one corpus per source, the kept queries and qrels, the manifest and the card."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from airbench_mteb.catalog.user import COCKTAIL_MANIFEST
from airbench_mteb.data.dataset_card import write_dataset_card
from airbench_mteb.data.files import atomic_write, write_jsonl, write_tsv
from airbench_mteb.generation.cocktail.answers import FAILED, REFUSED, REWRITTEN, UNPARSED
from airbench_mteb.generation.cocktail.config import HUMAN, CocktailConfig
from airbench_mteb.generation.cocktail.corpus import InputCorpus
from airbench_mteb.generation.cocktail.sampling import Sample
from airbench_mteb.generation.llm.client import LLMClient

RUN_ACCOUNT = "run_account.json"


def write_output(out: Path, config: CocktailConfig, data: InputCorpus, sample: Sample,
                 records: Mapping[str, Sequence[dict[str, Any]]], clients: Mapping[str, LLMClient]) -> dict[str, Any]:
    """Write the folder; ``records[source]`` holds one rewrite record per sampled document, in sample order.
    Returns the manifest."""
    ids, corpus = sample.ids, data.corpus
    write_jsonl(out / "corpus" / f"{HUMAN}.jsonl",
                ({"_id": i, "title": corpus[i].title, "text": corpus[i].text} for i in ids))
    outcomes: dict[str, Counter[str]] = {}
    flags: dict[str, Counter[str]] = {}
    for source in config.sources:
        rows, tally, flagged = [], Counter(), Counter()
        for doc_id, record in zip(ids, records[source.name], strict=True):
            tally[record["status"]] += 1
            flagged["without_marker"] += record["status"] == REWRITTEN and not record["marker"]
            flagged["truncated"] += bool(record.get("truncated"))
            metadata = {"rewrite": record["status"], **{k: record[k] for k in ("marker", "truncated", "reason")
                                                         if k in record}}
            rows.append({"_id": doc_id, "title": corpus[doc_id].title,
                         "text": record.get("text") or corpus[doc_id].text, "metadata": metadata})
        write_jsonl(out / "corpus" / f"{source.name}.jsonl", rows)
        outcomes[source.name], flags[source.name] = tally, flagged
    splits = _write_queries_and_qrels(out, data, set(ids))
    manifest = {
        "generator": "airbench-mteb generate cocktail",
        "input": str(data.folder), "reference": HUMAN,
        "sources": {s.name: {**asdict(s), "model": s.model or clients[s.name].backend.model,
                             "llm": dict(clients[s.name].backend.identity),
                             "outcomes": dict(outcomes[s.name]), "flags": dict(flags[s.name])}
                    for s in config.sources},
        "sampling": {**config.sampling(), "documents": sample.stats,
                     "judgments_on_unknown_documents": data.unknown_judgments},
        "splits": splits,
    }
    with atomic_write(out / COCKTAIL_MANIFEST) as handle:
        json.dump(manifest, handle, indent=1, ensure_ascii=False)
    write_card(out / "README.md", manifest, config.language)
    return manifest


def _write_queries_and_qrels(out: Path, data: InputCorpus, kept: set[str]) -> dict[str, dict[str, int]]:
    """The judgments on kept documents and the queries they name; returns the count of each split."""
    splits = {}
    for split, qrels in data.qrels.items():
        lines = [(qid, doc_id, grade) for qid, docs in qrels.items() for doc_id, grade in docs.items()
                 if doc_id in kept]
        if lines:
            write_tsv(out / "qrels" / f"{split}.tsv", ["query-id", "corpus-id", "score"], lines)
            splits[split] = {"queries": len({q for q, _, _ in lines}), "judgments": len(lines)}
    judged_queries = {qid for split in data.qrels.values() for qid, docs in split.items()
                      if kept.intersection(docs)}
    write_jsonl(out / "queries.jsonl",
                ({"_id": q, "text": t} for q, t in data.queries.items() if q in judged_queries))
    return splits


def write_card(path: Path, manifest: dict[str, Any], language: str) -> None:
    sources = manifest["sources"]
    docs = manifest["sampling"]["documents"]
    body = [
        f"# co*cktail-style dataset from {manifest['input']}",
        "",
        f"Made with `{manifest['generator']}`: {docs['kept']} human-written documents ({docs['input']} in the input; "
        f"{docs['too_short']} under {manifest['sampling']['min_words']} words and {docs['too_long']} over "
        f"{manifest['sampling']['max_words']} left out) and one LLM rewrite of each per source, with the "
        "co*cktail post-instruction prompt and no query information.",
        "",
        "| source | backend | model | temperature | rewritten | refused | unparsed | failed | without marker "
        "| truncated |",
        "|---|---|---|---|---|---|---|---|---|---|",
        *(f"| {name} | {s['backend']} | {s['model']} | {s['temperature']} | {s['outcomes'].get(REWRITTEN, 0)} | "
          f"{s['outcomes'].get(REFUSED, 0)} | {s['outcomes'].get(UNPARSED, 0)} | {s['outcomes'].get(FAILED, 0)} | "
          f"{s['flags']['without_marker']} | {s['flags']['truncated']} |" for name, s in sources.items()),
        "",
        "Refused, unparsed and failed rewrites keep the human text; each row's `metadata.rewrite` says which.",
        f"Evaluate: `airbench-mteb bias -m MODEL --data-dir THIS_FOLDER --sources {HUMAN} {' '.join(sources)}`.",
        "",
    ]
    documents = docs["kept"] * (1 + len(sources))
    queries = sum(split["queries"] for split in manifest["splits"].values())
    write_dataset_card(path, pretty_name=f"co*cktail-style {Path(manifest['input']).name}", license="unknown",
                       languages=[language], task_categories=["text-retrieval"], task_ids=["document-retrieval"],
                       size=documents + queries, source_datasets=["extended"],
                       tags=["cocktail", "source-bias", "mteb", "synthetic"], body="\n".join(body),
                       provenance={"generator": manifest["generator"], "sampling": manifest["sampling"],
                                   "sources": {name: {k: s[k] for k in ("backend", "model", "base_url", "temperature")}
                                               for name, s in sources.items()}})


def write_run_account(out: Path, accounts: Mapping[str, dict[str, Any]]) -> None:
    """What this invocation spent per LLM endpoint (not part of the published dataset: it differs on resume)."""
    with atomic_write(out / RUN_ACCOUNT) as handle:
        json.dump(accounts, handle, indent=1)
