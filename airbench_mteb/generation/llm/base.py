"""The one interface every LLM backend implements, and the values that cross it."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

Messages = list[dict[str, str]]


@dataclass(frozen=True)
class LLMParams:
    """Sampling parameters of one call. All of them are part of the response-cache key."""

    temperature: float = 0.7
    max_tokens: int = 256
    seed: int = 0
    # a JSON schema the backend should constrain output to (grammar on llama.cpp); None = free text
    json_schema: dict[str, Any] | None = None
    # >0: return the top-k log-probabilities of the first generated token (yes/no scoring)
    top_logprobs: int = 0

    def key(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Completion:
    text: str
    tokens_in: int
    tokens_out: int
    # first generated token's alternatives: token -> logprob (only with top_logprobs > 0)
    top_logprobs: dict[str, float] = field(default_factory=dict)

    def yes_probability(self) -> float | None:
        """P(yes) / (P(yes) + P(no)) from the first token's alternatives; None if neither is among them."""
        yes = no = 0.0
        for token, logprob in self.top_logprobs.items():
            word = token.strip().lower()
            if word == "yes":
                yes += math.exp(logprob)
            elif word == "no":
                no += math.exp(logprob)
        if yes + no == 0:
            return None
        return yes / (yes + no)


class TransientLLMError(Exception):
    """A failure worth retrying: rate limit, server error, timeout, dropped connection."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Backend(Protocol):
    """An LLM that completes chat messages. ``kind`` and ``model`` name it in cards and accounts;
    ``identity`` is what decides its answers besides the call itself (the response-cache key): the
    endpoint without credentials, the served model name, the model file's hash when it is local."""

    kind: str
    model: str

    @property
    def identity(self) -> dict[str, str]:
        ...

    async def complete(self, messages: Messages, params: LLMParams) -> Completion:
        """One completion. Raise TransientLLMError for failures a retry may fix."""
        ...

    async def aclose(self) -> None:
        ...
