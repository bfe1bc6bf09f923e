"""An LLM's answer to the rewrite prompt: the rewrite after "Rewritten Text:", or a refusal (the co*cktail paper, arXiv 2405.16546, A.2)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from airbench_mteb.generation.llm.base import Completion
from airbench_mteb.generation.llm.client import ParseError

# rewrite outcomes: only "rewritten" rows hold LLM text, the others keep the human text
REWRITTEN, REFUSED, UNPARSED, FAILED = "rewritten", "refused", "unparsed", "failed"
_REFUSAL_WINDOW = 300  # refusals open the answer; later "I cannot" is content

_MARKER = re.compile(r"rewritten\s+text\s*:", re.IGNORECASE)
_PLACEHOLDER = re.compile(r"^<\s*your rewritten text\s*>\.?\s*", re.IGNORECASE)
# small models echo the prompt's own label before the text; it is no part of a rewrite
_ECHOED_LABEL = re.compile(r"^original\s+text\s*:\s*", re.IGNORECASE)
# a first line like "Sure! Here is the rewritten text:" before an answer without the marker
_PREAMBLE = re.compile(r"^(?:sure|certainly|of course|okay|ok|here)\b[^\n]{0,120}:\s*\n", re.IGNORECASE)
_CAN_NOT = r"(?:cannot|can ?not|can't|won't|will not|am unable to|am not able to|must (?:respectfully )?decline)"
# each rule says "this opening is a refusal"; a rule that also fits the original's opening says nothing
_REFUSAL_RULES = (
    re.compile(rf"^\W*(?:i'?m sorry|i am sorry|sorry|i apologi[sz]e|unfortunately)\b.{{0,200}}\b{_CAN_NOT}",
               re.IGNORECASE | re.DOTALL),
    re.compile(rf"^\W*(?:i {_CAN_NOT}|as an ai\b|i'?m (?:just )?an ai\b|i am (?:just )?an ai\b)", re.IGNORECASE),
    re.compile(r"fulfil+ your request|(?:cannot|can't|unable to|not able to) (?:rewrite|assist|comply|help with)"
               r"|ethical guidelines|(?:within|against) my programming|as an ai\b|ai language model"
               r"|i'?m (?:just )?an ai\b", re.IGNORECASE),
)


def is_refusal(answer: str, original: str) -> bool:
    """True when the opening of ``answer`` is a refusal ("I apologize, but I cannot...", "As an AI...",
    "I'm just an AI, it's not within my programming...") that the original's opening does not share."""
    head, original_head = answer.strip()[:_REFUSAL_WINDOW], original.strip()[:_REFUSAL_WINDOW]
    return any(rule.search(head) and not rule.search(original_head) for rule in _REFUSAL_RULES)


@dataclass(frozen=True)
class Answer:
    status: str  # REWRITTEN or REFUSED
    text: str  # the rewrite ("" when refused)
    marker: bool  # the answer used the requested "Rewritten Text:" format
    truncated: bool  # the answer used the whole token budget
    excerpt: str = ""  # the refusal's opening, for the record


def parse_answer(completion: Completion, original: str, *, max_tokens: int, require_marker: bool) -> Answer:
    """The rewrite after the last "Rewritten Text:" (or the whole answer minus a "Sure, here is...:" line
    unless ``require_marker``), or a refusal.

    Raises:
        ParseError: no marker while ``require_marker``, or nothing after it.
    """
    answer = completion.text.strip()
    truncated = completion.tokens_out >= max_tokens
    matches = list(_MARKER.finditer(answer))
    body = answer[matches[-1].end():] if matches else _PREAMBLE.sub("", answer, count=1)
    body = _ECHOED_LABEL.sub("", _PLACEHOLDER.sub("", body.strip().lstrip("*").strip()))
    if len(body) > 1 and body[0] == "<" and body[-1] == ">":
        body = body[1:-1].strip()
    if is_refusal(answer, original) or (matches and is_refusal(body, original)):
        return Answer(REFUSED, "", bool(matches), truncated, excerpt=answer[:200])
    if not matches and require_marker:
        raise ParseError("the answer has no 'Rewritten Text:'")
    if not body:
        raise ParseError("empty rewrite")
    return Answer(REWRITTEN, body, bool(matches), truncated)
