"""The co*cktail rewrite prompt (the co*cktail paper, arXiv 2405.16546, A.2), kept as a file under ``prompts/``."""

from __future__ import annotations

import hashlib
from functools import cache
from importlib import resources
from string import Template

from airbench_mteb.generation.llm.base import Messages


@cache
def prompt_template() -> Template:
    text = resources.files(__package__).joinpath("prompts", "rewrite.txt").read_text(encoding="utf-8")
    return Template(text)


def prompt_sha256() -> str:
    """Journaled with the run: a changed prompt is another run."""
    return hashlib.sha256(prompt_template().template.encode("utf-8")).hexdigest()[:16]


def rewrite_messages(text: str) -> Messages:
    return [{"role": "user", "content": prompt_template().substitute(text=text).strip()}]
