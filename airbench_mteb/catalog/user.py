"""The user's catalog (``current_settings().user_catalog``): datasets added with ``register-dataset``.

Every entry names its ``family``:

* ``airbench`` (the default, so catalogs written before there were families still read): a dataset
  made by ``generate airbench``, its ``catalog_entry.json`` plus ``data_dir``, its mirror root;
* ``cocktail``: a co*cktail-style multi-source folder (``generate cocktail``), one source-bias task;
* ``irsc``: an IRSC build (``<data_dir>/irsc/manifest.json``), the five IRSC tasks with a name suffix.

Reading never fails because of one entry: a broken one (malformed, unknown family, folder gone,
task name taken) is skipped with one warning naming the file, the entry number and the reason,
and every other task registers.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

from mteb.types import Licenses
from pydantic import Field

from airbench_mteb.catalog.airbench import AirBenchEntry, airbench_task_name, packaged_airbench_entries
from airbench_mteb.catalog.cocktail import Sources, cocktail_entries
from airbench_mteb.catalog.entries import (
    LOCAL_REVISION,
    TASK_NAME,
    CatalogEntry,
    LanguageScript,
    catalog_items,
    entry_label,
    parse_entry,
    task_name_part,
    warn_if_unpinned,
)
from airbench_mteb.catalog.irsc import irsc_catalog
from airbench_mteb.data.errors import DatasetError
from airbench_mteb.data.files import atomic_write, read_json
from airbench_mteb.data.fingerprint import files_fingerprint
from airbench_mteb.settings import current_settings

AIRBENCH_ENTRY_FILE = "catalog_entry.json"  # written by `generate airbench`
COCKTAIL_MANIFEST = "cocktail.json"  # written by `generate cocktail`
IRSC_MANIFEST = Path("irsc") / "manifest.json"  # written by `generate irsc` / `build-irsc`


class CocktailFolderEntry(CatalogEntry):
    """A co*cktail-style folder (``corpus/<source>.jsonl``, ``queries.jsonl``, ``qrels/<split>.tsv``)."""

    family: Literal["cocktail"] = "cocktail"
    task_name: str = Field(pattern=TASK_NAME)
    data_dir: str
    sources: Sources
    splits: tuple[str, ...] = Field(min_length=1)
    languages: tuple[LanguageScript, ...] = Field(default=("eng-Latn",), min_length=1)
    license: Licenses = "not specified"
    revision: str = LOCAL_REVISION

    @property
    def task_names(self) -> tuple[str, ...]:
        return (self.task_name,)


class IRSCBuildEntry(CatalogEntry):
    """An IRSC build folder; its tasks are the packaged five, named ``<packaged name>_<suffix>``."""

    family: Literal["irsc"] = "irsc"
    suffix: str = Field(pattern=TASK_NAME)
    data_dir: str  # holds irsc/manifest.json
    license: Licenses = "not specified"
    revision: str = LOCAL_REVISION

    def task_name(self, packaged_name: str) -> str:
        return f"{packaged_name}_{self.suffix}"

    @property
    def task_names(self) -> tuple[str, ...]:
        return tuple(self.task_name(task.name) for task in irsc_catalog().tasks)


UserEntry = AirBenchEntry | CocktailFolderEntry | IRSCBuildEntry
_FAMILIES: dict[str, type[UserEntry]] = {"airbench": AirBenchEntry, "cocktail": CocktailFolderEntry,
                                         "irsc": IRSCBuildEntry}


@dataclass(frozen=True)
class UserCatalog:
    """The usable entries of the user's catalog, per family."""

    airbench: tuple[AirBenchEntry, ...] = ()
    cocktail: tuple[CocktailFolderEntry, ...] = ()
    irsc: tuple[IRSCBuildEntry, ...] = ()


def task_names(entry: UserEntry) -> tuple[str, ...]:
    return (entry.task_name,) if isinstance(entry, AirBenchEntry) else entry.task_names


def packaged_task_names() -> dict[str, str]:
    """Every packaged task name -> its family's name (for messages)."""
    return {**{e.task_name: "AIR-Bench" for e in packaged_airbench_entries()},
            **{e.task_name: "co*cktail" for e in cocktail_entries()},
            **{task.name: "IRSC" for task in irsc_catalog().tasks}}


def parse_user_entry(item: Any, number: int, origin: str) -> UserEntry:
    """One user catalog item as its family's entry.

    Raises:
        DatasetError: an item that is not an object, an unknown family, or a malformed entry.
    """
    if not isinstance(item, Mapping):
        raise DatasetError(f"entry {number} is not an object but {type(item).__name__}", path=origin)
    family = item.get("family", "airbench")
    model = _FAMILIES.get(family) if isinstance(family, str) else None
    if model is None:
        raise DatasetError(f"{entry_label(item, number)} has the unknown family {family!r} (families: "
                           f"{', '.join(_FAMILIES)})", path=origin)
    if model is AirBenchEntry:  # the AIR-Bench entry is the packaged catalog's format, which has no family
        fields = {key: value for key, value in item.items() if key != "family"}
        return parse_entry(AirBenchEntry, fields, origin, entry_label(item, number, airbench_task_name(fields)))
    return parse_entry(model, item, origin, entry_label(item, number))


def check_data_present(entry: UserEntry, label: str, origin: str) -> None:
    """Raises DatasetError when the folder an entry reads is not given or gone."""
    if not entry.data_dir:  # an AIR-Bench entry without one would read the packaged task's hub data
        raise DatasetError(f"{label}: no data_dir (the folder of the registered dataset)", path=origin)
    folder = Path(entry.data_dir)
    present = (folder / IRSC_MANIFEST).is_file() if isinstance(entry, IRSCBuildEntry) else folder.is_dir()
    if not present:
        what = f"{folder / IRSC_MANIFEST} is" if isinstance(entry, IRSCBuildEntry) else f"its folder {folder} is"
        raise DatasetError(f"{label}: {what} missing", path=origin)


def user_catalog() -> UserCatalog:
    """The usable entries of the user's catalog, read again only when the file changes."""
    path = current_settings().user_catalog
    return _read_user_catalog(path, files_fingerprint([path]))


@cache
def _read_user_catalog(path: Path, fingerprint: str) -> UserCatalog:
    if not path.is_file():
        return UserCatalog()
    try:
        _, items = catalog_items(path.read_text(encoding="utf-8"), str(path))
    except (OSError, UnicodeDecodeError, DatasetError) as error:
        reason = error if isinstance(error, DatasetError) else DatasetError(str(error), path=path)
        warnings.warn(f"airbench-mteb: none of the datasets in the user catalog is registered: {reason}", stacklevel=3)
        return UserCatalog()
    taken = set(packaged_task_names())
    usable: list[UserEntry] = []
    for number, item in enumerate(items, start=1):
        try:
            entry = parse_user_entry(item, number, str(path))
            check_data_present(entry, f"entry {number} ({', '.join(task_names(entry))})", str(path))
        except DatasetError as error:
            warnings.warn(f"airbench-mteb: skipped: {error}", stacklevel=3)
            continue
        names = task_names(entry)
        clash = next((name for name in names if name in taken), None)
        if clash is not None:
            warnings.warn(f"airbench-mteb: skipped entry {number} of {path}: task name {clash!r} is already taken",
                          stacklevel=3)
            continue
        warn_if_unpinned(entry.revision, f"entry {number} of {path} ({', '.join(names)})")
        taken.update(names)
        usable.append(entry)
    return UserCatalog(airbench=tuple(e for e in usable if isinstance(e, AirBenchEntry)),
                       cocktail=tuple(e for e in usable if isinstance(e, CocktailFolderEntry)),
                       irsc=tuple(e for e in usable if isinstance(e, IRSCBuildEntry)))


def airbench_entries() -> tuple[AirBenchEntry, ...]:
    """The packaged AIR-Bench catalog, then those of the user's registered AIR-Bench datasets that can be tasks."""
    return (*packaged_airbench_entries(), *user_catalog().airbench)


# --- registering a folder -----------------------------------------------------------------------

def airbench_folder_entry(folder: Path) -> AirBenchEntry:
    """The entry of a ``generate airbench`` output: its ``catalog_entry.json``, reading ``folder``."""
    entry_file = folder / AIRBENCH_ENTRY_FILE
    item = read_json(entry_file)
    if not isinstance(item, Mapping):
        raise DatasetError("not a catalog entry (a JSON object)", path=entry_file)
    fields = {**item, "data_dir": str(folder.resolve())}
    return parse_entry(AirBenchEntry, fields, str(entry_file), f"the entry {airbench_task_name(fields) or ''}")


def cocktail_folder_entry(folder: Path, name: str | None = None) -> CocktailFolderEntry:
    """The source-bias task of a ``generate cocktail`` output, from its manifest (reference source first).

    The task is named ``name``, else ``Cocktail_<folder name>``; its splits are those with qrels.
    """
    manifest_file = folder / COCKTAIL_MANIFEST
    manifest = read_json(manifest_file)
    try:
        labels = [manifest["reference"], *manifest["sources"]]
    except (KeyError, TypeError) as error:
        raise DatasetError(f"not a `generate cocktail` manifest (no {error})", path=manifest_file) from None
    for label in labels:
        if not (folder / "corpus" / f"{label}.jsonl").is_file():
            raise DatasetError(f"the corpus file of source {label!r} is missing", path=folder / "corpus" / f"{label}.jsonl")
    splits = sorted(split.stem for split in (folder / "qrels").glob("*.tsv"))
    if not splits:
        raise DatasetError("no qrels/<split>.tsv: nothing to evaluate", path=folder / "qrels")
    fields = {"task_name": name or "Cocktail_" + task_name_part(folder.name), "data_dir": str(folder.resolve()),
              "sources": {label: label for label in labels}, "splits": splits}
    return parse_entry(CocktailFolderEntry, fields, str(manifest_file), f"the task of {folder}")


def irsc_build_entry(folder: Path, name: str | None = None) -> IRSCBuildEntry:
    """The IRSC tasks of a build folder, named ``<IRSC task>_<name or folder name>``."""
    fields = {"suffix": name or task_name_part(folder.resolve().name), "data_dir": str(folder.resolve())}
    return parse_entry(IRSCBuildEntry, fields, str(folder / IRSC_MANIFEST), f"the tasks of {folder}")


def folder_entry(folder: Path, name: str | None = None) -> UserEntry:
    """The entry of a generated folder, by what it holds: an AIR-Bench, co*cktail-style or IRSC output.

    Raises:
        DatasetError: a folder that is none of these, a malformed description, or ``name`` for an
            AIR-Bench dataset (its name comes from its catalog entry).
    """
    if (folder / AIRBENCH_ENTRY_FILE).is_file():
        if name is not None:
            raise DatasetError("an AIR-Bench dataset is named by its catalog entry (version, task type, domain, "
                               "language, dataset): edit those instead of passing a name", path=folder / AIRBENCH_ENTRY_FILE)
        return airbench_folder_entry(folder)
    if (folder / COCKTAIL_MANIFEST).is_file():
        return cocktail_folder_entry(folder, name)
    if (folder / IRSC_MANIFEST).is_file():
        return irsc_build_entry(folder, name)
    raise DatasetError(f"not a generated dataset: no {AIRBENCH_ENTRY_FILE} (`generate airbench`), "
                       f"{COCKTAIL_MANIFEST} (`generate cocktail`) or {IRSC_MANIFEST} (`generate irsc`)", path=folder)


def _as_item(entry: UserEntry) -> dict[str, Any]:
    return {"family": "airbench", **entry.model_dump(mode="json")} if isinstance(entry, AirBenchEntry) \
        else entry.model_dump(mode="json")


def _rename_hint(entry: UserEntry) -> str:
    if isinstance(entry, AirBenchEntry):
        return f"give the dataset another version or name in its {AIRBENCH_ENTRY_FILE}"
    return "pass another --name"


def register_user_entry(entry: UserEntry, *, owner_of: Callable[[str], str | None] = lambda _: None,
                        replace: bool = False) -> Path:
    """Add ``entry`` to the user catalog and return the catalog's path.

    Registering the same folder again updates its entry. A name already registered for another
    folder is refused unless ``replace``; a name of a packaged task, or one ``owner_of`` (task name
    -> who defines that task, e.g. mteb's registry) knows, is always refused. Entries of the file
    that cannot be read are kept as they are.

    Raises:
        DatasetError: an unreadable user catalog, or a clashing task name.
    """
    path = current_settings().user_catalog
    raw = catalog_items(path.read_text(encoding="utf-8"), str(path))[1] if path.is_file() else []
    registered = [_parsed_or_none(item, number, str(path)) for number, item in enumerate(raw, start=1)]
    folder, names, rename = Path(entry.data_dir or ""), task_names(entry), _rename_hint(entry)
    packaged = packaged_task_names()
    for name in names:
        if name in packaged:
            raise DatasetError(f"{name!r} is the name of a built-in {packaged[name]} task; {rename}", path=folder)
        holder = next((e for e in registered if e is not None and name in task_names(e)), None)
        owner = owner_of(name) if holder is None else None
        if owner is not None:
            raise DatasetError(f"{name!r} is already the name of a task ({owner}); {rename}", path=folder)
        if holder is not None and Path(holder.data_dir or "") != folder and not replace:
            raise DatasetError(f"task {name!r} is already registered for {holder.data_dir} (in {path}); {rename}, "
                               "or pass --replace to point the task at this folder", path=folder)
    kept = [item for item, old in zip(raw, registered, strict=True) if not _superseded(old, entry, names)]
    with atomic_write(path) as handle:
        json.dump({"datasets": [*kept, _as_item(entry)]}, handle, indent=1, ensure_ascii=False)
    return path


def _parsed_or_none(item: Any, number: int, origin: str) -> UserEntry | None:
    try:
        return parse_user_entry(item, number, origin)
    except DatasetError:
        return None


def _superseded(old: UserEntry | None, new: UserEntry, names: Iterable[str]) -> bool:
    """The new entry replaces an old one of the same family and folder, or one holding one of its names."""
    if old is None:
        return False
    same_folder = type(old) is type(new) and Path(old.data_dir or "") == Path(new.data_dir or "")
    return same_folder or bool(set(task_names(old)) & set(names))
