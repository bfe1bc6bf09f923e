"""One rewrite: one document, one LLM source, one journal record."""

from __future__ import annotations

from typing import Any

from airbench_mteb.generation.cocktail.answers import REWRITTEN, UNPARSED, parse_answer
from airbench_mteb.generation.cocktail.config import CocktailConfig, LLMSource, call_seed
from airbench_mteb.generation.cocktail.prompts import rewrite_messages
from airbench_mteb.generation.cocktail.sampling import word_count
from airbench_mteb.generation.llm.base import LLMParams
from airbench_mteb.generation.llm.client import LLMClient


def token_budget(text: str, cap: int) -> int:
    """Room for a rewrite a little longer than the original, so a small cap cannot cut most answers."""
    return min(cap, 64 + 3 * word_count(text))


async def rewrite(client: LLMClient, source: LLMSource, text: str, config: CocktailConfig, doc_id: str) -> dict[str, Any]:
    """The journal record of one (source, document): outcome, rewrite, flags."""
    budget = token_budget(text, config.max_tokens)
    params = LLMParams(temperature=source.temperature, max_tokens=budget, seed=call_seed(config.seed, doc_id))
    parsed = await client.parsed(
        rewrite_messages(text), params,
        lambda c: parse_answer(c, text, max_tokens=budget, require_marker=config.require_marker),
        f"rewrite:{source.name}")
    if not parsed.ok:
        return {"status": UNPARSED, "reason": parsed.reason, "attempts": parsed.attempts}
    answer = parsed.value
    record = {"status": answer.status, "marker": answer.marker, "truncated": answer.truncated,
              "attempts": parsed.attempts}
    if answer.status == REWRITTEN:
        record["text"] = answer.text
    else:
        record["reason"] = answer.excerpt
    return record
