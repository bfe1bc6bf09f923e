"""The file store of the embedding cache: a namespace folder of append-only, checksummed shards.

A shard is ``<shard>.npy`` (the vectors) and ``<shard>.keys`` (their keys, then the SHA-256 of the
vectors file and of the keys), each renamed into place, the keys last; see the package docstring.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import secrets
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from airbench_mteb.data.errors import DatasetError
from airbench_mteb.data.files import atomic_write, move_aside
from airbench_mteb.data.fingerprint import file_digest
from airbench_mteb.models.embedding_cache.keys import as_keys, namespace_folder
from airbench_mteb.settings import EMBEDDING_CACHE_ENV, SettingsError, current_settings

_TRAILER_MAGIC = b"ABMTEB\x00\x02"
_DIGEST_BYTES = 32
_TRAILER_BYTES = len(_TRAILER_MAGIC) + 2 * _DIGEST_BYTES
DAMAGED_SUFFIX = ".damaged"


class EmbeddingCacheWarning(UserWarning):
    """Part of the embedding cache could not be read or written; the evaluation goes on without it."""


class DamagedShard(Exception):
    """A shard's vectors file does not match the checksum written with it."""

    def __init__(self, path: Path, detail: str) -> None:
        super().__init__(f"{path}: {detail}")
        self.path = path
        self.detail = detail


def cache_dir() -> Path | None:
    """The cache root of the current settings, or None when the cache is switched off."""
    return current_settings().embedding_cache


def writable_cache_root(root: Path | None) -> Path:
    """``root`` as a folder the cache can be written to (created if absent), checked before any work.

    Raises:
        SettingsError: naming ``$AIRBENCH_MTEB_EMBEDDING_CACHE`` and the path, when the cache is
            switched off, or ``root`` is not a folder, cannot be created, is read-only (no owner write
            bit: root may write anywhere, but a 0555 folder says "keep out") or refuses a file.
    """
    if root is None:
        raise SettingsError(f"the embedding cache is switched off (${EMBEDDING_CACHE_ENV}); encoding would store "
                            f"nothing. Set ${EMBEDDING_CACHE_ENV} to a folder")
    where = f"the embedding cache {root} (${EMBEDDING_CACHE_ENV})"
    if root.exists() and not root.is_dir():
        raise SettingsError(f"{where} is not a folder")
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise SettingsError(f"{where} cannot be created: {error.strerror}") from None
    if not root.stat().st_mode & 0o200:
        raise SettingsError(f"{where} is a read-only folder; make it writable or point ${EMBEDDING_CACHE_ENV} elsewhere")
    try:  # a read-only mount, a full disk, a folder of another user
        tempfile.TemporaryFile(dir=root).close()
    except OSError as error:
        raise SettingsError(f"{where} cannot be written: {error.strerror}") from None
    return root



def _keys_file(keys: np.ndarray, vectors_sha256: bytes) -> bytes:
    """What a ``.keys`` file holds: the keys, then magic + SHA-256 of the vectors file + SHA-256 of the keys."""
    raw = keys.astype("<u8").tobytes()
    return raw + _TRAILER_MAGIC + vectors_sha256 + hashlib.sha256(raw).digest()


def _read_keys_file(data: bytes) -> tuple[np.ndarray, bytes]:
    """The keys and the vectors file's SHA-256 from a ``.keys`` file; ValueError if it is damaged."""
    raw, trailer = data[:-_TRAILER_BYTES], data[-_TRAILER_BYTES:]
    if len(data) < _TRAILER_BYTES or not trailer.startswith(_TRAILER_MAGIC) or len(raw) % (2 * 8):
        raise ValueError("the keys file has no checksum trailer")
    vectors_sha256, keys_sha256 = trailer[len(_TRAILER_MAGIC):-_DIGEST_BYTES], trailer[-_DIGEST_BYTES:]
    if hashlib.sha256(raw).digest() != keys_sha256:
        raise ValueError("the keys do not match the checksum written with them")
    return as_keys(raw), vectors_sha256


class _KeyIndex:
    """Key -> global row, as a few sorted runs (like an LSM tree): compact, and searched without Python loops.

    Each added shard becomes a run; runs of similar size are merged, so there are O(log n) of them.
    """

    def __init__(self) -> None:
        self._runs: list[tuple[np.ndarray, np.ndarray]] = []  # (keys sorted by their first 64 bits, their rows)

    def add(self, keys: np.ndarray, first_row: int) -> None:
        if not len(keys):
            return
        self._runs.append(self._sorted(keys, np.arange(first_row, first_row + len(keys), dtype=np.int64)))
        while len(self._runs) > 1 and 2 * len(self._runs[-1][0]) >= len(self._runs[-2][0]):
            (keys_b, rows_b), (keys_a, rows_a) = self._runs.pop(), self._runs.pop()
            self._runs.append(self._sorted(np.concatenate([keys_a, keys_b]), np.concatenate([rows_a, rows_b])))

    @staticmethod
    def _sorted(keys: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        # by the first 64 bits only; a stable sort merges two sorted runs in linear time
        order = np.argsort(keys[:, 0], kind="stable")
        return keys[order], rows[order]

    def locate(self, keys: np.ndarray) -> np.ndarray:
        found = np.full(len(keys), -1, dtype=np.int64)
        for run_keys, run_rows in self._runs:
            hi = run_keys[:, 0]
            position = np.minimum(np.searchsorted(hi, keys[:, 0]), len(hi) - 1)
            same_hi = hi[position] == keys[:, 0]
            hit = same_hi & (run_keys[position, 1] == keys[:, 1]) & (found < 0)
            found[hit] = run_rows[position[hit]]
            # two keys sharing their first 64 bits: walk the (tiny) range of equal ones
            for i in np.flatnonzero(same_hi & (found < 0)).tolist():
                j = position[i] + 1
                while j < len(hi) and hi[j] == keys[i, 0]:
                    if run_keys[j, 1] == keys[i, 1]:
                        found[i] = run_rows[j]
                        break
                    j += 1
        return found


class EmbeddingStore:
    """One namespace folder: append-only shards of vectors and keys, indexed in memory.

    Vector files are memory-mapped only while vectors are gathered from them: a memory map holds a
    file descriptor, and a namespace may have thousands of shards.
    """

    def __init__(self, folder: Path, settings: dict[str, Any]) -> None:
        self.folder = folder
        self.settings = settings
        self.cacheable = True  # False once the model is seen returning something other than dense rows
        self._index = _KeyIndex()
        self._shards: list[Path | np.ndarray] = []  # a file, or the vectors themselves if they could not be written
        self._sha256: list[bytes] = []  # each shard's vectors-file checksum (b"" for vectors held in memory)
        self._verified: set[int] = set()  # shards whose vectors file this process has checked
        self._starts: list[int] = []  # global row of each shard's first vector
        self._rows = 0
        self._width: tuple[int, np.dtype] | None = None  # dimension and dtype of the namespace
        self._seen: set[str] = set()  # shard names already loaded or rejected

    def refresh(self) -> None:
        """Index the shards written since the last look (by this or any other process)."""
        if not self.folder.is_dir():
            return
        names = sorted(entry.name[:-len(".keys")] for entry in os.scandir(self.folder)
                       if entry.name.endswith(".keys") and not entry.name.startswith("."))
        new_keys = []
        for name in names:
            if name not in self._seen and self.folder / f"{name}.npy" not in _DAMAGED:
                self._seen.add(name)
                keys = self._load(name)
                if keys is not None:
                    new_keys.append(keys)
        if new_keys:  # one sort for all of them
            keys = np.concatenate(new_keys)
            self._index.add(keys, self._rows - len(keys))

    def _load(self, name: str) -> np.ndarray | None:
        """Register one shard's vectors and return its keys, or warn and return None if it is damaged."""
        vectors_path = self.folder / f"{name}.npy"
        try:
            keys, vectors_sha256 = _read_keys_file((self.folder / f"{name}.keys").read_bytes())
            vectors = np.load(vectors_path, mmap_mode="r", allow_pickle=False)  # checks the size, reads no data
            problem = self._problem(len(keys), vectors)
        except (OSError, ValueError, EOFError) as error:
            problem = f"{type(error).__name__}: {error}"
        if problem:
            warnings.warn(f"embedding cache: skipping unreadable shard {vectors_path} ({problem})",
                          EmbeddingCacheWarning, stacklevel=3)
            return None
        self._append(vectors_path, vectors, vectors_sha256)
        return keys

    def _problem(self, n_keys: int, vectors: np.ndarray) -> str | None:
        if vectors.ndim != 2 or vectors.dtype.kind not in "fiu":
            return f"expected a 2-D numeric array, got shape {vectors.shape} of {vectors.dtype}"
        if n_keys != vectors.shape[0]:
            return f"{n_keys} keys for {vectors.shape[0]} vectors"
        if self._width is not None and vectors.shape[1] != self._width[0]:
            return f"dimension {vectors.shape[1]}, the namespace has {self._width[0]}"
        return None

    def _append(self, shard: Path | np.ndarray, vectors: np.ndarray, sha256: bytes) -> None:
        if self._width is None:
            self._width = (vectors.shape[1], vectors.dtype)
        self._shards.append(shard)
        self._sha256.append(sha256)
        self._starts.append(self._rows)
        self._rows += len(vectors)

    def locate(self, keys: np.ndarray) -> np.ndarray:
        """The global row of each key, or -1 where it is not stored."""
        return self._index.locate(keys)

    def _verify(self, shard: int, path: Path) -> None:
        """Hash the vectors file once per process; DamagedShard if it is not what was written."""
        if shard in self._verified:
            return
        try:
            found = bytes.fromhex(file_digest(path))
        except OSError as error:
            raise DamagedShard(path, f"cannot read it ({error})") from None
        if found != self._sha256[shard]:
            raise DamagedShard(path, f"SHA-256 {found.hex()[:16]}..., written as {self._sha256[shard].hex()[:16]}...")
        self._verified.add(shard)

    def gather(self, rows: np.ndarray) -> np.ndarray:
        """The vectors at the given global rows (all of which must be stored), in that order.

        Raises:
            DamagedShard: a vectors file read for the first time by this process fails its checksum.
        """
        assert self._width is not None
        out = np.empty((len(rows), self._width[0]), dtype=self._width[1])
        shard_of = self._shard_of(rows)
        for shard in np.unique(shard_of).tolist():
            where = np.flatnonzero(shard_of == shard)
            local = rows[where] - self._starts[shard]
            order = np.argsort(local)  # read the file front to back
            source = self._shards[shard]
            if isinstance(source, Path):
                self._verify(shard, source)
            vectors = np.load(source, mmap_mode="r") if isinstance(source, Path) else source
            out[where[order]] = vectors[local[order]]
            del vectors  # closes the memory map
        return out

    def add(self, keys: np.ndarray, vectors: np.ndarray) -> None:
        """Write one shard (vectors first, keys last, each renamed into place) and index it.

        If the folder cannot be written (read-only, disk full) the vectors stay in memory for this process.
        """
        name = f"{time.time_ns():020d}-{os.getpid()}-{secrets.token_hex(4)}"
        shard: Path | np.ndarray = self.folder / f"{name}.npy"
        npy = io.BytesIO()
        np.save(npy, vectors, allow_pickle=False)
        sha256 = hashlib.sha256(npy.getbuffer()).digest()
        try:
            if not (self.folder / "settings.json").exists():  # for people browsing the cache
                with atomic_write(self.folder / "settings.json") as handle:
                    json.dump(self.settings, handle, indent=1, ensure_ascii=False)
            with atomic_write(shard, "wb") as handle:
                handle.write(npy.getbuffer())
            with atomic_write(self.folder / f"{name}.keys", "wb") as handle:
                handle.write(_keys_file(keys, sha256))
        except (OSError, DatasetError) as error:
            warnings.warn(f"embedding cache: cannot write to {self.folder} ({error}); keeping the vectors in "
                          "memory only", EmbeddingCacheWarning, stacklevel=2)
            shard, sha256 = vectors, b""
        self._seen.add(name)
        self._index.add(keys, self._rows)
        self._append(shard, vectors, sha256)

    def _shard_of(self, rows: np.ndarray) -> np.ndarray:
        return np.searchsorted(self._starts, rows, side="right") - 1

    def check_readable(self, rows: np.ndarray) -> None:
        """Raises DamagedShard for a shard file holding these stored rows that fails its checksum."""
        for shard in np.unique(self._shard_of(rows)).tolist():
            source = self._shards[shard]
            if isinstance(source, Path):
                self._verify(shard, source)

    def on_disk(self, rows: np.ndarray) -> np.ndarray:
        """Which of these stored rows a later process can read: in a shard file whose checksum holds."""
        readable = np.zeros(len(rows), dtype=bool)
        shard_of = self._shard_of(rows)
        for shard in np.unique(shard_of).tolist():
            if not isinstance(self._shards[shard], Path):
                continue  # held in memory only: lost with this process
            try:
                self.check_readable(rows[shard_of == shard][:1])
            except DamagedShard as damage:
                warnings.warn(f"embedding cache: {damage}", EmbeddingCacheWarning, stacklevel=2)
                continue
            readable[shard_of == shard] = True
        return readable


_STORES: dict[Path, EmbeddingStore] = {}
# vectors files found damaged by this process: never indexed again, even if they could not be renamed
_DAMAGED: set[Path] = set()


def open_store(root: Path, settings: dict[str, Any]) -> EmbeddingStore:
    """The process-wide store of a namespace, read from disk on first use only."""
    folder = namespace_folder(root, settings).resolve()
    store = _STORES.get(folder)
    if store is None:
        store = _STORES[folder] = EmbeddingStore(folder, settings)
        store.refresh()
    return store


def forget_loaded_stores() -> None:
    """Drop the in-process memo (the next lookup re-reads the folders), e.g. after deleting a cache."""
    _STORES.clear()
    _DAMAGED.clear()


def set_aside(store: EmbeddingStore, damage: DamagedShard) -> None:
    """Report a damaged shard and make sure neither this process nor a later one reads it again."""
    keys_path = damage.path.with_suffix(".keys")
    try:
        kept = f"set aside as {move_aside(keys_path, DAMAGED_SUFFIX).name}"
    except (OSError, DatasetError) as error:
        kept = f"left in place ({error}), ignored by this process"
    warnings.warn(f"embedding cache: {damage.path} does not match the checksum written with it ({damage.detail}); "
                  f"{kept}, its items are encoded again", EmbeddingCacheWarning, stacklevel=3)
    _DAMAGED.add(damage.path)
    _STORES.pop(store.folder, None)


def forget_store(store: EmbeddingStore) -> None:
    """Drop one namespace from the in-process memo (its folder changed under this process)."""
    _STORES.pop(store.folder, None)


class ReadBack:
    """Counts items as a later process finds them in the cache: indexed from the files on disk (not
    this process's memory) and in a shard whose vectors file still matches its checksum."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._stores: dict[Path, EmbeddingStore] = {}

    def count(self, settings: dict[str, Any], keys: np.ndarray) -> int:
        """How many of ``keys`` (of the namespace ``settings``) are stored and readable."""
        folder = namespace_folder(self.root, settings)
        store = self._stores.setdefault(folder, EmbeddingStore(folder, settings))
        store.refresh()  # reads only the shards written since the last count
        rows = store.locate(keys)
        return int(store.on_disk(rows[rows >= 0]).sum())
