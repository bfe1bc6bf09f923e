"""Build a backend from command-line style settings."""

from __future__ import annotations

from airbench_mteb.generation.errors import GenerationError
from airbench_mteb.generation.llm.base import Backend

BACKENDS = ("llamacpp", "openai")


def make_backend(name: str, *, model: str | None = None, base_url: str | None = None, timeout: float = 120.0,
                 structured_output: str = "json_object_schema", n_threads: int = 1) -> Backend:
    """``llamacpp``: ``model`` is a GGUF path (default: the bundled SmolLM2). ``openai``: ``model`` is the
    served model name and ``base_url`` the endpoint (default: api.openai.com)."""
    if name == "llamacpp":
        from airbench_mteb.generation.llm.llamacpp_backend import LlamaCppBackend

        return LlamaCppBackend(model, n_threads=n_threads)
    if name == "openai":
        from airbench_mteb.generation.llm.openai_backend import OpenAICompatibleBackend

        if not model:
            raise GenerationError("the openai backend needs --model (the name the server serves)")
        return OpenAICompatibleBackend(model, base_url, timeout=timeout, structured_output=structured_output)
    raise GenerationError(f"unknown backend {name!r}; choose one of {BACKENDS}")
