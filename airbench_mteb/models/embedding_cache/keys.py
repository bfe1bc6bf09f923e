"""Where a vector is stored: the namespace of an encoder call (a folder) and the key of each item (a hash).

Two encodings are interchangeable when the namespace and the key agree; see the package docstring.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np

# Encode kwargs that change how the work is scheduled, never the vectors.
_NEUTRAL_KWARGS = frozenset({"batch_size", "show_progress_bar", "num_proc", "num_workers"})
KEY_BYTES = 16
# 2: keys files end with a checksum trailer (shards of format 1 have none and are never read)
FORMAT = 2


def as_keys(raw: bytes) -> np.ndarray:
    """16-byte keys as rows of two little-endian uint64, so they sort and search in numpy."""
    return np.frombuffer(raw, dtype="<u8").reshape(-1, 2)


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
        "format": FORMAT,
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
        digest = hashlib.blake2b(digest_size=KEY_BYTES)
        for label, value in zip(labels, values, strict=True):
            data = (value if isinstance(value, str) else json.dumps(value)).encode("utf-8", "surrogatepass")
            digest.update(label + b"\x00" + len(data).to_bytes(8, "little") + data)
        keys.append(digest.digest())
    return as_keys(b"".join(keys))

