"""The MTEB encoder wrapper: vectors from the store, the model encoding only the items it lacks."""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from airbench_mteb.models.embedding_cache.keys import item_keys, key_fields, namespace_settings
from airbench_mteb.models.embedding_cache.ordering import encode_in_calls, in_input_order, length_order, token_counter
from airbench_mteb.models.embedding_cache.store import (
    DamagedShard,
    EmbeddingCacheWarning,
    EmbeddingStore,
    cache_dir,
    forget_store,
    open_store,
    set_aside,
)
from airbench_mteb.models.tokenizer_threads import tokenizer_threads
from airbench_mteb.mteb_compat import vectors_on_device_kwargs

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


class CachedEncoder:
    """An MTEB encoder that encodes each block of documents in length order and, with a ``root``, takes
    vectors from the content-keyed store and encodes only what is missing (``root`` None: no store)."""

    def __init__(self, model: Any, root: Path | None) -> None:
        self.wrapped = model
        self.root = root
        self._count_tokens = token_counter(model)  # None: blocks are ordered by characters

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
                kwargs: dict[str, Any]) -> Callable[[Any, bool], Any]:
        """The wrapped model's encode of a loader with this call's arguments (``quiet``: no progress bar of its
        own), the tokenizer's threads on and, for a sentence-transformers model, the vectors kept on its
        device until the call ends (returned as the numpy array they would have been)."""
        import torch

        extra = {name: value for name, value in vectors_on_device_kwargs(self.wrapped).items() if name not in kwargs}

        def run(loader: Any, quiet: bool = False) -> Any:
            arguments = {**kwargs, **extra, **({"show_progress_bar": False} if quiet else {})}
            with tokenizer_threads():
                output = self.wrapped.encode(loader, task_metadata=task_metadata, hf_split=hf_split,
                                             hf_subset=hf_subset, prompt_type=prompt_type, **arguments)
            if extra and isinstance(output, torch.Tensor) and output.layout == torch.strided and output.device.type == "cpu":
                return output.numpy()
            return output
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

    def _encode_in_length_order(self, inputs: Any, run: Callable[[Any, bool], Any], kwargs: dict[str, Any]) -> Any:
        """The whole block encoded in length order and put back in input order (no store)."""
        if key_fields(inputs) is None or "text" not in inputs.dataset.column_names or len(inputs.dataset) < 2:
            return run(inputs)
        rows, lengths = length_order(inputs.dataset, np.arange(len(inputs.dataset)), self._count_tokens)
        output = encode_in_calls(inputs, rows, lengths, run, kwargs.get("batch_size", 32),
                                progress=kwargs.get("show_progress_bar", True))
        restored = in_input_order(output, rows)
        if restored is None:  # an output this wrapper cannot reorder: the model's own, in input order
            logger.info("%s returns an output that cannot be reordered; encoding in input order",
                        self.mteb_model_meta.name)
            return run(inputs)
        return restored

    def _store_missing(self, store: EmbeddingStore, keys: np.ndarray, inputs: Any, run: Callable[[Any, bool], Any],
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
        # longest first, so each chunk's batches hold texts of one length (the store restores input order)
        missing, lengths = length_order(inputs.dataset, missing, self._count_tokens)
        logger.info("embedding cache %s: %d of %d items stored, encoding %d", store.folder,
                    len(keys) - len(absent), len(keys), len(missing))
        chunks = [slice(start, start + CHUNK_SIZE) for start in range(0, len(missing), CHUNK_SIZE)]
        # one bar over the texts, advanced after every call: a chunk takes minutes on a CPU (issue 36: a bar of
        # chunks, and none for a single one, left a piped run silent for minutes)
        from tqdm.auto import tqdm

        with tqdm(total=len(missing), desc="Encoding missing items", unit="text",
                  disable=not kwargs.get("show_progress_bar", True)) as bar:
            for chunk in chunks:
                output = encode_in_calls(inputs, missing[chunk], lengths[chunk], run, kwargs.get("batch_size", 32),
                                        progress=bar)
                vectors = _dense_rows(output, len(missing[chunk]))
                if vectors is None:
                    store.cacheable = False
                    logger.info("embedding cache: %s does not return dense rows; not caching it",
                                self.mteb_model_meta.name)
                    # the whole input in one chunk (a permutation of it): reorder the output, not encode again
                    encoded = missing[chunk]
                    restored = in_input_order(output, encoded) if len(encoded) == len(keys) else None
                    return run(inputs) if restored is None else restored
                store.add(keys[missing[chunk]], vectors)
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
