"""Corpus encoding on a Ray cluster, into the content-keyed embedding cache a later ``mteb run`` reads.

Ray Data spreads row ranges of every corpus over a fixed pool of actors (one model instance each,
``gpus_per_worker`` GPUs each); the actors write into the cache folder, which every worker must be
able to reach (local disk for one machine; NFS or a mounted bucket for several). Ray restarts a
killed actor and retries its range; the cache makes the retry, or a rerun after a crash, encode
only the documents not stored yet. Everything a user can get wrong (options, the cache folder, a
model that is not an encoder) is checked before Ray starts, and the summary counts only what this
process reads back from the cache folder.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from mteb import AbsTask

from airbench_mteb.data.errors import DatasetError, OptionError
from airbench_mteb.distributed.corpora import CorpusSource, corpus_sources, row_ranges
from airbench_mteb.models.embedding_cache import CHUNK_SIZE, ReadBack, cache_dir, writable_cache_root


@dataclass(frozen=True)
class EncodeSummary:
    model: str
    revision: str
    corpora: int  # distinct (task, corpus) pairs
    documents: int  # corpus rows looked at
    encoded: int  # documents the model encoded; the others were in the cache already
    stored: int  # documents whose vectors the driver read back from the cache folder afterwards
    workers: int
    seconds: float  # from the first range sent to the last range read back (actor start-up included)
    cache_root: Path

    @property
    def complete(self) -> bool:
        """Whether a later run with this cache finds every document's vector (and so encodes none)."""
        return self.stored == self.documents

    def line(self) -> str:
        return (f"{self.model} ({self.revision}): {self.corpora} corpora, {self.documents:,} documents, "
                f"{self.encoded:,} encoded ({self.documents - self.encoded:,} already cached), {self.stored:,} "
                f"stored and read back, by {self.workers} worker(s) in {self.seconds:.1f} s into {self.cache_root}")


def check_options(*, num_workers: int, gpus_per_worker: float, batch_size: int, rows_per_block: int) -> None:
    """Every option in its range, before Ray starts; OptionError naming the option otherwise."""
    for name, value in (("num_workers", num_workers), ("batch_size", batch_size), ("rows_per_block", rows_per_block)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise OptionError(f"{name} (--{name.replace('_', '-')}) must be a whole number of at least 1, "
                              f"got {value!r}")
    if isinstance(gpus_per_worker, bool) or not isinstance(gpus_per_worker, (int, float)) \
            or not math.isfinite(gpus_per_worker) or gpus_per_worker < 0:
        raise OptionError(f"gpus_per_worker (--gpus-per-worker) must be a number of at least 0 (0: CPU), "
                          f"got {gpus_per_worker!r}")


def encoder_meta(model_name: str) -> Any:
    """The mteb ModelMeta of ``model_name`` if it makes dense vectors, the only kind the cache holds."""
    import mteb

    meta = mteb.get_model_meta(model_name)
    if "dense" not in meta.model_type:
        raise OptionError(f"{model_name} is a {'/'.join(meta.model_type)} model, not an encoder of dense vectors: "
                          "the embedding cache has nothing to keep for it (it is run with `run` directly)")
    return meta


def _connect(ray_address: str | None) -> bool:
    """Join the cluster at ``ray_address`` (None: start a local one); True if this call did it."""
    import ray

    if ray.is_initialized():
        return False
    ray.init(address=ray_address, include_dashboard=False if ray_address is None else None)
    return True


def check_resources(num_workers: int, gpus_per_worker: float) -> None:
    """Room on the cluster's nodes for every worker's GPUs (a worker's share cannot span nodes): Ray would
    wait without a word for GPUs no node has, e.g. a fractional GPU on machines without one.

    Raises:
        OptionError: naming both options and the GPUs of the cluster's nodes.
    """
    import ray

    if not gpus_per_worker:
        return
    per_node = [float(node["Resources"].get("GPU", 0)) for node in ray.nodes() if node.get("Alive")]
    room = sum(math.floor(gpus / gpus_per_worker + 1e-9) for gpus in per_node)
    if room < num_workers:
        gpus = ", ".join(f"{count:g}" for count in per_node)
        raise OptionError(f"--num-workers {num_workers} with --gpus-per-worker {gpus_per_worker:g}: the Ray cluster's "
                          f"{len(per_node)} node(s) have {gpus} GPU(s), room for {room} such worker(s); Ray would "
                          "wait for them forever (use --gpus-per-worker 0 to encode on CPUs)")


def _read_back(batches: Iterable[dict[str, np.ndarray]], sources: Sequence[CorpusSource], root: Path
               ) -> tuple[int, int, int]:
    """Documents, encoded and stored-and-readable counts of the finished ranges, as they arrive.

    Raises:
        DatasetError: a worker's error, in one line naming the corpus and rows it was working on.
    """
    read_back = ReadBack(root)
    documents = encoded = stored = 0
    for batch in batches:
        for row in range(len(batch["corpus"])):
            source = sources[int(batch["corpus"][row])]
            if batch["error"][row]:
                raise DatasetError(f"a Ray worker failed on {source.task_metadata.name} ({source.hf_subset}, "
                                   f"corpus rows {batch['start'][row]}-{batch['stop'][row]}): {batch['error'][row]}")
            documents += int(batch["documents"][row])
            encoded += int(batch["encoded"][row])
            if batch["namespace"][row]:
                keys = np.frombuffer(batch["keys"][row], dtype="<u8").reshape(-1, 2)
                stored += read_back.count(json.loads(batch["namespace"][row]), keys)
    return documents, encoded, stored


def encode_corpora(model_name: str, tasks: Sequence[AbsTask], *, ray_address: str | None = None,
                   num_workers: int = 1, gpus_per_worker: float = 0, batch_size: int = 32,
                   cache_root: Path | None = None, rows_per_block: int = CHUNK_SIZE,
                   loader_kwargs: Mapping[str, Any] | None = None) -> EncodeSummary:
    """Encode every corpus of ``tasks`` with ``model_name`` (a name ``mteb.get_model`` knows) on Ray.

    The options, the cache folder and the model are checked before Ray starts. Afterwards this
    process reads every range back from the cache folder (indexed from disk, vectors files checked
    against their checksums): ``stored`` counts what a later run on this machine will find.

    Args:
        ray_address: a running cluster (``ray start --head`` prints it; ``auto`` finds a local one);
            None starts a local cluster for this call.
        num_workers: actors, each with its own model instance (at least 1).
        gpus_per_worker: GPUs Ray reserves for each actor (0: CPU).
        batch_size: the encode batch size (does not change the vectors, hence not the cache keys).
        cache_root: the embedding cache folder; default: the one ``mteb run`` uses.
        rows_per_block: documents per unit of work sent to an actor (and lost, at most, with one).
        loader_kwargs: passed to the model loader like ``mteb.get_model(..., **kwargs)``, e.g.
            ``{"model_kwargs": {"torch_dtype": "float16"}}``; the later run must load it the same way.

    Raises:
        OptionError: an option out of range, a model that makes no dense vectors, or more GPUs per worker
            than the cluster's nodes have.
        SettingsError: a cache that is switched off or not a writable folder.
        DatasetError: a worker's error (its own message, in one line).
    """
    import ray

    check_options(num_workers=num_workers, gpus_per_worker=gpus_per_worker, batch_size=batch_size,
                  rows_per_block=rows_per_block)
    root = writable_cache_root(cache_root or cache_dir())
    meta = encoder_meta(model_name)
    from airbench_mteb.distributed.worker import CorpusEncoder

    started_ray = _connect(ray_address)
    try:
        check_resources(num_workers, gpus_per_worker)
        sources = corpus_sources(tasks)
        work = row_ranges(sources, rows_per_block)
        started = time.perf_counter()
        batches = [] if not work else ray.data.from_items(work, override_num_blocks=len(work)).map_batches(
            CorpusEncoder, batch_size=1, batch_format="numpy", compute=ray.data.ActorPoolStrategy(size=num_workers),
            num_gpus=gpus_per_worker or None,
            # with GPUs no device is named: the library takes the ones Ray made visible to the actor
            fn_constructor_kwargs={"model_meta": meta, "sources": sources, "cache_root": str(root),
                                   "device": None if gpus_per_worker else "cpu",
                                   "encode_kwargs": {"batch_size": batch_size, "show_progress_bar": False},
                                   "loader_kwargs": dict(loader_kwargs or {})},
        ).iter_batches(batch_size=None, batch_format="numpy")
        documents, encoded, stored = _read_back(batches, sources, root)
        seconds = time.perf_counter() - started
    finally:
        if started_ray:
            ray.shutdown()
    return EncodeSummary(model=str(meta.name), revision=str(meta.revision), corpora=len(sources),
                         documents=documents, encoded=encoded, stored=stored, workers=num_workers,
                         seconds=seconds, cache_root=root)
