"""Reading and writing the plain files benchmarks are made of, with errors that name the line.

Writers never leave a half-written file: they write a temporary file beside the target and
rename it into place.
"""

from __future__ import annotations

import csv
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from airbench_mteb.data.errors import DatasetError


@contextmanager
def atomic_write(path: str | Path, mode: str = "w") -> Iterator[IO[Any]]:
    """Open a temporary file next to ``path``; rename it over ``path`` only on success."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, mode, encoding=None if "b" in mode else "utf-8") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        # mkstemp creates 0600 files; give the result the permissions a plain open() would
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _decoded_lines(path: Path) -> Iterator[tuple[int, str]]:
    """Lines as text; invalid UTF-8 (lone surrogates included) and NUL bytes are errors naming the line."""
    if not path.is_file():
        raise DatasetError("file not found", path=path)
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                raise DatasetError(f"not valid UTF-8 ({error.reason} at byte {error.start})",
                                   path=path, line=number) from None
            nul = text.find("\x00")
            if nul >= 0:
                raise DatasetError(f"NUL byte at column {nul + 1}", path=path, line=number)
            yield number, text


def _bad_character(value: Any) -> str | None:
    """Why a parsed JSON value cannot be text (a NUL or a lone surrogate from a ``\\u`` escape), or None."""
    if isinstance(value, str):
        if "\x00" in value:
            return "a NUL character (\\u0000)"
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as error:
            return f"a lone surrogate (\\u{ord(value[error.start]):04x}), which is not text"
        return None
    if isinstance(value, dict):
        value = [*value.keys(), *value.values()]
    if isinstance(value, list):
        for item in value:
            reason = _bad_character(item)
            if reason:
                return reason
    return None


def read_jsonl(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for every non-blank line of a JSON-lines file."""
    path = Path(path)
    for number, text in _decoded_lines(path):
        if not text.strip():
            continue
        try:
            row = json.loads(text)
        except json.JSONDecodeError as error:
            raise DatasetError(f"malformed JSON ({error.msg}, column {error.colno})",
                               path=path, line=number) from None
        if not isinstance(row, dict):
            raise DatasetError("expected a JSON object", path=path, line=number)
        # only an escape can smuggle these past the byte checks; most lines have none
        reason = _bad_character(row) if "\\u" in text else None
        if reason:
            raise DatasetError(f"malformed text: {reason}", path=path, line=number)
        yield number, row


def read_json(path: str | Path) -> Any:
    """A whole JSON file; malformed JSON is a :class:`DatasetError` naming the file and line."""
    path = Path(path)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise DatasetError(f"malformed JSON ({error.msg})", path=path, line=error.lineno) from None


def write_jsonl(path: str | Path, rows: Iterable[dict[str, Any]]) -> None:
    with atomic_write(path) as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")


def read_tsv(path: str | Path) -> Iterator[tuple[int, list[str]]]:
    """Yield ``(line_number, fields)`` of every non-blank line of a tab-separated file, header included."""
    path = Path(path)
    for number, text in _decoded_lines(path):
        if not text.strip():
            continue
        yield number, next(csv.reader([text.rstrip("\r\n")], delimiter="\t", quoting=csv.QUOTE_NONE))


def write_tsv(path: str | Path, header: list[str], rows: Iterable[Iterable[Any]]) -> None:
    with atomic_write(path) as handle:
        handle.write("\t".join(header) + "\n")
        for row in rows:
            handle.write("\t".join(str(x) for x in row) + "\n")


def field(row: dict[str, Any], name: str, *, path: Path, line: int, allow_empty: bool = False) -> str:
    """The string value of ``row[name]``, or a DatasetError naming the file and line."""
    if name not in row:
        raise DatasetError(f"missing field {name!r}", path=path, line=line)
    value = row[name]
    if value is None:
        value = ""
    if not isinstance(value, (str, int)):
        raise DatasetError(f"field {name!r} must be a string, got {type(value).__name__}", path=path, line=line)
    value = str(value)
    if not allow_empty and not value.strip():
        raise DatasetError(f"empty {name!r}", path=path, line=line, item_id=str(row.get("id", row.get("_id", ""))) or None)
    return value
