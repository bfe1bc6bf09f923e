"""Candidate generation for one positive document (AIR-Bench section 2.3, Appendix A.2):
characters -> scenarios -> query (with sampled attributes) -> rewrites -> hard negatives (QA only).

Every random choice comes from a stream seeded by (run seed, item index), and every LLM call
gets a seed derived the same way, so an item's result does not depend on concurrency or on
whether the run was interrupted.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, replace
from typing import Any

from airbench_mteb.data.languages import language_name
from airbench_mteb.generation import checks
from airbench_mteb.generation.airbench import prompts
from airbench_mteb.generation.airbench.attributes import QueryAttributes
from airbench_mteb.generation.airbench.records import Candidate, Rewrite
from airbench_mteb.generation.errors import GenerationError
from airbench_mteb.generation.llm.base import LLMParams
from airbench_mteb.generation.llm.client import LLMClient

TASK_TYPES = ("qa", "long-doc")


@dataclass(frozen=True)
class CandidateSettings:
    task_type: str = "qa"  # "qa" or "long-doc"
    language: str = "en"
    characters: int = 3
    scenarios: int = 3
    hard_negatives: tuple[int, int] = (3, 7)  # inclusive range the count is drawn from
    temperature: float = 0.7
    document_chars: int = 1500  # the positive document is cut to this many characters in prompts
    short_text_chars: int = 120  # bound on characters, scenarios and queries
    hard_negative_chars: int = 500
    max_tokens: int = 256

    def __post_init__(self) -> None:
        checks.one_of("--task-type", self.task_type, TASK_TYPES)
        for option, value in (("characters", self.characters), ("scenarios", self.scenarios),
                              ("--document-chars", self.document_chars), ("short_text_chars", self.short_text_chars),
                              ("--hard-negative-chars", self.hard_negative_chars), ("--max-tokens", self.max_tokens)):
            checks.whole_number(option, value, 1)
        checks.temperature("--temperature", self.temperature)
        if not isinstance(self.hard_negatives, tuple) or len(self.hard_negatives) != 2:
            raise GenerationError(f"hard_negatives must be a (minimum, maximum) pair, got {self.hard_negatives!r}")
        low, high = self.hard_negatives
        checks.whole_number("--min-negatives", low, 1)
        checks.whole_number("--max-negatives", high, 1)
        checks.ordered("--min-negatives", low, "--max-negatives", high)


def call_seed(seed: int, index: int, step: str) -> int:
    digest = hashlib.sha256(f"{seed}:{index}:{step}".encode()).digest()
    return int.from_bytes(digest[:4], "big") % 2**31


class CandidateGenerator:
    def __init__(self, client: LLMClient, settings: CandidateSettings, seed: int) -> None:
        self.client = client
        self.settings = settings
        self.seed = seed

    def _params(self, index: int, step: str, schema: dict[str, Any], max_tokens: int | None = None) -> LLMParams:
        return LLMParams(temperature=self.settings.temperature, max_tokens=max_tokens or self.settings.max_tokens,
                         seed=call_seed(self.seed, index, step), json_schema=schema)

    async def generate(self, index: int, doc_id: str, document: str, attributes: QueryAttributes) -> Candidate:
        """The candidate of item ``index``; ``status`` is "dropped" (with stage and reason) when a step's
        output never parsed."""
        s = self.settings
        rng = random.Random(f"candidate:{self.seed}:{index}")
        language = language_name(s.language)
        doc = document[:s.document_chars]
        made = Candidate(index=index, positive_id=doc_id, attributes=attributes)

        characters = await self.client.parsed(
            prompts.render("characters", count=s.characters, language=language, document=doc),
            self._params(index, "characters", prompts.string_list_schema("characters", s.characters,
                                                                         s.short_text_chars, 1)),
            prompts.parse_string_list("characters", 1), "characters")
        if not characters.ok:
            return made.dropped("characters", characters.reason)
        made = replace(made, character=rng.choice(characters.value))

        scenarios = await self.client.parsed(
            prompts.render("scenarios", count=s.scenarios, language=language, document=doc,
                           character=made.character),
            self._params(index, "scenarios", prompts.string_list_schema("scenarios", s.scenarios,
                                                                        s.short_text_chars, 1)),
            prompts.parse_string_list("scenarios", 1), "scenarios")
        if not scenarios.ok:
            return made.dropped("scenarios", scenarios.reason)
        made = replace(made, scenario=rng.choice(scenarios.value))

        query = await self.client.parsed(
            prompts.render("query", character=made.character, situation=made.scenario, document=doc,
                           query_type_instruction=prompts.QUERY_TYPE_INSTRUCTIONS[attributes.query_type],
                           length=attributes.length, language=language,
                           information_instruction=prompts.INFORMATION_INSTRUCTIONS[attributes.information]),
            self._params(index, "query", prompts.string_schema("query", s.short_text_chars)),
            prompts.parse_string("query"), "query")
        if not query.ok:
            return made.dropped("query", query.reason)
        made = replace(made, original_query=query.value, rewrites=())

        for number, style in enumerate(attributes.rewrite_styles):
            rewrite = await self.client.parsed(
                prompts.render("rewrite", style=style, query_type=attributes.query_type, length=attributes.length,
                               language=language, query=self._current(made), document=doc),
                self._params(index, f"rewrite-{number}", prompts.string_schema("query", s.short_text_chars)),
                prompts.parse_string("query"), "rewrite")
            if not rewrite.ok:
                return made.dropped(f"rewrite-{number}", rewrite.reason)
            made = replace(made, rewrites=(*made.rewrites, Rewrite(style=style, query=rewrite.value)))
        made = replace(made, query=self._current(made), hard_negatives=())
        if s.task_type == "qa":
            return await self._hard_negatives(made, rng, language, doc, document)
        return made

    @staticmethod
    def _current(made: Candidate) -> str:
        """The query as rewritten so far."""
        return made.rewrites[-1].query if made.rewrites else made.original_query

    async def _hard_negatives(self, made: Candidate, rng: random.Random, language: str, doc: str,
                              document: str) -> Candidate:
        s = self.settings
        count = rng.randint(*s.hard_negatives)
        # a hard negative costs about a token per 3-4 characters; leave room for the JSON around them
        budget = count * (s.hard_negative_chars // 3 + 8) + 16
        negatives = await self.client.parsed(
            prompts.render("hard_negatives", count=count, language=language, query=made.query, document=doc),
            self._params(made.index, "hard_negatives",
                         prompts.string_list_schema("documents", count, s.hard_negative_chars),
                         max_tokens=max(s.max_tokens, budget)),
            prompts.parse_string_list("documents", min(count, s.hard_negatives[0])), "hard_negatives")
        if not negatives.ok:
            return made.dropped("hard_negatives", negatives.reason)
        positive = " ".join(document.split()).casefold()
        return replace(made, hard_negatives=tuple(n for n in negatives.value if n.casefold() != positive),
                       hard_negatives_requested=count)
