"""IRSC's schema (the IRSC paper, arXiv 2409.15763, section 3): its five query types, two languages and five settings.

What IRSC *is* lives here, so the tasks, the reports and the generator all read it from the
catalog; ``irsc.json`` holds the per-task text and the paper's source datasets on the hub.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal, get_args

from mteb.types import Licenses
from pydantic import BaseModel, ConfigDict, Field, PositiveInt

from airbench_mteb.catalog.entries import (
    CatalogEntry,
    Count,
    TaskName,
    catalog_items,
    check_unique,
    entry_label,
    parse_entry,
    warn_if_unpinned,
)
from airbench_mteb.data.files import read_json

IRSC_BENCHMARK = "IRSC"  # the benchmark of the packaged tasks
QueryType = Literal["query", "title", "part", "keyword", "summary"]
Language = Literal["en", "zh"]
Setting = Literal["en", "zh", "mixed", "c2e", "e2c"]
TASKS: tuple[str, ...] = get_args(QueryType)
LANGUAGES: tuple[str, ...] = get_args(Language)
SETTINGS: tuple[str, ...] = get_args(Setting)
# cross-lingual setting -> (language of the source queries and of the corpus, language queries are translated to)
CROSS_SETTINGS = {"c2e": ("en", "zh"), "e2c": ("zh", "en")}
# query types an LLM writes (the others come from the source or from the paragraph itself)
LLM_TASKS = ("query", "summary")
LANGUAGE_NAMES = {"en": "English", "zh": "Simplified Chinese"}


def corpus_languages(setting: str) -> tuple[str, ...]:
    """The corpus files a setting searches."""
    return _setting_languages(setting, side=0)


def query_languages(setting: str) -> tuple[str, ...]:
    """The languages a setting's queries are in (cross-lingual: the one they are translated to)."""
    return _setting_languages(setting, side=1)


def _setting_languages(setting: str, side: int) -> tuple[str, ...]:
    if setting == "mixed":
        return LANGUAGES
    if setting in CROSS_SETTINGS:
        return (CROSS_SETTINGS[setting][side],)
    return (setting,)


class IRSCTaskEntry(CatalogEntry):
    """One of the five IRSC tasks: its query type and how it is described."""

    type: QueryType
    name: TaskName
    label: str
    description: str
    paper_datasets: tuple[str, ...]


class IRSCSource(CatalogEntry):
    """A source dataset of the paper on the hub, and which of its fields are query and paragraph."""

    name: str
    hub: str
    config: str | None
    split: str
    revision: str
    lang: Language
    task: QueryType
    query_field: str | None
    paragraph_field: str
    selected_by: str | None = None  # a list column of flags choosing the paragraph (MS MARCO's is_selected)


class IRSCPaperSizes(CatalogEntry):
    """The benchmark's size as the IRSC paper gives it (it reports no corpus size)."""

    queries_per_language: PositiveInt  # query -> paragraph pairs per task and language (section 3.2)
    cross_lingual_queries: PositiveInt  # translated queries per task in C2E and E2C (section 4.2.3)

    def queries(self, setting: str) -> int:
        """Queries of a task in ``setting``: a monolingual one's, both languages' in mixed, the translated ones."""
        if setting in CROSS_SETTINGS:
            return self.cross_lingual_queries
        return self.queries_per_language * len(query_languages(setting))


class IRSCCatalog(CatalogEntry):
    """``catalog/irsc.json``: licence and revision of the built data, the paper's sizes, the five tasks, the hub
    sources."""

    license: Licenses
    revision: str
    paper_sizes: IRSCPaperSizes
    tasks: tuple[IRSCTaskEntry, ...]
    sources: tuple[IRSCSource, ...]

    def hub_sources(self) -> tuple[IRSCSource, ...]:
        """The sources to read from the hub; each one on a branch rather than a commit is warned about once."""
        for source in self.sources:
            warn_if_unpinned(source.revision, f"IRSC hub source {source.name!r} ({source.hub})")
        return self.sources


@cache
def irsc_catalog() -> IRSCCatalog:
    """``catalog/irsc.json`` (see :func:`read_irsc_catalog`)."""
    packaged = resources.files(__package__).joinpath("irsc.json")
    return read_irsc_catalog(packaged.read_text(encoding="utf-8"), str(packaged))


def read_irsc_catalog(text: str, origin: str) -> IRSCCatalog:
    """An IRSC catalog file, validated.

    Raises:
        DatasetError: naming ``origin``, the task or source entry and the field at fault.
    """
    raw, tasks = catalog_items(text, origin, key="tasks")
    _, sources = catalog_items(text, origin, key="sources")
    header = {key: value for key, value in raw.items() if key not in ("tasks", "sources")}
    catalog = parse_entry(IRSCCatalog, {
        **header,
        "tasks": tuple(parse_entry(IRSCTaskEntry, item, origin, "task " + entry_label(item, number))
                       for number, item in enumerate(tasks, start=1)),
        "sources": tuple(parse_entry(IRSCSource, item, origin, "source " + entry_label(item, number))
                         for number, item in enumerate(sources, start=1)),
    }, origin, "the catalog's header")
    check_unique([task.name for task in catalog.tasks], origin)
    return catalog


# --- the manifest of a build (``<build>/irsc/manifest.json``, written by ``generate irsc``) ----------

class _ManifestPart(BaseModel):
    """What the tasks read of a manifest, with JSON's types as they are (no "5" for 5; 5.0 is 5,
    :data:`~airbench_mteb.catalog.entries.Count`); other keys are provenance."""

    model_config = ConfigDict(frozen=True, extra="ignore", strict=True)


class BuiltSetting(_ManifestPart):
    tasks: dict[QueryType, Count] = Field(min_length=1)  # query type -> number of queries


class SkippedPart(_ManifestPart):
    setting: Setting
    task: QueryType
    reason: str


class IRSCManifest(_ManifestPart):
    settings: dict[Setting, BuiltSetting] = Field(min_length=1)
    skipped: list[SkippedPart] = Field(default_factory=list)


def read_irsc_manifest(path: Path) -> dict[str, Any]:
    """A build's manifest, checked to hold what the tasks read (built settings, their tasks and sizes, what was
    skipped and why); returned as read.

    Raises:
        DatasetError: naming the file and every field at fault.
    """
    manifest = read_json(path)
    parse_entry(IRSCManifest, manifest, str(path), "the IRSC manifest")
    return manifest
