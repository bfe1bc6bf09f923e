"""BM25 indexes kept on disk, keyed by what determines them, so a later process on the same corpus indexes nothing.

An index's folder, under ``$AIRBENCH_MTEB_BM25_INDEX`` (default ``<cache>/bm25``), is named by its key: the
corpus content and analysis (:func:`~airbench_mteb.models.bm25._content_key`), the analysis revision, ``k1`` and
``b`` (the weights are stored) and this module's file format. It is written as a whole through
:func:`~airbench_mteb.data.files.atomic_folder` (a staging folder renamed into place), its manifest last, so a
killed build leaves only a ``.<key>.tmp-<pid>`` folder that nothing reads (removed by the next build of that
process id, or by hand). On opening, the manifest must name the same key and format, and each file must have
the size the counts give and the digest of its sampled blocks written with it; an index that fails is reported
(:class:`BM25IndexWarning`) and built again in its place. With the setting ``off`` each index lives in a
temporary folder for the process's lifetime.
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
from airbench_mteb.models.bm25_build import ARRAYS, STRINGS, IndexCounts
from airbench_mteb.models.bm25_index import BM25Index, mapped_strings
from airbench_mteb.settings import current_settings

logger = logging.getLogger(__name__)

FORMAT = 1  # bump when the files change
MANIFEST = "manifest.json"
_SAMPLES, _SAMPLE_BYTES = 16, 1 << 16  # blocks of each file hashed into its manifest digest


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
        labels = json.dumps({**asdict(self), "format": FORMAT}, sort_keys=True)
        return hashlib.blake2b(labels.encode(), digest_size=20).hexdigest()


@dataclass
class StoredIndex:
    index: BM25Index
    doc_ids: pa.LargeStringArray
    built: bool  # False: read from disk


Build = Callable[[Path], IndexCounts]  # writes an index's files into a folder (bm25_build's layout)


def stored_index(key: IndexKey, build: Build) -> StoredIndex:
    """The index of ``key``: read from the store when it holds a sound one, else built by ``build`` and stored."""
    root = current_settings().bm25_index
    if root is None:
        return _temporary(build)
    folder = root / key.folder_name
    if folder.is_dir():
        problem = _problem(folder, key)
        if problem is None:
            logger.info("BM25: reusing the stored index %s", folder)
            return _opened(folder, False)
        warnings.warn(f"BM25: the stored index {folder} is not used ({problem}); indexing again",
                      BM25IndexWarning, stacklevel=2)
    with atomic_folder(folder) as staging:
        staging.mkdir()
        counts = build(staging)
        _write_manifest(staging, key, counts)
    return _opened(folder, True)


def _temporary(build: Build) -> StoredIndex:
    scratch = tempfile.TemporaryDirectory(prefix="airbench-mteb-bm25-")
    counts = build(Path(scratch.name))
    stored = _opened_with(Path(scratch.name), counts, True)
    stored.index._scratch = scratch  # removed with the index
    return stored


def _opened(folder: Path, built: bool) -> StoredIndex:
    manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    return _opened_with(folder, IndexCounts(**manifest["counts"]), built)


def _opened_with(folder: Path, counts: IndexCounts, built: bool) -> StoredIndex:
    return StoredIndex(BM25Index.open(folder, counts), mapped_strings(folder, "doc_ids", counts.documents), built)


def _file_sizes(folder: Path, counts: IndexCounts, strings_bytes: dict[str, int]) -> dict[str, int]:
    """The size each file of an index with these counts has (string bytes as the manifest says)."""
    entries = {"indptr": counts.terms + 1, "documents": counts.postings, "weights": counts.postings}
    sizes = {name: entries[name] * dtype().itemsize for name, dtype in ARRAYS.items()}
    for name, count in (("vocabulary", counts.terms), ("doc_ids", counts.documents)):
        sizes[f"{name}.offsets"] = 8 * (count + 1)
        sizes[f"{name}.bytes"] = strings_bytes[name]
    return sizes


def _sampled_digest(path: Path, size: int) -> str:
    """A digest of the file's length and ``_SAMPLES`` evenly spaced blocks (the whole file when it is small):
    catches truncation, a file swapped for another and most edits without reading gigabytes on every open."""
    digest = hashlib.blake2b(str(size).encode(), digest_size=16)
    with path.open("rb") as handle:
        if size <= _SAMPLES * _SAMPLE_BYTES:
            digest.update(handle.read())
        else:
            for i in range(_SAMPLES):
                handle.seek((size - _SAMPLE_BYTES) * i // (_SAMPLES - 1))
                digest.update(handle.read(_SAMPLE_BYTES))
    return digest.hexdigest()


def _write_manifest(folder: Path, key: IndexKey, counts: IndexCounts) -> None:
    strings_bytes = {name: (folder / f"{name}.bytes").stat().st_size for name in STRINGS}
    sizes = _file_sizes(folder, counts, strings_bytes)
    manifest = {"format": FORMAT, "key": asdict(key), "counts": asdict(counts), "strings_bytes": strings_bytes,
                "digests": {name: _sampled_digest(folder / name, size) for name, size in sizes.items()}}
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")


def _problem(folder: Path, key: IndexKey) -> str | None:
    """Why the index in ``folder`` cannot be used for ``key``; None when it can."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        if manifest.get("format") != FORMAT or manifest.get("key") != asdict(key):
            return "written by another format or for another corpus or setting"
        counts = IndexCounts(**manifest["counts"])
        sizes = _file_sizes(folder, counts, manifest["strings_bytes"])
        for name, size in sizes.items():
            actual = (folder / name).stat().st_size
            if actual != size:
                return f"{name} has {actual:,} bytes where {size:,} are due"
            if _sampled_digest(folder / name, size) != manifest["digests"][name]:
                return f"{name} does not match the digest written with it"
    except (OSError, ValueError, KeyError, TypeError) as error:
        return f"its manifest or files cannot be read: {error}"
    return None
