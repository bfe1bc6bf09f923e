"""Names as folder names: the one mapping of a model, reranker or dataset name to one path part.

A name is data, never a path: :func:`folder_name` gives one path part whatever the name holds (``/``,
``..``, an empty name, markup, a newline, 300 characters or 100 CJK ones): ``/`` as ``__`` (MTEB's
way), other characters but word characters and ``.()=,-`` as ``_``, never a leading dot, at most
:data:`FOLDER_BYTES` bytes of UTF-8. A name that loses anything on the way (a character replaced, ``__``
of its own, a leading dot, bytes cut) gets the first 12 hex digits of its SHA-256 appended, so two names
that read alike still differ; :func:`check_distinct` refuses the names that still share a folder (also
where only letter case differs, as on a case-insensitive file system).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence

from airbench_mteb.data.errors import DatasetError

# A task name becomes a file name (results, predictions, statistics) and a command-line argument.
NAME_RULE = "ASCII letters, digits, '_', '-' and '.', starting with a letter or digit, at most 200 characters"
_TASK_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,199}")

FOLDER_BYTES = 96  # well below the 255 bytes a file name may have on common file systems
_OTHER = re.compile(r"[^\w.()=,-]+")
_DIGEST_CHARS = 12


def _cut(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` bytes of UTF-8, never inside a character."""
    return text.encode("utf-8")[:limit].decode("utf-8", errors="ignore")


def folder_name(name: str) -> str:
    """One folder name for ``name`` (module docstring): readable, bounded in bytes, never ``.``, ``..`` or empty."""
    plain = name.replace("/", "__")
    readable = _OTHER.sub("_", plain).lstrip(".")
    if readable == plain and "__" not in name and readable and len(readable.encode("utf-8")) <= FOLDER_BYTES:
        return readable
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:_DIGEST_CHARS]
    head = _cut(readable, FOLDER_BYTES - _DIGEST_CHARS - 1)
    return f"{head}-{digest}" if head else digest


def check_distinct(kind: str, names: Iterable[Sequence[str]]) -> dict[tuple[str, ...], tuple[str, ...]]:
    """``{names: their folder names}`` of each tuple of names (a path of folders, e.g. retriever and reranker).

    Raises:
        DatasetError: two different tuples whose folders are the same (letter case aside), naming both.
    """
    folders: dict[tuple[str, ...], tuple[str, ...]] = {}
    seen: dict[tuple[str, ...], tuple[str, ...]] = {}
    for parts in dict.fromkeys(tuple(parts) for parts in names):
        folders[parts] = tuple(folder_name(part) for part in parts)
        key = tuple(folder.casefold() for folder in folders[parts])
        if key in seen:
            raise DatasetError(f"the {kind} {_shown(seen[key])} and {_shown(parts)} would share the folder "
                               f"{'/'.join(folders[parts])}: rename one of them")
        seen[key] = parts
    return folders


def _shown(parts: Sequence[str]) -> str:
    return " / ".join(repr(part) for part in parts)


def check_task_name(name: str) -> str:
    """``name`` if every family may give it to a task (see ``NAME_RULE``).

    Raises:
        ValueError: naming ``name`` and the rule (pydantic validators turn it into a field error).
    """
    if not _TASK_NAME.fullmatch(name):
        raise ValueError(f"{name!r} is not allowed: a task name holds {NAME_RULE}")
    return name
