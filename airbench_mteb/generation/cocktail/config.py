"""What a co*cktail run is made of: its LLM sources, its settings and the seed of each call."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from airbench_mteb.generation import checks
from airbench_mteb.generation.cocktail.prompts import prompt_sha256
from airbench_mteb.generation.errors import GenerationError

HUMAN = "human"  # the reference source: the input's own documents


@dataclass(frozen=True)
class LLMSource:
    """One LLM that rewrites the corpus; ``name`` is its corpus file stem and evaluation setting."""

    name: str
    backend: str = "llamacpp"
    model: str | None = None  # GGUF path (llamacpp, default: the bundled SmolLM2) or served model name
    base_url: str | None = None
    temperature: float = 0.2  # the co*cktail corpora were written at 0.2 (llama-2-7b-chat-tmp0.2)

    def __post_init__(self) -> None:
        checks.temperature(f"--llm {self.name}: temperature", self.temperature)

    @property
    def endpoint(self) -> tuple[str, str | None, str | None]:
        """Sources with the same endpoint share one client (one loaded model, one concurrency limit)."""
        return (self.backend, self.model, self.base_url)


def check_source_names(sources: Sequence[LLMSource]) -> None:
    """Names must be valid, distinct evaluation settings besides ``human`` (the task's own rules)."""
    from airbench_mteb.tasks.cocktail import parse_sources

    if not sources:
        raise GenerationError("give at least one --llm NAME ...")
    try:
        parse_sources([HUMAN, *(s.name for s in sources)])
    except ValueError as error:
        raise GenerationError(f"LLM source names: {error}") from None


@dataclass(frozen=True)
class CocktailConfig:
    corpus: str
    sources: tuple[LLMSource, ...]
    max_docs: int | None = None
    seed: int = 0
    min_words: int = 10
    max_words: int = 2000
    max_tokens: int = 4096  # cap; each document gets 64 + 3 tokens per word of it, up to this
    require_marker: bool = False  # an answer without "Rewritten Text:" is retried, then kept human
    max_failures: int = 20  # failed calls (after retries) before the run stops
    language: str = "en"  # ISO 639-1 code of the corpus, for the dataset card (co*cktail's corpora are English)

    def __post_init__(self) -> None:
        check_source_names(self.sources)
        checks.optional_whole_number("--max-docs", self.max_docs, 1)
        checks.seed("--seed", self.seed)
        checks.whole_number("--min-words", self.min_words, 1)
        checks.whole_number("--max-words", self.max_words, 1)
        checks.ordered("--min-words", self.min_words, "--max-words", self.max_words)
        checks.whole_number("--max-tokens", self.max_tokens, 1)
        checks.whole_number("--max-failures", self.max_failures, 1)
        checks.language("--language", self.language)

    def sampling(self) -> dict[str, Any]:
        """What decides the documents and prompts; a journal made under other values cannot be resumed."""
        return {"seed": self.seed, "max_docs": self.max_docs, "min_words": self.min_words,
                "max_words": self.max_words, "max_tokens": self.max_tokens, "require_marker": self.require_marker,
                "prompt_sha256": prompt_sha256()}


def call_seed(seed: int, doc_id: str) -> int:
    """The same seed for a document in every source and every run: outputs never depend on order."""
    return int.from_bytes(hashlib.sha256(f"{seed}:{doc_id}".encode()).digest()[:4], "big") % 2**31
