"""The built IRSC folder on disk: corpora, queries and qrels per setting and task, manifest, card.

Layout (read by ``airbench_mteb.tasks.irsc``)::

    <out>/irsc/manifest.json                    what was built, with which seed and sizes, what was skipped
    <out>/irsc/README.md                        dataset card
    <out>/irsc/corpus/{en,zh}.jsonl             the unified corpus per language: {"id", "text"}
    <out>/irsc/<setting>/<task>/queries.jsonl   {"id", "text"[, "source_id"]}
    <out>/irsc/<setting>/<task>/qrels/test.tsv  query-id, corpus-id, score (one relevant paragraph)

The folder is written beside its place and renamed into it once complete.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from airbench_mteb.catalog.irsc import LANGUAGES, corpus_languages
from airbench_mteb.data.dataset_card import write_dataset_card
from airbench_mteb.data.files import atomic_folder, atomic_write, write_jsonl, write_tsv
from airbench_mteb.generation.irsc.config import BuildConfig
from airbench_mteb.generation.irsc.records import QueryPair

FORMAT_VERSION = 1
FOLDER = "irsc"
# the manifest's record of how the data was made, repeated in the card's front matter
PROVENANCE = ("format", "seed", "per_task", "cross_per_task", "corpus_limit", "llm")


def manifest(config: BuildConfig, sources: Mapping[str, int], corpus: Mapping[str, Mapping[str, str]],
             built: Mapping[str, Mapping[str, int]], skipped: list[dict[str, str]], llm: str | None) -> dict[str, Any]:
    return {
        "format": FORMAT_VERSION,
        "seed": config.seed,
        "per_task": config.per_task,
        "cross_per_task": config.cross_per_task,
        "corpus_limit": config.corpus_limit,
        "llm": llm,
        "sources": dict(sorted(sources.items())),
        "corpus": {lang: {"file": f"corpus/{lang}.jsonl", "documents": len(corpus[lang])}
                   for lang in LANGUAGES if corpus[lang]},
        "settings": {s: {"corpus": list(corpus_languages(s)), "tasks": dict(tasks)} for s, tasks in built.items()},
        "skipped": skipped,
    }


def write_folder(root: Path, corpus: Mapping[str, Mapping[str, str]],
                 pairs: Mapping[str, Mapping[str, list[QueryPair]]], manifest: dict[str, Any]) -> None:
    for lang in LANGUAGES:
        if corpus[lang]:
            write_jsonl(root / "corpus" / f"{lang}.jsonl",
                        ({"id": d, "text": t} for d, t in sorted(corpus[lang].items())))
    for setting, tasks in pairs.items():
        for task, task_pairs in tasks.items():
            folder = root / setting / task
            write_jsonl(folder / "queries.jsonl",
                        ({"id": p.qid, "text": p.query, **({"source_id": p.source_id} if p.source_id else {})}
                         for p in task_pairs))
            write_tsv(folder / "qrels" / "test.tsv", ["query-id", "corpus-id", "score"],
                      ((p.qid, p.doc_id, 1) for p in task_pairs))
    with atomic_write(root / "manifest.json") as handle:
        handle.write(json.dumps(manifest, ensure_ascii=False, indent=1, sort_keys=True) + "\n")
    write_card(root / "README.md", manifest)


def publish(out: Path, write: Callable[[Path], None]) -> Path:
    """``write`` the folder into a staging folder, then put it in place of ``<out>/irsc`` as a whole."""
    root = out / FOLDER
    with atomic_folder(root) as staging:
        write(staging)
    return root


def write_card(path: Path, manifest: dict[str, Any]) -> None:
    """README.md: hub front matter (the build's settings as its provenance), then what was built and skipped."""
    rows = [f"| {s} | {', '.join(info['corpus'])} | " + ", ".join(f"{t} {n}" for t, n in info["tasks"].items()) + " |"
            for s, info in manifest["settings"].items()]
    skipped = [f"- {s['setting']}/{s['task']}: {s['reason']}" for s in manifest["skipped"]] or ["- nothing"]
    sources = [f"- {name}: {count} records" for name, count in manifest["sources"].items()]
    body = "\n".join([
        "# IRSC benchmark data",
        "",
        "Five query types (query, title, part of paragraph, keyword, summary) -> paragraph, every setting "
        "searching one unified corpus per language (Lin et al., IRSC, 2024). Built with "
        f"seed {manifest['seed']}, up to {manifest['per_task']} pairs per task and language, "
        f"up to {manifest['cross_per_task']} translated queries per cross-lingual task; LLM: {manifest['llm'] or 'none'}.",
        "",
        "| setting | corpus | queries per task |",
        "|---|---|---|",
        *rows,
        "",
        "## Skipped",
        *skipped,
        "",
        "## Sources",
        *sources,
        "",
    ])
    documents = sum(corpus["documents"] for corpus in manifest["corpus"].values())
    queries = sum(count for info in manifest["settings"].values() for count in info["tasks"].values())
    write_dataset_card(path, pretty_name="IRSC (built by airbench-mteb generate irsc)", license="unknown",
                       languages=list(manifest["corpus"]), task_categories=["text-retrieval"],
                       task_ids=["document-retrieval"], size=documents + queries, source_datasets=["extended"],
                       tags=["irsc", "mteb", *(["synthetic"] if manifest["llm"] else [])], body=body,
                       provenance={key: manifest[key] for key in PROVENANCE})
