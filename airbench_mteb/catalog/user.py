"""The user's catalog (``current_settings().user_catalog``): datasets added with ``register-dataset``.

Every entry names its ``family``:

* ``airbench`` (the default, so catalogs written before there were families still read): a dataset
  made by ``generate airbench``, its ``catalog_entry.json`` plus ``data_dir``, its mirror root;
* ``cocktail``: a co*cktail-style multi-source folder (``generate cocktail``), one source-bias task;
* ``irsc``: an IRSC build (``<data_dir>/irsc/manifest.json``), the five IRSC tasks with a name suffix.

Official names stay official: a user's entry may not take an official AIR-Bench version (its
benchmarks are fixed lists of the packaged datasets), the name of a packaged task or of any
benchmark mteb knows (:func:`airbench_mteb.catalog.packaged.reserved_names`); every task name follows
``data.folder_names.NAME_RULE``. The same checks
(:func:`naming_problem`) refuse an entry at registration and skip it when the catalog is read.

Reading never fails because of one entry: a broken one (malformed, unknown family, folder gone,
name not allowed or taken) is skipped with one warning naming the file, the entry number and the
reason, and every other task registers.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal, Protocol

from mteb.types import Licenses
from pydantic import Field, model_validator

from airbench_mteb.catalog.airbench import AirBenchEntry, airbench_task_name, name_parts_problem, official_versions
from airbench_mteb.catalog.cocktail import Sources
from airbench_mteb.catalog.entries import (
    LOCAL_REVISION,
    CatalogEntry,
    LanguageScript,
    TaskName,
    catalog_items,
    entry_label,
    parse_entry,
    task_name_part,
    warn_if_unpinned,
)
from airbench_mteb.catalog.irsc import irsc_catalog, read_irsc_manifest
from airbench_mteb.catalog.packaged import reserved_names
from airbench_mteb.data.airbench_source import split_files
from airbench_mteb.data.errors import DatasetError
from airbench_mteb.data.files import atomic_write, read_json, readable
from airbench_mteb.data.fingerprint import files_fingerprint
from airbench_mteb.data.folder_names import check_task_name
from airbench_mteb.settings import USER_CATALOG_ENV, current_settings, current_user_catalog

AIRBENCH_ENTRY_FILE = "catalog_entry.json"  # written by `generate airbench`
COCKTAIL_MANIFEST = "cocktail.json"  # written by `generate cocktail`
IRSC_MANIFEST = Path("irsc") / "manifest.json"  # written by `generate irsc` / `build-irsc`


class CocktailFolderEntry(CatalogEntry):
    """A co*cktail-style folder (``corpus/<source>.jsonl``, ``queries.jsonl``, ``qrels/<split>.tsv``)."""

    family: Literal["cocktail"] = "cocktail"
    task_name: TaskName
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
    suffix: TaskName
    data_dir: str  # holds irsc/manifest.json
    license: Licenses = "not specified"
    revision: str = LOCAL_REVISION

    @model_validator(mode="after")
    def _usable_task_names(self) -> IRSCBuildEntry:
        for name in self.task_names:
            check_task_name(name)
        return self

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


def naming_problem(entry: UserEntry, taken: Mapping[str, str]) -> str | None:
    """Why ``entry`` may not have its task names, or None.

    An AIR-Bench entry may not claim an official version; no name may be one of ``taken`` (a name ->
    what holds it, e.g. :func:`reserved_names`). The characters of a name are checked when an entry is
    validated (``data.folder_names.check_task_name``).
    """
    if isinstance(entry, AirBenchEntry) and entry.version in official_versions():
        return (f"version {entry.version!r} is an official AIR-Bench release, whose benchmarks hold the packaged "
                f"datasets only; give your dataset a version of its own (`generate airbench --version`, or in its "
                f"{AIRBENCH_ENTRY_FILE})")
    clash = next((name for name in task_names(entry) if name in taken), None)
    return None if clash is None else f"{clash!r} is the name of {taken[clash]}; {_rename_hint(entry)}"


def _rename_hint(entry: UserEntry) -> str:
    if isinstance(entry, AirBenchEntry):
        return (f"give the dataset another version or name (`generate airbench --version/--dataset`, or in its "
                f"{AIRBENCH_ENTRY_FILE})")
    return "pass another --name"


def airbench_naming_problem(version: str, task_type: str, domain: str, language: str, dataset: str) -> str | None:
    """Why registering a generated AIR-Bench dataset of these names would be refused, or None: the entry's
    name rule and :func:`naming_problem`, so ``generate airbench`` refuses them before any work."""
    problem = name_parts_problem(version, task_type, domain, language, dataset)
    if problem is not None:
        return problem
    entry = AirBenchEntry.model_construct(version=version, task_type=task_type, domain=domain, language=language,
                                          dataset=dataset)  # the names alone: the rest is made by the generator
    return naming_problem(entry, reserved_names())


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


def read_catalog_items(path: Path) -> list[Any]:
    """The items of the user catalog at ``path``; none when there is no file.

    Raises:
        DatasetError: naming ``path`` when it is a folder or another non-regular file, unreadable or not a catalog.
    """
    if not path.exists():
        return []
    if not path.is_file():
        kind = "a folder" if path.is_dir() else "not a regular file"
        raise DatasetError(f"is {kind}; point {USER_CATALOG_ENV} at the catalog's JSON file", path=path)
    with readable(path):
        text = path.read_text(encoding="utf-8")
    return catalog_items(text, str(path))[1]


def user_catalog() -> UserCatalog:
    """The usable entries of the user's catalog, read again only when the file changes."""
    path = current_user_catalog()  # not every setting: registration must not fail on another variable
    return _read_user_catalog(path, files_fingerprint([path]))


@cache
def _read_user_catalog(path: Path, fingerprint: str) -> UserCatalog:
    try:
        items = read_catalog_items(path)
    except DatasetError as error:
        warnings.warn(f"airbench-mteb: none of the datasets in the user catalog is registered: {error}", stacklevel=3)
        return UserCatalog()
    taken = reserved_names() if items else {}  # mteb's benchmarks cost an import (~0.5 s): only for entries
    usable: list[UserEntry] = []
    for number, item in enumerate(items, start=1):
        try:
            entry = parse_user_entry(item, number, str(path))
            check_data_present(entry, f"entry {number} ({', '.join(task_names(entry))})", str(path))
        except DatasetError as error:
            warnings.warn(f"airbench-mteb: skipped: {error}", stacklevel=3)
            continue
        problem = naming_problem(entry, taken)
        if problem is not None:
            warnings.warn(f"airbench-mteb: skipped entry {number} of {path} ({', '.join(task_names(entry))}): "
                          f"{problem}", stacklevel=3)
            continue
        warn_if_unpinned(entry.revision, f"entry {number} of {path} ({', '.join(task_names(entry))})")
        taken.update(dict.fromkeys(task_names(entry), f"entry {number} of the user catalog"))
        usable.append(entry)
    return UserCatalog(airbench=tuple(e for e in usable if isinstance(e, AirBenchEntry)),
                       cocktail=tuple(e for e in usable if isinstance(e, CocktailFolderEntry)),
                       irsc=tuple(e for e in usable if isinstance(e, IRSCBuildEntry)))


# --- registering a folder -----------------------------------------------------------------------

def _json_object(path: Path, what: str) -> Mapping[str, Any]:
    """The JSON object in ``path``; DatasetError naming it when it is unreadable, malformed or no object."""
    value = read_json(path)
    if not isinstance(value, Mapping):
        raise DatasetError(f"not {what} (a JSON object is due, got {type(value).__name__})", path=path)
    return value


def airbench_folder_entry(folder: Path) -> AirBenchEntry:
    """The entry of a ``generate airbench`` output: its ``catalog_entry.json``, reading ``folder``.

    Raises:
        DatasetError: a malformed entry, or a corpus or queries file of its splits missing in ``folder``.
    """
    entry_file = folder / AIRBENCH_ENTRY_FILE
    item = _json_object(entry_file, "a catalog entry")
    fields = {**item, "data_dir": str(folder.resolve())}
    entry = parse_entry(AirBenchEntry, fields, str(entry_file), f"the entry {airbench_task_name(fields) or ''}")
    missing = next((file for file in split_files(entry, entry.splits, folder) if not file.is_file()), None)
    if missing is not None:
        raise DatasetError(f"missing, but the splits of {AIRBENCH_ENTRY_FILE} ({', '.join(entry.splits)}) read it",
                           path=missing)
    return entry


def cocktail_source_labels(manifest_file: Path) -> list[str]:
    """The labels of a ``generate cocktail`` output's sources from its manifest, the reference source first."""
    manifest = _json_object(manifest_file, "a `generate cocktail` manifest")
    reference, sources = manifest.get("reference"), manifest.get("sources")
    if not isinstance(reference, str):
        raise DatasetError(f'"reference" must be the label of the reference source (a string such as "human"), '
                           f"got {reference!r}", path=manifest_file)
    if not isinstance(sources, Mapping) or not sources:
        raise DatasetError(f'"sources" must be an object {{label: description}} with one key per LLM source '
                           f"(its corpus is corpus/<label>.jsonl), got {json.dumps(sources)[:60]}", path=manifest_file)
    return [reference, *sources]


def cocktail_folder_entry(folder: Path, name: str | None = None) -> CocktailFolderEntry:
    """The source-bias task of a ``generate cocktail`` output, from its manifest (reference source first).

    The task is named ``name``, else ``Cocktail_<folder name>``; its splits are those with qrels.
    """
    manifest_file = folder / COCKTAIL_MANIFEST
    labels = cocktail_source_labels(manifest_file)
    needed = {folder / "corpus" / f"{label}.jsonl": f"the corpus file of source {label!r}" for label in labels}
    for path, what in {**needed, folder / "queries.jsonl": "the queries file"}.items():
        if not path.is_file():
            raise DatasetError(f"{what} is missing", path=path)
    splits = sorted(split.stem for split in (folder / "qrels").glob("*.tsv"))
    if not splits:
        raise DatasetError("no qrels/<split>.tsv: nothing to evaluate", path=folder / "qrels")
    fields = {"task_name": "Cocktail_" + task_name_part(folder.resolve().name) if name is None else name,
              "data_dir": str(folder.resolve()), "sources": {label: label for label in labels}, "splits": splits}
    return parse_entry(CocktailFolderEntry, fields, str(manifest_file), f"the task of {folder}")


def irsc_build_entry(folder: Path, name: str | None = None) -> IRSCBuildEntry:
    """The IRSC tasks of a build folder, named ``<IRSC task>_<name or folder name>``; its manifest is read as
    the tasks read it."""
    read_irsc_manifest(folder / IRSC_MANIFEST)
    fields = {"suffix": task_name_part(folder.resolve().name) if name is None else name,
              "data_dir": str(folder.resolve())}
    return parse_entry(IRSCBuildEntry, fields, str(folder / IRSC_MANIFEST), f"the tasks of {folder}")


def folder_entry(folder: Path, name: str | None = None) -> UserEntry:
    """The entry of a generated folder, by what it holds: an AIR-Bench, co*cktail-style or IRSC output.

    Raises:
        DatasetError: a folder that is none of these, a malformed description, or ``name`` for an
            AIR-Bench dataset (its name comes from its catalog entry).
    """
    if not folder.is_dir():
        raise DatasetError("not a folder" if folder.exists() else "no such folder", path=folder)
    return _described_entry(folder, Path.exists, name)


class GeneratedOutput(Protocol):
    """What a generator reports it wrote (``generation.summary.GenerationSummary`` has this shape)."""

    @property
    def root(self) -> Path: ...

    @property
    def files(self) -> tuple[str, ...]: ...


def generated_entry(made: GeneratedOutput, name: str | None = None) -> UserEntry:
    """The entry of what a generator just wrote, found by the files it reports: the folder is not searched,
    only the family's description (catalog entry or manifest) is read. Raises as :func:`folder_entry`."""
    written = {made.root / file for file in made.files}
    # an IRSC run reports its build's irsc/ folder, the other generators the dataset folder itself
    folder = made.root.parent if made.root.parent / IRSC_MANIFEST in written else made.root
    return _described_entry(folder, written.__contains__, name)


def _described_entry(folder: Path, holds: Callable[[Path], bool], name: str | None) -> UserEntry:
    """The entry of ``folder`` by the description file it ``holds``."""
    if holds(folder / AIRBENCH_ENTRY_FILE):
        if name is not None:
            raise DatasetError("an AIR-Bench dataset is named by its catalog entry (version, task type, domain, "
                               "language, dataset): edit those instead of passing --name", path=folder / AIRBENCH_ENTRY_FILE)
        return airbench_folder_entry(folder)
    if holds(folder / COCKTAIL_MANIFEST):
        return cocktail_folder_entry(folder, name)
    if holds(folder / IRSC_MANIFEST):
        return irsc_build_entry(folder, name)
    raise DatasetError(f"not a generated dataset: no {AIRBENCH_ENTRY_FILE} (`generate airbench`), "
                       f"{COCKTAIL_MANIFEST} (`generate cocktail`) or {IRSC_MANIFEST} (`generate irsc`)", path=folder)


def _as_item(entry: UserEntry) -> dict[str, Any]:
    return {"family": "airbench", **entry.model_dump(mode="json")} if isinstance(entry, AirBenchEntry) \
        else entry.model_dump(mode="json")


def register_user_entry(entry: UserEntry, *, owner_of: Callable[[str], str | None] = lambda _: None,
                        replace: bool = False) -> Path:
    """Add ``entry`` to the user catalog and return the catalog's path.

    Registering the same folder again under the same names updates its entry. Refused unless ``replace``:
    a name already registered for another folder, and a folder already registered under other names
    (``replace`` then renames it). Always refused: what :func:`naming_problem` refuses, and a name
    ``owner_of`` (task name -> who defines that task, e.g. mteb's registry) knows. Entries of the
    file that cannot be read are kept as they are.

    Raises:
        DatasetError: an unusable user catalog, or a name the entry may not have.
    """
    path = current_settings().user_catalog
    raw = read_catalog_items(path)
    registered = [_parsed_or_none(item, number, str(path)) for number, item in enumerate(raw, start=1)]
    folder, names = Path(entry.data_dir or ""), task_names(entry)
    problem = naming_problem(entry, reserved_names())
    if problem is not None:
        raise DatasetError(problem, path=folder)
    for name in names:
        holder = next((e for e in registered if e is not None and name in task_names(e)), None)
        owner = owner_of(name) if holder is None else None
        if owner is not None:
            raise DatasetError(f"{name!r} is already the name of a task ({owner}); {_rename_hint(entry)}", path=folder)
        if holder is not None and Path(holder.data_dir or "") != folder and not replace:
            raise DatasetError(f"task {name!r} is already registered for {holder.data_dir} (in {path}); "
                               f"{_rename_hint(entry)}, or pass --replace to point the task at this folder", path=folder)
    renamed = next((e for e in registered if _same_folder(e, entry) and set(task_names(e)) != set(names)), None)
    if renamed is not None and not replace:
        raise DatasetError(f"already registered as {', '.join(task_names(renamed))} (in {path}); pass --replace to "
                           f"register it as {', '.join(names)} instead", path=folder)
    kept = [item for item, old in zip(raw, registered, strict=True) if not _superseded(old, entry)]
    with atomic_write(path) as handle:
        json.dump({"datasets": [*kept, _as_item(entry)]}, handle, indent=1, ensure_ascii=False)
    return path


def _parsed_or_none(item: Any, number: int, origin: str) -> UserEntry | None:
    try:
        return parse_user_entry(item, number, origin)
    except DatasetError:
        return None


def _same_folder(old: UserEntry | None, new: UserEntry) -> bool:
    return type(old) is type(new) and Path(old.data_dir or "") == Path(new.data_dir or "")  # type: ignore[union-attr]


def _superseded(old: UserEntry | None, new: UserEntry) -> bool:
    """The new entry replaces an old one of the same family and folder, or one holding one of its names."""
    return old is not None and (_same_folder(old, new) or bool(set(task_names(old)) & set(task_names(new))))
