"""The MTEB encoder wrapper: vectors from the store, the model encoding only the items it lacks."""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from airbench_mteb.models.embedding_cache.keys import item_keys, key_fields, namespace_settings
from airbench_mteb.models.embedding_cache.store import (
    DamagedShard,
    EmbeddingCacheWarning,
    EmbeddingStore,
    cache_dir,
    forget_store,
    open_store,
    set_aside,
)

logger = logging.getLogger(__name__)

# Missing items are encoded and saved this many at a time: the unit of resumption.
CHUNK_SIZE = 4096


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


def length_order(dataset: Any, indices: np.ndarray) -> np.ndarray:
    """``indices`` (rows of ``dataset``) longest text first, equal lengths in input order.

    Length is counted in characters, as sentence-transformers sorts within a call; a block encoded in
    this order is batched among texts of like length, so batches carry little padding.
    """
    import pyarrow.compute as pc

    texts = dataset.select_columns(["text"]).with_format("arrow")[:]["text"]
    lengths = pc.fill_null(pc.utf8_length(texts), 0).to_numpy(zero_copy_only=False)[indices]
    return indices[np.argsort(-lengths, kind="stable")]


def _in_input_order(output: Any, order: np.ndarray) -> Any:
    """The model's output for rows encoded in ``order``, put back in input order; None if it cannot be."""
    inverse = np.argsort(order)
    if isinstance(output, np.ndarray) and output.shape[:1] == order.shape:
        return output[inverse]
    try:
        import torch

        if isinstance(output, torch.Tensor) and output.shape[0] == len(order):
            return output.index_select(0, torch.as_tensor(inverse, device=output.device))  # strided or sparse
    except ImportError:
        pass
    if isinstance(output, list) and len(output) == len(order):
        return [output[i] for i in inverse]
    return None


class CachedEncoder:
    """An MTEB encoder that encodes each block of documents in length order and, with a ``root``, takes
    vectors from the content-keyed store and encodes only what is missing (``root`` None: no store)."""

    def __init__(self, model: Any, root: Path | None) -> None:
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
        if self.root is None:
            return None
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
        if self.root is None:
            return self._encode_in_length_order(inputs, run, kwargs)
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
                forget_store(store)
                return run(inputs)
        return run(inputs)

    def _encode_in_length_order(self, inputs: Any, run: Callable[[Any], Any], kwargs: dict[str, Any]) -> Any:
        """The whole block encoded longest first and put back in input order (no store)."""
        if key_fields(inputs) is None or "text" not in inputs.dataset.column_names or len(inputs.dataset) < 2:
            return run(inputs)
        order = length_order(inputs.dataset, np.arange(len(inputs.dataset)))
        restored = _in_input_order(run(_subset_loader(inputs, order.tolist(), kwargs.get("batch_size", 32))), order)
        if restored is None:  # an output this wrapper cannot reorder: the model's own, in input order
            logger.info("%s returns an output that cannot be reordered; encoding in input order",
                        self.mteb_model_meta.name)
            return run(inputs)
        return restored

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
        missing = np.sort(absent[first])
        # longest first, so each chunk's batches hold texts of like length (the store restores input order)
        missing = (length_order(inputs.dataset, missing) if "text" in inputs.dataset.column_names else missing).tolist()
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
                # the whole input in one chunk (a permutation of it): reorder the output, not encode again
                restored = _in_input_order(output, np.asarray(chunk)) if len(chunk) == len(keys) else None
                return run(inputs) if restored is None else restored
            store.add(keys[chunk], vectors)
        return None


def with_embedding_cache(model: Any) -> Any:
    """``model`` wrapped in a :class:`CachedEncoder` when it is a plain MTEB encoder; otherwise ``model`` itself.

    Search models (which index and search themselves) and already wrapped models are returned
    unchanged. While the cache is switched off, and for models without a name and revision to key
    on, the wrapper has no store: it still encodes each block in length order.
    """
    from mteb.models import EncoderProtocol, SearchProtocol

    if isinstance(model, CachedEncoder) or not isinstance(model, EncoderProtocol) or isinstance(model, SearchProtocol):
        return model
    root = cache_dir()
    meta = getattr(model, "mteb_model_meta", None)
    name, revision = getattr(meta, "name", None), getattr(meta, "revision", None)
    if name in (None, "no_model_name/available") or revision in (None, "no_revision_available"):
        root = None
    return CachedEncoder(model, root)
