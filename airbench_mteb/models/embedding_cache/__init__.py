"""A content-keyed embedding cache, so a corpus shared by splits, subsets, tasks or runs is encoded once.

:func:`with_embedding_cache` wraps an MTEB encoder. Its ``encode`` hashes every input exactly as the
model receives it (after MTEB joined a document's title and text, or a query and its instruction),
looks the hashes up in a store, and hands only the missing items to the wrapped model, longest text
first, so its batches hold texts of like length (little padding); the store gives the vectors back in
input order. With the cache off the same wrapper has no store: each block is encoded longest first and
its vectors put back in input order.

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

Three modules, one job each: :mod:`.keys` (namespaces and item keys), :mod:`.store` (the shard
files, their index and checksums) and :mod:`.wrapper` (the MTEB encoder that uses them).
"""

from __future__ import annotations

from airbench_mteb.models.embedding_cache.keys import namespace_settings
from airbench_mteb.models.embedding_cache.store import (
    EmbeddingCacheWarning,
    ReadBack,
    cache_dir,
    forget_loaded_stores,
    writable_cache_root,
)
from airbench_mteb.models.embedding_cache.wrapper import CHUNK_SIZE, CachedEncoder, with_embedding_cache

__all__ = ["CHUNK_SIZE", "CachedEncoder", "EmbeddingCacheWarning", "ReadBack", "cache_dir", "forget_loaded_stores",
           "namespace_settings", "with_embedding_cache", "writable_cache_root"]
