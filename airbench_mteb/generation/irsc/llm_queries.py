"""Queries, summaries and translations written by an LLM, each journaled once finished.

A record's key is the response-cache key of its call (LLM identity, prompt, sampling parameters),
so a killed build resumes without asking again, and a build with another LLM or seed in the same
folder never takes these answers for its own.
"""

from __future__ import annotations

import asyncio

from airbench_mteb.generation.irsc.prompts import clean_llm_text, prompt_messages
from airbench_mteb.generation.llm.base import LLMParams
from airbench_mteb.generation.llm.cache import cache_key
from airbench_mteb.generation.llm.client import LLMClient
from airbench_mteb.generation.store import Journal


class LLMWriter:
    """Asks ``client`` with fixed sampling parameters; answers are cleaned, journaled, then returned."""

    def __init__(self, client: LLMClient, journal: Journal, params: LLMParams) -> None:
        self.client = client
        self.journal = journal
        self.params = params

    @property
    def name(self) -> str:
        """The LLM as the manifest names it."""
        return f"{self.client.backend.kind}:{self.client.backend.model}"

    async def write(self, job: str, texts: list[str], lang: str) -> list[str | None]:
        """``job`` (query, summary, translate) of each text in ``lang``; None where the answer is unusable."""
        return list(await asyncio.gather(*(self._one(job, text, lang) for text in texts)))

    async def _one(self, job: str, text: str, lang: str) -> str | None:
        messages = prompt_messages(job, text, lang)
        key = cache_key(self.client.backend.identity, messages, self.params)
        done = self.journal.get(job, key)
        if done is not None:
            return done["text"]
        completion = await self.client.complete(messages, self.params, f"irsc {job}")
        written = clean_llm_text(completion.text, lang, text)
        self.journal.put(job, key, text=written)
        return written
