"""Reading and writing the plain files benchmarks are made of, with errors that name the line.

Writers never leave a half-written file: they write a temporary file beside the target and
rename it into place. They write only to a regular file or an absent path: a folder, FIFO, device,
socket or read-only file is refused by name before anything is written, and a symbolic link is
written through to its target (see :func:`check_writable_target`).
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import IO, Any

from airbench_mteb.data.errors import DatasetError

# the kinds of file, by the test that recognises them, for errors that say what is in the way
_KINDS = ((stat.S_ISREG, "a file"), (stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _kind(mode: int) -> str:
    """What a file is, in words."""
    return next((name for test, name in _KINDS if test(mode)), "a special file")


def check_writable_target(path: str | Path) -> Path:
    """The file a write to ``path`` replaces, checked before anything is written.

    ``path`` itself, or for a symbolic link the file it points to (resolved): a write goes
    through a link to its target and the link stays a link. A dangling link is written through
    when the folder of its target exists. The target must be absent or a regular file the owner
    may write (the mode bits decide, so a 0444 file is refused even for root).

    Raises:
        DatasetError: naming ``path`` (and the link's target) when the target is a folder, a FIFO,
            a device, a socket or another special file, read-only, or the link cannot be resolved.
    """
    path = Path(path)
    linked = path.is_symlink()
    target = Path(os.path.realpath(path)) if linked else path
    where = f" (a symbolic link to {target})" if linked else ""
    try:
        info = os.stat(target)
    except FileNotFoundError:
        if linked and not target.parent.is_dir():
            raise DatasetError(f"cannot be written{where}: the folder {target.parent} does not exist",
                               path=path) from None
        return target
    except NotADirectoryError:
        raise DatasetError(f"cannot be written{where}: a part of its path is a file, not a folder",
                           path=path) from None
    except OSError as error:  # a loop of links, a folder that is not searchable
        raise DatasetError(f"cannot be written{where}: {error.strerror}", path=path) from None
    if not stat.S_ISREG(info.st_mode):
        raise DatasetError(f"is {_kind(info.st_mode)}{where}, not a regular file; nothing was written",
                           path=path)
    if not info.st_mode & stat.S_IWUSR or not os.access(target, os.W_OK):
        raise DatasetError(f"is read-only{where} (mode {stat.filemode(info.st_mode)}); nothing was written. "
                           "Make it writable or write elsewhere", path=path)
    return target


def check_folder_target(path: str | Path) -> None:
    """Refuse to put a folder at ``path`` when something other than a folder (or a link to one) is there.

    Raises:
        DatasetError: naming ``path`` and what is there (a file, a FIFO, a dangling link...).
    """
    path = Path(path)
    if path.is_dir() or not os.path.lexists(path):
        return
    try:
        kind = _kind(path.stat().st_mode)
    except OSError:
        kind = "a symbolic link to nothing"
    raise DatasetError(f"is {kind}, where a folder is due; nothing was written", path=path)


def _new_file_mode() -> int:
    """The permissions a plain ``open(path, "w")`` would give a new file."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def make_folder(folder: str | Path) -> Path:
    """``folder``, created with its parents unless it is there; DatasetError naming what is in the way."""
    folder = Path(folder)
    check_folder_target(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:  # a parent is a file, or cannot be created
        raise DatasetError(f"cannot create the folder: {error.strerror}", path=folder) from None
    return folder


@contextmanager
def output_folder(folder: str | Path) -> Iterator[Path]:
    """``folder``, made (:func:`make_folder`) for the writes inside; on a failure every folder made here (its
    parents too) that is still empty is removed again, so a run that fails before writing leaves no folder behind."""
    folder = Path(folder)
    top = next((f for f in (*reversed(folder.parents), folder) if not os.path.lexists(f)), None)
    made = make_folder(folder)
    try:
        yield made
    except BaseException:
        if top is not None:
            _remove_empty_folders(top)
        raise


def _remove_empty_folders(top: Path) -> None:
    """``top`` and the folders below it, deepest first, each where it is empty (a folder with a file stays)."""
    for below, _, _ in sorted(os.walk(top), key=lambda entry: -len(Path(entry[0]).parts)):
        with contextlib.suppress(OSError):  # not empty: something was written, keep it
            os.rmdir(below)


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """A temporary file beside the target of ``path`` to write to; renamed over the target only on success.

    The target is checked first (:func:`check_writable_target`) and again just before the rename;
    an existing target keeps its permissions (and, when we are root, its owner). On any failure
    the temporary file is removed and whatever was at ``path`` is left as it was.
    """
    path = Path(path)
    target = check_writable_target(path)
    make_folder(target.parent)
    try:
        fd, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as error:
        raise DatasetError(f"cannot be written: {error.strerror} in {target.parent}", path=path) from None
    os.close(fd)
    scratch = Path(name)
    try:
        yield scratch
        _publish(scratch, target, path)
    except BaseException:
        scratch.unlink(missing_ok=True)
        raise


def _publish(scratch: Path, target: Path, path: Path) -> None:
    """Flush ``scratch`` to disk, give it the target's permissions and rename it over the target."""
    if check_writable_target(path) != target:  # the link was pointed elsewhere meanwhile
        raise DatasetError(f"changed while it was written (now a link to {os.path.realpath(path)})", path=path)
    try:
        fd = os.open(scratch, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        if target.exists():
            info = target.stat()
            os.chmod(scratch, stat.S_IMODE(info.st_mode))
            if os.geteuid() == 0:  # root writes on behalf of the file's owner
                os.chown(scratch, info.st_uid, info.st_gid)
        else:
            os.chmod(scratch, _new_file_mode())
        os.replace(scratch, target)
    except OSError as error:
        raise DatasetError(f"cannot be written: {error.strerror}", path=path) from None


def move_aside(path: str | Path, suffix: str) -> Path:
    """Rename the regular file ``path`` to ``path`` + ``suffix`` (e.g. a damaged cache file kept for a look);
    the target is checked as every write's is. Raises OSError (or DatasetError for a target that is not a file)."""
    path = Path(path)
    if not stat.S_ISREG(path.lstat().st_mode):
        raise OSError(f"{path} is not a regular file")
    target = check_writable_target(path.with_name(path.name + suffix))
    os.replace(path, target)
    return target


@contextmanager
def atomic_write(path: str | Path, mode: str = "w") -> Iterator[IO[Any]]:
    """Open ``path`` for writing (``"w"`` UTF-8 text or ``"wb"``) through :func:`atomic_path`."""
    with atomic_path(path) as scratch, scratch.open(mode, encoding=None if "b" in mode else "utf-8") as handle:
        yield handle


@contextmanager
def all_or_none(folder: str | Path) -> Iterator[Callable[..., IO[Any]]]:
    """``open(path, mode="w")`` for a set of files in ``folder`` (made by :func:`output_folder`) written all or none:
    each file is renamed into place only once every one is written, and a failure leaves no new folder."""
    with output_folder(folder), ExitStack() as stack:
        yield lambda path, mode="w": stack.enter_context(atomic_write(path, mode))


@contextmanager
def atomic_folder(target: str | Path, *, replace: bool = True) -> Iterator[Path]:
    """A staging folder path beside ``target`` to create and fill; put in place of ``target`` as a whole only on success.

    The folder counterpart of :func:`atomic_path`: something other than a folder at ``target`` is refused
    first (:func:`check_folder_target`). With ``replace`` an existing ``target`` is swapped out and removed;
    without it, a ``target`` that appeared meanwhile (a concurrent writer finished first) is kept. The
    staging folder is removed on any failure.
    """
    target = Path(target)
    check_folder_target(target)
    make_folder(target.parent)
    staging = target.with_name(f".{target.name}.tmp-{os.getpid()}")  # created by the writer
    shutil.rmtree(staging, ignore_errors=True)  # left by a killed run of this process id
    try:
        yield staging
        if not replace:
            with contextlib.suppress(OSError):  # a non-empty target: another writer published first
                staging.rename(target)
            return
        old = target.with_name(f".{target.name}.old-{os.getpid()}")
        if target.exists():
            os.replace(target, old)
        os.replace(staging, target)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


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


def unreadable_text_reason(value: Any) -> str | None:
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
            reason = unreadable_text_reason(item)
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
        except RecursionError:
            raise DatasetError("JSON nested too deeply to read", path=path, line=number) from None
        if not isinstance(row, dict):
            raise DatasetError("expected a JSON object", path=path, line=number)
        # only an escape can smuggle these past the byte checks; most lines have none
        reason = unreadable_text_reason(row) if "\\u" in text else None
        if reason:
            raise DatasetError(f"malformed text: {reason}", path=path, line=number)
        yield number, row


@contextmanager
def readable(path: str | Path) -> Iterator[None]:
    """Read ``path`` inside: a file that is missing or cannot be read at all (a folder, no permission, bytes that
    are not UTF-8) is a :class:`DatasetError` naming it."""
    try:
        yield
    except UnicodeDecodeError as error:
        raise DatasetError(f"not valid UTF-8 ({error.reason} at byte {error.start})", path=path) from None
    except FileNotFoundError:
        raise DatasetError("file not found", path=path) from None
    except OSError as error:
        raise DatasetError(f"cannot be read: {error.strerror or error}", path=path) from None


def read_json(path: str | Path) -> Any:
    """A whole JSON file; an unreadable file (:func:`readable`) and malformed JSON are each a
    :class:`DatasetError` naming the file (and the line)."""
    path = Path(path)
    try:
        with readable(path):
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
    """The string value of ``row[name]``, or a DatasetError naming the file and line.

    ``text`` and ``title`` are texts: strings only (null counts as empty). Every other field is an
    id: a string or an integer (read as its digits), never a bool, a float or null, which would
    silently become ids such as "True" or "1.0".
    """
    if name not in row:
        raise DatasetError(f"missing field {name!r}", path=path, line=line)
    value = row[name]
    is_text = name in ("text", "title")
    if value is None and is_text:
        value = ""
    if isinstance(value, bool) or not isinstance(value, str if is_text else (str, int)):
        shown = json.dumps(value, default=str, ensure_ascii=False)
        shown = shown if len(shown) <= 40 else shown[:37] + "..."
        raise DatasetError(f"field {name!r} must be {'a string' if is_text else 'a string or an integer'}, "
                           f"got {shown}", path=path, line=line)
    value = str(value)
    if not allow_empty and not value.strip():
        raise DatasetError(f"empty {name!r}", path=path, line=line, item_id=str(row.get("id", row.get("_id", ""))) or None)
    return value
