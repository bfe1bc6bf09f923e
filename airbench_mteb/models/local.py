"""Local model folders as MTEB models (``mteb.get_model(<folder>)`` treats a path as a hub id)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mteb.models import ModelMeta


def _load_local_sentence_transformer(model_name: str, revision: str | None = None, *, path: str, **kwargs: Any) -> Any:
    from mteb.models.sentence_transformer_wrapper import SentenceTransformerEncoderWrapper

    kwargs.pop("device", None)
    return SentenceTransformerEncoderWrapper(path, revision=revision, device="cpu", **kwargs)


def local_model_meta(folder: str | Path) -> ModelMeta:
    """Metadata for a SentenceTransformer folder, named ``local/<folder name>`` (MTEB names need a '/')."""
    folder = Path(folder).resolve()
    if not (folder / "modules.json").is_file() and not (folder / "config.json").is_file():
        raise ValueError(f"{folder} is not a model folder (no modules.json or config.json)")
    return ModelMeta.create_empty(overwrites={
        "name": f"local/{folder.name}",
        "loader": _load_local_sentence_transformer,
        "loader_kwargs": {"path": str(folder)},
        "framework": ["Sentence Transformers"],
        "reference": None,
    })
