"""The settings of an IRSC build, checked when built (before any source is read or LLM loaded)."""

from __future__ import annotations

from dataclasses import dataclass

from airbench_mteb.generation import checks


@dataclass(frozen=True)
class BuildConfig:
    per_task: int = 5000          # query -> paragraph pairs per task and language (the paper's size)
    cross_per_task: int = 1000    # translated queries per task in C2E and E2C (the paper's size)
    seed: int = 0                 # sampling, fragments and the LLM's sampling seed
    corpus_limit: int | None = None  # at most this many paragraphs per language (all sampled targets kept)
    temperature: float = 0.7      # LLM sampling of written queries and translations
    max_tokens: int = 256         # per LLM answer

    def __post_init__(self) -> None:
        checks.whole_number("--per-task", self.per_task, 1)
        checks.whole_number("--cross-per-task", self.cross_per_task, 1)
        checks.optional_whole_number("--corpus-limit", self.corpus_limit, 1)
        checks.seed("--seed", self.seed)
        checks.temperature("--temperature", self.temperature)
        checks.whole_number("--max-tokens", self.max_tokens, 1)
