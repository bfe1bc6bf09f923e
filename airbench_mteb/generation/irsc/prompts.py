"""The LLM prompts of an IRSC build (one file per job under ``prompts/``) and the reading of their answers."""

from __future__ import annotations

import re
from functools import cache
from importlib import resources
from string import Template

from airbench_mteb.catalog.irsc import LANGUAGE_NAMES
from airbench_mteb.generation.errors import GenerationError
from airbench_mteb.generation.llm.base import Messages

# query and summary write a task's query from a paragraph; translate makes the C2E/E2C queries
TEMPLATES = ("query", "summary", "translate")


@cache
def template(name: str) -> Template:
    if name not in TEMPLATES:
        raise GenerationError(f"no LLM prompt for {name!r}")
    text = resources.files(__package__).joinpath("prompts", f"{name}.txt").read_text(encoding="utf-8")
    return Template(text.rstrip("\n"))  # the file's final newline is no part of the prompt


def prompt_messages(name: str, text: str, lang: str) -> Messages:
    """The chat messages asking for ``name`` (query, summary, translate) of ``text``, answered in ``lang``."""
    return [{"role": "user", "content": template(name).substitute(language=LANGUAGE_NAMES[lang], text=text)}]


_LABEL = re.compile(r"^(question|summary|translation|answer|query|问题|摘要|翻译)\s*[:：]\s*", re.IGNORECASE)
_CJK = re.compile(r"[\u4e00-\u9fff]")


def clean_llm_text(reply: str | None, lang: str, source: str) -> str | None:
    """The first non-empty line of a reply without labels or quotes; None if it is unusable.

    Unusable: empty, not in the wanted language (no CJK for Chinese, mostly CJK for English),
    or a copy of / longer than the text it was made from.
    """
    if not reply:
        return None
    line = next((x.strip() for x in reply.splitlines() if x.strip()), "")
    line = _LABEL.sub("", line).strip().strip("\"'“”‘’「」").strip()
    if not line or line == source.strip() or len(line) > len(source) * 2 + 20:
        return None
    cjk_share = len(_CJK.findall(line)) / len(line)
    if (lang == "zh" and cjk_share == 0) or (lang == "en" and cjk_share > 0.3):
        return None
    return line
