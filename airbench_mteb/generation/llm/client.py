"""What the pipeline talks to: a backend wrapped with a concurrency limit, retries, cache and account."""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Generic, TypeVar

from airbench_mteb.generation import checks
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
from airbench_mteb.generation.llm.credentials import redact

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


class LLMClient:
    """Cached, retried, accounted LLM calls with at most ``concurrency`` in flight."""

    def __init__(self, backend: Backend, cache: ResponseCache | None = None, *, concurrency: int = 4,
                 max_retries: int = 6, backoff: float = 0.5, max_backoff: float = 30.0, parse_attempts: int = 3,
                 account: Account | None = None) -> None:
        checks.whole_number("concurrency", concurrency, 1)
        checks.whole_number("max_retries", max_retries, 0)
        checks.whole_number("parse_attempts", parse_attempts, 1)
        self.backend = backend
        self.cache = cache
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.parse_attempts = parse_attempts
        self.account = account or Account()
        self._slots = asyncio.Semaphore(concurrency)
        self._in_flight: dict[str, asyncio.Task[Completion]] = {}

    async def complete(self, messages: Messages, params: LLMParams, stage: str = "llm") -> Completion:
        """One completion: from the cache if this exact call was answered before, shared with an identical
        call in flight, else from the backend."""
        key = cache_key(self.backend.identity, messages, params)
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                self.account.cache_hits += 1
                return hit
        call = self._in_flight.get(key)
        if call is not None:
            self.account.cache_hits += 1
        else:
            call = self._in_flight[key] = asyncio.ensure_future(self._buy(key, messages, params, stage))
            call.add_done_callback(lambda _: self._in_flight.pop(key, None))
        # shielded: a cancelled caller must not cancel a call others wait on, or lose an answer being paid for
        return await asyncio.shield(call)

    async def _buy(self, key: str, messages: Messages, params: LLMParams, stage: str) -> Completion:
        completion = await self._call_with_retries(key, messages, params, stage)
        if self.cache is not None:
            # stored (committed, fsync'd) before anything else runs: an answer that arrived is never bought again
            self.cache.put(key, self.backend.identity, completion)
        self.account.charge(stage, completion.tokens_in, completion.tokens_out)
        return completion

    async def _call_with_retries(self, key: str, messages: Messages, params: LLMParams, stage: str) -> Completion:
        for attempt in range(self.max_retries + 1):
            async with self._slots:
                # marked when it really goes out, not while it waits for a slot
                if attempt == 0 and self.cache is not None and self.cache.mark_sent(key, self.backend.identity):
                    self.account.repeated += 1
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
