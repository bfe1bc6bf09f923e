"""Identities of data files from their content, for the revision recorded in results and for keys of derived files.

A file's identity is the SHA-256 of its bytes, read in blocks. Hashing gigabytes at every run would
cost seconds per gigabyte, so a digest is remembered (in memory and under the plugin's cache folder)
together with the file's path, size, modification and change times, inode and device; it is reused
only while all of them are unchanged. The change time (``st_ctime``) is set by the kernel on every
write, rename or ``touch``, and no user call can set it back, so an in-place edit of the same size
whose modification time was restored is still seen and the file hashed again.

The fingerprint of a set of files depends on their names and contents (and on the options given),
never on where they live: a mirror copied to another folder keeps its fingerprint.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

DIGEST_ALGORITHM = "sha256"
FINGERPRINT_LENGTH = 16  # hex digits kept in a fingerprint: 64 bits, ample against accidental collisions
_memo: dict[str, tuple[tuple[int, ...], str]] = {}


def file_identity(path: Path) -> dict[str, Any]:
    """What must be unchanged for a remembered digest to stand (the change time included)."""
    stat = path.stat()
    return {"path": str(path.resolve()), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns,
            "ctime_ns": stat.st_ctime_ns, "inode": stat.st_ino, "device": stat.st_dev}


def file_digest(path: Path, algorithm: str = DIGEST_ALGORITHM) -> str:
    """The hex digest of a file's content (read in blocks), for checksums and weights identities."""
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, algorithm).hexdigest()


def content_digest(path: Path) -> str:
    """The SHA-256 of ``path``'s content, hashed again only when its stat identity changed."""
    identity = file_identity(path)
    stamp = (identity["size"], identity["mtime_ns"], identity["ctime_ns"], identity["inode"], identity["device"])
    key = identity["path"]
    known = _memo.get(key) or _remembered(key)
    if known is not None and known[0] == stamp:
        return known[1]
    digest = file_digest(path)
    # a file changing while it is hashed gets no memo entry: the next call hashes it again
    if file_identity(path) == identity:
        _memo[key] = (stamp, digest)
        _remember(key, stamp, digest)
    return digest


def files_fingerprint(paths: Iterable[Path], **options: Any) -> str:
    """A 16-hex-digit fingerprint of these files' names and contents (a missing file counts as missing) and of
    ``options`` (settings that change the data as evaluated, e.g. ``keep_titles``)."""
    parts = [[p.name, content_digest(p) if p.is_file() else None] for p in map(Path, paths)]
    blob = json.dumps([parts, options], sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:FINGERPRINT_LENGTH]


def _memo_file(key: str) -> Path:
    from airbench_mteb.settings import current_settings

    name = hashlib.sha256(key.encode()).hexdigest()[:32]
    return current_settings().cache_dir / "digests" / name[:2] / f"{name}.json"


def _remembered(key: str) -> tuple[tuple[int, ...], str] | None:
    try:
        data = json.loads(_memo_file(key).read_text(encoding="utf-8"))
        if data["path"] == key and data["algorithm"] == DIGEST_ALGORITHM:
            return tuple(data["stamp"]), str(data["digest"])
    except (OSError, ValueError, KeyError, TypeError):
        pass  # no memo, or a damaged one: hash the file
    return None


def _remember(key: str, stamp: tuple[int, ...], digest: str) -> None:
    """Keep the digest for later processes; a cache folder that cannot be written only costs a rehash."""
    from airbench_mteb.data.files import atomic_write

    try:
        with atomic_write(_memo_file(key)) as handle:
            json.dump({"path": key, "algorithm": DIGEST_ALGORITHM, "stamp": list(stamp), "digest": digest}, handle)
    except (OSError, ValueError):
        pass


def reset_memo() -> None:
    """Forget the in-process digests (tests that edit files in place within one clock tick)."""
    _memo.clear()


