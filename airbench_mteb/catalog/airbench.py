"""The AIR-Bench catalog (``catalog/airbench.json``): one entry per dataset, one MTEB task each."""

from __future__ import annotations

import re
from functools import cache
from typing import Literal

from mteb.abstasks.task_metadata import TaskDomain
from mteb.types import Licenses
from pydantic import Field, NonNegativeInt, model_validator

from airbench_mteb.catalog.entries import CatalogEntry, LanguageScript, packaged_catalog
from airbench_mteb.data.folder_names import NAME_RULE, check_task_name

HUB_ORG = "AIR-Bench"
Split = Literal["dev", "test"]
# Each part of a dataset's name is also a folder of the mirror (<version>/<task type>/<domain>/...).
_NAME_PART = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def task_name_of(version: str, task_type: str, domain: str, language: str, dataset: str) -> str:
    """``<version>_<task type>_<domain>_<language>[_<dataset>]``, e.g. ``AIR-Bench_24.05_qa_law_en``."""
    suffix = "" if dataset == "default" else f"_{dataset}"
    return f"{version}_{task_type}_{domain}_{language}{suffix}"


def name_parts_problem(version: str, task_type: str, domain: str, language: str, dataset: str) -> str | None:
    """Why these parts cannot name an AIR-Bench dataset, or None: each is one folder of the mirror and part of
    the task name, so each holds task-name characters (not empty, no '/'), and the task name follows its rule."""
    for field, value in (("version", version), ("domain", domain), ("language", language), ("dataset", dataset)):
        if not _NAME_PART.fullmatch(value):
            return f"{field} {value!r} is not allowed: a task name holds {NAME_RULE} (the {field} names a folder too)"
    try:
        check_task_name(task_name_of(version, task_type, domain, language, dataset))
    except ValueError as error:
        return str(error)
    return None


class SplitLabels(CatalogEntry):
    """Judgments of one split: all of them, the relevant ones and the LLM-generated hard negatives."""

    total_num: NonNegativeInt
    pos_num: NonNegativeInt
    hard_neg_num: NonNegativeInt


class Sizes(CatalogEntry):
    corpus: NonNegativeInt
    queries: dict[Split, NonNegativeInt]


class AirBenchEntry(CatalogEntry):
    """One AIR-Bench dataset (one MTEB task): a line of ``catalog/airbench.json`` or of a user catalog."""

    version: str
    task_type: Literal["qa", "long-doc"]
    domain: str
    language: str
    dataset: str
    eval_lang: LanguageScript
    mteb_domains: tuple[TaskDomain, ...]
    source_name: str
    source_url: str
    source_license: str
    release_date: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$")
    revision: str
    # the licence of the generated data (every AIR-Bench release: CC BY-NC-SA 4.0; AIR-Bench paper, arXiv 2412.13102, section F)
    license: Licenses = "not specified"
    splits: tuple[Split, ...] = Field(min_length=1)
    size: Sizes
    labels: dict[Split, SplitLabels]
    avg_tokens: dict[str, NonNegativeInt]  # "corpus" and one per split
    # Set for datasets built locally (``generate airbench`` + ``register-dataset``): their mirror root.
    data_dir: str | None = None

    @model_validator(mode="after")
    def _usable_task_name(self) -> AirBenchEntry:
        problem = name_parts_problem(self.version, self.task_type, self.domain, self.language, self.dataset)
        if problem is not None:
            raise ValueError(problem)
        return self

    @property
    def task_name(self) -> str:
        """``<version>_<hub repo>[_<dataset>]``, e.g. ``AIR-Bench_24.05_qa_law_en``."""
        return task_name_of(self.version, self.task_type, self.domain, self.language, self.dataset)

    @property
    def hub_repo(self) -> str:
        return f"{self.task_type}_{self.domain}_{self.language}"

    @property
    def benchmark_names(self) -> tuple[str, str]:
        """The benchmarks of a packaged entry: its version's and its version's and task type's."""
        return self.version, f"{self.version}_{self.task_type}"

    @property
    def is_long_doc(self) -> bool:
        return self.task_type == "long-doc"

    @property
    def _split_stem(self) -> str:
        return self.dataset.replace("-", "_")

    @property
    def _versioned_splits(self) -> bool:
        # 24.04 split names carry no split suffix (it had only a test split)
        return self.version != "AIR-Bench_24.04"

    def corpus_location(self) -> tuple[str, str]:
        """(hub repo id, split name) of the corpus; the config name is always the version."""
        return f"{HUB_ORG}/{self.hub_repo}", f"corpus_{self._split_stem}"

    def queries_location(self, split: str) -> tuple[str, str]:
        suffix = f"_{split}" if self._versioned_splits else ""
        return f"{HUB_ORG}/{self.hub_repo}", f"queries_{self._split_stem}{suffix}"

    def qrels_location(self, split: str) -> tuple[str, str]:
        repo = f"{HUB_ORG}/qrels-{self.hub_repo}" + ("-dev" if split == "dev" else "")
        suffix = f"_{split}" if self._versioned_splits else ""
        return repo, f"qrels_{self._split_stem}{suffix}"

    def is_gated(self, split: str) -> bool:
        """On the hub, test qrels sit in a gated repo (HF_TOKEN); dev qrels and local datasets are open."""
        return self.data_dir is None and split != "dev"


@cache
def packaged_airbench_entries() -> tuple[AirBenchEntry, ...]:
    """``catalog/airbench.json``, every entry validated."""
    return packaged_catalog(AirBenchEntry, "airbench.json", airbench_task_name)


def official_versions() -> frozenset[str]:
    """The AIR-Bench releases (e.g. ``AIR-Bench_24.05``): their benchmarks hold the packaged datasets only."""
    return frozenset(entry.version for entry in packaged_airbench_entries())


def airbench_task_name(item: object) -> str | None:
    """The task name a raw catalog item would have, to name it in errors (None when it is too broken to tell)."""
    try:
        return AirBenchEntry.model_construct(**item).task_name  # type: ignore[arg-type]
    except (AttributeError, TypeError):
        return None
