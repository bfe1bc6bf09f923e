"""Per-run account of LLM use: calls, cache hits, repeated calls, tokens, cost, retries and dropped outputs."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Account:
    # prices in currency units per million tokens (0 for local models)
    price_in: float = 0.0
    price_out: float = 0.0
    calls: int = 0
    cache_hits: int = 0
    # calls sent again because an earlier run sent them and was stopped before their answers arrived
    repeated: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    retries: Counter[str] = field(default_factory=Counter)
    parse_failures: Counter[str] = field(default_factory=Counter)
    dropped: Counter[str] = field(default_factory=Counter)
    tokens_by_stage: Counter[str] = field(default_factory=Counter)

    def charge(self, stage: str, tokens_in: int, tokens_out: int) -> None:
        self.calls += 1
        self.tokens_in += tokens_in
        self.tokens_out += tokens_out
        self.tokens_by_stage[stage] += tokens_in + tokens_out

    @property
    def cost(self) -> float:
        return (self.tokens_in * self.price_in + self.tokens_out * self.price_out) / 1e6

    def summary(self) -> str:
        """One line for the console at the end of a run."""
        return (f"{self.calls} calls ({self.repeated} repeating unanswered calls of an earlier run), "
                f"{self.cache_hits} cached, {self.tokens_in}+{self.tokens_out} tokens, cost {round(self.cost, 6)}")

    def as_dict(self) -> dict[str, Any]:
        return {"calls": self.calls, "cache_hits": self.cache_hits, "repeated": self.repeated,
                "tokens_in": self.tokens_in,
                "tokens_out": self.tokens_out, "cost": round(self.cost, 6),
                "price_per_million_tokens": {"in": self.price_in, "out": self.price_out},
                "retries": dict(self.retries), "parse_failures": dict(self.parse_failures),
                "dropped": dict(self.dropped), "tokens_by_stage": dict(self.tokens_by_stage)}
