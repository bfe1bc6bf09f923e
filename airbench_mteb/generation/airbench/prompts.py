"""Prompt templates (one file per step under ``prompts/``), their hashes, output schemas and parsers."""

from __future__ import annotations

import hashlib
import json
import re
from functools import cache
from importlib import resources
from string import Template
from typing import Any

from airbench_mteb.generation.llm.base import Completion, Messages
from airbench_mteb.generation.llm.client import ParseError

TEMPLATES = ("characters", "scenarios", "query", "rewrite", "hard_negatives", "judge", "relevance_yes_no")
QUERY_TYPE_INSTRUCTIONS = {
    "question": "a question",
    "problem": "a description of a problem or task the person needs help with (not phrased as a question)",
    "claim": "a statement or claim that the document supports (not a question)",
}
INFORMATION_INSTRUCTIONS = {
    "overall": "the overall topic of the document",
    "partial": "a specific detail of the document beyond its main topic",
}


@cache
def template(name: str) -> Template:
    return Template(resources.files(__package__).joinpath("prompts", f"{name}.txt").read_text(encoding="utf-8"))


def template_hashes() -> dict[str, str]:
    """sha256 (first 16 hex digits) of every template, for the dataset card."""
    return {name: hashlib.sha256(template(name).template.encode("utf-8")).hexdigest()[:16] for name in TEMPLATES}


def render(name: str, **values: Any) -> Messages:
    return [{"role": "user", "content": template(name).substitute(**values).strip()}]


def string_list_schema(key: str, count: int, max_length: int, min_count: int | None = None) -> dict[str, Any]:
    return {"type": "object", "properties": {key: {
        "type": "array", "minItems": count if min_count is None else min_count, "maxItems": count,
        "items": {"type": "string", "minLength": 1, "maxLength": max_length}}}, "required": [key]}


def string_schema(key: str, max_length: int) -> dict[str, Any]:
    return {"type": "object", "properties": {key: {"type": "string", "minLength": 1, "maxLength": max_length}},
            "required": [key]}


def _json_object(completion: Completion) -> dict[str, Any]:
    text = completion.text.strip()
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        raise ParseError("no JSON object in the output")
    try:
        value = json.loads(text[start:end + 1], strict=False)
    except json.JSONDecodeError as error:
        raise ParseError(f"malformed JSON ({error.msg})") from None
    if not isinstance(value, dict):
        raise ParseError("the output is not a JSON object")
    return value


def parse_string(key: str) -> Any:
    def parse(completion: Completion) -> str:
        value = _json_object(completion).get(key)
        if not isinstance(value, str) or not value.strip():
            raise ParseError(f"no non-empty string {key!r} in the output")
        return " ".join(value.split())
    return parse


def parse_string_list(key: str, min_count: int) -> Any:
    def parse(completion: Completion) -> list[str]:
        value = _json_object(completion).get(key)
        if not isinstance(value, list):
            raise ParseError(f"no list {key!r} in the output")
        items, seen = [], set()
        for item in value:
            text = " ".join(str(item).split()) if isinstance(item, (str, int, float)) else ""
            if text and text.casefold() not in seen:
                seen.add(text.casefold())
                items.append(text)
        if len(items) < min_count:
            raise ParseError(f"{key!r} has {len(items)} distinct non-empty items, expected at least {min_count}")
        return items
    return parse


_LEVEL = re.compile(r"[0-3]")


def parse_level(completion: Completion) -> int:
    """The judge's 0-3 relevance level: the first digit 0-3 in the output."""
    found = _LEVEL.search(completion.text)
    if found is None:
        raise ParseError(f"no relevance level 0-3 in the output {completion.text[:40]!r}")
    return int(found.group())


LEVEL_SCHEMA = {"type": "integer", "enum": [0, 1, 2, 3]}
