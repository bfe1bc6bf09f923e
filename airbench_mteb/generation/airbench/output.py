"""The generated dataset on disk: AIR-Bench local-mirror layout, BEIR layout, catalog entry, card.

``<out>`` is itself a mirror root (``AIRBENCH_MTEB_DATA_DIR``): the files sit where
``airbench_mteb.data.airbench_source`` reads a hub dataset, under the version name ``custom``.

``<out>/pre_qc/`` is the same kind of folder for the candidates before quality control (each query with its
original positive and its own hard negatives, the corpus with every generated hard negative), dataset
``<dataset>-pre-qc``: ``register-dataset <out>/pre_qc`` makes it a task beside the kept set's, to compare
scores with and without quality control (AIR-Bench section 4.1's ablation).
"""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

from airbench_mteb.catalog import AirBenchEntry
from airbench_mteb.catalog.user import AIRBENCH_ENTRY_FILE
from airbench_mteb.data.airbench_source import mirror_file
from airbench_mteb.data.beir_folder import write_beir_folder
from airbench_mteb.data.dataset_card import write_dataset_card
from airbench_mteb.data.files import atomic_write, write_jsonl
from airbench_mteb.data.languages import eval_language
from airbench_mteb.data.retrieval_data import Document, RetrievalData
from airbench_mteb.generation.airbench.corpus import text_length
from airbench_mteb.generation.airbench.qc import LabelledQueries
from airbench_mteb.generation.airbench.records import Candidate

MTEB_DOMAINS = {"arxiv": "Academic", "science": "Academic", "book": "Non-fiction", "finance": "Financial",
                "healthcare": "Medical", "law": "Legal", "news": "News", "web": "Web", "msmarco": "Web",
                "wiki": "Encyclopaedic"}
DEV_SHARE = 0.2  # Appendix A.4: dev:test = 1:4 for QA
PRE_QC_FOLDER = "pre_qc"


def split_queries(qids: list[str], task_type: str, seed: int, long_doc_split: str = "test") -> dict[str, list[str]]:
    """QA: a seeded 1:4 dev/test split. Long-Doc: one split for the whole dataset (the seed picks one
    Long-Doc dataset per domain as dev)."""
    if task_type == "long-doc":
        return {long_doc_split: sorted(qids)}
    order = sorted(qids)
    random.Random(f"split:{seed}").shuffle(order)
    dev_count = round(len(order) * DEV_SHARE)
    splits = {"dev": sorted(order[:dev_count]), "test": sorted(order[dev_count:])}
    return {split: qids for split, qids in splits.items() if qids}  # a split without queries is no split


def pre_qc_dataset(dataset: str) -> str:
    """The pre-QC set's dataset name: its task is the kept set's task with ``_<dataset>-pre-qc``."""
    return f"{dataset}-pre-qc"


def pre_qc_splits(splits: dict[str, list[str]], qids: list[str], task_type: str, seed: int,
                  long_doc_split: str = "test") -> dict[str, list[str]]:
    """The pre-QC splits: a kept query stays in its split and the dropped ones are split as the kept ones were,
    so each pre-QC split holds the kept split of that name."""
    kept = {q for members in splits.values() for q in members}
    dropped = split_queries([q for q in qids if q not in kept], task_type, seed, long_doc_split)
    return {split: sorted([*splits.get(split, []), *dropped.get(split, [])]) for split in sorted({*splits, *dropped})}


def catalog_entry(*, task_type: str, domain: str, language: str, dataset: str, version: str, source_name: str,
                  source_url: str, source_license: str, release_date: str,
                  result: LabelledQueries, splits: dict[str, list[str]]) -> dict[str, Any]:
    """An entry in the format of ``catalog/airbench.json``."""
    labels, sizes = {}, {}
    for split, qids in splits.items():
        rels = [r for q in qids for r in result.qrels[q].values()]
        labels[split] = {"total_num": len(rels), "pos_num": sum(r > 0 for r in rels),
                         "hard_neg_num": sum(r == 0 for r in rels)}
        sizes[split] = len(qids)

    def mean_tokens(texts: list[str]) -> int:
        return round(sum(text_length(t, language) for t in texts) / len(texts)) if texts else 0

    avg_tokens: dict[str, int] = {"corpus": mean_tokens(list(result.corpus.values()))}
    avg_tokens.update({s: mean_tokens([result.queries[q] for q in qids]) for s, qids in splits.items()})
    return {"version": version, "task_type": task_type, "domain": domain, "language": language, "dataset": dataset,
            "eval_lang": eval_language(language),
            "mteb_domains": [MTEB_DOMAINS.get(domain, "Written"), "Written"] if domain in MTEB_DOMAINS else ["Written"],
            "source_name": source_name, "source_url": source_url, "source_license": source_license,
            "release_date": release_date, "revision": "local", "splits": sorted(splits),
            "size": {"corpus": len(result.corpus), "queries": sizes}, "labels": labels, "avg_tokens": avg_tokens}


def write_dataset(out: Path, entry_data: dict[str, Any], result: LabelledQueries, splits: dict[str, list[str]],
                  *, beir: bool = True) -> dict[str, Path]:
    """Write the mirror-layout files, the catalog entry and (with ``beir``) the BEIR folder; return where each
    part went."""
    entry = AirBenchEntry(**{**entry_data, "mteb_domains": tuple(entry_data["mteb_domains"]),
                             "splits": tuple(entry_data["splits"])})
    written = {"corpus": mirror_file(out, entry, entry.corpus_location())}
    write_jsonl(written["corpus"], ({"id": i, "text": t} for i, t in result.corpus.items()))
    beir_splits = {}
    for split, qids in splits.items():
        written[f"queries_{split}"] = mirror_file(out, entry, entry.queries_location(split))
        write_jsonl(written[f"queries_{split}"], ({"id": q, "text": result.queries[q]} for q in qids))
        written[f"qrels_{split}"] = mirror_file(out, entry, entry.qrels_location(split))
        write_jsonl(written[f"qrels_{split}"], ({"qid": q, "docid": d, "relevance": r}
                                                for q in qids for d, r in result.qrels[q].items()))
        beir_splits[split] = RetrievalData(corpus={i: Document(t) for i, t in result.corpus.items()},
                                           queries={q: result.queries[q] for q in qids},
                                           qrels={q: result.qrels[q] for q in qids})
    if beir and beir_splits:
        written["beir"] = write_beir_folder(beir_splits, out / "beir")
    written["entry"] = out / AIRBENCH_ENTRY_FILE
    with atomic_write(written["entry"]) as handle:
        json.dump(entry_data, handle, indent=1, ensure_ascii=False)
    return written


def distributions(candidates: list[Candidate], kept: set[str]) -> dict[str, dict[str, int]]:
    """Query type, length, information and rewrite style counts of the kept queries (like Tables 3/10)."""
    counts: dict[str, Counter[str]] = {"query_type": Counter(), "length": Counter(), "information": Counter(),
                                       "final_style": Counter(), "rewrite_styles": Counter()}
    for record in candidates:
        if record.qid not in kept:
            continue
        a = record.attributes
        counts["query_type"][a.query_type] += 1
        counts["length"][a.length] += 1
        counts["information"][a.information] += 1
        counts["rewrite_styles"].update(a.rewrite_styles)
        if a.rewrite_styles:
            counts["final_style"][a.rewrite_styles[-1]] += 1
    return {k: dict(sorted(v.items())) for k, v in counts.items()}


def write_card(path: Path, card: dict[str, Any], entry: dict[str, Any]) -> None:
    """README.md: hub front matter, with ``card`` (how the dataset was made) as its provenance."""
    counts = card["qc_counts"]
    title = f"{entry['task_type']}_{entry['domain']}_{entry['language']}"
    body = [
        f"# {title} ({entry['dataset']}, {entry['version']})",
        "",
        (f"Generated with `airbench-mteb generate airbench` from {entry['source_name']} by "
         f"{card['llm']['backend']}:{card['llm']['model']}, following the AIR-Bench pipeline "
         "(characters, scenarios, query, rewrites, hard negatives; LLM-judged quality control)."),
        "",
        "| | queries | corpus | positives | hard negatives |",
        "|---|---|---|---|---|",
        *(f"| {stage} QC | {c['queries']} | {c['corpus']} | {c['positives']} | {c['hard_negatives']} |"
          for stage, c in (("before", counts["before"]), ("after", counts["after"]))),
        "",
        "Files: `AIR-Bench/...` (AIR-Bench hub layout; use this folder as `--data-dir`), `beir/` (BEIR layout),",
        "`candidates.jsonl` (every generated item, with its attributes or the reason it was dropped),",
        "`qc_decisions.jsonl` (one line per quality-control decision), `catalog_entry.json`.",
        "",
        (f"`{PRE_QC_FOLDER}/` holds the candidates before quality control ({counts['before']['queries']} queries, each "
         "with its original positive and its own hard negatives; a kept query keeps its split), laid out like this "
         f"folder as dataset `{pre_qc_dataset(entry['dataset'])}`: `airbench-mteb register-dataset OUT/{PRE_QC_FOLDER}` "
         "makes it a task, to compare scores with and without quality control."),
        "",
    ]
    rows = entry["size"]["corpus"] + sum(entry["size"]["queries"].values())
    write_dataset_card(path, pretty_name=f"AIR-Bench {title}", license=entry["source_license"],
                       languages=[entry["language"]], task_categories=["text-retrieval"],
                       task_ids=["document-retrieval"], size=rows, source_datasets=["extended"],
                       tags=["air-bench", "mteb", "synthetic"], body="\n".join(body), provenance=card)
