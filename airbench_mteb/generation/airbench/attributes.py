"""Query attributes and their sampling ratios (AIR-Bench Appendix A.2.1).

- length: fewer than 5 words, fewer than 10, 10 to 20, at least 20 -- overall ratio 1:4:2:1;
- type: question:problem:claim = 3:1:1 (QA); Long-Doc uses question and claim only, kept at the
  same 3:1 proportion between them;
- claims only take the two longer lengths (short claims are ambiguous); the other types' length
  distribution is adjusted so that the overall length ratio stays 1:4:2:1;
- information: the document's overall topic or partial information beyond it, 1:1;
- rewrite style: concise, casual, informal, formal, professional, complicated, academic at
  5:3:3:1:1:1:1, drawn independently for every rewrite.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass

LENGTHS = ("less than 5 words", "less than 10 words", "10 to 20 words", "at least 20 words")
LENGTH_RATIO = (1, 4, 2, 1)
QA_TYPES = {"question": 3, "problem": 1, "claim": 1}
LONG_DOC_TYPES = {"question": 3, "claim": 1}
CLAIM_LENGTHS = ("10 to 20 words", "at least 20 words")
INFORMATION = {"overall": 1, "partial": 1}
STYLES = {"concise": 5, "casual": 3, "informal": 3, "formal": 1, "professional": 1, "complicated": 1, "academic": 1}


@dataclass(frozen=True)
class QueryAttributes:
    query_type: str
    length: str
    information: str
    rewrite_styles: tuple[str, ...]

    def as_dict(self) -> dict[str, object]:
        return {**asdict(self), "rewrite_styles": list(self.rewrite_styles)}


def _normalised(weights: dict[str, float]) -> dict[str, float]:
    total = sum(weights.values())
    return {k: v / total for k, v in weights.items()}


def length_distributions(types: dict[str, int]) -> dict[str, dict[str, float]]:
    """Per query type, the length distribution whose mixture over types is the 1:4:2:1 target."""
    target = _normalised(dict(zip(LENGTHS, LENGTH_RATIO, strict=True)))
    type_share = _normalised(dict(types))
    claim_share = type_share.get("claim", 0.0)
    claim = _normalised({n: target[n] for n in CLAIM_LENGTHS})
    other = {n: (target[n] - claim_share * claim.get(n, 0.0)) / (1 - claim_share) for n in LENGTHS}
    return {t: (claim if t == "claim" else other) for t in types}


class AttributeSampler:
    """Draws every attribute of item ``index`` from its own seeded stream: the draws of one item do not
    depend on how many items came before it or in which order they were processed."""

    def __init__(self, task_type: str, seed: int, rewrites: int = 2) -> None:
        self.types = LONG_DOC_TYPES if task_type == "long-doc" else QA_TYPES
        self.lengths = length_distributions(self.types)
        self.seed = seed
        self.rewrites = rewrites

    @staticmethod
    def _pick(rng: random.Random, weights: dict[str, float]) -> str:
        return rng.choices(list(weights), weights=list(weights.values()))[0]

    def sample(self, index: int) -> QueryAttributes:
        rng = random.Random(f"attributes:{self.seed}:{index}")
        query_type = self._pick(rng, self.types)
        return QueryAttributes(
            query_type=query_type,
            length=self._pick(rng, self.lengths[query_type]),
            information=self._pick(rng, INFORMATION),
            rewrite_styles=tuple(self._pick(rng, STYLES) for _ in range(self.rewrites)),
        )
