"""Corpus encoding on a Ray cluster, into the content-keyed embedding cache a later ``mteb run`` reads.

Ray Data spreads row ranges of every corpus over a fixed pool of actors (one model instance each,
``gpus_per_worker`` GPUs each); the actors write into the cache folder, which every worker must be
able to reach (local disk for one machine; NFS or a mounted bucket for several). Ray restarts a
killed actor and retries its range; the cache makes the retry, or a rerun after a crash, encode
only the documents not stored yet.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mteb import AbsTask

from airbench_mteb.data.errors import DatasetError
from airbench_mteb.distributed.corpora import corpus_sources, row_ranges
from airbench_mteb.models.embedding_cache import CHUNK_SIZE, cache_dir


@dataclass(frozen=True)
class EncodeSummary:
    model: str
    revision: str
    corpora: int  # distinct (task, corpus) pairs
    documents: int  # corpus rows looked at
    encoded: int  # documents the model encoded; the others were in the cache already
    workers: int
    seconds: float  # from the first range sent to the last range done (actor start-up included)
    cache_root: Path

    def line(self) -> str:
        return (f"{self.model} ({self.revision}): {self.corpora} corpora, {self.documents:,} documents, "
                f"{self.encoded:,} encoded ({self.documents - self.encoded:,} already cached) by "
                f"{self.workers} worker(s) in {self.seconds:.1f} s into {self.cache_root}")


def _connect(ray_address: str | None) -> bool:
    """Join the cluster at ``ray_address`` (None: start a local one); True if this call did it."""
    import ray

    if ray.is_initialized():
        return False
    ray.init(address=ray_address, include_dashboard=False if ray_address is None else None)
    return True


def encode_corpora(model_name: str, tasks: Sequence[AbsTask], *, ray_address: str | None = None,
                   num_workers: int = 1, gpus_per_worker: float = 0, batch_size: int = 32,
                   cache_root: Path | None = None, rows_per_block: int = CHUNK_SIZE,
                   loader_kwargs: Mapping[str, Any] | None = None) -> EncodeSummary:
    """Encode every corpus of ``tasks`` with ``model_name`` (a name ``mteb.get_model`` knows) on Ray.

    Args:
        ray_address: a running cluster (``ray start --head`` prints it; ``auto`` finds a local one);
            None starts a local cluster for this call.
        num_workers: actors, each with its own model instance.
        gpus_per_worker: GPUs Ray reserves for each actor (0: CPU).
        batch_size: the encode batch size (does not change the vectors, hence not the cache keys).
        cache_root: the embedding cache folder; default: the one ``mteb run`` uses.
        rows_per_block: documents per unit of work sent to an actor (and lost, at most, with one).
        loader_kwargs: passed to the model loader like ``mteb.get_model(..., **kwargs)``, e.g.
            ``{"model_kwargs": {"torch_dtype": "float16"}}``; the later run must load it the same way.
    """
    import mteb
    import ray

    root = cache_root or cache_dir()
    if root is None:
        raise DatasetError("the embedding cache is switched off; encoding would store nothing")
    if num_workers < 1 or rows_per_block < 1:
        raise ValueError("num_workers and rows_per_block must be at least 1")
    meta = mteb.get_model_meta(model_name)
    from airbench_mteb.distributed.worker import CorpusEncoder

    started_ray = _connect(ray_address)
    try:
        sources = corpus_sources(tasks)
        work = row_ranges(sources, rows_per_block)
        started = time.perf_counter()
        done = [] if not work else ray.data.from_items(work, override_num_blocks=len(work)).map_batches(
            CorpusEncoder, batch_size=1, batch_format="numpy", compute=ray.data.ActorPoolStrategy(size=num_workers),
            num_gpus=gpus_per_worker or None,
            # with GPUs no device is named: the library takes the ones Ray made visible to the actor
            fn_constructor_kwargs={"model_meta": meta, "sources": sources, "cache_root": str(root),
                                   "device": None if gpus_per_worker else "cpu",
                                   "encode_kwargs": {"batch_size": batch_size, "show_progress_bar": False},
                                   "loader_kwargs": dict(loader_kwargs or {})},
        ).take_all()
        seconds = time.perf_counter() - started
    finally:
        if started_ray:
            ray.shutdown()
    return EncodeSummary(model=str(meta.name), revision=str(meta.revision), corpora=len(sources),
                         documents=sum(int(row["documents"]) for row in done),
                         encoded=sum(int(row["encoded"]) for row in done), workers=num_workers,
                         seconds=seconds, cache_root=root)
