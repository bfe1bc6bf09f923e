"""Declarative catalogs: which datasets exist. Task classes are generated from these entries."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

HUB_ORG = "AIR-Bench"


@dataclass(frozen=True)
class AirBenchEntry:
    """One AIR-Bench dataset (one MTEB task): a line of ``catalog/airbench.json``."""

    version: str
    task_type: str
    domain: str
    language: str
    dataset: str
    eval_lang: str
    mteb_domains: tuple[str, ...]
    source_name: str
    source_url: str
    source_license: str
    release_date: str
    revision: str
    splits: tuple[str, ...]
    size: dict[str, Any]
    labels: dict[str, Any]
    avg_tokens: dict[str, Any]

    @property
    def task_name(self) -> str:
        """``<version>_<hub repo>[_<dataset>]``, e.g. ``AIR-Bench_24.05_qa_law_en``."""
        suffix = "" if self.dataset == "default" else f"_{self.dataset}"
        return f"{self.version}_{self.hub_repo}{suffix}"

    @property
    def hub_repo(self) -> str:
        return f"{self.task_type}_{self.domain}_{self.language}"

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

    @staticmethod
    def is_gated(split: str) -> bool:
        """Test qrels sit in a gated hub repo (HF_TOKEN); dev qrels are public."""
        return split != "dev"


@cache
def airbench_entries() -> tuple[AirBenchEntry, ...]:
    raw = json.loads(resources.files(__package__).joinpath("airbench.json").read_text(encoding="utf-8"))
    entries = []
    for item in raw["datasets"]:
        item = dict(item, mteb_domains=tuple(item["mteb_domains"]), splits=tuple(item["splits"]))
        entries.append(AirBenchEntry(**item))
    names = [e.task_name for e in entries]
    duplicates = {n for n in names if names.count(n) > 1}
    if duplicates:
        raise ValueError(f"catalog/airbench.json: duplicate datasets {sorted(duplicates)}")
    return tuple(entries)
