"""BM25 baseline as an MTEB search model (being written: see helper brief)."""

from __future__ import annotations

from mteb.models import ModelMeta

BM25 = "airbench-mteb/bm25"


def bm25_model_meta() -> ModelMeta:
    raise NotImplementedError("BM25 baseline not written yet")
