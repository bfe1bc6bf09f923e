"""A content-keyed embedding cache, so a corpus shared by splits, subsets, tasks or runs is encoded once.

:func:`with_embedding_cache` wraps an MTEB encoder. Its ``encode`` hashes every input exactly as the
model receives it (after MTEB joined a document's title and text, or a query and its instruction),
looks the hashes up in a store, and hands only the missing items to the wrapped model.

What makes two encodings interchangeable decides where a vector is stored:

* the **namespace** (one folder) is the model name and revision, its ``experiment_kwargs``, the encode
  keyword arguments that can change vectors (everything but batch size, progress bar and worker
  counts), the prompt type and the prompt or instruction the model applies for this task. The task
  name itself is not part of it, so a model without task-specific prompts shares one corpus across
  tasks, splits and subsets;
* the **key** of an item is a hash of every field of the row the model receives except its id.

On disk (``$AIRBENCH_MTEB_EMBEDDING_CACHE``, default ``~/.cache/airbench_mteb/embeddings``; ``0`` or
``off`` disables the cache) a namespace is a folder of append-only shards: ``<shard>.npy`` holds
the vectors and ``<shard>.keys`` their 16-byte keys followed by a checksum trailer, the SHA-256 of
the vectors file and of the keys (``settings.json`` says what the folder is for). Each file is
written to a temporary name and renamed; the keys file is renamed last, so a shard without one is
unfinished and ignored, and a damaged one is skipped with a warning. Missing items are encoded and
saved in chunks, so an interrupted run resumes from the last saved chunk. Each process reads a
namespace's keys once (into sorted numpy arrays, checked against their checksum) and memory-maps
the vectors only to copy out the rows it needs.

Bulk encoding (``airbench-mteb encode``) first checks the folder with :func:`writable_cache_root`,
stores items without reading their vectors back in the worker (:meth:`CachedEncoder.fill`), and
counts with :class:`ReadBack` only what a fresh look at the folder finds, checksums included.

Vectors are never used unchecked: the first time a process gathers from a shard it hashes the whole
vectors file (SHA-256, about 0.8 s per GiB on one core here). A shard whose bytes changed after it
was written (bit rot, a bad copy, an edit) is reported by name, set aside (its keys file renamed to
``<shard>.keys.damaged``) and its items encoded again.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import os
import secrets
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from airbench_mteb.data.errors import DatasetError
from airbench_mteb.data.files import atomic_write
from airbench_mteb.data.fingerprint import file_digest
from airbench_mteb.settings import EMBEDDING_CACHE_ENV, SettingsError, current_settings

logger = logging.getLogger(__name__)

# Encode kwargs that change how the work is scheduled, never the vectors.
_NEUTRAL_KWARGS = frozenset({"batch_size", "show_progress_bar", "num_proc", "num_workers"})
_KEY_BYTES = 16
# Missing items are encoded and saved this many at a time: the unit of resumption.
CHUNK_SIZE = 4096
# 2: keys files end with a checksum trailer (shards of format 1 have none and are never read)
_FORMAT = 2
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


# --------------------------------------------------------------------------- the store


def _as_keys(raw: bytes) -> np.ndarray:
    """16-byte keys as rows of two little-endian uint64, so they sort and search in numpy."""
    return np.frombuffer(raw, dtype="<u8").reshape(-1, 2)


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
    return _as_keys(raw), vectors_sha256


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
        os.replace(keys_path, keys_path.with_name(keys_path.name + DAMAGED_SUFFIX))
        kept = f"set aside as {keys_path.name}{DAMAGED_SUFFIX}"
    except OSError as error:
        kept = f"left in place ({error}), ignored by this process"
    warnings.warn(f"embedding cache: {damage.path} does not match the checksum written with it ({damage.detail}); "
                  f"{kept}, its items are encoded again", EmbeddingCacheWarning, stacklevel=3)
    _DAMAGED.add(damage.path)
    _STORES.pop(store.folder, None)


# --------------------------------------------------------------------------- keys


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, sort_keys=True, default=repr))


def applied_prompt(model: Any, task_metadata: Any, prompt_type: Any) -> str | None:
    """The prompt or instruction ``model`` adds for this task and prompt type, as mteb's wrappers pick it."""
    from mteb.models.abs_encoder import get_prompt
    from mteb.types import PromptType

    parts: list[str] = []
    model_prompts = getattr(model, "model_prompts", None)
    if isinstance(model_prompts, dict) and model_prompts:
        parts.append(get_prompt(model_prompts, task_metadata, prompt_type) or "")
    uses_instructions = getattr(model, "instruction_template", None) or getattr(model, "prompts_dict", None)
    skips_passages = prompt_type == PromptType.document and getattr(model, "apply_instruction_to_passages", True) is False
    if uses_instructions and callable(getattr(model, "get_task_instruction", None)) and not skips_passages:
        parts.append(model.get_task_instruction(task_metadata, prompt_type) or "")
    return "\x00".join(parts) if parts else None


def namespace_settings(model: Any, task_metadata: Any, prompt_type: Any, encode_kwargs: dict[str, Any]
                       ) -> dict[str, Any]:
    """Everything besides an item's own content that decides its vector."""
    meta = model.mteb_model_meta
    return _jsonable({
        "format": _FORMAT,
        "model": meta.name,
        "revision": meta.revision,
        "experiment_kwargs": dict(meta.experiment_kwargs or {}),
        "prompt_type": getattr(prompt_type, "value", prompt_type),
        "prompt": applied_prompt(model, task_metadata, prompt_type),
        "encode_kwargs": {k: v for k, v in encode_kwargs.items() if k not in _NEUTRAL_KWARGS},
    })


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text).strip(".") or "_"


def namespace_folder(root: Path, settings: dict[str, Any]) -> Path:
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:16]
    return root / _slug(settings["model"]) / _slug(settings["revision"]) / f"{settings['prompt_type'] or 'none'}-{digest}"


def key_fields(inputs: Any) -> list[str] | None:
    """The columns an encoder may read from a row of the loader's dataset, or None if the cache cannot serve it.

    It cannot when the loader is not over a ``datasets.Dataset`` read in order, or when its rows hold
    more than plain values (images, audio, conversations).
    """
    from datasets import Dataset, Value
    from torch.utils.data import SequentialSampler

    dataset = getattr(inputs, "dataset", None)
    if not isinstance(dataset, Dataset) or not isinstance(getattr(inputs, "sampler", None), SequentialSampler):
        return None
    fields = sorted(name for name in dataset.column_names if name != "id")
    if not fields or not all(isinstance(dataset.features[name], Value) for name in fields):
        return None
    return fields


def item_keys(dataset: Any, fields: list[str]) -> np.ndarray:
    """A 16-byte hash per row over the named fields, each length-prefixed so no two rows can collide by concatenation."""
    columns = [dataset[name] for name in fields]
    labels = [name.encode() for name in fields]
    keys = []
    for values in zip(*columns, strict=True):
        digest = hashlib.blake2b(digest_size=_KEY_BYTES)
        for label, value in zip(labels, values, strict=True):
            data = (value if isinstance(value, str) else json.dumps(value)).encode("utf-8", "surrogatepass")
            digest.update(label + b"\x00" + len(data).to_bytes(8, "little") + data)
        keys.append(digest.digest())
    return _as_keys(b"".join(keys))


# --------------------------------------------------------------------------- the wrapper


def _dense_rows(output: Any, rows: int) -> np.ndarray | None:
    """``output`` as a 2-D numpy array of ``rows`` rows, or None if it is not one (sparse, ragged...)."""
    try:
        import torch

        if isinstance(output, torch.Tensor):
            if output.layout != torch.strided:
                return None
            output = output.detach().cpu()
            output = (output.float() if output.dtype == torch.bfloat16 else output).numpy()
    except ImportError:
        pass
    try:
        array = np.asarray(output)
    except (ValueError, TypeError):
        return None
    if array.ndim != 2 or array.shape[0] != rows or array.dtype.kind not in "fiu":
        return None
    return array


def _subset_loader(inputs: Any, indices: list[int], batch_size: int) -> Any:
    """A loader over some rows of ``inputs``' already prepared dataset, batched and collated the same way.

    Re-running mteb's dataloader preparation on prepared rows would apply it twice (a title joined
    to a text that already starts with it), so the model would see other text than the key says.
    """
    from torch.utils.data import DataLoader

    return DataLoader(inputs.dataset.select(indices), batch_size=inputs.batch_size or batch_size,
                      collate_fn=inputs.collate_fn, num_workers=inputs.num_workers, shuffle=False)


class CachedEncoder:
    """An MTEB encoder that takes vectors from the content-keyed store and encodes only what is missing."""

    def __init__(self, model: Any, root: Path) -> None:
        self.wrapped = model
        self.root = root

    @property
    def mteb_model_meta(self) -> Any:
        return self.wrapped.mteb_model_meta

    def __getattr__(self, name: str) -> Any:
        # Only reached for attributes this class lacks; "wrapped" itself must not recurse.
        if name == "wrapped":
            raise AttributeError(name)
        return getattr(self.wrapped, name)

    def similarity(self, embeddings1: Any, embeddings2: Any) -> Any:
        return self.wrapped.similarity(embeddings1, embeddings2)

    def similarity_pairwise(self, embeddings1: Any, embeddings2: Any) -> Any:
        return self.wrapped.similarity_pairwise(embeddings1, embeddings2)

    def _runner(self, task_metadata: Any, hf_split: str, hf_subset: str, prompt_type: Any,
                kwargs: dict[str, Any]) -> Callable[[Any], Any]:
        """The wrapped model's encode for a loader, with this call's arguments."""
        def run(loader: Any) -> Any:
            return self.wrapped.encode(loader, task_metadata=task_metadata, hf_split=hf_split,
                                       hf_subset=hf_subset, prompt_type=prompt_type, **kwargs)
        return run

    def _keyed(self, inputs: Any, task_metadata: Any, prompt_type: Any, kwargs: dict[str, Any]
               ) -> tuple[dict[str, Any], np.ndarray] | None:
        """The namespace settings and every item's key, or None when the cache cannot serve these inputs."""
        fields = key_fields(inputs)
        if fields is None or len(inputs.dataset) == 0:
            return None
        return namespace_settings(self.wrapped, task_metadata, prompt_type, kwargs), item_keys(inputs.dataset, fields)

    def fill(self, inputs: Any, *, task_metadata: Any, hf_split: str, hf_subset: str, prompt_type: Any = None,
             **kwargs: Any) -> tuple[dict[str, Any], np.ndarray] | None:
        """Encode and store the items of ``inputs`` the cache lacks, returning no vectors (for bulk encoding).

        Returns the namespace settings and every item's key, to look them up later (:class:`ReadBack`),
        or None when the cache cannot hold these items (then nothing is encoded, or nothing kept).
        """
        keyed = self._keyed(inputs, task_metadata, prompt_type, kwargs)
        if keyed is None:
            return None
        settings, keys = keyed
        run = self._runner(task_metadata, hf_split, hf_subset, prompt_type, kwargs)
        for _ in range(2):  # as in encode: a damaged shard is set aside and its items encoded again
            store = open_store(self.root, settings)
            if not store.cacheable or self._store_missing(store, keys, inputs, run, kwargs) is not None:
                return None
            try:
                store.check_readable(store.locate(keys))
                return keyed
            except DamagedShard as damage:
                set_aside(store, damage)
        return None

    def encode(self, inputs: Any, *, task_metadata: Any, hf_split: str, hf_subset: str,
               prompt_type: Any = None, **kwargs: Any) -> Any:
        run = self._runner(task_metadata, hf_split, hf_subset, prompt_type, kwargs)
        keyed = self._keyed(inputs, task_metadata, prompt_type, kwargs)
        if keyed is None:
            return run(inputs)
        settings, keys = keyed
        # a damaged shard is set aside and its items encoded again; damaged twice, the disk is failing
        for _ in range(2):
            store = open_store(self.root, settings)
            if not store.cacheable:
                return run(inputs)
            uncacheable = self._store_missing(store, keys, inputs, run, kwargs)
            if uncacheable is not None:
                return uncacheable
            try:
                return store.gather(store.locate(keys))
            except DamagedShard as damage:
                set_aside(store, damage)
            except (OSError, ValueError) as error:  # a shard deleted while in use
                warnings.warn(f"embedding cache: cannot read {store.folder} ({error}); encoding without it",
                              EmbeddingCacheWarning, stacklevel=2)
                _STORES.pop(store.folder, None)
                return run(inputs)
        return run(inputs)

    def _store_missing(self, store: EmbeddingStore, keys: np.ndarray, inputs: Any, run: Callable[[Any], Any],
                       kwargs: dict[str, Any]) -> Any:
        """Encode and store the items ``store`` lacks; returns None, or the model's own output for all of
        ``inputs`` when the model turns out not to return dense rows (which the cache cannot hold)."""
        rows = store.locate(keys)
        if (rows < 0).any():
            store.refresh()  # another process may have stored them meanwhile
            rows = store.locate(keys)
        absent = np.flatnonzero(rows < 0)
        _, first = np.unique(keys[absent], axis=0, return_index=True)  # a text repeated in the input is encoded once
        missing = np.sort(absent[first]).tolist()
        logger.info("embedding cache %s: %d of %d items stored, encoding %d", store.folder,
                    len(keys) - len(absent), len(keys), len(missing))
        chunks = [missing[start:start + CHUNK_SIZE] for start in range(0, len(missing), CHUNK_SIZE)]
        if len(chunks) > 1 and kwargs.get("show_progress_bar", True):
            from tqdm.auto import tqdm

            chunks = tqdm(chunks, desc="Encoding missing items", unit="chunk")
        for chunk in chunks:
            output = run(_subset_loader(inputs, chunk, kwargs.get("batch_size", 32)))
            vectors = _dense_rows(output, len(chunk))
            if vectors is None:
                store.cacheable = False
                logger.info("embedding cache: %s does not return dense rows; not caching it",
                            self.mteb_model_meta.name)
                return output if chunk == list(range(len(keys))) else run(inputs)
            store.add(keys[chunk], vectors)
        return None


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


def with_embedding_cache(model: Any) -> Any:
    """``model`` wrapped in a :class:`CachedEncoder` when it is a plain MTEB encoder; otherwise ``model`` itself.

    Search models (which index and search themselves), models without a name and revision to key
    on, already wrapped models, and everything while the cache is switched off are returned unchanged.
    """
    from mteb.models import EncoderProtocol, SearchProtocol

    if isinstance(model, CachedEncoder) or not isinstance(model, EncoderProtocol) or isinstance(model, SearchProtocol):
        return model
    root = cache_dir()
    meta = getattr(model, "mteb_model_meta", None)
    name, revision = getattr(meta, "name", None), getattr(meta, "revision", None)
    if root is None or name in (None, "no_model_name/available") or revision in (None, "no_revision_available"):
        return model
    return CachedEncoder(model, root)
