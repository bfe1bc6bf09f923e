"""LLM-based benchmark generation: backends (``llm``), the AIR-Bench pipeline (``airbench``), the journal."""

from airbench_mteb.generation.errors import GenerationError

__all__ = ["GenerationError"]
