"""The Ray Data actor: one model instance, encoding row ranges of corpora into the embedding cache.

Each range goes through exactly the calls a later ``mteb run`` makes for a corpus (mteb's own
``create_dataloader`` with the document prompt type, then ``encode`` with the task's metadata and
the same encode keyword arguments), behind the content-keyed cache, so the keys and namespace are
the ones that run looks up. The cache writes each chunk atomically and skips stored items, which
makes a retried range (after a worker was killed) encode only what never reached the disk.
"""

from __future__ import annotations

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

        self.counter = _CountingEncoder(model_meta.load_model(device=device, **loader_kwargs))
        self.model = CachedEncoder(self.counter, Path(cache_root))
        self.sources = sources
        self.encode_kwargs = dict(encode_kwargs)
        self._opened: dict[int, Any] = {}

    def _corpus(self, number: int) -> Any:
        if number not in self._opened:
            self._opened[number] = self.sources[number].open()
        return self._opened[number]

    def encode_range(self, number: int, start: int, stop: int) -> int:
        """Encode rows ``start:stop`` of corpus ``number`` into the cache; return how many the model encoded."""
        from mteb._create_dataloaders import create_dataloader
        from mteb.types import PromptType

        source = self.sources[number]
        before = self.counter.encoded
        loader = create_dataloader(self._corpus(number).select(range(start, stop)), task_metadata=source.task_metadata,
                                   prompt_type=PromptType.document,
                                   batch_size=self.encode_kwargs.get("batch_size", 32))
        self.model.encode(loader, task_metadata=source.task_metadata, hf_split=source.hf_split,
                          hf_subset=source.hf_subset, prompt_type=PromptType.document, **self.encode_kwargs)
        return self.counter.encoded - before

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        encoded = [self.encode_range(int(number), int(start), int(stop))
                   for number, start, stop in zip(batch["corpus"], batch["start"], batch["stop"], strict=True)]
        return {"corpus": batch["corpus"], "documents": batch["stop"] - batch["start"],
                "encoded": np.asarray(encoded, dtype=np.int64)}
