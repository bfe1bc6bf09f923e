"""The exception family for generation: bad settings, a journal from another run, an LLM that fails."""

from __future__ import annotations


class GenerationError(RuntimeError):
    """A generation run cannot go on. The message names the stage, item or file at fault."""
