"""The co*cktail catalog (``catalog/cocktail.json``): its 16 datasets, each a zip on the hub.

The file's top-level keys other than ``datasets`` (hub organisation, revision, licence, sources)
hold for every dataset; an entry may override them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from typing import Annotated, Any, Literal

from mteb.abstasks.task_metadata import AnnotatorType, TaskDomain, TaskSubtype
from mteb.types import Licenses
from pydantic import AfterValidator, BeforeValidator, Field, NonNegativeInt, PlainSerializer, PositiveFloat, model_validator

from airbench_mteb.catalog.entries import CatalogEntry, TaskName, packaged_catalog
from airbench_mteb.data.cocktail_source import settings_of

COCKTAIL_BENCHMARK = "Cocktail"  # the benchmark of the packaged datasets
_LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def check_sources(pairs: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    """Sources of a source-bias task: two or more, distinct labels (the settings' names) and corpus files.

    Raises:
        ValueError: naming the sources at fault.
    """
    labels = [label for label, _ in pairs]
    if len(pairs) < 2:
        raise ValueError(f"a source-bias task needs at least two sources, got {labels}")
    if len(set(labels)) != len(labels) or len({stem for _, stem in pairs}) != len(pairs):
        raise ValueError(f"source labels and corpus files must be distinct, got {list(pairs)}")
    for label, stem in pairs:
        if not _LABEL.fullmatch(label) or label in settings_of([]) or not stem:
            raise ValueError(f"invalid source {label}={stem}: labels are letters, digits, '_', '.', '-' and not a "
                             f"mixed setting's name")
    return pairs


def source_pairs(value: Any) -> Any:
    """``{label: stem}`` as JSON writes it -> ``((label, stem), ...)``, order kept (reference first)."""
    return tuple(value.items()) if isinstance(value, Mapping) else value


# (label, corpus file stem) pairs, the reference source first; JSON writes them as {label: stem}
Sources = Annotated[tuple[tuple[str, str], ...], BeforeValidator(source_pairs), AfterValidator(check_sources),
                    PlainSerializer(dict, when_used="json")]


class CocktailEntry(CatalogEntry):
    """One co*cktail dataset: an entry of ``catalog/cocktail.json``."""

    name: str  # hub repo, zip and folder name, e.g. "nfcorpus"
    task_name: TaskName
    title: str
    md5: str = Field(pattern=r"^[0-9a-f]{32}$")
    domain: str
    relevance: Literal["binary", "3-level"]
    # sizes: the co*cktail paper (arXiv 2405.16546), Table 1
    test_queries: NonNegativeInt  # queries of the paper's split
    dev_queries: NonNegativeInt | None = None  # queries of the dev split, when it is not the paper's split
    corpus_size: NonNegativeInt  # documents of one source
    relevant_per_query: PositiveFloat  # "Avg. D/Q": relevant documents per query of the paper's split
    eval_splits: tuple[str, ...] = Field(min_length=1)
    paper_split: str
    mteb_domains: tuple[TaskDomain, ...]
    task_subtypes: tuple[TaskSubtype, ...]
    annotations_creators: AnnotatorType
    date: tuple[str, str]
    adapted_from: tuple[str, ...]
    source_url: str
    source_license: str
    license: Licenses
    hub_org: str
    revision: str
    sources: Sources

    @model_validator(mode="after")
    def _every_split_has_a_size(self) -> CocktailEntry:
        sized = {self.paper_split, *(["dev"] if self.dev_queries is not None else [])}
        if set(self.eval_splits) != sized:
            raise ValueError(f"eval_splits {list(self.eval_splits)} must be the paper's split "
                             f"({self.paper_split!r}) plus 'dev' exactly when dev_queries is given")
        return self

    def split_queries(self) -> dict[str, int]:
        """Queries per evaluation split (the co*cktail paper, Table 1)."""
        sizes = {self.paper_split: self.test_queries}
        if self.dev_queries is not None:
            sizes["dev"] = self.dev_queries
        return {split: sizes[split] for split in self.eval_splits}

    @property
    def hub_repo(self) -> str:
        return f"{self.hub_org}/{self.name}"

    @property
    def zip_name(self) -> str:
        return f"{self.name}.zip"


@cache
def cocktail_entries() -> tuple[CocktailEntry, ...]:
    """``catalog/cocktail.json``, every entry validated (its top-level fields are every entry's defaults)."""
    return packaged_catalog(CocktailEntry, "cocktail.json")
