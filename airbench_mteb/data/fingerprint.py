"""Cheap identities of data files, for keys of derived files and for the revision recorded in results.

A file is identified by its resolved path, size, modification time and inode (as ``make`` and rsync
judge a file unchanged), not by hashing its content: corpora run to gigabytes and are fingerprinted
at every run. Rewriting a file in place changes its modification time, so a changed file is never
mistaken for the old one.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def file_identity(path: Path) -> dict[str, Any]:
    stat = path.stat()
    return {"path": str(path.resolve()), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "inode": stat.st_ino}


def file_digest(path: Path, algorithm: str = "sha256") -> str:
    """The hex digest of a file's content (read in blocks), for checksums and weights identities."""
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, algorithm).hexdigest()


def files_fingerprint(paths: Iterable[Path], **options: Any) -> str:
    """A 16-hex-digit fingerprint of these files (missing ones count as missing) and of ``options``."""
    identities = [file_identity(p) if p.is_file() else {"path": str(p), "missing": True} for p in paths]
    return hashlib.sha256(json.dumps([identities, options], sort_keys=True).encode()).hexdigest()[:16]
