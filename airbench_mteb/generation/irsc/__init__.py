"""Building the IRSC benchmark (the IRSC paper, arXiv 2409.15763, section 3.2) from paired source data.

``sources`` reads the records (shipped text, local JSONL, the hub), ``records`` holds what a build
reads and makes, ``config`` its settings, ``text`` derives queries without an LLM, ``prompts`` and ``llm_queries``
have the LLM write them, ``sampling`` makes the seeded choices, ``generate`` runs it all and
``output`` writes the folder (layout in its docstring).
"""

from airbench_mteb.generation.irsc.config import BuildConfig
from airbench_mteb.generation.irsc.generate import build_irsc, generate, read_sources
from airbench_mteb.generation.irsc.records import SourceRecord

__all__ = ["BuildConfig", "SourceRecord", "build_irsc", "generate", "read_sources"]
