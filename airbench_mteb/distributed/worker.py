"""The Ray Data actor: one model instance, encoding row ranges of corpora into the embedding cache.

Each range goes through exactly the calls a later ``mteb run`` makes for a corpus (the batches of mteb's
document dataloader, :func:`~airbench_mteb.models.document_loader.document_loader`, then ``encode`` with the task's metadata and
the same encode keyword arguments), behind the content-keyed cache, so the keys and namespace are
the ones that run looks up. The cache writes each chunk atomically and skips stored items, which
makes a retried range (after a worker was killed) encode only what never reached the disk.

A range's row says what the driver needs to read its items back from the cache (the namespace and
the keys), or the error that stopped it: an exception is returned as one line of text rather than
raised, so the user gets the worker's own message instead of Ray's traceback.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from airbench_mteb.distributed.corpora import CorpusSource


class _CountingEncoder:
    """The loaded model, counting the documents the cache actually asks it to encode."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.encoded = 0

    def __getattr__(self, name: str) -> Any:
        if name == "model":  # not set yet (unpickling): do not recurse
            raise AttributeError(name)
        return getattr(self.model, name)

    def encode(self, inputs: Any, **kwargs: Any) -> Any:
        self.encoded += len(inputs.dataset)
        return self.model.encode(inputs, **kwargs)


class CorpusEncoder:
    """A callable class for ``Dataset.map_batches``: Ray Data keeps one per actor, so the model loads once."""

    def __init__(self, model_meta: Any, sources: Sequence[CorpusSource], cache_root: str, device: str | None,
                 encode_kwargs: Mapping[str, Any], loader_kwargs: Mapping[str, Any]) -> None:
        from airbench_mteb.models.embedding_cache import CachedEncoder

        self.sources = sources
        self.encode_kwargs = dict(encode_kwargs)
        self._opened: dict[int, Any] = {}
        self.failure = ""  # why the model could not be loaded: every range reports it
        try:
            self.counter = _CountingEncoder(model_meta.load_model(device=device, **loader_kwargs))
        except Exception as error:  # reported to the driver as the range's error
            self.failure = f"loading {model_meta.name}: {one_line(error)}"
            return
        self.model = CachedEncoder(self.counter, Path(cache_root))

    def _corpus(self, number: int) -> Any:
        if number not in self._opened:
            self._opened[number] = self.sources[number].open()
        return self._opened[number]

    def encode_range(self, number: int, start: int, stop: int) -> dict[str, Any]:
        """Encode rows ``start:stop`` of corpus ``number`` into the cache; what was encoded and where it went."""
        from mteb.types import PromptType

        from airbench_mteb.models.document_loader import document_loader

        if self.failure:
            return _range_row(0, error=self.failure)
        source = self.sources[number]
        before = self.counter.encoded
        try:
            loader = document_loader(self._corpus(number).select(range(start, stop)),
                                     task_metadata=source.task_metadata, batch_size=self.encode_kwargs.get("batch_size", 32))
            keyed = self.model.fill(loader, task_metadata=source.task_metadata, hf_split=source.hf_split,
                                    hf_subset=source.hf_subset, prompt_type=PromptType.document, **self.encode_kwargs)
        except Exception as error:  # reported to the driver as the range's error
            return _range_row(self.counter.encoded - before, error=one_line(error))
        if keyed is None:  # the cache cannot hold what this model returns: nothing to read back
            return _range_row(self.counter.encoded - before)
        settings, keys = keyed
        return _range_row(self.counter.encoded - before, namespace=json.dumps(settings),
                          keys=keys.astype("<u8").tobytes())

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        done = [self.encode_range(int(number), int(start), int(stop))
                for number, start, stop in zip(batch["corpus"], batch["start"], batch["stop"], strict=True)]
        return {"corpus": batch["corpus"], "start": batch["start"], "stop": batch["stop"],
                "documents": batch["stop"] - batch["start"],
                "encoded": np.asarray([row["encoded"] for row in done], dtype=np.int64),
                **{name: np.asarray([row[name] for row in done], dtype=object)
                   for name in ("namespace", "keys", "error")}}


def _range_row(encoded: int, *, namespace: str = "", keys: bytes = b"", error: str = "") -> dict[str, Any]:
    return {"encoded": encoded, "namespace": namespace, "keys": keys, "error": error}


def one_line(error: BaseException) -> str:
    """An exception as the one line a user reads: its type and the first line of its message."""
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0]}" if text else type(error).__name__
