"""BM25 indexes kept on disk, keyed by what determines them, so a later process on the same corpus indexes nothing.

An index's folder, under ``$AIRBENCH_MTEB_BM25_INDEX`` (default ``<cache>/bm25``), is named by its key: the
corpus content and analysis (:func:`~airbench_mteb.models.bm25._content_key`), the analysis revision, ``k1`` and
``b``. The name does not change with the file format, so an index of another format version is found, told in one
line and built again in its place. It is written as a whole through :func:`~airbench_mteb.data.files.atomic_folder`
(a staging folder renamed into place), its manifest last, so a killed build leaves only a ``.<key>.tmp-<pid>``
folder that nothing reads (removed by the next build of that process id, or by hand). On opening, the manifest must
match its checksum and name the same key and format, and every file but ``postings`` must have the size the header
gives and its checksum (:func:`~airbench_mteb.models.bm25.format.problem`); ``postings`` is checked stretch by
stretch as searches first read it. An index that fails is reported (:class:`BM25IndexWarning`) and built again in
its place. With the setting ``off`` each index lives in a temporary folder for the process's lifetime.
"""

from __future__ import annotations

import hashlib
import json
import logging
import tempfile
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import pyarrow as pa

from airbench_mteb.data.files import atomic_folder
from airbench_mteb.models.bm25.format import (
    FORMAT_VERSION,
    IndexDamage,
    IndexHeader,
    header_of,
    problem,
    read_manifest,
    write_manifest,
)
from airbench_mteb.models.bm25.index import BM25Index, mapped_strings
from airbench_mteb.settings import current_settings

logger = logging.getLogger(__name__)

_NAME_FORMAT = 1  # folder names hash format 1's labels: an index of any version is found in the same folder


class BM25IndexWarning(UserWarning):
    """A stored BM25 index could not be used (damaged, or written for another key); it is built again."""


@dataclass(frozen=True)
class IndexKey:
    """What a stored index depends on."""

    content: str  # the corpus, analysis and languages
    revision: str  # the analysis's revision (a change of tokenisation)
    k1: float
    b: float

    @property
    def folder_name(self) -> str:
        labels = json.dumps({**asdict(self), "format": _NAME_FORMAT}, sort_keys=True)
        return hashlib.blake2b(labels.encode(), digest_size=20).hexdigest()


@dataclass
class StoredIndex:
    index: BM25Index
    doc_ids: pa.LargeStringArray
    built: bool  # False: read from disk


Build = Callable[[Path], IndexHeader]  # writes an index's files into a folder (the build's layout)


def stored_index(key: IndexKey, build: Build, damage: IndexDamage | None = None) -> StoredIndex:
    """The index of ``key``: read from the store when it holds a sound one, else built by ``build`` and stored.
    ``damage``: what a search found wrong with the stored one, which is then reported and built again."""
    root = current_settings().bm25_index
    if root is None:
        return _temporary(build)
    folder = root / key.folder_name
    if damage is not None:
        warnings.warn(f"BM25: the stored index {folder} is not used ({damage}); indexing again",
                      BM25IndexWarning, stacklevel=2)
    elif folder.is_dir():
        found = _problem(folder, key)
        if found is None:
            logger.info("BM25: reusing the stored index %s", folder)
            return _opened(folder, False)
        if isinstance(found, _OtherVersion):
            logger.warning("BM25: the stored index %s is built again (%s)", folder, found)
        else:
            warnings.warn(f"BM25: the stored index {folder} is not used ({found}); indexing again",
                          BM25IndexWarning, stacklevel=2)
    with atomic_folder(folder) as staging:
        staging.mkdir()
        header = build(staging)
        write_manifest(staging, asdict(key), header)
    return _opened(folder, True)


def _temporary(build: Build) -> StoredIndex:
    scratch = tempfile.TemporaryDirectory(prefix="airbench-mteb-bm25-")
    header = build(Path(scratch.name))
    stored = _opened_with(Path(scratch.name), header, True)
    stored.index._scratch = scratch  # removed with the index
    return stored


def _opened(folder: Path, built: bool) -> StoredIndex:
    return _opened_with(folder, header_of(read_manifest(folder)), built)


def _opened_with(folder: Path, header: IndexHeader, built: bool) -> StoredIndex:
    return StoredIndex(BM25Index.open(folder, header), mapped_strings(folder, "doc_ids", header.documents), built)


class _OtherVersion(str):
    """The problem of an index written in another format version: told in one log line, not as damage."""


def _problem(folder: Path, key: IndexKey) -> str | None:
    """Why the index in ``folder`` cannot be used for ``key``; None when it can."""
    try:
        manifest = read_manifest(folder)
        if manifest.get("format") != FORMAT_VERSION:
            return _OtherVersion(f"it was written in format {manifest.get('format')!r}; this version reads and "
                                 f"writes format {FORMAT_VERSION}")
        return problem(folder, manifest, asdict(key))
    except (OSError, ValueError, KeyError, TypeError) as error:
        return f"its manifest or files cannot be read: {error}"
