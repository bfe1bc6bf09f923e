"""What a generator run made, one shape for every generator: the folder and files written, counts, skipped
parts and the LLM use, so a command prints it (and ``register-dataset`` reads it) without re-reading files."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from airbench_mteb.generation.llm.account import Account
from airbench_mteb.generation.store import WORK_DIR


@dataclass(frozen=True)
class LLMUse:
    """Calls made and answers reused (response cache) by one run, with their tokens and cost."""

    calls: int = 0
    reused: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0

    @classmethod
    def of(cls, accounts: Iterable[Account]) -> LLMUse:
        """The sum over the run's clients' accounts (a client shared by several sources counts once)."""
        unique = {id(a): a for a in accounts}.values()
        return cls(calls=sum(a.calls for a in unique), reused=sum(a.cache_hits for a in unique),
                   tokens_in=sum(a.tokens_in for a in unique), tokens_out=sum(a.tokens_out for a in unique),
                   cost=round(sum(a.cost for a in unique), 6))


@dataclass(frozen=True)
class GenerationSummary:
    """``counts`` groups what was made: AIR-Bench {"queries": {split: n}, "corpus": {...}}, co*cktail
    {source: {outcome: n}}, IRSC {setting: {task: n}}; ``skipped`` lists {"setting", "task", "reason"}."""

    family: str
    root: Path
    files: tuple[str, ...]
    counts: Mapping[str, Mapping[str, int]]
    llm: LLMUse | None = None
    skipped: tuple[Mapping[str, str], ...] = field(default_factory=tuple)

    def total(self, group: str) -> int:
        return sum(self.counts.get(group, {}).values())

    def describe(self) -> str:
        lines = [f"{self.family} dataset written to {self.root} ({len(self.files)} files)"]
        lines += [f"  {group}: " + ", ".join(f"{name} {n}" for name, n in numbers.items())
                  for group, numbers in self.counts.items()]
        lines += [f"  skipped {s['setting']}/{s['task']}: {s['reason']}" for s in self.skipped]
        if self.llm is not None:
            lines.append(f"  LLM: {self.llm.calls} calls made, {self.llm.reused} answers reused, "
                         f"{self.llm.tokens_in}+{self.llm.tokens_out} tokens, cost {self.llm.cost}")
        return "\n".join(lines)


def published_files(root: Path) -> tuple[str, ...]:
    """The files a run left in ``root`` for readers (its private work folder aside), sorted."""
    return tuple(sorted(p.relative_to(root).as_posix() for p in root.rglob("*")
                        if p.is_file() and WORK_DIR not in p.relative_to(root).parts))
