"""Declarative catalogs: which datasets exist. Task classes are generated from these entries."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from airbench_mteb.data.errors import DatasetError
from airbench_mteb.data.files import atomic_write

HUB_ORG = "AIR-Bench"
USER_CATALOG_ENV = "AIRBENCH_MTEB_CATALOG"
DEFAULT_USER_CATALOG = Path("~/.config/airbench-mteb/catalog.json")


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
    # Set for datasets built locally (``generate airbench`` + ``register-dataset``): their mirror root.
    data_dir: str | None = None

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

    def is_gated(self, split: str) -> bool:
        """On the hub, test qrels sit in a gated repo (HF_TOKEN); dev qrels and local datasets are open."""
        return self.data_dir is None and split != "dev"


def user_catalog_path() -> Path:
    """Where ``register-dataset`` keeps the user's own entries (``$AIRBENCH_MTEB_CATALOG``)."""
    return Path(os.environ.get(USER_CATALOG_ENV) or DEFAULT_USER_CATALOG).expanduser()


def _read_entries(text: str, origin: str) -> list[AirBenchEntry]:
    entries = []
    for number, item in enumerate(json.loads(text)["datasets"], start=1):
        try:
            entries.append(AirBenchEntry(**dict(item, mteb_domains=tuple(item["mteb_domains"]),
                                                splits=tuple(item["splits"]))))
        except (TypeError, KeyError) as error:
            raise DatasetError(f"catalog entry {number} is malformed: {error}", path=origin) from None
    return entries


@cache
def airbench_entries() -> tuple[AirBenchEntry, ...]:
    """The packaged AIR-Bench catalog, then the user's registered datasets."""
    packaged = resources.files(__package__).joinpath("airbench.json")
    entries = _read_entries(packaged.read_text(encoding="utf-8"), str(packaged))
    user = user_catalog_path()
    if user.is_file():
        entries += _read_entries(user.read_text(encoding="utf-8"), str(user))
    names = [e.task_name for e in entries]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise DatasetError(f"duplicate datasets {duplicates} (packaged catalog and {user})")
    return tuple(entries)


def register_user_entry(entry: dict[str, Any], data_dir: Path) -> AirBenchEntry:
    """Add a generated dataset (its ``catalog_entry.json``) to the user catalog; replaces a same-named one."""
    new = _read_entries(json.dumps({"datasets": [dict(entry, data_dir=str(data_dir.resolve()))]}), "catalog_entry.json")[0]
    path = user_catalog_path()
    kept = [e for e in (_read_entries(path.read_text(encoding="utf-8"), str(path)) if path.is_file() else [])
            if e.task_name != new.task_name]
    with atomic_write(path) as handle:
        json.dump({"datasets": [asdict(e) for e in (*kept, new)]}, handle, indent=1, ensure_ascii=False)
    airbench_entries.cache_clear()
    return new
