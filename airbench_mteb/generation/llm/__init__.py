"""LLM backends behind one interface, plus the client that adds limits, retries, cache and account."""

from airbench_mteb.generation.llm.account import Account
from airbench_mteb.generation.llm.base import (
           Backend,
           Completion,
           LLMParams,
           TransientLLMError,
)
from airbench_mteb.generation.llm.cache import ResponseCache
from airbench_mteb.generation.llm.client import LLMClient, Parsed, ParseError
from airbench_mteb.generation.llm.credentials import redact
from airbench_mteb.generation.llm.factory import make_backend

__all__ = ["Account", "Backend", "Completion", "LLMClient", "LLMParams", "ParseError", "Parsed", "ResponseCache",
           "TransientLLMError", "make_backend", "redact"]
