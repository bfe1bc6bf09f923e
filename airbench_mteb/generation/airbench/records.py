"""The AIR-Bench candidate record: what the generation of one query made (AIR-Bench section 2.3, arXiv
2412.13102), as the journal and ``candidates.jsonl`` keep it.

A field that is ``None`` was never reached and is absent from the JSON form: a candidate dropped at the
query step has a character and a scenario but no rewrites, one dropped at its second rewrite has the first.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields, replace
from typing import Any, Literal

from airbench_mteb.generation.airbench.attributes import QueryAttributes

Status = Literal["ok", "dropped"]


@dataclass(frozen=True)
class Rewrite:
    style: str
    query: str


@dataclass(frozen=True)
class Candidate:
    """Item ``index``'s query for document ``positive_id``; ``stage`` and ``reason`` say why a dropped one
    stopped (the step whose output never parsed)."""

    index: int
    positive_id: str
    attributes: QueryAttributes
    status: Status = "ok"
    character: str | None = None
    scenario: str | None = None
    original_query: str | None = None
    rewrites: tuple[Rewrite, ...] | None = None
    query: str | None = None
    hard_negatives: tuple[str, ...] | None = None
    hard_negatives_requested: int | None = None  # QA only: the count asked of the LLM before de-duplication
    stage: str | None = None
    reason: str | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def qid(self) -> str | None:
        """The query id in the dataset (kept candidates only)."""
        return f"q-{self.index}" if self.ok else None

    def dropped(self, stage: str, reason: str) -> Candidate:
        """This candidate stopped at ``stage``: what it reached so far, and why it went no further."""
        return replace(self, status="dropped", stage=stage, reason=reason)

    @property
    def negative_ids(self) -> list[str]:
        return [f"hn-{self.index}-{j}" for j in range(len(self.hard_negatives or ()))]

    def as_json(self) -> dict[str, Any]:
        """The journal's form: reached fields only, keys sorted at every level."""
        data: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None:
                continue
            if f.name == "attributes":
                value = value.as_dict()
            elif f.name == "rewrites":
                value = [{"style": r.style, "query": r.query} for r in value]
            elif f.name == "hard_negatives":
                value = list(value)
            data[f.name] = value
        return json.loads(json.dumps(data, sort_keys=True, ensure_ascii=False))

    def output_row(self) -> dict[str, Any]:
        """The ``candidates.jsonl`` row: the journal's form, then the query id of a kept candidate."""
        row = self.as_json()
        if self.ok:
            row["qid"] = self.qid
        return row

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Candidate:
        """The record ``as_json`` wrote (a journal record of this or an earlier run)."""
        values = {**data, "attributes": QueryAttributes(**{**data["attributes"], "rewrite_styles": tuple(
            data["attributes"]["rewrite_styles"])})}
        if "rewrites" in data:
            values["rewrites"] = tuple(Rewrite(style=r["style"], query=r["query"]) for r in data["rewrites"])
        if "hard_negatives" in data:
            values["hard_negatives"] = tuple(data["hard_negatives"])
        return cls(**values)
