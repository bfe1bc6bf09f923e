"""Declarative catalogs: which datasets exist. Task classes are generated from these entries."""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from airbench_mteb.data.errors import DatasetError
from airbench_mteb.data.files import atomic_write
from airbench_mteb.settings import current_settings

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
    return current_settings().user_catalog


def _entry(item: Any, number: int, origin: str) -> AirBenchEntry:
    try:
        return AirBenchEntry(**dict(item, mteb_domains=tuple(item["mteb_domains"]), splits=tuple(item["splits"])))
    except (TypeError, KeyError, ValueError) as error:
        raise DatasetError(f"catalog entry {number} is malformed: {error!r}", path=origin) from None


def _catalog_items(text: str, origin: str) -> list[Any]:
    try:
        items = json.loads(text)["datasets"]
    except (json.JSONDecodeError, TypeError, KeyError) as error:
        raise DatasetError(f"not a catalog ({{\"datasets\": [...]}}): {error!r}", path=origin) from None
    if not isinstance(items, list):
        raise DatasetError(f"not a catalog: \"datasets\" holds {type(items).__name__}, not a list", path=origin)
    return items


def _read_entries(text: str, origin: str) -> list[AirBenchEntry]:
    return [_entry(item, number, origin) for number, item in enumerate(_catalog_items(text, origin), start=1)]


def _usable_user_entries(path: Path, taken: set[str]) -> list[AirBenchEntry]:
    """The user's entries that can become tasks; each broken or clashing one is skipped with a warning naming it."""
    try:
        items = _catalog_items(path.read_text(encoding="utf-8"), str(path))
    except (OSError, UnicodeDecodeError, DatasetError) as error:
        reason = error if isinstance(error, DatasetError) else DatasetError(str(error), path=path)
        warnings.warn(f"airbench-mteb: none of the datasets in the user catalog is registered: {reason}", stacklevel=3)
        return []
    usable = []
    for number, item in enumerate(items, start=1):
        try:
            entry = _entry(item, number, str(path))
        except DatasetError as error:
            warnings.warn(f"airbench-mteb: skipped: {error}", stacklevel=3)
            continue
        if entry.task_name in taken:
            warnings.warn(f"airbench-mteb: skipped entry {number} of {path}: task name {entry.task_name!r} is "
                          "already taken", stacklevel=3)
            continue
        taken.add(entry.task_name)
        usable.append(entry)
    return usable


@cache
def _packaged_entries() -> tuple[AirBenchEntry, ...]:
    packaged = resources.files(__package__).joinpath("airbench.json")
    return tuple(_read_entries(packaged.read_text(encoding="utf-8"), str(packaged)))


@cache
def airbench_entries() -> tuple[AirBenchEntry, ...]:
    """The packaged AIR-Bench catalog, then those of the user's registered datasets that can be tasks."""
    entries = _packaged_entries()
    user = user_catalog_path()
    if not user.is_file():
        return entries
    return (*entries, *_usable_user_entries(user, {e.task_name for e in entries}))


def register_user_entry(entry: dict[str, Any], data_dir: Path, *, owner_of: Callable[[str], str | None] = lambda _: None,
                        replace: bool = False) -> AirBenchEntry:
    """Add a generated dataset (its ``catalog_entry.json``) to the user catalog.

    Registering the same folder again updates its entry. A name already registered for another
    folder is refused unless ``replace``; a name of a packaged task, or one ``owner_of`` (task name
    -> who defines that task, e.g. mteb's registry) knows, is always refused.

    Raises:
        DatasetError: a malformed entry, an unreadable user catalog, or a clashing task name.
    """
    folder = data_dir.resolve()
    entry_file = data_dir / "catalog_entry.json"
    new = _entry(dict(entry, data_dir=str(folder)), 1, str(entry_file))
    rename = "give the dataset another version or name in its catalog_entry.json"
    if any(e.task_name == new.task_name for e in _packaged_entries()):
        raise DatasetError(f"{new.task_name!r} is the name of a built-in AIR-Bench task; {rename}", path=entry_file)
    path = user_catalog_path()
    registered = _read_entries(path.read_text(encoding="utf-8"), str(path)) if path.is_file() else []
    same = next((e for e in registered if e.task_name == new.task_name), None)
    owner = owner_of(new.task_name) if same is None else None
    if owner is not None:
        raise DatasetError(f"{new.task_name!r} is already the name of a task ({owner}); {rename}", path=entry_file)
    if same is not None and Path(same.data_dir or "") != folder and not replace:
        raise DatasetError(f"task {new.task_name!r} is already registered for {same.data_dir} (in {path}); {rename}, "
                           "or pass --replace to point the task at this folder", path=entry_file)
    kept = [e for e in registered if e.task_name != new.task_name]
    with atomic_write(path) as handle:
        json.dump({"datasets": [asdict(e) for e in (*kept, new)]}, handle, indent=1, ensure_ascii=False)
    airbench_entries.cache_clear()
    return new
