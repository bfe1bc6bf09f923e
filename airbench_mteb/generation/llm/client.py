"""What the pipeline talks to: a backend wrapped with a concurrency limit, retries, cache and account."""

from __future__ import annotations

import asyncio
import logging
import os
import random
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Generic, TypeVar

from airbench_mteb.generation.errors import GenerationError
from airbench_mteb.generation.llm.account import Account
from airbench_mteb.generation.llm.base import (
    Backend,
    Completion,
    LLMParams,
    Messages,
    TransientLLMError,
)
from airbench_mteb.generation.llm.cache import ResponseCache, cache_key
from airbench_mteb.generation.llm.openai_backend import API_KEY_VARIABLES

log = logging.getLogger(__name__)
T = TypeVar("T")
# a new seed per parse attempt: a deterministic model would otherwise repeat the same bad output
_ATTEMPT_SEED_STEP = 1_000_003


class ParseError(ValueError):
    """Raised by a parser when a completion does not have the expected form; the message is the reason."""


@dataclass
class Parsed(Generic[T]):
    value: T | None
    reason: str = ""  # why the value is None: the last parse error
    attempts: int = 1

    @property
    def ok(self) -> bool:
        return self.value is not None


def redact(text: str) -> str:
    """Remove any configured API key from text that may be logged or recorded."""
    for name in API_KEY_VARIABLES:
        secret = os.environ.get(name)
        if secret and len(secret) >= 4:
            text = text.replace(secret, "[redacted]")
    return text


class LLMClient:
    """Cached, retried, accounted LLM calls with at most ``concurrency`` in flight."""

    def __init__(self, backend: Backend, cache: ResponseCache | None = None, *, concurrency: int = 4,
                 max_retries: int = 6, backoff: float = 0.5, max_backoff: float = 30.0, parse_attempts: int = 3,
                 account: Account | None = None) -> None:
        if concurrency < 1:
            raise GenerationError(f"concurrency must be at least 1, got {concurrency}")
        self.backend = backend
        self.cache = cache
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.parse_attempts = parse_attempts
        self.account = account or Account()
        self._slots = asyncio.Semaphore(concurrency)

    async def complete(self, messages: Messages, params: LLMParams, stage: str = "llm") -> Completion:
        """One completion: from the cache if this exact call was made before, else from the backend."""
        key = cache_key(self.backend.kind, self.backend.model, messages, params)
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                self.account.cache_hits += 1
                return hit
        completion = await self._call_with_retries(messages, params, stage)
        self.account.charge(stage, completion.tokens_in, completion.tokens_out)
        if self.cache is not None:
            # written before anything else can run: once a call's answer exists, it is never bought twice
            self.cache.put(key, self.backend.kind, self.backend.model, completion)
        return completion

    async def _call_with_retries(self, messages: Messages, params: LLMParams, stage: str) -> Completion:
        for attempt in range(self.max_retries + 1):
            async with self._slots:
                try:
                    return await self.backend.complete(messages, params)
                except TransientLLMError as error:
                    reason = redact(error.reason)
            self.account.retries[reason] += 1
            if attempt == self.max_retries:
                break
            delay = min(self.max_backoff, self.backoff * 2 ** attempt) * (0.5 + random.random() / 2)
            log.info("%s: %s, retry %d in %.1fs", stage, reason, attempt + 1, delay)
            await asyncio.sleep(delay)
        raise GenerationError(f"{stage}: the LLM failed {self.max_retries + 1} times (last: {reason})")

    async def parsed(self, messages: Messages, params: LLMParams, parse: Callable[[Completion], T],
                     stage: str) -> Parsed[T]:
        """Complete and parse; on a ParseError retry with a new seed, then give up with the reason."""
        reason = ""
        for attempt in range(self.parse_attempts):
            attempt_params = replace(params, seed=params.seed + attempt * _ATTEMPT_SEED_STEP)
            completion = await self.complete(messages, attempt_params, stage)
            try:
                return Parsed(parse(completion), attempts=attempt + 1)
            except ParseError as error:
                reason = redact(str(error))
                self.account.parse_failures[stage] += 1
        self.account.dropped[f"{stage}: {reason}"] += 1
        return Parsed(None, reason=reason, attempts=self.parse_attempts)

    async def aclose(self) -> None:
        await self.backend.aclose()
        if self.cache is not None:
            self.cache.close()
