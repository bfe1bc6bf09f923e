"""What every catalog shares: frozen pydantic entries, validated when read, errors naming file, entry and field."""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Callable, Mapping, Sequence
from importlib import resources
from typing import Annotated, Any, TypeVar

from mteb.languages import check_language_code
from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from airbench_mteb.data.errors import DatasetError
from airbench_mteb.data.folder_names import check_task_name
from airbench_mteb.whole_numbers import whole_number

# The revision of data that live in a folder: their identity is a fingerprint of the files, not a hub commit.
LOCAL_REVISION = "local"
_COMMIT = re.compile(r"[0-9a-f]{40}")
_warned_unpinned: set[str] = set()

Entry = TypeVar("Entry", bound=BaseModel)


def _language_script(code: str) -> str:
    check_language_code(code)  # MTEB's own check, so a task's metadata never fails on it later
    if "-" not in code:
        raise ValueError(f"{code!r} is not <ISO 639-3>-<ISO 15924 script>, e.g. eng-Latn")
    return code


LanguageScript = Annotated[str, AfterValidator(_language_script)]  # e.g. "eng-Latn", as MTEB's eval_langs


TaskName = Annotated[str, AfterValidator(check_task_name)]


def _whole(value: Any) -> Any:
    whole = whole_number(value)
    return value if whole is None else whole  # anything else goes on to the int check, which names it


# A count as JSON writers write it (80 or 80.0, never 80.5, true or "80"), read as an int even by a strict model
Count = Annotated[int, BeforeValidator(_whole), Field(ge=0)]


def task_name_part(text: str) -> str:
    """``text`` (e.g. a folder name) usable in a task name: every other character becomes ``_``."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text)


class CatalogEntry(BaseModel):
    """Base of catalog entries: immutable, and an unknown field is an error (a typo never goes unnoticed)."""

    model_config = ConfigDict(frozen=True, extra="forbid")


def entry_label(item: Any, number: int, name: str | None = None) -> str:
    """``entry 3`` or ``entry 3 (CocktailNFCorpus)``: how errors and warnings name an entry.

    ``name`` names it when the item has no ``task_name`` or ``name`` field of its own.
    """
    if name is None and isinstance(item, Mapping):
        name = item.get("task_name") or item.get("name")
    return f"entry {number}" + (f" ({name})" if isinstance(name, str) else "")


def parse_entry(model: type[Entry], item: Any, origin: str, label: str) -> Entry:
    """Validate one catalog item, named ``label`` in errors (see :func:`entry_label`).

    Raises:
        DatasetError: naming ``origin``, the entry and every field at fault.
    """
    try:
        return model.model_validate(item)
    except ValidationError as error:
        problems = "; ".join(_problem(e["loc"], e["msg"]) for e in error.errors())
        raise DatasetError(f"{label} is malformed: {problems}", path=origin) from None


def _problem(location: tuple[Any, ...], message: str) -> str:
    """One validation error: the field at fault (none for a check of the whole entry) and what is wrong."""
    message = message.removeprefix("Value error, ")
    return f"field {'.'.join(map(str, location))!r}: {message}" if location else message


def catalog_items(text: str, origin: str, key: str = "datasets") -> tuple[dict[str, Any], list[Any]]:
    """A catalog file's top-level object and its list of entries under ``key``."""
    try:
        raw = json.loads(text)
        items = raw[key]
    except (json.JSONDecodeError, TypeError, KeyError) as error:
        raise DatasetError(f"not a catalog ({{\"{key}\": [...]}}): {error!r}", path=origin) from None
    if not isinstance(items, list):
        raise DatasetError(f"not a catalog: \"{key}\" holds {type(items).__name__}, not a list", path=origin)
    return raw, items


def read_catalog(model: type[Entry], text: str, origin: str,
                 name_of: Callable[[Any], str | None] = lambda item: None) -> tuple[Entry, ...]:
    """Every entry of a catalog file, validated as ``model``; task names must be unique.

    Top-level keys besides ``datasets`` (and ``_comment``-style ones) are defaults every entry shares.
    ``name_of`` names a raw item in errors when it has no ``task_name`` or ``name`` field.

    Raises:
        DatasetError: naming ``origin``, the entry and the field at fault, or a task name used twice.
    """
    raw, items = catalog_items(text, origin)
    shared = {key: value for key, value in raw.items() if key != "datasets" and not key.startswith("_")}
    entries = tuple(parse_entry(model, {**shared, **item} if isinstance(item, Mapping) else item, origin,
                                entry_label(item, number, name_of(item))) for number, item in enumerate(items, start=1))
    check_unique([entry.task_name for entry in entries], origin)  # type: ignore[attr-defined]
    return entries


def packaged_catalog(model: type[Entry], file_name: str,
                     name_of: Callable[[Any], str | None] = lambda item: None) -> tuple[Entry, ...]:
    """A catalog file shipped in this package (``catalog/<file_name>``), read with :func:`read_catalog`."""
    packaged = resources.files(__package__).joinpath(file_name)
    return read_catalog(model, packaged.read_text(encoding="utf-8"), str(packaged), name_of)


def check_unique(names: Sequence[str], origin: str) -> None:
    seen: set[str] = set()
    for number, name in enumerate(names, start=1):
        if name in seen:
            raise DatasetError(f"entry {number}: task name {name!r} appears twice", path=origin)
        seen.add(name)


def is_pinned(revision: str) -> bool:
    """A commit (40 hex digits) pins data; a branch name such as ``main`` can move under the same name."""
    return bool(_COMMIT.fullmatch(revision)) or revision == LOCAL_REVISION


def warn_if_unpinned(revision: str, what: str) -> None:
    """One warning per entry and process when ``what`` (naming the entry) reads a branch, not a commit."""
    if is_pinned(revision) or what in _warned_unpinned:
        return
    _warned_unpinned.add(what)
    warnings.warn(f"airbench-mteb: {what} reads revision {revision!r}, a branch name, not a commit: the data can "
                  "change under the same name (pin a commit in its catalog entry)", stacklevel=3)
