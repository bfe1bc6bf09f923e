"""IRSC's schema (seed 004, section 3): its five query types, two languages and five settings.

What IRSC *is* lives here, so the tasks, the reports and the generator all read it from the
catalog; ``irsc.json`` holds the per-task text and the paper's source datasets on the hub.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

TASKS = ("query", "title", "part", "keyword", "summary")
LANGUAGES = ("en", "zh")
SETTINGS = ("en", "zh", "mixed", "c2e", "e2c")
# cross-lingual setting -> (language of the source queries and of the corpus, language queries are translated to)
CROSS_SETTINGS = {"c2e": ("en", "zh"), "e2c": ("zh", "en")}
# query types an LLM writes (the others come from the source or from the paragraph itself)
LLM_TASKS = ("query", "summary")
LANGUAGE_NAMES = {"en": "English", "zh": "Simplified Chinese"}


def corpus_languages(setting: str) -> tuple[str, ...]:
    """The corpus files a setting searches."""
    if setting == "mixed":
        return LANGUAGES
    if setting in CROSS_SETTINGS:
        return (CROSS_SETTINGS[setting][0],)
    return (setting,)


@cache
def irsc_catalog() -> dict[str, Any]:
    """``catalog/irsc.json``: the five tasks and the paper's source datasets on the hub."""
    text = resources.files(__package__).joinpath("irsc.json").read_text(encoding="utf-8")
    return json.loads(text)
