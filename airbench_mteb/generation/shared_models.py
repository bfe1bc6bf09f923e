"""The encoders and rerankers several generators use: the AIR-Bench quality control (embedding recall and
pluggable rerankers, AIR-Bench section 2.4, Appendix A.3) and the co*cktail quality report (cosine figures).

The AIR-Bench paper (arXiv 2412.13102, section 2.4) recalls with bge-m3 and re-ranks with several
cross-encoders. Offline the bundled
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
from mteb import TaskMetadata

from airbench_mteb.generation import checks
from airbench_mteb.generation.errors import GenerationError
from airbench_mteb.generation.llm.base import LLMParams
from airbench_mteb.generation.llm.client import LLMClient
from airbench_mteb.models import E5_SMALL, MINILM
from airbench_mteb.models.devices import Device, torch_device
from airbench_mteb.models.embedding_cache import with_embedding_cache
from airbench_mteb.registry import resolve_model


@dataclass(frozen=True)
class ModelPlacement:
    """Where and how the quality-control models run: MTEB's device choice (None: the library picks the
    best available), batch size, and half precision where the model supports it."""

    device: Device = None
    batch_size: int = 64
    fp16: bool = False

    def __post_init__(self) -> None:
        checks.whole_number("--qc-batch-size", self.batch_size, 1)

    def model_kwargs(self) -> dict[str, Any] | None:
        """Half precision where asked: ``model_kwargs`` of MTEB's sentence-transformers loaders and ``CrossEncoder``."""
        return {"torch_dtype": "float16"} if self.fp16 else None

    def torch_kwargs(self) -> dict[str, Any]:
        """Keyword arguments of sentence-transformers' ``CrossEncoder``."""
        return {"device": torch_device(self.device), "model_kwargs": self.model_kwargs()}


DEFAULT_PLACEMENT = ModelPlacement()


class Encoder(Protocol):
    name: str

    def encode(self, texts: Sequence[str], is_query: bool) -> np.ndarray:
        """L2-normalised float32 vectors, one row per text."""
        ...


# The bundled encoders by their short names (and the display names the QC record has always used).
BUNDLED = {"minilm": (MINILM, "all-MiniLM-L6-v2"), "all-MiniLM-L6-v2": (MINILM, "all-MiniLM-L6-v2"),
           "e5": (E5_SMALL, "multilingual-e5-small"), "multilingual-e5-small": (E5_SMALL, "multilingual-e5-small")}
# What MTEB's encoders are told they encode for (prompts are chosen by task type and query/document).
QC_TASK = TaskMetadata(name="airbench-mteb-quality-control", type="Retrieval", category="t2t", modalities=["text"],
                       description="AIR-Bench quality control: recall and bi-encoder re-ranking of generated data",
                       eval_splits=["test"], eval_langs=["eng-Latn"], main_score="ndcg_at_10", reference=None,
                       dataset={"path": "airbench-mteb/quality-control", "revision": "local"})


class MtebEncoder:
    """A model MTEB loads (a bundled alias, a name in MTEB's registry, or a local folder registered by
    ``registry.resolve_model``), encoding through the content-keyed embedding cache: the corpus a
    resumed or repeated quality control sees again is not encoded again."""

    def __init__(self, name: str, placement: ModelPlacement = DEFAULT_PLACEMENT) -> None:
        import mteb

        model_name, self.name = BUNDLED.get(name, (resolve_model(name), name))
        self.model = with_embedding_cache(mteb.get_model(model_name, device=placement.device,
                                                         model_kwargs=placement.model_kwargs()))
        self.batch_size = placement.batch_size

    def encode(self, texts: Sequence[str], is_query: bool) -> np.ndarray:
        from datasets import Dataset
        from mteb.types import PromptType
        from torch.utils.data import DataLoader

        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        loader = DataLoader(Dataset.from_dict({"text": list(texts)}), batch_size=self.batch_size, shuffle=False)
        vectors = np.asarray(self.model.encode(
            loader, task_metadata=QC_TASK, hf_split="test", hf_subset="default",
            prompt_type=PromptType.query if is_query else PromptType.document, batch_size=self.batch_size,
            show_progress_bar=False), dtype=np.float32)
        return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)


def make_encoder(name: str, placement: ModelPlacement = DEFAULT_PLACEMENT) -> Encoder:
    """``minilm``, ``e5``, or any model name or local folder MTEB can load, placed as ``placement`` says."""
    return MtebEncoder(name, placement)


class DenseRecall:
    """Top-k inner-product search with faiss over normalised embeddings of the whole corpus."""

    def __init__(self, encoder: Encoder, corpus: dict[str, str]) -> None:
        import faiss

        self.encoder = encoder
        self.ids = list(corpus)
        self.rows = {doc_id: row for row, doc_id in enumerate(self.ids)}
        vectors = encoder.encode([corpus[i] for i in self.ids], is_query=False)
        self.index = faiss.IndexFlatIP(vectors.shape[1])
        self.index.add(vectors)

    def search(self, queries: Sequence[str], k: int, targets: Sequence[str]) -> tuple[list[list[str]], np.ndarray]:
        """The top ``k`` document ids of each query, and its similarity (inner product of the normalised
        vectors) with its own ``targets[i]`` from the same query vectors (quality control's easiness rule)."""
        if not queries:
            return [], np.zeros(0)
        vectors = self.encoder.encode(queries, is_query=True)
        _, rows = self.index.search(vectors, min(k, len(self.ids)))
        target_vectors = np.stack([self.index.reconstruct(self.rows[doc_id]) for doc_id in targets])
        return [[self.ids[j] for j in row if j >= 0] for row in rows], np.einsum("ij,ij->i", vectors, target_vectors)


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


class LLMYesProbabilityReranker:
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
        # imported here: the AIR-Bench package imports this module, so a top-level import is a cycle
        from airbench_mteb.generation.airbench import prompts

        messages = prompts.render("relevance_yes_no", query=query, document=self._corpus[doc_id][:self.document_chars])
        completion = await self.client.complete(messages, self.params, "rerank")
        probability = completion.yes_probability()
        return -1.0 if probability is None else probability  # neither token offered: rank it last

    async def scores(self, query: str, doc_ids: Sequence[str]) -> list[float]:
        return list(await asyncio.gather(*(self._score(query, d) for d in doc_ids)))


_NAMED_RERANKERS = ("minilm", "e5", "llm")
_RERANKERS_WITH_PATH = ("cross-encoder", "flag", "bi-encoder")


def check_reranker_spec(spec: str) -> None:
    """A spec :func:`make_reranker` can build (checked with the config, before any model is loaded)."""
    kind, _, arg = spec.partition(":")
    if spec not in _NAMED_RERANKERS and not (kind in _RERANKERS_WITH_PATH and arg):
        raise GenerationError(f"--rerankers: unknown reranker {spec!r}: use minilm, e5, llm, cross-encoder:PATH, "
                              "flag:PATH or bi-encoder:PATH")


def make_reranker(spec: str, client: LLMClient | None, placement: ModelPlacement = DEFAULT_PLACEMENT) -> Reranker:
    """``minilm``, ``e5``, ``llm`` (the generation LLM), ``cross-encoder:<path>``, ``flag:<path>``,
    or ``bi-encoder:<sentence-transformers path>``; the local models run as ``placement`` says."""
    check_reranker_spec(spec)
    kind, _, arg = spec.partition(":")
    if spec in ("minilm", "e5"):
        return BiEncoderReranker(make_encoder(spec, placement))
    if spec == "llm":
        if client is None:
            raise GenerationError("the llm reranker needs an LLM client")
        return LLMYesProbabilityReranker(client)
    if kind == "cross-encoder":
        return CrossEncoderReranker(arg, placement)
    if kind == "flag":
        return FlagReranker(arg, placement)
    return BiEncoderReranker(MtebEncoder(arg, placement))
